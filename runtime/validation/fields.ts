/**
 * Zod schemas for field kinds that need more than one Zod call. Built once per generated schema.
 */
import { DATE_OUT_OF_RANGE, DATETIME_OUT_OF_RANGE, storableDate, storableInstant } from '../core/calendar';
import { z } from '../core/zod';

/** A decimal as a string or number with at most `maxDigits` digits, `places` of them after the point. Output: the string. */
export function decimalInput(maxDigits: number, places: number) {
  const pattern = /^[+-]?(\d+)(?:\.(\d+))?$/;
  return z
    .union([z.string(), z.number()])
    .transform((value, ctx) => {
      const text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : value.trim();
      const m = pattern.exec(text);
      if (!m) {
        ctx.issues.push({ code: 'custom', message: 'Input should be a valid decimal', params: { type: 'decimal_parsing' }, input: value });
        return z.NEVER;
      }
      const intDigits = m[1].replace(/^0+(?=\d)/, '').length;
      const fracDigits = (m[2] ?? '').replace(/0+$/, '').length;
      if (fracDigits > places) {
        ctx.issues.push({
          code: 'custom',
          message: `Decimal input should have no more than ${places} decimal places`,
          params: { type: 'decimal_max_places' },
          input: value,
        });
        return z.NEVER;
      }
      if (intDigits > maxDigits - places) {
        ctx.issues.push({
          code: 'custom',
          message: `Decimal input should have no more than ${maxDigits - places} digits before the decimal point`,
          params: { type: 'decimal_whole_digits' },
          input: value,
        });
        return z.NEVER;
      }
      return text;
    })
    .meta({ type: 'string', format: 'decimal' });
}

/** An http(s) URL; with `blank`, the empty string too. */
export function urlInput(options: { blank: boolean; maxLength: number }) {
  const url = z.url({ protocol: /^https?$/, hostname: z.regexes.domain }).max(options.maxLength);
  return options.blank ? z.union([z.literal(''), url]) : url;
}

/** Shown for a non-integer where an integer is expected; validate.ts reports it as `int_type`. */
export const INT_TYPE_MESSAGE = 'Input should be a valid integer';

/**
 * An integer between `min` and `max`. The bounds are checked first and stop validation, so a value
 * beyond them (e.g. 2**63) is one entry naming the field's own bound, not a second one for Zod's
 * safe-integer range.
 */
export function intInput(min: number, max: number) {
  return z
    .number({ error: (issue) => (issue.code === 'invalid_type' && issue.input !== undefined ? INT_TYPE_MESSAGE : undefined) })
    .min(min, { abort: true })
    .max(max, { abort: true })
    .int({ error: INT_TYPE_MESSAGE });
}

/**
 * A list (a `list` field's value) of `item`s, at most `maxItems` of them. A value that is not a
 * list is one entry: Zod would also measure a string's length against `maxItems`.
 */
export function listInput<T extends z.ZodType>(item: T, maxItems?: number) {
  const list = z.array(item);
  // `when` (a check's condition, which Zod's typings of `max` leave out) skips the check on a value that is not a list.
  const onlyLists = { when: (payload: z.core.ParsePayload) => Array.isArray(payload.value) } as Parameters<typeof list.max>[1];
  return maxItems === undefined ? list : list.max(maxItems, onlyLists);
}

/**
 * How deep a `json` field's value may nest objects and lists: `{"a": [1]}` is 2 deep. MariaDB
 * refuses a JSON value nested 32 deep (a 409, where SQLite and PostgreSQL stored it), and the JSON
 * functions of the others have limits of their own, deeper: a deeper value is a 422 on every
 * database, before it is stored, and what is stored can be read by any of them.
 */
export const JSON_MAX_DEPTH = 20;

/** The 422 entry of a `json` value nested deeper than JSON_MAX_DEPTH. */
export const JSON_TOO_DEEP = { type: 'json_too_deep', msg: `JSON value should be nested at most ${JSON_MAX_DEPTH} levels deep` } as const;

/** Whether `value` (parsed JSON) nests objects and lists more than `max` deep: walked level by level, without recursion, up to the first level past `max`. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const isContainer = (v: unknown): v is object => v !== null && typeof v === 'object';
  let level: object[] = isContainer(value) ? [value] : [];
  for (let depth = 1; level.length > 0; depth++) {
    if (depth > max) return true;
    const next: object[] = [];
    for (const container of level)
      for (const v of Array.isArray(container) ? container : Object.values(container)) if (isContainer(v)) next.push(v);
    level = next;
  }
  return false;
}

/** Any JSON value (the body is JSON already), nested at most JSON_MAX_DEPTH deep; documented as free-form. `undefined` is a missing value. */
export function jsonInput() {
  return z
    .custom<z.core.util.JSONType>((value) => value !== undefined, { message: 'Field required', params: { type: 'missing' }, abort: true })
    .refine((value) => !nestedDeeperThan(value, JSON_MAX_DEPTH), { message: JSON_TOO_DEEP.msg, params: { type: JSON_TOO_DEEP.type } })
    .meta({ type: ['object', 'array', 'string', 'number', 'boolean', 'null'], description: 'Any JSON value' });
}

/** A UUID, stored and compared in canonical lowercase (PostgreSQL lowercases; SQLite compares text as sent). */
export function uuidInput() {
  return z
    .uuid()
    .transform((value) => value.toLowerCase())
    .meta({ type: 'string', format: 'uuid' });
}

/** An ISO 8601 date (`YYYY-MM-DD`) in the years both databases store, 0001 to 9999. */
export function dateInput() {
  // The range is checked only on a valid date: an invalid one gets the format's entry alone.
  const valid = z.iso.date();
  return valid.refine((value) => !valid.safeParse(value).success || storableDate(value), {
    message: DATE_OUT_OF_RANGE.msg,
    params: { type: DATE_OUT_OF_RANGE.type },
  });
}

/**
 * An ISO 8601 datetime, with an offset or `Z`, whose instant in UTC lies in the years both
 * databases store (an offset can move `0001-01-01T00:00` into year 0).
 */
export function dateTimeInput() {
  const valid = z.iso.datetime({ offset: true });
  return valid.refine((value) => !valid.safeParse(value).success || storableInstant(value), {
    message: DATETIME_OUT_OF_RANGE.msg,
    params: { type: DATETIME_OUT_OF_RANGE.type },
  });
}
