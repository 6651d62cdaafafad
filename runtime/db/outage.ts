/**
 * Database outages: a request that fails because the database cannot be reached is a 503
 * `{"detail": "Service Unavailable"}` with `Retry-After`, not a 500. The outage is logged once when
 * it starts and once when it ends (at the first query that succeeds after it), not once per request,
 * and the service recovers by itself: the pool opens new connections as soon as the database answers.
 * Which errors are an outage is `isConnectionFailure`'s answer (driver-errors.ts).
 *
 * Log lines about a database error name the statement (its SQL text, placeholders unfilled) and the
 * driver's code and message, never a value bound to it: a registration that meets an outage must
 * not put its email and password hash in the log (`loggableError`).
 */
import type { Request } from 'express';
import { QUERY_UID, type Db } from './connection';
import { DIALECTS } from './dialects';
import type { DriverError } from './dialects/dialect';

/** The id of the connection a query ran on, in Knex's query events (named in Knex's docs of its events). */
const CONNECTION_UID = '__knexUid';

/** The id of a query in a Knex query event (connection.ts). */
function queryUidOf(query: unknown): unknown {
  return (query as Record<string, unknown> | undefined)?.[QUERY_UID];
}

/**
 * The driver's own message of an error of the statement `sql`: with `compileSqlOnError: false`
 * (connection.ts), Knex's documented option, Knex puts the statement's SQL text, placeholders
 * unfilled, before the driver's message (`insert into "users" ("email") values ($1) - …`); the
 * message as it is when it does not start so.
 */
function driverMessageOf(message: string, sql: string | undefined): string {
  return sql !== undefined && message.startsWith(`${sql} - `) ? message.slice(sql.length + 3) : message;
}

/**
 * The SQL text (placeholders unfilled) of the statement each failed query error came from, as
 * Knex's `query-error` event tells it, for the log lines about the error (`loggableError`); for a
 * ROLLBACK, also the statement that failed before it on its connection (Knex rejects a transaction
 * with the error of its ROLLBACK when that fails too, as on a terminated connection).
 */
const statements = new WeakMap<object, { sql: string; after?: string }>();

/** The last statement that failed on each connection since its transaction began (by Knex's connection id; at most a few). */
const failedOnConnection = new Map<string, string>();

/** Records the statement of every query of `db` that fails (its SQL text, never its values). */
export function recordFailedStatements(db: Db): void {
  db.on('query', (query: unknown) => {
    const { sql, [CONNECTION_UID]: connection } = (query ?? {}) as { sql?: unknown; [CONNECTION_UID]?: unknown };
    if (typeof connection === 'string' && typeof sql === 'string' && /^BEGIN\b/i.test(sql)) failedOnConnection.delete(connection);
  });
  db.on('query-error', (error: unknown, query: unknown) => {
    const { sql, [CONNECTION_UID]: connection } = (query ?? {}) as { sql?: unknown; [CONNECTION_UID]?: unknown };
    if (!error || typeof error !== 'object' || typeof sql !== 'string') return;
    const rollback = /^ROLLBACK\b/i.test(sql);
    const before = typeof connection === 'string' ? failedOnConnection.get(connection) : undefined;
    statements.set(error, rollback && before !== undefined ? { sql, after: before } : { sql });
    if (typeof connection === 'string' && !rollback) {
      if (failedOnConnection.size >= 100) failedOnConnection.clear();
      failedOnConnection.set(connection, sql);
    }
  });
}

/** A statement as a log line shows it: cut at STATEMENT_CHARS. */
function shown(sql: string): string {
  return sql.length > STATEMENT_CHARS ? `${sql.slice(0, STATEMENT_CHARS)}…` : sql;
}

/** The longest statement a log line holds; a longer one is cut, with `…`. */
const STATEMENT_CHARS = 1000;

/**
 * SQLSTATE class 22 (data exception): the message quotes the value at fault
 * (`invalid input syntax for type integer: "…"`, `value "…" is out of range for type integer`).
 */
const VALUE_IN_MESSAGE = /^22[0-9A-Z]{3}$/;

/** An error as a log line holds it: what failed, never a value bound to a statement nor a row. */
export interface LoggableError {
  type: string;
  code?: string;
  message: string;
  /** The SQL text of the failed statement, placeholders unfilled. */
  statement?: string;
  stack?: string;
  cause?: LoggableError;
}

/**
 * What a log line may say of `err`: its type, its code, its message without what the database put
 * of the values in it (Knex's copy of the statement is left out, the quoted value of a data
 * exception replaced by `"?"`), the statement's SQL text with its placeholders, the stack's frames,
 * and its cause the same way. Nothing else: a driver's error carries the row or the key it failed
 * on in its other fields (PostgreSQL's `detail`: `Key (email)=(…) already exists`), which are left out.
 */
export function loggableError(err: unknown, depth = 0): LoggableError {
  if (!err || typeof err !== 'object') return { type: typeof err, message: String(err) };
  const { code, message, name, stack, cause } = err as {
    code?: unknown;
    message?: unknown;
    name?: unknown;
    stack?: unknown;
    cause?: unknown;
  };
  const statement = statements.get(err);
  let text = driverMessageOf(typeof message === 'string' ? message : '', statement?.sql);
  if (typeof code === 'string' && VALUE_IN_MESSAGE.test(code)) text = text.replace(/"(?:[^"]|"")*"/g, '"?"');
  for (const dialect of DIALECTS) if (dialect.messageWithoutValues) text = dialect.messageWithoutValues(err as DriverError, text);
  const type = typeof name === 'string' && name ? name : (err.constructor?.name ?? 'Error');
  const out: LoggableError = { type, message: text };
  if (typeof code === 'string' || typeof code === 'number') out.code = String(code);
  if (statement !== undefined)
    out.statement = statement.after === undefined ? shown(statement.sql) : `${statement.sql} after ${shown(statement.after)}`;
  // The stack's frames under the message written here: its first lines repeat the message as it was thrown.
  if (typeof stack === 'string') out.stack = [`${type}: ${text}`, ...stack.split('\n').filter((line) => /^\s+at /.test(line))].join('\n');
  if (cause !== undefined && depth < 3) out.cause = loggableError(cause, depth + 1);
  return out;
}

/**
 * `loggableError(err)` as the `err` field of a log line, in the layout of pino's error serializer
 * (which a logger may apply to it again, and then keeps it as it is): the causes' messages after
 * the message (`: `), their stacks after the stack (`caused by: `), no other field of theirs.
 */
export function errorLogFields(err: unknown): Omit<LoggableError, 'cause'> {
  const { cause, ...top } = loggableError(err);
  const fields: Omit<LoggableError, 'cause'> = Object.assign(Object.create(null), top);
  for (let c = cause; c; c = c.cause) {
    fields.message += `: ${c.message}`;
    if (fields.stack !== undefined && c.stack !== undefined) fields.stack += `\ncaused by: ${c.stack}`;
  }
  return fields;
}

/** The error's code, message and statement, in one line without values (errors of native drivers may come from another realm: no instanceof). */
function describe(err: unknown): string {
  if (!err || typeof err !== 'object') return String(err);
  const { errors } = err as { errors?: unknown };
  const { code, message, statement } = loggableError(err);
  if (!message && Array.isArray(errors) && errors.length) return describe(errors[0]);
  const text = message || String((err as { name?: unknown }).name ?? err);
  const line = code !== undefined && !text.includes(code) ? `${code}: ${text}` : text;
  return statement === undefined ? line : `${line}, in ${statement}`;
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
  constructor(
    db: Db,
    private readonly log: (message: string, req?: Request) => void,
  ) {
    recordFailedStatements(db);
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
    this.log(
      `database outage over after ${seconds} s; ${this.unavailable} request${this.unavailable === 1 ? ' was' : 's were'} answered 503`,
    );
    this.since = undefined;
    this.started.clear();
  }
}
