/**
 * Database outages: a request that fails because the database cannot be reached is a 503
 * `{"detail": "Service Unavailable"}` with `Retry-After`, not a 500. The outage is logged once when
 * it starts and once when it ends (at the first query that succeeds after it), not once per request,
 * and the service recovers by itself: the pool opens new connections as soon as the database answers.
 */
import type { Request } from 'express';
import type { Db } from './connection';

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

/**
 * PostgreSQL SQLSTATEs: class 08 (connection exception), 53300 too_many_connections, 57P01
 * admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 57P05 idle_session_timeout.
 */
const PG_CODES = /^(08[0-9A-Z]{3}|53300|57P0[1235])$/;

/** SQLite: the file is locked beyond the busy timeout, cannot be opened, or cannot be read or written. */
const SQLITE_CODES = /^SQLITE_(BUSY|CANTOPEN|IOERR|PROTOCOL)(_|$)/;

/** What node-postgres says when a connection ends under it or never opens. */
const PG_MESSAGES = /^(Connection terminated|timeout expired|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)/;

/**
 * Whether `err` means the database cannot be reached, as opposed to a query that failed: socket
 * errors, the PostgreSQL and SQLite codes above, node-postgres's connection messages and the pool's
 * acquire timeout. Looks through `cause` and the errors of an AggregateError.
 */
export function isConnectionFailure(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 4) return false;
  const { code, name, message, cause, errors } = err as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || PG_CODES.test(code) || SQLITE_CODES.test(code))) return true;
  if (name === 'KnexTimeoutError') return true;
  if (typeof message === 'string' && PG_MESSAGES.test(message)) return true;
  if (Array.isArray(errors) && errors.some((e) => isConnectionFailure(e, depth + 1))) return true;
  return isConnectionFailure(cause, depth + 1);
}

/** The error's code and message (errors of native drivers may come from another realm: no instanceof). */
function describe(err: unknown): string {
  if (!err || typeof err !== 'object') return String(err);
  const { code, message, errors, name } = err as { code?: unknown; message?: unknown; errors?: unknown; name?: unknown };
  const text = typeof message === 'string' && message ? message : Array.isArray(errors) && errors.length ? describe(errors[0]) : String(name ?? err);
  return typeof code === 'string' && !text.includes(code) ? `${code}: ${text}` : text;
}

/**
 * Tracks one database's outage and logs its start and end. `failed` is called for each request that
 * failed on a connection error; the end is the first query that started after the outage began and
 * succeeded (queries already running when it began do not count).
 */
export class OutageMonitor {
  private since: number | undefined;
  private unavailable = 0;
  private readonly started = new Set<unknown>();

  /** `log` gets the request that found the outage with its start, for its id. */
  constructor(db: Db, private readonly log: (message: string, req?: Request) => void) {
    db.on('query', (query: { __knexQueryUid?: unknown }) => {
      if (this.since !== undefined && this.started.size < 10_000) this.started.add(query.__knexQueryUid);
    });
    db.on('query-error', (_error: unknown, query: { __knexQueryUid?: unknown }) => {
      this.started.delete(query.__knexQueryUid);
    });
    db.on('query-response', (_response: unknown, query: { __knexQueryUid?: unknown }) => {
      if (this.since !== undefined && this.started.has(query.__knexQueryUid)) this.recovered();
    });
  }

  /** Whether an outage is under way. */
  get down(): boolean {
    return this.since !== undefined;
  }

  /** A request failed because the database cannot be reached; the first one logs the start. */
  failed(err: unknown, req?: Request): void {
    this.unavailable += 1;
    if (this.since !== undefined) return;
    this.since = Date.now();
    this.unavailable = 1;
    this.log(`database outage: ${describe(err)}; answering 503 Service Unavailable until the database answers again`, req);
  }

  private recovered(): void {
    const seconds = ((Date.now() - (this.since ?? Date.now())) / 1000).toFixed(1);
    this.log(`database outage over after ${seconds} s; ${this.unavailable} request${this.unavailable === 1 ? ' was' : 's were'} answered 503`);
    this.since = undefined;
    this.started.clear();
  }
}
