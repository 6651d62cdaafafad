/**
 * `?fields=a,b` (ninja-aio-crud's FieldSelectionViewSetMixin, PostgREST's `select`): the client names
 * the fields of the read schema it wants, and each item keeps only those, in the schema's order. A
 * nested relation (`author` in a detail) is one field: selected whole, or left out.
 */
import type { Db } from '../db/connection';
import type { Row } from '../db/rows';
import { fromString } from '../validation/query-params';
import { z } from '../core/zod';

/**
 * A query parameter naming some of `allowed`, separated by commas, parsed into those names in the
 * order of `allowed`. Any other name is a 422 at the parameter, like an unknown ordering.
 */
export function namesParam(allowed: readonly string[]) {
  const message = `Input should be a comma-separated list of ${allowed.map((n) => `'${n}'`).join(', ')}`;
  return fromString.str().transform((value, ctx): string[] => {
    const names = value.split(',').map((part) => part.trim());
    if (names.some((name) => !allowed.includes(name))) {
      ctx.issues.push({ code: 'custom', message, params: { type: 'enum' }, input: value });
      return z.NEVER;
    }
    return allowed.filter((name) => names.includes(name));
  });
}

/** The `fields` query parameter: names of `allowed` (the read schema's fields), `namesParam`. */
export function fieldsParam(allowed: readonly string[]) {
  return namesParam(allowed)
    .optional()
    .meta({ type: 'string', description: `Only these fields of each item, separated by commas: ${allowed.join(', ')}.` });
}

/** `item` with only the `fields` (all of it when no selection was asked for). */
export function selectFields<T extends object>(item: T, fields: readonly string[] | undefined): Partial<T> {
  if (!fields) return item;
  const out: Partial<T> = {};
  for (const name of fields) if (name in item) out[name as keyof T] = item[name as keyof T];
  return out;
}

/** A shaping function (rows → items) whose items keep only the selected fields. */
export function selectShape<T extends object, R extends Row = Row>(
  shape: (db: Db, rows: R[]) => Promise<T[]>,
  fields: readonly string[] | undefined,
): (db: Db, rows: R[]) => Promise<Partial<T>[]> {
  if (!fields) return shape;
  return async (db, rows) => (await shape(db, rows)).map((item) => selectFields(item, fields));
}
