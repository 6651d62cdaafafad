/**
 * Request validation: Zod issues rendered as the error catalogue's `{type, loc, msg}` entries.
 */
import type { z } from 'zod';
import { INT_TYPE_MESSAGE } from './fields';
import { RequestValidationError, ValidationError, type ValidationEntry } from '../core/errors';

type Issue = z.core.$ZodIssue & { input?: unknown };

const EXPECTED: Record<string, [string, string]> = {
  string: ['string_type', 'Input should be a valid string'],
  number: ['float_type', 'Input should be a valid number'],
  int: ['int_type', 'Input should be a valid integer'],
  boolean: ['bool_type', 'Input should be a valid boolean'],
  object: ['model_attributes_type', 'Input should be a valid dictionary or object to extract fields from'],
  array: ['list_type', 'Input should be a valid list'],
  date: ['date_type', 'Input should be a valid date'],
};

const FORMATS: Record<string, [string, string]> = {
  email: ['value_error', 'value is not a valid email address'],
  url: ['url_parsing', 'Input should be a valid URL'],
  uuid: ['uuid_parsing', 'Input should be a valid UUID'],
  date: ['date_parsing', 'Input should be a valid date in the format YYYY-MM-DD'],
  datetime: ['datetime_parsing', 'Input should be a valid datetime in ISO 8601 format'],
  regex: ['string_pattern_mismatch', 'String does not match the expected format'],
};

function describe(issue: Issue): [string, string] {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return ['missing', 'Field required'];
      if (issue.message === INT_TYPE_MESSAGE || issue.expected === 'int') return ['int_type', INT_TYPE_MESSAGE];
      return EXPECTED[issue.expected] ?? [`${issue.expected}_type`, `Input should be a valid ${issue.expected}`];
    case 'too_big':
      if (issue.origin === 'string') return ['string_too_long', `String should have at most ${issue.maximum} characters`];
      if (issue.origin === 'array' || issue.origin === 'set') return ['too_long', `List should have at most ${issue.maximum} items`];
      return ['less_than_equal', `Input should be less than or equal to ${issue.maximum}`];
    case 'too_small':
      if (issue.origin === 'string')
        return ['string_too_short', `String should have at least ${issue.minimum} character${issue.minimum === 1 ? '' : 's'}`];
      if (issue.origin === 'array' || issue.origin === 'set') return ['too_short', `List should have at least ${issue.minimum} items`];
      return ['greater_than_equal', `Input should be greater than or equal to ${issue.minimum}`];
    case 'invalid_format':
      return FORMATS[issue.format] ?? ['value_error', issue.message];
    case 'invalid_value':
      return ['enum', `Input should be ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}`];
    case 'unrecognized_keys':
      return ['extra_forbidden', 'Extra inputs are not permitted'];
    case 'custom': {
      const type = (issue.params as { type?: unknown } | undefined)?.type;
      return [typeof type === 'string' ? type : 'value_error', issue.message];
    }
    case 'invalid_union': {
      // Report the most specific branch: the last one (e.g. the URL after the empty-string literal).
      const branch = issue.errors[issue.errors.length - 1]?.[0];
      return branch ? describe({ ...branch, input: issue.input } as Issue) : ['value_error', issue.message];
    }
    case 'not_multiple_of':
      return ['multiple_of', `Input should be a multiple of ${issue.divisor}`];
    default:
      return ['value_error', issue.message];
  }
}

/**
 * Turns Zod issues into entries whose `loc` starts with `prefix` (e.g. `['body', 'data']`, `['query']`).
 * Keys a strict object does not know are one entry each, at the key (as Pydantic's `extra="forbid"`).
 */
export function toEntries(issues: readonly z.core.$ZodIssue[], prefix: readonly (string | number)[]): ValidationEntry[] {
  return issues.flatMap((issue) => {
    const [type, msg] = describe(issue as Issue);
    const loc = [...prefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    if (issue.code === 'unrecognized_keys') return issue.keys.map((key) => ({ type, loc: [...loc, key], msg }));
    return [{ type, loc, msg }];
  });
}

/** Where a request value comes from, and the `loc` prefix of its validation entries. */
export const LOC = {
  body: ['body', 'data'],
  query: ['query'],
  path: ['path'],
} as const;

/** The entry of a string that holds a NUL character, which PostgreSQL cannot store in text. */
export const NUL_CHARACTER = { type: 'null_characters_not_allowed', msg: 'String should not contain null characters' } as const;

/**
 * The entry of a string that holds a lone surrogate (a JSON escape such as `"\ud800"` without its
 * pair): no UTF-8 encodes it, so each database would store something else (U+FFFD once on
 * PostgreSQL and MariaDB, three times on SQLite) or refuse it.
 */
export const LONE_SURROGATE = { type: 'string_unicode', msg: 'String should not contain lone surrogates' } as const;

/** What is wrong with a string no database stores as it is. */
type BadString = typeof NUL_CHARACTER | typeof LONE_SURROGATE;

type Path = (string | number)[];

/** The definition of a Zod schema, as far as the walk below reads it. */
interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  element?: z.ZodType;
  getter?: () => z.ZodType;
}

const defOf = (schema: z.ZodType | undefined): Def | undefined => (schema as { _zod?: { def: Def } } | undefined)?._zod?.def;

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'nonoptional', 'readonly', 'catch']);

/** Whether a string holds a NUL character or a lone surrogate: what `badString` names. */
const hasNul = (text: string) => text.includes('\u0000') || !(text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** What is wrong with a string `hasNul` found: a NUL character first. */
const badString = (text: string): BadString => (text.includes('\u0000') ? NUL_CHARACTER : LONE_SURROGATE);

/** A string found bad, where. */
interface Found {
  path: Path;
  entry: BadString;
}

/** At most this many NUL entries are reported for one value (a body may hold any number of strings). */
const MAX_NUL_ENTRIES = 100;

/** A place in a value: its key and the place of its parent, so a path is built only for a string that needs one. */
interface Place {
  key: string | number;
  parent: Place | undefined;
}

function pathOf(base: Path, place: Place | undefined): Path {
  const keys: (string | number)[] = [];
  for (let p = place; p; p = p.parent) keys.push(p.key);
  return [...base, ...keys.reverse()];
}

/** Every string in `value`, object keys included, depth first without recursion (free-form JSON may nest deeply). */
function allNulPaths(value: unknown, base: Path, out: Found[]): void {
  const stack: [unknown, Place | undefined][] = [[value, undefined]];
  while (stack.length > 0 && out.length < MAX_NUL_ENTRIES) {
    const [item, place] = stack.pop()!;
    if (typeof item === 'string') {
      if (hasNul(item)) out.push({ path: pathOf(base, place), entry: badString(item) });
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push([item[i], { key: i, parent: place }]);
    } else if (item !== null && typeof item === 'object') {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i];
        const at = { key, parent: place };
        stack.push([child, at]);
        if (hasNul(key)) stack.push([key, at]);
      }
    }
  }
}

/**
 * Whether any string in `value`, object keys included, holds a NUL character: the walk of almost every
 * request, which finds none and so builds no path (free-form JSON may nest deeply: no recursion).
 */
function anyNul(value: unknown): boolean {
  if (typeof value === 'string') return hasNul(value);
  if (value === null || typeof value !== 'object') return false;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') {
      if (hasNul(item)) return true;
    } else if (Array.isArray(item)) {
      for (const child of item) stack.push(child);
    } else if (item !== null && typeof item === 'object') {
      for (const key in item) {
        if (!Object.hasOwn(item, key)) continue;
        if (hasNul(key)) return true;
        stack.push((item as Record<string, unknown>)[key]);
      }
    }
  }
  return false;
}

/**
 * The paths of the strings in `value` that hold a NUL character, among the values `schema` keeps:
 * object keys the schema does not declare are dropped by it and not looked at. Below any other kind
 * of schema (a union, a record, free-form JSON) every string is looked at, object keys included.
 */
function nulPaths(schema: z.ZodType | undefined, value: unknown, path: Path, out: Found[], depth = 0): void {
  if (typeof value === 'string') {
    if (hasNul(value) && out.length < MAX_NUL_ENTRIES) out.push({ path, entry: badString(value) });
    return;
  }
  if (value === null || typeof value !== 'object' || out.length >= MAX_NUL_ENTRIES) return;
  let def = defOf(schema);
  for (let i = 0; def && i < 16; i++) {
    const inner = WRAPPERS.has(def.type) ? def.innerType : def.type === 'pipe' ? def.in : def.type === 'lazy' ? def.getter?.() : undefined;
    if (!inner) break;
    def = defOf(inner);
  }
  if (depth < 32 && def?.type === 'object' && !Array.isArray(value)) {
    const shape = def.shape ?? {};
    const rest = defOf(def.catchall)?.type === 'never' ? undefined : def.catchall;
    for (const [key, item] of Object.entries(value)) {
      const field = Object.hasOwn(shape, key) ? shape[key] : rest;
      if (field) nulPaths(field, item, [...path, key], out, depth + 1);
    }
    return;
  }
  if (depth < 32 && def?.type === 'array' && Array.isArray(value)) {
    value.forEach((item, i) => nulPaths(def.element, item, [...path, i], out, depth + 1));
    return;
  }
  allNulPaths(value, path, out);
}

/** The top-level field names of an object schema, in order, to sort entries by. */
function fieldOrder(schema: z.ZodType): string[] {
  let def = defOf(schema);
  for (let i = 0; def && WRAPPERS.has(def.type) && i < 16; i++) def = defOf(def.innerType);
  return def?.type === 'object' ? Object.keys(def.shape ?? {}) : [];
}

const startsWith = (path: readonly (string | number)[], prefix: readonly (string | number)[]) =>
  prefix.length <= path.length && prefix.every((p, i) => p === path[i]);

/** What a fast parser answers for an input it leaves to the schema. */
export const NOT_FAST: unique symbol = Symbol('not fast');

/**
 * A fast parser of a schema: for the common valid inputs of a request part (a key in a path, a
 * query string without parameters), the output the schema gives, without running it; for any other
 * input NOT_FAST, and the schema decides (and words the errors). It must accept only inputs the
 * schema accepts, and give the same output for them.
 */
export type FastParse = (value: unknown) => unknown;

/**
 * Schemas' fast parsers; null: the schema has none (an object's is derived once, `fastParseOf`).
 * A value derived from a schema, kept beside Zod's objects rather than on them; no service state.
 */
const FAST = new WeakMap<z.ZodType, FastParse | null>();

/** Gives `schema` a fast parser (see FastParse); returns the schema. */
export function withFastParse<S extends z.ZodType>(schema: S, parse: FastParse): S {
  FAST.set(schema, parse);
  return schema;
}

function fastParseOf(schema: z.ZodType): FastParse | null {
  let fast = FAST.get(schema);
  if (fast === undefined) FAST.set(schema, (fast = objectFastParse(schema)));
  return fast;
}

/**
 * The fast parser of an object (one that drops unknown keys) whose fields each have a fast parser
 * or may be absent: an absent field that is optional in and out stays absent, as the schema leaves
 * it (Zod reads presence with `in`); unknown keys are dropped.
 */
function objectFastParse(schema: z.ZodType): FastParse | null {
  const def = defOf(schema);
  if (def?.type !== 'object' || def.catchall !== undefined || !def.shape) return null;
  const fields = Object.entries(def.shape).map(([key, field]) => {
    const { optin, optout } = (field as unknown as { _zod: { optin?: string; optout?: string } })._zod;
    return { key, parse: FAST.get(field) ?? undefined, mayBeAbsent: optin === 'optional' && optout === 'optional' };
  });
  if (fields.some((f) => !f.parse && !f.mayBeAbsent)) return null;
  return (value) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return NOT_FAST;
    const out: Record<string, unknown> = {};
    for (const { key, parse, mayBeAbsent } of fields) {
      if (!(key in value)) {
        if (mayBeAbsent) continue;
        return NOT_FAST;
      }
      const parsed = parse ? parse((value as Record<string, unknown>)[key]) : NOT_FAST;
      if (parsed === NOT_FAST) return NOT_FAST;
      out[key] = parsed;
    }
    return out;
  };
}

/**
 * Runs `schema` on a request value, with one rule on top for every database alike: no string the
 * schema accepts may hold a NUL character or a lone surrogate. Returns the data, or the entries (`loc` without prefix)
 * in schema order; a NUL character is reported only where the schema found nothing else, after
 * the entries of the fields before it. A value the schema's fast parser takes is its output at once.
 */
function check<S extends z.ZodType>(schema: S, value: unknown): { data: z.output<S> } | { entries: ValidationEntry[] } {
  const fast = fastParseOf(schema);
  if (fast && !anyNul(value)) {
    const data = fast(value);
    if (data !== NOT_FAST) return { data: data as z.output<S> };
  }
  const result = schema.safeParse(value, { reportInput: true });
  const nul: Found[] = [];
  if (anyNul(value)) nulPaths(schema, value, [], nul);
  if (result.success && nul.length === 0) return { data: result.data };
  const entries = result.success ? [] : toEntries(result.error.issues, []);
  const order = fieldOrder(schema);
  const rank = (loc: readonly (string | number)[]) => {
    const i = order.indexOf(String(loc[0]));
    return i < 0 ? order.length : i;
  };
  for (const { path, entry } of nul) {
    if (entries.some((e) => startsWith(path, e.loc) || startsWith(e.loc, path))) continue;
    const at = entries.findIndex((e) => rank(e.loc) > rank(path));
    entries.splice(at < 0 ? entries.length : at, 0, { ...entry, loc: path });
  }
  return { entries };
}

/**
 * Runs `schema` on one value of a request body (an item of a bulk request): its data, or its
 * entries with `loc` starting at `at` (e.g. `['body', 'data', 3]`).
 */
export function checkBodyValue<S extends z.ZodType>(
  schema: S,
  value: unknown,
  at: readonly (string | number)[],
): { data: z.output<S> } | { entries: ValidationEntry[] } {
  const result = check(schema, value);
  if ('data' in result) return result;
  return { entries: result.entries.map((e) => ({ ...e, loc: [...at, ...e.loc] })) };
}

/**
 * Parses a request value with `schema`, or throws a 422 whose entries' `loc` starts with the source.
 * Schemas are built once at module load; this only runs them.
 */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, source: keyof typeof LOC): z.output<S> {
  const result = check(schema, value);
  if ('data' in result) return result.data;
  throw new RequestValidationError(result.entries.map((e) => ({ ...e, loc: [...LOC[source], ...e.loc] })));
}

/**
 * For custom code: `value` parsed by `schema`, or the error catalogue's 400
 * `{"error": "Validation Error", "details": [{type, loc, msg}, ...]}` thrown when it does not match
 * (a ZodError a hook throws, from `schema.parse(value)`, is answered the same).
 */
export function validateData<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = check(schema, value);
  if ('data' in result) return result.data;
  throw new ValidationError(result.entries);
}
