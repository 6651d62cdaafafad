/**
 * The databases the runtime serves, one adapter each, and the adapter a DATABASE_URL names.
 */
import type { Dialect } from './dialect';
import { mysql } from './mysql';
import { postgres } from './postgres';
import { sqlite } from './sqlite';

export type { Dialect } from './dialect';

/** Every adapter, the default (an unset DATABASE_URL) first. */
export const DIALECTS: readonly Dialect[] = [sqlite, postgres, mysql];

/** The adapter of the database `url` names; an unset URL is the default database, a SQLite file. */
export function dialectForUrl(url: string | undefined): Dialect {
  if (url === undefined || url === '') return DIALECTS[0];
  const dialect = DIALECTS.find((d) => d.accepts(url));
  if (!dialect) throw new Error(`DATABASE_URL must start with ${orList(DIALECTS.map((d) => d.urlPrefix))}, got "${url}"`);
  return dialect;
}

/** `a`, `a or b`, `a, b or c`. */
function orList(items: readonly string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}
