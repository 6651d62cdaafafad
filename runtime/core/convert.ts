/**
 * Value conversions between the database drivers and JSON, identical on SQLite and PostgreSQL.
 * Generated row mappers call these; each is a small pure function.
 */

/* Column values to JSON. Generated mappers test for null first, so these take non-null values. */

/** SQLite stores booleans as 0/1. */
export function asBool(value: unknown): boolean {
  return value === true || value === 1 || value === '1' || value === 't';
}

/** Datetimes are ISO 8601 strings in UTC. PostgreSQL returns Date objects, SQLite the stored string. */
export function asDateTime(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  // What the service stores is already in the form toISOString gives: answered as it is, not parsed.
  if (typeof value === 'string' && isIsoUtc(value)) return value;
  const d = new Date(typeof value === 'number' ? value : String(value));
  return Number.isNaN(d.getTime()) ? String(value) : d.toISOString();
}

/** The digit at `i` of `s`; past any sum of a few digits below zero when it is not one. */
function digit(s: string, i: number): number {
  const d = s.charCodeAt(i) - 48;
  return d >= 0 && d <= 9 ? d : -10_000;
}

const DAYS_IN_MONTH = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether `s` is a time as `Date.prototype.toISOString` writes it for the years 0 to 9999
 * (`YYYY-MM-DDTHH:mm:ss.sssZ`), naming a day and time that exist: the string `new Date(s).toISOString()`
 * gives back unchanged. Anything else (another form, a 30th of February, which the parser moves
 * to March) is left to the parser.
 */
export function isIsoUtc(s: string): boolean {
  if (s.length !== 24) return false;
  if (s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 84) return false; // - - T
  if (s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58 || s.charCodeAt(19) !== 46 || s.charCodeAt(23) !== 90) return false; // : : . Z
  const year = digit(s, 0) * 1000 + digit(s, 1) * 100 + digit(s, 2) * 10 + digit(s, 3);
  const month = digit(s, 5) * 10 + digit(s, 6);
  const day = digit(s, 8) * 10 + digit(s, 9);
  const hour = digit(s, 11) * 10 + digit(s, 12);
  const minute = digit(s, 14) * 10 + digit(s, 15);
  const second = digit(s, 17) * 10 + digit(s, 18);
  const ms = digit(s, 20) * 100 + digit(s, 21) * 10 + digit(s, 22);
  if (
    year < 0 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    hour < 0 ||
    hour > 23 ||
    minute < 0 ||
    minute > 59 ||
    second < 0 ||
    second > 59 ||
    ms < 0
  ) {
    return false;
  }
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 && leap ? 29 : DAYS_IN_MONTH[month]);
}

/** Dates are `YYYY-MM-DD` strings (PostgreSQL's DATE parser is set to return the text). */
export function asDate(value: unknown): string {
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  return String(value).slice(0, 10);
}

/** Decimals travel as strings with their scale, so no precision is lost in JSON. */
export function asDecimal(value: unknown, scale: number): string {
  const n = Number(value);
  if (typeof value === 'number' || (Number.isFinite(n) && /^-?\d+(\.\d+)?$/.test(String(value)))) {
    const [int, frac = ''] = String(typeof value === 'number' ? value.toFixed(scale) : value).split('.');
    return scale > 0 ? `${int}.${frac.padEnd(scale, '0').slice(0, scale)}` : int;
  }
  return String(value);
}

/** JSON columns are read as text on both databases (see db/dialects/postgres.ts). */
export function asJson(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value;
}

/**
 * A list column's value as a JSON array, in its order: PostgreSQL reads a native array, SQLite and
 * MySQL the JSON text they hold (db/dialects: `listColumnType`).
 */
export function asList<T>(value: unknown): T[] {
  const list: unknown = typeof value === 'string' ? JSON.parse(value) : value;
  return Array.isArray(list) ? (list as T[]) : [];
}

/** Values written to the database. */
export const toDb = {
  dateTime<T extends string | null | undefined>(value: T): T {
    return (typeof value === 'string' ? new Date(value).toISOString() : value) as T;
  },
  /** A JSON `null` is stored as the JSON text `null`, never as SQL NULL. */
  json(value: unknown): string | undefined {
    return value === undefined ? undefined : JSON.stringify(value);
  },
};

/** The current time, for `auto_now` / `auto_now_add` fields. */
export function now(): string {
  return new Date().toISOString();
}
