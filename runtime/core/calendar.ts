/**
 * The calendar both databases store alike: years 0001 to 9999. PostgreSQL has no year 0 and
 * refuses it with an error; SQLite keeps dates as text and would store anything; JavaScript dates
 * reach years far beyond 9999 and before year 1. A date or datetime outside this range is a 422 on
 * both, wherever it arrives (a body field, a query filter, a path key), checked on the instant in
 * UTC, the form datetimes are stored in.
 */

export const MIN_DATE = '0001-01-01';
export const MAX_DATE = '9999-12-31';
export const MIN_DATETIME = '0001-01-01T00:00:00.000Z';
export const MAX_DATETIME = '9999-12-31T23:59:59.999Z';

const MIN_TIME = Date.parse(MIN_DATETIME);
const MAX_TIME = Date.parse(MAX_DATETIME);

/** The entry of a date outside the range. */
export const DATE_OUT_OF_RANGE = { type: 'date_out_of_range', msg: `Date should be between ${MIN_DATE} and ${MAX_DATE}` } as const;
/** The entry of a datetime whose instant in UTC is outside the range. */
export const DATETIME_OUT_OF_RANGE = {
  type: 'datetime_out_of_range',
  msg: `Datetime should be between ${MIN_DATETIME} and ${MAX_DATETIME}`,
} as const;

/** Whether `text` is exactly a `YYYY-MM-DD` date that exists (no February 30th). */
export function isCalendarDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const day = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === text;
}

/** Whether a `YYYY-MM-DD` date (or the date part of a longer ISO text) is in the storable range. */
export function storableDate(text: string): boolean {
  const day = text.slice(0, 10);
  return day >= MIN_DATE && day <= MAX_DATE;
}

/** Whether an instant (a Date or anything `Date` parses) is in the storable range. */
export function storableInstant(value: Date | string): boolean {
  const time = value instanceof Date ? value.getTime() : Date.parse(value);
  return time >= MIN_TIME && time <= MAX_TIME;
}
