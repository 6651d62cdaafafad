/**
 * Database outages: a request that fails because the database cannot be reached is a 503
 * `{"detail": "Service Unavailable"}` with `Retry-After`, not a 500. The outage is logged once when
 * it starts and once when it ends (at the first query that succeeds after it), not once per request,
 * and the service recovers by itself: the pool opens new connections as soon as the database answers.
 * Which errors are an outage is `isConnectionFailure`'s answer (driver-errors.ts).
 */
import type { Request } from 'express';
import type { Db } from './connection';
import { queryUidOf } from './knex-internals';

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
    db.on('query', (query: unknown) => {
      if (this.since !== undefined && this.started.size < 10_000) this.started.add(queryUidOf(query));
    });
    db.on('query-error', (_error: unknown, query: unknown) => {
      this.started.delete(queryUidOf(query));
    });
    db.on('query-response', (_response: unknown, query: unknown) => {
      if (this.since !== undefined && this.started.has(queryUidOf(query))) this.recovered();
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
