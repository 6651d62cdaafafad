/**
 * List filters: typed query parameters, and lookup plans applied to a Knex query.
 *
 * The generator compiles every lookup of a spec (`author__country__name__iexact`) into a plan at
 * generation time: the columns and relation hops it walks, and its operator. This module only
 * applies plans; it knows nothing of specs and never parses a lookup string. Identifiers in a
 * plan come from the spec; values are always bound parameters.
 *
 * A relation hop is a `<column> IN (subquery)` condition, never a join, so a lookup through a
 * many-to-many never repeats a row and `count` stays right:
 *
 *   foreign key   articles.author_id IN (SELECT users.id FROM users WHERE …)
 *   many-to-many  articles.id IN (SELECT articles_tags.article_id FROM articles_tags
 *                                 JOIN tags ON tags.id = articles_tags.tag_id WHERE …)
 *
 * Operators behave the same on SQLite and PostgreSQL: `LIKE` is case-sensitive on both (SQLite
 * runs with `PRAGMA case_sensitive_like = ON`, see db/dialects/sqlite.ts), the case-insensitive operators compare
 * the column and the value in lowercase as PostgreSQL's `lower()` folds them (`lowerMatch`), user input in a LIKE
 * pattern is escaped with `\`, and a condition is never NULL, so `not` and `exclude` keep rows
 * whose column is NULL (as an exclude does in the default behaviours).
 */
import type { Knex } from 'knex';
import { databaseOfClient } from '../db/database';
import { requires } from '../db/sql-text';
import { fromString } from '../validation/query-params';
import { storableDate, storableInstant } from '../core/calendar';
import { INT32, type ListItemType, type LookupOperator } from '../core/catalogue';
import { z } from '../core/zod';

/* ------------------------------------------------------------------------------- plans */

export type { LookupOperator } from '../core/catalogue';

/** How a column's values are compared and bound. `int` is a 32-bit integer column, `bigint` a 64-bit one. */
export type ColumnKind = 'text' | 'int' | 'bigint' | 'float' | 'decimal' | 'bool' | 'date' | 'datetime' | 'uuid' | 'json' | 'list';

/**
 * One step from a table to a related one: rows whose `from` column is among the values the
 * subquery `SELECT select FROM table [JOIN join.table ON join.on[0] = join.on[1]]` returns.
 */
export interface Hop {
  /** Qualified column of the current table (a foreign key, or the primary key for a many-to-many). */
  from: string;
  /** `from` may be NULL (a nullable foreign key). */
  nullable: boolean;
  table: string;
  /** Qualified column the subquery returns. */
  select: string;
  /** A many-to-many hop's join from the join table to the related table. */
  join?: { table: string; on: readonly [string, string] };
  /** A many-to-many hop: a row may have no related row at all. */
  many: boolean;
}

/** A compiled lookup: the hops to walk, then the operator applied to one column. */
export interface Lookup {
  hops: readonly Hop[];
  /** Qualified column the operator applies to (in the table the last hop reaches). */
  column: string;
  kind: ColumnKind;
  /** A `list` column (`kind: 'list'`): the type of its items. */
  items?: ListItemType;
  nullable: boolean;
  op: LookupOperator;
}

/** A composed condition: lookups with their values, combined with and / or / not. */
export type Condition =
  | { readonly and: readonly Condition[] }
  | { readonly or: readonly Condition[] }
  | { readonly not: Condition }
  | { readonly lookup: Lookup; readonly value: unknown };

/** One side of a match case: filter by the condition (`include`), or exclude the rows it matches. */
export interface CaseCondition {
  condition: Condition;
  include: boolean;
}

/**
 * A match case: what a true value applies and what a false one does; or, when the two sides are
 * one condition applied one way and the other, that condition once, `include` saying what a true
 * value does with it (a false value does the opposite).
 */
export type MatchCase = { true: CaseCondition; false: CaseCondition } | CaseCondition;

/* --------------------------------------------------------------------- applying plans */

/** Escapes `%`, `_` and `\` so that each matches itself in a `LIKE … ESCAPE '\'` pattern. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Narrows `query` in place (AND) to rows where `lookup` holds for `value`. */
export function applyLookup(query: Knex.QueryBuilder, lookup: Lookup, value: unknown): void {
  lookupCondition(query, lookup, value, false);
}

/** Narrows `query` in place (AND) to rows where `condition` holds. */
export function applyCondition(query: Knex.QueryBuilder, condition: Condition): void {
  addCondition(query, condition, false);
}

/** Excludes in place the rows where `condition` holds (rows where a compared column is NULL stay). */
export function excludeCondition(query: Knex.QueryBuilder, condition: Condition): void {
  query.whereNot((q) => addCondition(q, condition, true));
}

/**
 * Applies a `{parameter → lookup}` map: each parameter whose value is present (not undefined or
 * null) narrows `query` by its lookup with that value. The generic piece every filter reuses.
 */
export function applyLookups(
  query: Knex.QueryBuilder,
  lookups: Readonly<Record<string, Lookup>>,
  values: Readonly<Record<string, unknown>>,
): void {
  for (const [param, lookup] of Object.entries(lookups)) {
    const value = values[param];
    if (value !== undefined && value !== null) applyLookup(query, lookup, value);
  }
}

/**
 * `negated`: the condition sits under a NOT. Conditions must then be two-valued (never NULL), so a
 * comparison on a nullable column also tests `IS NOT NULL`, and so does a nullable foreign key hop.
 */
function addCondition(q: Knex.QueryBuilder, c: Condition, negated: boolean): void {
  if ('and' in c) {
    q.where((g) => {
      for (const child of c.and) addCondition(g, child, negated);
    });
  } else if ('or' in c) {
    q.where((g) => {
      for (const child of c.or) g.orWhere((h) => addCondition(h, child, negated));
    });
  } else if ('not' in c) {
    q.whereNot((g) => addCondition(g, c.not, true));
  } else {
    lookupCondition(q, c.lookup, c.value, negated);
  }
}

function lookupCondition(q: Knex.QueryBuilder, lookup: Lookup, value: unknown, negated: boolean): void {
  // `exact: null` is `isnull: true`, as the default behaviours have it.
  const [op, v] = value === null && (lookup.op === 'exact' || lookup.op === 'iexact') ? (['isnull', true] as const) : [lookup.op, value];
  // Through relations, `isnull: true` also matches rows with no related row at all.
  const orMissing = op === 'isnull' && asBool(v) === true;
  viaHops(q, lookup.hops, 0, orMissing, negated, (inner, atTop) => operator(inner, lookup, op, v, negated && atTop));
}

type Leaf = (q: Knex.QueryBuilder, atTop: boolean) => void;

function viaHops(q: Knex.QueryBuilder, hops: readonly Hop[], i: number, orMissing: boolean, negated: boolean, leaf: Leaf): void {
  if (i === hops.length) {
    leaf(q, i === 0);
    return;
  }
  const hop = hops[i];
  const subquery = (s: Knex.QueryBuilder) => {
    s.select(hop.select).from(hop.table);
    if (hop.join) s.join(hop.join.table, hop.join.on[0], hop.join.on[1]);
    s.where((w) => viaHops(w, hops, i + 1, orMissing, false, leaf));
  };
  if (orMissing) {
    q.where((g) => {
      g.whereIn(hop.from, subquery);
      if (hop.many) g.orWhereNotIn(hop.from, (s) => s.select(hop.select).from(hop.table));
      else if (hop.nullable) g.orWhereNull(hop.from);
    });
  } else if (negated && hop.nullable) {
    q.where((g) => g.whereNotNull(hop.from).whereIn(hop.from, subquery));
  } else {
    q.whereIn(hop.from, subquery);
  }
}

const FALSE = '1 = 0';

function operator(q: Knex.QueryBuilder, lookup: Lookup, op: LookupOperator, value: unknown, guard: boolean): void {
  const { column, kind } = lookup;
  if (op === 'isnull') {
    if (asBool(value)) q.whereNull(column);
    else q.whereNotNull(column);
    return;
  }
  // Under a NOT, a comparison with a NULL column must be false, not NULL.
  if (guard && lookup.nullable) q.whereNotNull(column);
  const dialect = databaseOfClient(q.client).dialect;
  if (kind === 'list') {
    listOperator(q, lookup, op, value);
    return;
  }
  const text = kind === 'text' ? '??' : dialect.asText('??');
  switch (op) {
    case 'iexact':
      lowerMatch(q, text, column, '=', textOf(value));
      return;
    case 'contains':
    case 'startswith':
    case 'endswith':
      dialect.whereLike(q, text, column, pattern(op, value));
      return;
    case 'icontains':
    case 'istartswith':
      lowerMatch(q, text, column, 'LIKE', pattern(op, value));
      return;
    case 'in': {
      const items = (Array.isArray(value) ? value : [value]).map((item) => bindable(kind, item)).filter((b) => b !== undefined);
      const values = items.flatMap((b) => (b.kind === 'value' ? [b.value] : []));
      if (values.length) q.whereIn(column, values as Knex.Value[]);
      else q.whereRaw(FALSE);
      return;
    }
    case 'range': {
      const [low, high] = Array.isArray(value) ? value : [];
      compare(q, column, kind, 'gte', low);
      compare(q, column, kind, 'lte', high);
      return;
    }
    default:
      compare(q, column, kind, op, value);
  }
}

/** How each item of a list of `ListItemType` compares and binds. */
const ITEM_KINDS: Record<ListItemType, ColumnKind> = {
  string: 'text',
  integer: 'int',
  big_integer: 'bigint',
  float: 'float',
  boolean: 'bool',
  uuid: 'uuid',
  date: 'date',
};

/**
 * A list column's `contains` (it holds every value) or `overlap` (it holds one of them): each value
 * bound as an item; a value no item can equal makes `contains` false and is left out of `overlap`.
 */
function listOperator(q: Knex.QueryBuilder, lookup: Lookup, op: LookupOperator, value: unknown): void {
  if (op !== 'contains' && op !== 'overlap') {
    q.whereRaw(FALSE);
    return;
  }
  const items = lookup.items ?? 'string';
  const bound = (Array.isArray(value) ? value : [value]).map((item) => bindable(ITEM_KINDS[items], item));
  const values = [...new Set(bound.flatMap((b) => (b?.kind === 'value' ? [b.value] : [])))];
  if (values.length === 0 || (op === 'contains' && bound.some((b) => b?.kind !== 'value'))) q.whereRaw(FALSE);
  else databaseOfClient(q.client).dialect.whereList(q, lookup.column, items, op, values);
}

/**
 * `lower(column) = lower(value)` or `lower(column) LIKE lower(pattern)` with PostgreSQL's `lower()`,
 * on every database (its adapter's `whereLower`); `text` is the column's SQL with `??` for `column`.
 */
export function lowerMatch(q: Knex.QueryBuilder, text: string, column: string, comparison: '=' | 'LIKE', value: string): void {
  databaseOfClient(q.client).dialect.whereLower(q, text, column, comparison, value);
}

function pattern(op: LookupOperator, value: unknown): string {
  const text = escapeLike(textOf(value));
  if (op === 'startswith' || op === 'istartswith') return `${text}%`;
  if (op === 'endswith') return `%${text}`;
  return `%${text}%`;
}

function textOf(value: unknown): string {
  return value instanceof Date ? value.toISOString() : String(value);
}

const SQL_OPERATOR = { exact: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;
type Comparison = keyof typeof SQL_OPERATOR;

/** `column <op> value`, or a constant false when no stored value can match. */
function compare(q: Knex.QueryBuilder, column: string, kind: ColumnKind, op: LookupOperator, value: unknown): void {
  const b = op in SQL_OPERATOR ? bindable(kind, value, op as Comparison) : undefined;
  if (!b) q.whereRaw(FALSE);
  else if (b.kind === 'all') q.whereNotNull(column);
  else {
    const operator = SQL_OPERATOR[b.op ?? (op as Comparison)];
    if (!requiresAlready(q, column, operator, b.value)) q.where(column, operator, b.value as Knex.Value);
  }
}

/**
 * Whether the query already requires `column <operator> value` in a clause AND-ed at its top
 * level, as when `queryset_request` keeps published articles and the client filters
 * `?is_published=true`. A second copy changes no result, but SQLite tests it again on every row
 * the index hands over (it doubles a count). With an OR at the top level, nothing is assumed.
 */
function requiresAlready(q: Knex.QueryBuilder, column: string, operator: string, value: unknown): boolean {
  return requires(q, column, operator, value as Knex.Value);
}

/* ------------------------------------------------------------------- binding values */

type Bound = { kind: 'value'; value: unknown; op?: Comparison } | { kind: 'all' };

const INT_BOUNDS = { int: [INT32.min, INT32.max], bigint: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] } as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DECIMAL = /^[+-]?\d+(\.\d+)?$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}/;

function asBool(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (value === 1 || value === 0) return value === 1;
  if (typeof value === 'string' && /^(true|1)$/i.test(value)) return true;
  if (typeof value === 'string' && /^(false|0)$/i.test(value)) return false;
  return undefined;
}

function asNumber(value: unknown): number | undefined {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  return Number.isFinite(n) ? n : undefined;
}

/**
 * The value to bind for a column of `kind`, so that both databases compare it the same way;
 * undefined when no stored value can be equal to it (a bad date, a fraction for an integer column).
 * For an integer column, a comparison whose value lies outside the column's range, or is a
 * fraction, becomes the equivalent comparison with an integer in range (or `all` non-null rows).
 */
function bindable(kind: ColumnKind, value: unknown, op: Comparison = 'exact'): Bound | undefined {
  switch (kind) {
    case 'int':
    case 'bigint': {
      const n = asNumber(value);
      return n === undefined ? undefined : intComparison(op, n, INT_BOUNDS[kind]);
    }
    case 'float': {
      const n = asNumber(value);
      return n === undefined ? undefined : { kind: 'value', value: n };
    }
    case 'decimal': {
      const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : String(value).trim();
      return DECIMAL.test(text) ? { kind: 'value', value: text } : undefined;
    }
    case 'bool': {
      const b = asBool(value);
      return b === undefined ? undefined : { kind: 'value', value: b };
    }
    case 'date': {
      const text = value instanceof Date ? value.toISOString() : String(value);
      const d = new Date(`${text.slice(0, 10)}T00:00:00Z`);
      return ISO_DATE.test(text) && !Number.isNaN(d.getTime()) && storableDate(text)
        ? { kind: 'value', value: text.slice(0, 10) }
        : undefined;
    }
    case 'datetime': {
      const text = value instanceof Date ? value.toISOString() : String(value);
      const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);
      return ISO_DATE.test(text) && !Number.isNaN(d.getTime()) && storableInstant(d)
        ? { kind: 'value', value: d.toISOString() }
        : undefined;
    }
    case 'uuid':
      return typeof value === 'string' && UUID.test(value) ? { kind: 'value', value: value.toLowerCase() } : undefined;
    default:
      return { kind: 'value', value: textOf(value) };
  }
}

function intComparison(op: Comparison, n: number, [min, max]: readonly [number, number]): Bound | undefined {
  const integer = Number.isInteger(n);
  switch (op) {
    case 'exact':
      return integer && n >= min && n <= max ? { kind: 'value', value: n } : undefined;
    case 'gt':
    case 'gte': {
      // The smallest integer the column value must reach.
      const least = op === 'gt' ? Math.floor(n) + 1 : Math.ceil(n);
      if (least > max) return undefined;
      return least <= min ? { kind: 'all' } : { kind: 'value', value: least, op: 'gte' };
    }
    case 'lt':
    case 'lte': {
      const most = op === 'lt' ? Math.ceil(n) - 1 : Math.floor(n);
      if (most < min) return undefined;
      return most >= max ? { kind: 'all' } : { kind: 'value', value: most, op: 'lte' };
    }
  }
}

/* -------------------------------------------------------------------------- mixins */

/** The validated filter values, by query parameter name. */
export type FilterValues = Readonly<Record<string, unknown>>;

/** A filter mixin: narrows the query in place from the filter values. Never returns the query. */
export type FilterMixin = (query: Knex.QueryBuilder, filters: FilterValues) => void;

/** Which values a mixin applies; others are ignored. */
export type MixinAccepts = 'string' | 'boolean' | 'number' | 'date' | 'any';

const ISO_VALUE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

const ACCEPTS: Record<MixinAccepts, (value: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  boolean: (v) => typeof v === 'boolean',
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  // Dates travel as ISO strings: a value is date-like when it is a Date or an ISO date(time) string.
  date: (v) => v instanceof Date || (typeof v === 'string' && ISO_VALUE.test(v)),
  any: () => true,
};

/**
 * A mixin applying one lookup per parameter (Icontains, Boolean, Numeric, the Date family,
 * RelationFilter): each present value that `accepts` allows narrows the query by its lookup.
 */
export function lookupMixin(lookups: Readonly<Record<string, Lookup>>, accepts: MixinAccepts = 'any'): FilterMixin {
  const test = ACCEPTS[accepts];
  return (query, filters) => {
    const values: Record<string, unknown> = {};
    for (const param of Object.keys(lookups)) if (test(filters[param])) values[param] = filters[param];
    applyLookups(query, lookups, values);
  };
}

/**
 * MatchCaseFilterViewSetMixin: a true value applies the `true` case, a false value the `false`
 * case; a case filters by its condition (`include`) or excludes the rows it matches. A case given
 * as one condition filters by it for one value and excludes its rows for the other. Absent or null
 * applies nothing.
 */
export function matchCaseMixin(cases: Readonly<Record<string, MatchCase>>): FilterMixin {
  return (query, filters) => {
    for (const [param, matchCase] of Object.entries(cases)) {
      const value = filters[param];
      if (typeof value !== 'boolean') continue;
      const chosen =
        'condition' in matchCase
          ? { condition: matchCase.condition, include: value === matchCase.include }
          : value
            ? matchCase.true
            : matchCase.false;
      if (chosen.include) applyCondition(query, chosen.condition);
      else excludeCondition(query, chosen.condition);
    }
  };
}

/** Applies every mixin in order (the generated query_params_handler). */
export function applyMixins(mixins: Readonly<Record<string, FilterMixin>>, query: Knex.QueryBuilder, filters: FilterValues): void {
  for (const mixin of Object.values(mixins)) mixin(query, filters);
}

/**
 * Waits for a hook that returned a promise. Any other return value is ignored and never awaited:
 * a sync hook that returns the (thenable) Knex query must not run it.
 */
export async function settleHook(result: unknown): Promise<void> {
  if (result instanceof Promise) await result;
}

/* ---------------------------------------------------------------- query parameters */

/** The value each query parameter type validates to. */
export interface ParamValues {
  str: string;
  int: number;
  float: number;
  bool: boolean;
  date: string;
  datetime: string;
  uuid: string;
  decimal: string;
  email: string;
  url: string;
  list: string[];
  dict: Record<string, unknown>;
}

export type ParamType = keyof ParamValues;

function custom<T>(type: string, message: string, parse: (s: string) => T | undefined, openapiType: string): z.ZodType<T, string> {
  return z
    .string()
    .transform((s, ctx) => {
      const value = parse(s);
      if (value === undefined) {
        ctx.issues.push({ code: 'custom', message, params: { type }, input: s });
        return z.NEVER;
      }
      return value;
    })
    .meta({ type: openapiType }) as unknown as z.ZodType<T, string>;
}

const PARAM_SCHEMAS: { [T in ParamType]: () => z.ZodType<ParamValues[T], string> } = {
  str: fromString.str,
  int: fromString.int,
  float: fromString.float,
  bool: fromString.bool,
  date: fromString.date,
  datetime: fromString.datetime,
  uuid: fromString.uuid,
  decimal: () =>
    custom('decimal_parsing', 'Input should be a valid decimal', (s) => (DECIMAL.test(s.trim()) ? s.trim() : undefined), 'string'),
  email: () => z.email(),
  url: () => z.url(),
  list: () =>
    z
      .string()
      .transform((s, ctx) => {
        const items = s.split(',');
        if (items.length <= MAX_LIST_ITEMS) return items;
        ctx.issues.push(tooManyItems(s));
        return z.NEVER;
      })
      .meta({ type: 'string' }),
  dict: () =>
    custom<Record<string, unknown>>(
      'dict_type',
      'Input should be a valid dictionary',
      (s) => {
        try {
          const v: unknown = JSON.parse(s);
          return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
        } catch {
          return undefined;
        }
      },
      'string',
    ),
};

/**
 * The most values a comma-separated query parameter may hold (an `__in` filter, a `list`). Each
 * value is one bound parameter (SQLite binds at most 32766 in a statement, PostgreSQL 65535): past
 * this cap the parameter is a 422 on every database, before any query.
 */
export const MAX_LIST_ITEMS = 1000;

/** The 422 issue of a comma-separated value with more than MAX_LIST_ITEMS items. */
function tooManyItems(input: string) {
  return { code: 'custom', message: `List should have at most ${MAX_LIST_ITEMS} items`, params: { type: 'too_long' }, input } as const;
}

const SHAPE_WORDS = {
  in: `comma-separated list (at most ${MAX_LIST_ITEMS} values)`,
  range: 'two comma-separated values (low,high)',
} as const;

/** How a filter query parameter's text is read: its shape, and for an integer the range its column holds. */
export interface QueryParamOptions<S extends 'in' | 'range' | undefined = 'in' | 'range' | undefined> {
  shape?: S;
  min?: number;
  max?: number;
}

/**
 * The Zod schema of one filter query parameter of `type`. With `shape`, the text holds several
 * values separated by commas: at most MAX_LIST_ITEMS for `in`, exactly two for `range`; each must parse as
 * `type`, and an integer must lie within `min` and `max` when given (the column's range, the same
 * 422 a path or body value gets). Errors are 422 entries with `loc: ['query', <name>]`.
 */
export function queryParam<T extends ParamType>(type: T, options?: QueryParamOptions<undefined>): z.ZodType<ParamValues[T], string>;
export function queryParam<T extends ParamType>(
  type: T,
  shape: 'in' | 'range' | QueryParamOptions<'in' | 'range'>,
): z.ZodType<ParamValues[T][], string>;
export function queryParam<T extends ParamType>(type: T, shapeOrOptions?: 'in' | 'range' | QueryParamOptions): z.ZodType<unknown, string> {
  const { shape, min, max } =
    typeof shapeOrOptions === 'string' ? { shape: shapeOrOptions, min: undefined, max: undefined } : (shapeOrOptions ?? {});
  let item = PARAM_SCHEMAS[type]() as z.ZodType<unknown, string>;
  if (min !== undefined || max !== undefined) {
    let bounded = z.int();
    if (min !== undefined) bounded = bounded.min(min);
    if (max !== undefined) bounded = bounded.max(max);
    item = (item as z.ZodType<number, string>).pipe(bounded).meta({ type: 'integer', minimum: min, maximum: max });
  }
  if (!shape) return item;
  return z
    .string()
    .transform((s, ctx) => {
      const parts = s.split(',').map((p) => p.trim());
      if (shape === 'in' && parts.length > MAX_LIST_ITEMS) {
        ctx.issues.push(tooManyItems(s));
        return z.NEVER;
      }
      if (shape === 'range' && parts.length !== 2) {
        const few = parts.length < 2;
        ctx.issues.push({
          code: 'custom',
          message: `Tuple should have ${few ? 'at least' : 'at most'} 2 items after validation, not ${parts.length}`,
          params: { type: few ? 'too_short' : 'too_long' },
          input: s,
        });
        return z.NEVER;
      }
      const values: unknown[] = [];
      for (const part of parts) {
        const result = item.safeParse(part, { reportInput: true });
        if (!result.success) {
          for (const issue of result.error.issues) ctx.issues.push({ ...issue, path: [], input: part } as never);
          return z.NEVER;
        }
        values.push(result.data);
      }
      return values;
    })
    .meta({ type: 'string', description: SHAPE_WORDS[shape] });
}

/** The filter values among a list's validated query parameters (those `schema` declares, when present). */
export function pickFilters<S extends z.ZodObject>(schema: S): (params: Readonly<Record<string, unknown>>) => z.output<S> {
  const keys = Object.keys(schema.shape);
  return (params) => {
    const out: Record<string, unknown> = {};
    for (const key of keys) if (params[key] !== undefined) out[key] = params[key];
    return out as z.output<S>;
  };
}
