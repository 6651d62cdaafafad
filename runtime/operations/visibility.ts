/**
 * What a caller may see of another resource's rows. A resource's `queryset_request` hook narrows its
 * own list and retrieve; the service context also keeps it by table (`visibility`, listed once in
 * app.ts), so that every other path that reads those rows applies it too: a related key a write
 * names (a hidden row is the same 404 as a missing one, so a write cannot tell them apart), and the
 * relation endpoints that list or link them. Expansions and nested read fields into such a resource
 * are refused by the generator instead (they read many rows of many parents in one statement).
 */
import type { Knex } from 'knex';
import { chunks, exists, missingKeys } from '../db/rows';
import { settleHook } from '../query/filters';
import type { RequestContext } from './types';

export type { Visibility } from './types';

/**
 * Narrows `query`, of rows of `table`, to those the caller may see of the table's resource (nothing
 * changes without a hook). It changes the query in place: a query is thenable, so a promise of it
 * would run it.
 */
export async function visibleOnly(ctx: RequestContext, table: string, query: Knex.QueryBuilder): Promise<void> {
  const hook = ctx.service.visibility?.[table];
  if (hook) await settleHook(hook(Object.assign({}, ctx, { query })));
}

/** Whether `table` has a row whose `pk` is `key` that the caller may see. */
export async function relatedExists(ctx: RequestContext, table: string, pk: string, key: unknown): Promise<boolean> {
  if (!ctx.service.visibility?.[table]) return exists(ctx.db, table, pk, key);
  const query = ctx
    .db(table)
    .select(`${table}.${pk}`)
    .where(`${table}.${pk}`, key as any)
    .limit(1);
  await visibleOnly(ctx, table, query);
  return (await query).length > 0;
}

/** The keys among `keys` with no row of `table` the caller may see. */
export async function missingRelatedKeys(ctx: RequestContext, table: string, pk: string, keys: readonly unknown[]): Promise<unknown[]> {
  if (!ctx.service.visibility?.[table]) return missingKeys(ctx.db, table, pk, keys);
  const wanted = [...new Set(keys)];
  const found = new Set<unknown>();
  for (const chunk of chunks(wanted)) {
    const query = ctx
      .db(table)
      .select(`${table}.${pk}`)
      .whereIn(`${table}.${pk}`, chunk as any[]);
    await visibleOnly(ctx, table, query);
    for (const row of (await query) as Record<string, unknown>[]) found.add(row[pk]);
  }
  return wanted.filter((k) => !found.has(k));
}
