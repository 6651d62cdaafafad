/**
 * Database connections: SQLite (better-sqlite3) by default, PostgreSQL from a `postgres://` URL,
 * MySQL/MariaDB from a `mysql://` or `mariadb://` URL, each through its dialect adapter (dialects/); and the reads and writes the runtime runs on them.
 */
import type { EventEmitter } from 'node:events';
import knex, { type Knex } from 'knex';
import { resolveOptional } from '../core/optional-packages';
import { loadDatabaseSettings, loadSqliteSettings, type DatabaseSettings, type SqliteSettings } from '../core/settings';
import { databaseOf, withDatabaseState, type Database } from './database';
import { dialectForUrl, type Dialect } from './dialects';
import { markConnectionFailure, type DirectReads } from './dialects/dialect';
import { ranOnBrokenConnection } from './broken-connections';

export type Db = Knex;
export type { Dialect } from './dialects';
export { STATEMENT_CACHE_SIZE } from './dialects/sqlite-client';

/**
 * The words Knex's warnings about a failed acquire start with (Knex's log texts, which its docs do
 * not promise: should they change, those warnings reach the console again, nothing else).
 */
const CONNECTION_WARNING = /^(Acquire connection error|Connection Error): /;

/**
 * The field of Knex's `query`, `query-response` and `query-error` events that tells one query
 * from another, the same on a query's three events: `__knexQueryUid`, of the object `toSQL()`
 * answers, which Knex's docs say the events carry ("any other information about the query as
 * described in toSQL").
 */
export const QUERY_UID = '__knexQueryUid';

/**
 * Knex's own log: its warnings go to the console, except the connection errors it warns about on
 * every failed acquire, with a stack trace. The API logs a database outage once (see outage.ts).
 * Neither these warnings nor the messages of the errors Knex passes on hold a value bound to a
 * statement: Knex puts the statement's SQL text before a driver's message with its placeholders
 * unfilled (`compileSqlOnError: false`, Knex's option).
 */
const KNEX_LOG = {
  warn(message: unknown) {
    if (typeof message === 'string' && CONNECTION_WARNING.test(message)) return;
    console.warn(message);
  },
};

/**
 * Each database's driver, an optional peer dependency of the runtime that Knex loads when it makes
 * a client: checked first, so that a missing one stops the service with the command installing it.
 */
const DRIVERS: Record<string, [name: string, why: string]> = {
  sqlite: ['better-sqlite3', 'DATABASE_URL is unset or a sqlite: URL, a SQLite database'],
  postgres: ['pg', 'DATABASE_URL is a PostgreSQL URL'],
  mysql: ['mysql2', 'DATABASE_URL is a MySQL/MariaDB URL'],
};

export interface DatabaseConfig {
  dialect: Dialect;
  /** Knex's configuration, carrying the new database's own state (database.ts). */
  knex: Knex.Config;
  /** Shown in logs: the SQLite file or the PostgreSQL URL without its password. */
  description: string;
}

/**
 * `DATABASE_URL` unset → the SQLite file `defaultSqliteFile`; `sqlite:PATH` → that SQLite file;
 * `postgres://…` or `postgresql://…` → PostgreSQL; `mysql://…` or `mariadb://…` → MySQL/MariaDB.
 */
export function databaseConfig(
  url: string | undefined,
  defaultSqliteFile: string,
  sqlite: SqliteSettings = loadSqliteSettings(),
  database: DatabaseSettings = loadDatabaseSettings(),
): DatabaseConfig {
  const dialect = dialectForUrl(url);
  resolveOptional(...DRIVERS[dialect.name]);
  const opened = dialect.open(url, { defaultSqliteFile, sqlite, database });
  return {
    dialect,
    description: opened.description,
    knex: withDatabaseState({ ...opened.knex, compileSqlOnError: false, log: KNEX_LOG }, dialect, opened.reads, database, opened.pooled),
  };
}

/**
 * A Knex instance on DATABASE_URL (`url`); SQLite's tuning, the timeouts and the pool's size come
 * from the environment (settings.ts) unless given. A connection the pool cannot open (refused,
 * timed out, closed during start-up) is a connection failure, whatever the driver's error says.
 */
export function connect(url: string | undefined, defaultSqliteFile: string, sqlite?: SqliteSettings, database?: DatabaseSettings): Db {
  const db = knex(databaseConfig(url, defaultSqliteFile, sqlite, database).knex);
  onAcquireFailure(db);
  databaseOf(db).reads?.attach(db);
  // Knex's `query-error` listeners get the error the query is then rejected with (its readiness probe's too, told as `db`'s).
  db.on('query-error', (err: unknown, query: unknown) => {
    if (ranOnBrokenConnection(query)) markConnectionFailure(err);
  });
  return db;
}

/**
 * Marks every error a connection of `db`'s pool could not be had with as a connection failure:
 * the pool (tarn's, `client.pool` in Knex's types) tells each failed acquisition to its
 * `acquireFail` listeners with the error Knex then rejects the query or transaction with (a timeout
 * becomes a KnexTimeoutError, an outage by its name). A pool that is gone (destroyed) tells nothing.
 */
function onAcquireFailure(db: Db): void {
  const pool = db.client.pool as { on?(event: 'acquireFail', listener: (eventId: number, err: Error) => void): void } | undefined;
  pool?.on?.('acquireFail', (_eventId, err) => markConnectionFailure(err));
}

/** Per database, the connection readiness asks (`probeOf`). */
const probes = new WeakMap<Database, Db>();

/**
 * Where readiness (`/health/ready`) runs its `select 1`: on PostgreSQL and MySQL a pool of one
 * connection of its own, beside the requests' pool, so that a probe never waits behind requests
 * holding every connection of theirs (long transactions are not an outage); it is closed with `db`.
 * On SQLite `db` itself: its one connection checks, before the probe, that the file is still the
 * one it opened (SQLite's transactions are bounded by SVC_DB_TRANSACTION_TIMEOUT).
 */
export function probeOf(db: Db): Db {
  const database = databaseOf(db);
  if (database.reads) return db;
  let probe = probes.get(database);
  if (!probe) {
    const config = db.client.config as Knex.Config;
    const made = knex({ ...config, pool: { ...config.pool, min: 0, max: 1 } });
    onAcquireFailure(made);
    // Its statements are told to `db`'s listeners as `db`'s own: a probe that succeeds ends a logged outage.
    for (const event of ['query', 'query-error', 'query-response'] as const)
      made.on(event, (...args: unknown[]) => db.emit(event, ...args));
    probes.set(database, (probe = made));
    // Closed with `db` (whose `destroy` is its client's).
    const client = db.client as { destroy(callback?: unknown): Promise<void> };
    const destroy = client.destroy;
    client.destroy = async function (this: unknown, callback?: unknown) {
      await made.destroy();
      return destroy.call(this, callback);
    };
  }
  return probe;
}

/** The adapter of `db`'s database (a property read: asked on every query that differs by database). */
export function dialectOf(db: Db): Dialect {
  return databaseOf(db).dialect;
}

/**
 * Tells `db` that a request was received (the API's first middleware calls it): on SQLite, the
 * requests received together share read snapshots (see dialects/sqlite-client.ts).
 */
export function requestsArrived(db: Db): void {
  databaseOf(db).reads?.requestsArrived();
}

/** `count(*)` as a number (PostgreSQL's int8 is parsed as one, see dialects/postgres.ts). */
export function countOf(row: Record<string, unknown> | undefined): number {
  return row ? Number(Object.values(row)[0]) : 0;
}

/** The statements run past Knex's runner, numbered for their listeners (as Knex numbers its queries). */
let directQueries = 0;

/**
 * The rows of a SELECT that Knex built, compiled by Knex (`compiledQuery`). Outside a
 * transaction, where the database serves reads beside Knex's pool (SQLite: `DirectReads`), it runs
 * there (on a connection that never sees another request's uncommitted writes, from a statement
 * prepared once per SQL text) and is reported to `query` and `query-response` listeners as Knex
 * reports its own. In a transaction its reads must see its writes, and run on its connection: on
 * SQLite from a statement prepared once on it (`inTransaction`), elsewhere by Knex from its SQL
 * text; on PostgreSQL outside transactions, by Knex as a named statement (postgres-reads.ts).
 */
export function selectRows(db: Db, query: Knex.QueryBuilder): Promise<Row[]> {
  const database = databaseOf(db);
  const { sql, bindings } = compiledQuery(query);
  return runSelect(db, database, sql, bindings);
}

/** The first row of a SELECT that Knex built (`LIMIT 1`), run as `selectRows` runs it. */
export async function selectFirst(db: Db, query: Knex.QueryBuilder): Promise<Row | undefined> {
  return (await selectRows(db, query.first() as unknown as Knex.QueryBuilder))[0];
}

/** What a query runs as: its SQL text with `?` placeholders and the values they bind, in order. */
interface CompiledQuery {
  sql: string;
  bindings: readonly unknown[];
}

/**
 * The SQL text and bindings of a query Knex built, compiled by Knex on every request (`toSQL()`).
 * What is kept per SQL text (prepared statements, the texts made from it below) is found by the
 * text Knex produced.
 */
function compiledQuery(query: Knex.QueryBuilder): CompiledQuery {
  return query.toSQL();
}

/** Per database, the statements of `selectAround`: by the SELECT's text, then by what made them. */
const statementsAround = new WeakMap<Database, Map<string, WeakMap<object, string>>>();

/**
 * The rows of the statement that `around` makes of the SQL text of a SELECT that Knex built, run as
 * `selectRows` runs the SELECT: `around` binds nothing of its own, the SELECT's values are the
 * statement's. The text is made once per SQL text of the SELECT and `around`: the same string each
 * time, so that the prepared statement kept for it is found.
 */
export function selectAround(db: Db, query: Knex.QueryBuilder, around: (sql: string) => string): Promise<Row[]> {
  const database = databaseOf(db);
  const { sql, bindings } = compiledQuery(query);
  let bySelect = statementsAround.get(database);
  if (!bySelect) statementsAround.set(database, (bySelect = new Map()));
  let byAround = bySelect.get(sql);
  if (!byAround) bySelect.set(sql, (byAround = new WeakMap()));
  let text = byAround.get(around);
  if (text === undefined) byAround.set(around, (text = around(sql)));
  return runSelect(db, database, text, bindings);
}

/**
 * The rows a write that Knex built returns (an insert its dialect's `returning` made), compiled by Knex
 * (`compiledQuery`), run on the connection
 * of `db`, the operation's transaction (`writtenRows`). `also`: expressions the rows return
 * besides, where the statement has a `returning` list (`returningAlso`).
 */
export async function writeReturning(db: Db, query: Knex.QueryBuilder, also?: string): Promise<Row[]> {
  const database = databaseOf(db);
  const { sql, bindings } = compiledQuery(query);
  const text = also ? returningAlso(database, sql, also) : sql;
  return writtenRows(db, database, text, bindings, query);
}

/**
 * Runs a write that returns rows, by Knex from its SQL text, its values as the database binds them
 * where it serves reads beside Knex's pool (SQLite: a list as its JSON text).
 */
async function writtenRows(
  db: Db,
  database: Database,
  sql: string,
  bindings: readonly unknown[],
  query: Knex.QueryBuilder,
): Promise<Row[]> {
  if (db.isTransaction) {
    refusePastDeadline(db as Knex.Transaction);
    const rows = inTransaction(db as Knex.Transaction, database, 'insert', sql, bindings);
    if (rows) return rows;
  }
  const values = database.reads ? database.reads.bindings(bindings) : bindings;
  return database.dialect.writtenRows(db, rawText(sql), values, query);
}

/** Per database, the statements of `returningAlso`: by the statement's text, then by what it returns besides. */
const extendedReturns = new WeakMap<Database, Map<string, Map<string, string>>>();

/**
 * `sql`, a statement Knex built that ends with its `returning` list (an insert on PostgreSQL and
 * SQLite), returning `also` as well (a list of expressions with no placeholder); `sql` as it is
 * when it has no `returning`. The text is made once per statement and list: the same string each
 * time, so the lookups by it hash nothing new.
 */
function returningAlso(database: Database, sql: string, also: string): string {
  let byStatement = extendedReturns.get(database);
  if (!byStatement) extendedReturns.set(database, (byStatement = new Map()));
  let byAlso = byStatement.get(sql);
  if (!byAlso) byStatement.set(sql, (byAlso = new Map()));
  let text = byAlso.get(also);
  if (text === undefined) byAlso.set(also, (text = sql.lastIndexOf(' returning ') < 0 ? sql : `${sql}, ${also}`));
  return text;
}

/** A related row a write refers to: the key `key` of table `table`'s primary key `pk`. */
export interface RowReference {
  table: string;
  pk: string;
  key: unknown;
}

/** Per database, the statements of `insertWhereReferencesExist`: by Knex's insert text, then by the tables and keys referred to. */
const guardedInserts = new WeakMap<Database, Map<string, Map<string, string>>>();

/**
 * The rows a one-row insert returns (`writeReturning`), written only when each row it refers to
 * (`references`) exists: `insert into t (…) select … from (select 1 as __one) as __row where exists
 * (select 1 from r where pk = ?) and …`, one statement where checking each reference first takes a
 * query each.
 * When one is missing nothing is written and no row is returned: no constraint fails, so the
 * transaction goes on and the caller can tell which. Undefined, with nothing run, for an insert
 * that is not one row of values (the caller then checks the references first): its SQL text is
 * Knex's `insert into t (…) values (…)`, with `returning …` where the database has it, on each
 * database, and the text made from it is kept per SQL text. `also`, as for `writeReturning`.
 */
export async function insertWhereReferencesExist(
  db: Db,
  query: Knex.QueryBuilder,
  references: readonly RowReference[],
  also?: string,
): Promise<Row[] | undefined> {
  const database = databaseOf(db);
  const compiled = compiledQuery(query);
  const bindings = compiled.bindings;
  const sql = also ? returningAlso(database, compiled.sql, also) : compiled.sql;
  let byInsert = guardedInserts.get(database);
  if (!byInsert) guardedInserts.set(database, (byInsert = new Map()));
  let byReferences = byInsert.get(sql);
  if (!byReferences) byInsert.set(sql, (byReferences = new Map()));
  const referred = references.map((r) => `${r.table} ${r.pk}`).join('\n');
  let guarded = byReferences.get(referred);
  if (guarded === undefined) byReferences.set(referred, (guarded = guardedInsert(db, sql, references)));
  if (guarded === '') return undefined;
  return writtenRows(db, database, guarded, [...bindings, ...references.map((r) => r.key)], query);
}

/**
 * The statement `insertWhereReferencesExist` runs for Knex's insert `sql`: its column list, its
 * values as a one-row SELECT that only answers a row when every reference exists, and its
 * `returning` as it was; or '' when `sql` is not the insert of one row of values.
 */
function guardedInsert(db: Db, sql: string, references: readonly RowReference[]): string {
  const open = sql.indexOf(') values (');
  if (!sql.startsWith('insert into ') || open < 0 || sql.indexOf(') values (', open + 1) >= 0) return '';
  let close = sql.lastIndexOf(') returning ');
  if (close < open) close = sql.endsWith(')') ? sql.length - 1 : -1;
  const values = sql.slice(open + ') values ('.length, close);
  // One row: a second row would be a `), (` in the list (Knex writes a raw value's text as given).
  if (close < 0 || values.includes('), (')) return '';
  const id = (name: string) => db.raw('??', [name]).toQuery();
  const exist = references.map((r) => `exists (select 1 from ${id(r.table)} where ${id(r.pk)} = ?)`).join(' and ');
  return `${sql.slice(0, open)}) select ${values} from (select 1 as ${id('__one')}) as ${id('__row')} where ${exist}${sql.slice(close + 1)}`;
}

/**
 * The rows of a fixed SELECT: one whose SQL depends only on `owner` (e.g. a relation's spec) and
 * `variant` (e.g. how many keys it looks up), not on the values bound. `build` makes it with Knex
 * the first time on each database; later calls reuse that SQL text and bind `bindings`, in the
 * order of its placeholders, without building a query. Run as `selectRows` runs a query.
 */
export function selectFixed(
  db: Db,
  owner: object,
  variant: string,
  build: () => Knex.QueryBuilder,
  bindings: readonly unknown[],
): Promise<Row[]> {
  const database = databaseOf(db);
  let byVariant = database.fixedSql.get(owner);
  if (!byVariant) database.fixedSql.set(owner, (byVariant = new Map()));
  let sql = byVariant.get(variant);
  if (sql === undefined) byVariant.set(variant, (sql = build().toSQL().sql));
  return runSelect(db, database, sql, bindings);
}

/**
 * The row of `table` whose primary key `pk` is `key`, with `columns`, or undefined: a fixed SELECT
 * (`selectFixed`) built once per list of columns, given as the same array every time.
 */
export async function selectByKey(db: Db, table: string, pk: string, columns: readonly string[], key: unknown): Promise<Row | undefined> {
  const build = () =>
    db(table)
      .select(columns)
      .where(pk, key as Knex.Value)
      .limit(1, { skipBinding: true });
  const [row] = await selectFixed(db, columns, `${table} ${pk}`, build, [key]);
  return row;
}

type Row = Record<string, any>;

/**
 * Runs a SELECT's SQL text: outside a transaction on a read replica when the database has some and
 * the request may read there (replicas.ts), beside the pool when the database serves reads there,
 * else by Knex (PostgreSQL: named, see postgres-reads.ts); in a transaction on its connection.
 */
async function runSelect(db: Db, database: Database, sql: string, bindings: readonly unknown[]): Promise<Row[]> {
  if (database.replicas && !db.isTransaction) {
    const rows = await database.replicas.select(sql, bindings);
    if (rows) return rows;
  }
  if (db.isTransaction) refusePastDeadline(db as Knex.Transaction);
  if (!db.isTransaction) {
    const reads = database.reads;
    const connection = reads?.connection();
    if (connection) return readRows(db, reads as DirectReads, connection, sql, bindings);
    if (database.pooled) return database.pooled.rows(db, rawText(sql), bindings);
  } else if (!(db as Knex.Transaction).isCompleted()) {
    // A read in a transaction runs on the transaction's connection: PostgreSQL by Knex, unnamed, in
    // turn (see postgres-reads.ts); SQLite from a statement prepared once (`inTransaction`).
    if (database.pooled) return database.pooled.rows(db, rawText(sql), bindings);
    const rows = inTransaction(db as Knex.Transaction, database, 'select', sql, bindings);
    if (rows) return rows;
  }
  return database.dialect.rowsOf(await db.raw(rawText(sql), bindings as Knex.RawBinding[]));
}

/** Per SQL text Knex compiled, the text `db.raw` runs as it is (`rawText`); bounded as the statements kept per text are. */
const rawTexts = new Map<string, string>();
const RAW_TEXTS_KEPT = 2000;

/**
 * An SQL text Knex compiled (`toSQL()`), as `db.raw` takes it to run it again with its values: a
 * `?` in a quoted string or identifier escaped (`\\?`), since `db.raw` takes every `?` of its text
 * for a placeholder where Knex's compiled text holds one only outside quotes.
 */
export function rawText(sql: string): string {
  let text = rawTexts.get(sql);
  if (text === undefined) {
    text = '';
    let quote = '';
    for (const c of sql) {
      if (quote) {
        if (c === quote) quote = '';
        text += c === '?' ? '\\?' : c;
      } else {
        if (c === "'" || c === '"' || c === '`') quote = c;
        text += c;
      }
    }
    if (rawTexts.size < RAW_TEXTS_KEPT) rawTexts.set(sql, text);
  }
  return text;
}

/**
 * The rows of a statement of the transaction `trx` run by the runtime on the transaction's
 * connection, where the database lets it (SQLite's one connection: `DirectReads.inTransaction`),
 * reported to `db`'s listeners as Knex reports a query of this `method`; undefined where Knex must
 * run it (a transaction already ended, a statement that answers no rows, another database).
 */
function inTransaction(
  trx: Knex.Transaction,
  database: Database,
  method: string,
  sql: string,
  bindings: readonly unknown[],
): Row[] | undefined {
  const reads = database.reads;
  if (!reads || trx.isCompleted()) return undefined;
  const connection = reads.transactionConnection();
  const run = connection === undefined ? undefined : reads.inTransaction(connection, sql);
  return run && reported(trx, method, sql, bindings, () => run(bindings));
}

function readRows(db: Db, reads: DirectReads, connection: unknown, sql: string, bindings: readonly unknown[]): Row[] {
  return reported(db, 'select', sql, bindings, () => reads.all(connection, sql, bindings));
}

/** The time limits of transactions in flight (`limitTransaction`), by transaction. */
const deadlines = new WeakMap<Knex.Transaction, { at: number; error: () => Error }>();

/**
 * From `at` (a `Date.now()` time) on, every statement the runtime's own reads and writes above would
 * run in `trx` or a savepoint of it is refused with `error()` before it reaches the database (its
 * work then fails, and Knex rolls the transaction back). Statements the work runs by Knex's own
 * builders are not refused; the caller sends no COMMIT past `at` (transactions.ts). Returns what
 * lifts the limit, to call once the work has ended.
 */
export function limitTransaction(trx: Knex.Transaction, at: number, error: () => Error): () => void {
  deadlines.set(trx, { at, error });
  return () => deadlines.delete(trx);
}

/** Throws the error of the time limit of `trx`, or of the transaction it is a savepoint of, once it is past. */
function refusePastDeadline(trx: Knex.Transaction): void {
  for (let t: Knex.Transaction | undefined = trx; t; t = t.parentTransaction) {
    const deadline = deadlines.get(t);
    if (deadline) {
      if (Date.now() >= deadline.at) throw deadline.error();
      return;
    }
  }
}

/** The rows `run` answers for a statement run past Knex's runner, reported to `db`'s listeners as Knex reports a query of this `method`. */
function reported(db: Db, method: string, sql: string, bindings: readonly unknown[], run: () => Row[]): Row[] {
  const query = { sql, bindings, method, [QUERY_UID]: `${method === 'select' ? 'read' : 'write'}-${++directQueries}` };
  const client = db.client as Knex.Client & EventEmitter;
  client.emit('query', query);
  try {
    const rows = run();
    client.emit('query-response', rows, query);
    return rows;
  } catch (err) {
    client.emit('query-error', err, query);
    throw err;
  }
}
