/**
 * What a driver's error means, as the dialect adapters read their drivers' codes: a constraint
 * violation (a 409) or a database that cannot be reached (a 503). An error does not say which
 * database threw it, so every adapter is asked; the socket errors of Node and Knex's pool timeout
 * are the same for every database.
 */
import { DIALECTS } from './dialects';
import { isMarkedConnectionFailure, type ConstraintViolation, type DriverError } from './dialects/dialect';

/** Node's socket errors: the server refused, dropped or never answered the connection. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** Whether a driver error is a constraint violation (SQLite's SQLITE_CONSTRAINT*, PostgreSQL's class 23…). */
export function isConstraintViolation(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  return DIALECTS.some((d) => d.isConstraintViolation(err as DriverError));
}

/**
 * Whether `err` means the database cannot be reached, as opposed to a query that failed: socket
 * errors, Knex's timeouts (KnexTimeoutError: no connection within the acquire timeout), errors
 * marked by the pool or the connection they broke (`markConnectionFailure`), and what each adapter
 * knows of its driver's codes. Decided by codes, classes and marks, never by message text (Knex
 * puts the statement before a driver's message). Looks through `cause` and the errors of an AggregateError.
 */
export function isConnectionFailure(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false;
  const { code, name, cause, errors } = err as { code?: unknown; name?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string' && SOCKET_CODES.has(code)) return true;
  if (name === 'KnexTimeoutError' || isMarkedConnectionFailure(err)) return true;
  if (DIALECTS.some((d) => d.isConnectionFailure(err as DriverError))) return true;
  if (Array.isArray(errors) && errors.some((e) => isConnectionFailure(e, depth + 1))) return true;
  return isConnectionFailure(cause, depth + 1);
}

/** What the adapter of the database that threw `err` says of the constraint it broke; undefined when it is no constraint violation. */
export function constraintViolationOf(err: unknown): ConstraintViolation | undefined {
  if (!err || typeof err !== 'object') return undefined;
  for (const d of DIALECTS) {
    const violation = d.constraintOf(err as DriverError);
    if (violation) return violation;
  }
  return undefined;
}
