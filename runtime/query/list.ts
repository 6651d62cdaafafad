/**
 * The list pipeline: the resource's base query with filters applied, then ordering, then the
 * paginator's slice (or, for CursorPagination, the rows after a position in the order); rows are
 * shaped by the resource's precompiled mapper.
 */
import type { Knex } from 'knex';
import { isCalendarDate, storableDate, storableInstant } from '../core/calendar';
import { INT32 } from '../core/catalogue';
import { asBool, asDate, asDateTime } from '../core/convert';
import { countOf, selectFirst, selectRows, type Db } from '../db/connection';
import type { KeysetReader, ListSource } from './pagination';
import type { Row } from '../db/rows';
import { fromString } from '../validation/query-params';
import { orderByTerms, type OrderHop, type RelatedColumn } from './related-ordering';
import { z } from '../core/zod';

export interface OrderTerm {
  column: string;
  order: 'asc' | 'desc';
  /** A field of a related row (`author__username`): the foreign keys to it; `column` is in the last table. */
  hops?: readonly OrderHop[];
}

/** The type of an ordering column's values, as a cursor carries them in JSON (`int`: 32-bit, `bigint`: a safe integer). */
export type KeyKind = 'int' | 'bigint' | 'float' | 'decimal' | 'str' | 'uuid' | 'bool' | 'date' | 'datetime';

type KeyValue = string | number | boolean;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A text PostgreSQL can compare with a text column (it refuses NUL characters). */
const text = (v: unknown): v is string => typeof v === 'string' && !v.includes('\u0000');

/** A `YYYY-MM-DD` date that exists and that both databases store. */
function isDate(v: unknown): v is string {
  return typeof v === 'string' && isCalendarDate(v) && storableDate(v);
}

/** A datetime written as the service writes them (ISO 8601 in UTC, milliseconds), storable on both databases. */
function isDateTime(v: unknown): v is string {
  if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(v)) return false;
  const instant = new Date(v);
  return !Number.isNaN(instant.getTime()) && instant.toISOString() === v && storableInstant(instant);
}

/**
 * Each kind's values: `read` turns a column value into its JSON form (the same on both databases),
 * `accept` checks a cursor's value: only what the column's type can be compared with passes, so a
 * tampered cursor is a 422, never a database error. Without a kind (a source built by custom code
 * without `kinds`), any JSON scalar is accepted.
 */
const KEY_VALUES: Record<KeyKind | 'scalar', { read(value: unknown): KeyValue; accept(value: unknown): boolean }> = {
  int: { read: Number, accept: (v) => Number.isInteger(v) && (v as number) >= INT32.min && (v as number) <= INT32.max },
  bigint: { read: Number, accept: (v) => Number.isSafeInteger(v) },
  float: { read: Number, accept: (v) => typeof v === 'number' && Number.isFinite(v) },
  decimal: { read: String, accept: (v) => typeof v === 'string' && /^-?\d{1,30}(\.\d{1,30})?$/.test(v) },
  str: { read: String, accept: text },
  uuid: { read: String, accept: (v) => typeof v === 'string' && UUID.test(v) },
  bool: { read: asBool, accept: (v) => typeof v === 'boolean' },
  date: { read: asDate, accept: isDate },
  // Datetimes are stored (SQLite) and compared as their ISO form in UTC, to the millisecond.
  datetime: { read: asDateTime, accept: isDateTime },
  scalar: {
    read: (v) => (v instanceof Date ? v.toISOString() : (v as KeyValue)),
    accept: (v) => text(v) || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)),
  },
};

/**
 * Reading `query` by position in `ordering` (columns of the listed table, the primary key last):
 * the rows after a key are those greater in the first term, or equal in it and greater in the
 * second, and so on (`>` turned to `<` for a descending term, and both turned round backward).
 * Every comparison binds its value; ordering columns are not nullable (the spec is checked), so
 * SQLite and PostgreSQL, which sort NULLs differently, answer the same.
 */
function columnKeyset<T>(
  db: Db,
  query: Knex.QueryBuilder,
  columns: readonly string[],
  ordering: readonly OrderTerm[],
  kinds: Readonly<Record<string, KeyKind>> | undefined,
  shape: (db: Db, rows: Row[]) => Promise<T[]>,
): KeysetReader<T> {
  const values = ordering.map((t) => KEY_VALUES[kinds?.[t.column] ?? 'scalar']);
  // The key columns are read under names of their own: a list's columns need not include them.
  const aliases = ordering.map((_, i) => `svc_key_${i}`);
  const keyColumns = Object.fromEntries(ordering.map((t, i) => [aliases[i], t.column]));
  return {
    ordering: ordering.map((t) => (t.order === 'desc' ? `-${t.column}` : t.column)),
    accept(position) {
      return position.length === ordering.length && position.every((v, i) => values[i].accept(v)) ? [...position] : undefined;
    },
    async read(limit, position, backward) {
      const ascending = (t: OrderTerm) => (t.order === 'asc') !== backward;
      const q = query
        .clone()
        .select([...columns])
        .select(keyColumns);
      if (position) {
        q.where((after) => {
          ordering.forEach((t, i) => {
            after.orWhere((term) => {
              for (let j = 0; j < i; j++) term.where(ordering[j].column, position[j] as Knex.Value);
              term.where(t.column, ascending(t) ? '>' : '<', position[i] as Knex.Value);
            });
          });
        });
      }
      q.orderBy(ordering.map((t) => ({ column: t.column, order: ascending(t) ? ('asc' as const) : ('desc' as const) })));
      q.limit(limit);
      const rows = await selectRows(db, q);
      return { items: await shape(db, rows), keys: rows.map((row) => aliases.map((alias, i) => values[i].read(row[alias]))) };
    },
  };
}

/**
 * A ListSource over `query` (filters applied, no select or order). `ordering` is applied to every
 * fetch; the primary key is appended as the last term, in the last term's direction, so that pages
 * never overlap or skip a row.
 * Unless a term orders by a related row, the source can also be read by position (`keyset`), with
 * `kinds` (column → value kind) checking the positions cursors carry. `shape` receives the rows
 * `columns` select, as rows of its own type `R`.
 */
export function querySource<T, R extends Row = Row>(
  db: Db,
  query: Knex.QueryBuilder,
  options: {
    columns: readonly string[];
    pk: string;
    ordering: readonly OrderTerm[];
    shape: (db: Db, rows: R[]) => Promise<T[]>;
    kinds?: Readonly<Record<string, KeyKind>>;
  },
): ListSource<T> {
  // The key runs the way the last term runs: an index on the ordering column (which holds the key,
  // implicitly on SQLite) then serves the whole order, and no sort step is needed for the ties.
  const last = options.ordering[options.ordering.length - 1];
  const ordering = options.ordering.some((t) => t.column === options.pk && !t.hops)
    ? options.ordering
    : [...options.ordering, { column: options.pk, order: last?.order ?? ('asc' as const) }];
  const related = ordering.some((t) => t.hops);
  const shape = options.shape as (db: Db, rows: Row[]) => Promise<T[]>;
  return {
    // Built when a paginator asks for it (CursorPagination), not for every list.
    get keyset() {
      return related ? undefined : columnKeyset(db, query, options.columns, ordering, options.kinds, shape);
    },
    async count() {
      return countOf(await selectFirst(db, query.clone().clearSelect().clearOrder().count({ count: '*' })));
    },
    async fetch(limit, offset) {
      const q = query.clone().select(options.columns);
      if (related) orderByTerms(q, ordering);
      else q.orderBy(ordering.map((t) => ({ column: t.column, order: t.order })));
      if (limit !== undefined) q.limit(limit);
      if (offset > 0) q.offset(offset);
      return shape(db, await selectRows(db, q));
    },
  };
}

/** Whether `value` is a Knex query builder (not yet run). */
function isQueryBuilder(value: unknown): value is Knex.QueryBuilder {
  const v = value as Partial<Knex.QueryBuilder> | null;
  return typeof v === 'object' && v !== null && typeof v.toSQL === 'function' && typeof v.clone === 'function';
}

/**
 * The query a paginated list-level action's hook hands back, given the `query` it received: the
 * query it returns (narrowed further, or `query` itself), or `query` when it returns nothing after
 * narrowing it in place. A Knex query is thenable, so only a promise is awaited, and the query comes
 * back wrapped in an object (a promise resolved with it would run it); for the same reason an async
 * hook cannot return the query, and returns nothing instead.
 */
export async function actionQuery(query: Knex.QueryBuilder, result: unknown): Promise<{ query: Knex.QueryBuilder }> {
  const value = result instanceof Promise ? await result : result;
  if (value === undefined) return { query };
  if (isQueryBuilder(value)) return { query: value };
  throw new TypeError(
    'the hook of a paginated action returns a Knex query, or nothing after narrowing `query` in place; ' +
      'an async hook returns nothing (awaiting a returned query would run it)',
  );
}

/**
 * The most terms an `ordering` may have. Each is a term of ORDER BY (SQLite allows 2000), and
 * reading by position (CursorPagination) compares every term with the ones before it, so the
 * conditions grow with the square of the terms: past this cap the ordering is a 422 on every
 * database, before any query.
 */
export const MAX_ORDERING_TERMS = 16;

/**
 * The `ordering` query parameter: one field or several separated by commas (at most
 * MAX_ORDERING_TERMS), `-` for descending.
 * Only names in `allowed` (field name → column, or a related row's column) pass; anything else is a
 * 422 with loc `query.ordering`.
 */
export function orderingParam(allowed: Readonly<Record<string, string | RelatedColumn>>) {
  const names = Object.keys(allowed);
  const message = `Input should be a comma-separated list of ${names.map((n) => `'${n}'`).join(', ')}, each optionally prefixed with '-'`;
  return fromString
    .str()
    .transform((value, ctx): OrderTerm[] => {
      const parts = value.split(',');
      if (parts.length > MAX_ORDERING_TERMS) {
        ctx.issues.push({
          code: 'custom',
          message: `List should have at most ${MAX_ORDERING_TERMS} items`,
          params: { type: 'too_long' },
          input: value,
        });
        return z.NEVER;
      }
      const terms: OrderTerm[] = [];
      for (const part of parts) {
        const name = part.trim().replace(/^-/, '');
        if (!Object.prototype.hasOwnProperty.call(allowed, name)) {
          ctx.issues.push({ code: 'custom', message, params: { type: 'enum' }, input: value });
          return z.NEVER;
        }
        const target = allowed[name];
        const order = part.trim().startsWith('-') ? ('desc' as const) : ('asc' as const);
        terms.push(typeof target === 'string' ? { column: target, order } : { column: target.column, order, hops: target.hops });
      }
      return terms;
    })
    .optional()
    .meta({
      type: 'string',
      description: `Order by ${names.join(', ')}; prefix with - for descending; separate several with commas (at most ${MAX_ORDERING_TERMS}).`,
    });
}
