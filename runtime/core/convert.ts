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
  const d = new Date(typeof value === 'number' ? value : String(value));
  return Number.isNaN(d.getTime()) ? String(value) : d.toISOString();
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
