/**
 * Many-to-many relation endpoints: the related rows of one owner, and adding/removing relations.
 */
import type { Knex } from 'knex';
import type { Db } from '../db/connection';
import { insertReturning } from '../db/inserts';
import { escapeLike, lowerMatch } from '../query/filters';
import type { Row } from '../db/rows';
import { z } from '../core/zod';

export interface RelationSpec {
  joinTable: string;
  ownColumn: string;
  otherColumn: string;
  /** The related table and its primary-key column. */
  table: string;
  pk: string;
  /** How messages name a related record (its verbose name). */
  label: string;
}

/** The default behaviours' M2MSchemaOut. */
export const M2MSchemaOut = z
  .object({
    results: z.object({ count: z.int(), details: z.array(z.string()) }),
    errors: z.object({ count: z.int(), details: z.array(z.string()) }),
  })
  .meta({ id: 'M2MSchemaOut' });
export type M2MSchemaOut = z.infer<typeof M2MSchemaOut>;

/** The POST body: only the keys of enabled operations are accepted; any other key is a 422. */
export function m2mBodySchema<K extends z.ZodType>(key: K, enabled: { add: boolean; remove: boolean }, name: string) {
  const list = z.array(key).max(1000).optional();
  return z
    .strictObject({
      ...(enabled.add ? { add: list } : {}),
      ...(enabled.remove ? { remove: list } : {}),
    })
    .meta({ id: name }) as z.ZodType<{ add?: z.output<K>[]; remove?: z.output<K>[] }>;
}

/** The related rows of `owner`, as a query on the related table (no joins: a row appears once). */
export function relatedRows(db: Db, spec: RelationSpec, owner: unknown): Knex.QueryBuilder {
  return db(spec.table).whereIn(
    `${spec.table}.${spec.pk}`,
    db(spec.joinTable)
      .select(`${spec.joinTable}.${spec.otherColumn}`)
      .where(`${spec.joinTable}.${spec.ownColumn}`, owner as any),
  );
}

/** Resolves keys to whether their related record exists (a user `query_handler` may replace it). */
export type KeyResolver = (key: unknown) => Promise<boolean>;

async function existingKeys(db: Db, spec: RelationSpec, keys: readonly unknown[]): Promise<Set<unknown>> {
  const found = new Set<unknown>();
  if (keys.length === 0) return found;
  const rows: Row[] = await db(spec.table)
    .select(spec.pk)
    .whereIn(spec.pk, keys as any[]);
  for (const row of rows) found.add(row[spec.pk]);
  return found;
}

const show = (key: unknown) => (typeof key === 'string' ? key : JSON.stringify(key));

/**
 * Adds and removes relations of one owner, key by key, as the default behaviours' state table says:
 * not related + add → related; related + remove → not related; related + add → error "already related";
 * not related + remove → error "not related"; a missing related record → error "not found", unchanged.
 * A key repeated inside one list is handled once. Additions and removals run concurrently. Each
 * step is a single atomic statement (insert-or-ignore, delete), so concurrent requests never
 * create duplicate join rows and every reported result matches what happened.
 */
export async function manageRelation(
  db: Db,
  spec: RelationSpec,
  owner: unknown,
  body: { add?: readonly unknown[]; remove?: readonly unknown[] },
  resolve?: KeyResolver,
): Promise<M2MSchemaOut> {
  const adds = [...new Set(body.add ?? [])];
  const removes = [...new Set(body.remove ?? [])];
  const all = [...new Set([...adds, ...removes])];
  let exists: (key: unknown) => boolean;
  if (resolve) {
    const answers = new Map<unknown, boolean>();
    for (const key of all) answers.set(key, await resolve(key));
    exists = (key) => answers.get(key) === true;
  } else {
    const found = await existingKeys(db, spec, all);
    exists = (key) => found.has(key);
  }

  const addOutcome = { results: [] as string[], errors: [] as string[] };
  const removeOutcome = { results: [] as string[], errors: [] as string[] };
  const addAll = async () => {
    for (const key of adds) {
      if (!exists(key)) {
        addOutcome.errors.push(`${spec.label} ${show(key)} not found`);
        continue;
      }
      const row = { [spec.ownColumn]: owner, [spec.otherColumn]: key };
      const insert = db(spec.joinTable).insert(row).onConflict([spec.ownColumn, spec.otherColumn]).ignore();
      const inserted = await insertReturning(db, insert, row, [spec.otherColumn]);
      if (inserted.length > 0) addOutcome.results.push(`${spec.label} ${show(key)} added`);
      else addOutcome.errors.push(`${spec.label} ${show(key)} is already related`);
    }
  };
  const removeAll = async () => {
    for (const key of removes) {
      if (!exists(key)) {
        removeOutcome.errors.push(`${spec.label} ${show(key)} not found`);
        continue;
      }
      const deleted = await db(spec.joinTable)
        .where({ [spec.ownColumn]: owner, [spec.otherColumn]: key } as any)
        .delete();
      if (deleted > 0) removeOutcome.results.push(`${spec.label} ${show(key)} removed`);
      else removeOutcome.errors.push(`${spec.label} ${show(key)} is not related`);
    }
  };
  await Promise.all([addAll(), removeAll()]);
  const results = [...addOutcome.results, ...removeOutcome.results];
  const errors = [...addOutcome.errors, ...removeOutcome.errors];
  return { results: { count: results.length, details: results }, errors: { count: errors.length, details: errors } };
}

/**
 * The generated GET filters of a relation: a `str` filter matches its column case-insensitively
 * (contains), any other type exactly; null values are not applied. `columns` maps each filter
 * name to a column of the related table and how it matches.
 */
export function applyRelationFilters(
  query: Knex.QueryBuilder,
  table: string,
  filters: Record<string, unknown>,
  columns: Readonly<Record<string, { column: string; match: 'contains' | 'exact' }>>,
): void {
  for (const [name, { column, match }] of Object.entries(columns)) {
    const value = filters[name];
    if (value === null || value === undefined) continue;
    if (match === 'contains') {
      lowerMatch(query, '??', `${table}.${column}`, 'LIKE', `%${escapeLike(String(value))}%`);
    } else {
      query.where(`${table}.${column}`, value as any);
    }
  }
}

/** Whether a user key handler's answer names a row (it may return rows, a row, or a Knex query that awaiting ran). */
export function foundRow(answer: unknown): boolean {
  return Array.isArray(answer) ? answer.length > 0 : answer !== null && answer !== undefined && answer !== false;
}
