/**
 * Zod schemas for values that arrive as strings (query string and path), with the
 * error catalogue's validation types: a bad integer is `int_parsing`, a bad bool `bool_parsing`, ...
 * Each is built once and reused by every route.
 */
import { DATE_OUT_OF_RANGE, DATETIME_OUT_OF_RANGE, isCalendarDate, storableDate, storableInstant } from '../core/calendar';
import { NOT_FAST, withFastParse } from './validate';
import { z } from '../core/zod';

function parsing<T>(type: string, msg: string, parse: (s: string) => T | undefined, openapiType: string) {
  return z
    .string()
    .transform((s, ctx) => {
      const value = parse(s.trim());
      if (value === undefined) {
        ctx.issues.push({ code: 'custom', message: msg, params: { type }, input: s });
        return z.NEVER;
      }
      return value;
    })
    .meta({ type: openapiType }) as unknown as z.ZodType<T, string>;
}

/** A parsed value checked against the range both databases store (see core/calendar.ts). */
function outOfRange(schema: z.ZodType<string, string>, storable: (value: string) => boolean, entry: { type: string; msg: string }) {
  return schema.refine(storable, { message: entry.msg, params: { type: entry.type } }) as z.ZodType<string, string>;
}

const intPattern = /^[+-]?\d+$/;

/** An integer as an application writes one: no sign but minus, no spaces, at most 15 digits (safe). */
const PLAIN_INT = /^-?\d{1,15}$/;

/**
 * An integer from a string (a key in a path), within `min`…`max`: `fromString.int()` checked against
 * the range, with a fast parser for a plain integer within it (the same number, without running the
 * schema); anything else, the schema decides.
 */
export function intFromString(min: number, max: number): z.ZodType<number, string> {
  const schema = fromString.int().pipe(z.int().min(min).max(max));
  return withFastParse(schema, (value) => {
    if (typeof value !== 'string' || !PLAIN_INT.test(value)) return NOT_FAST;
    const n = Number(value);
    return n >= min && n <= max ? n : NOT_FAST;
  });
}

export const fromString = {
  int: () =>
    parsing(
      'int_parsing',
      'Input should be a valid integer, unable to parse string as an integer',
      (s) => (intPattern.test(s) && Number.isSafeInteger(Number(s)) ? Number(s) : undefined),
      'integer',
    ),
  float: () =>
    parsing(
      'float_parsing',
      'Input should be a valid number, unable to parse string as a number',
      (s) => {
        const n = s === '' ? NaN : Number(s);
        return Number.isFinite(n) ? n : undefined;
      },
      'number',
    ),
  bool: () =>
    parsing(
      'bool_parsing',
      'Input should be a valid boolean, unable to interpret input',
      (s) => (/^(true|1|yes|on|t|y)$/i.test(s) ? true : /^(false|0|no|off|f|n)$/i.test(s) ? false : undefined),
      'boolean',
    ),
  str: () => z.string(),
  date: () =>
    outOfRange(
      parsing(
        'date_parsing',
        'Input should be a valid date in the format YYYY-MM-DD',
        (s) => (isCalendarDate(s) ? s : undefined),
        'string',
      ),
      storableDate,
      DATE_OUT_OF_RANGE,
    ),
  datetime: () =>
    outOfRange(
      parsing(
        'datetime_parsing',
        'Input should be a valid datetime in ISO 8601 format',
        (s) => {
          if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(s)) return undefined;
          const d = new Date(s.length === 10 ? `${s}T00:00:00Z` : s);
          return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
        },
        'string',
      ),
      storableInstant,
      DATETIME_OUT_OF_RANGE,
    ),
  uuid: () => z.uuid(),
};
