/**
 * Database connections: SQLite (better-sqlite3) by default, PostgreSQL from a `postgres://` URL.
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import knex, { type Knex } from 'knex';
import { types as pgTypes } from 'pg';
import { loadSqliteSettings, type SqliteSettings } from '../core/settings';
import { compiledQuery } from './sql-shapes';

// PostgreSQL type parsers, set once: int8 and counts as numbers (inputs are limited to safe integers),
// DATE as its text (no time-zone shift), JSON as text like SQLite's so one converter serves both.
pgTypes.setTypeParser(20, (v) => Number(v));
pgTypes.setTypeParser(1082, (v) => v);
pgTypes.setTypeParser(114, (v) => v);
pgTypes.setTypeParser(3802, (v) => v);

export type Db = Knex;
export type Dialect = 'sqlite' | 'postgres';

/** What the SQLite pool setup and the statement cache use of a better-sqlite3 connection. */
interface SqliteConnection {
  readonly open: boolean;
  readonly inTransaction: boolean;
  pragma(source: string): unknown;
  function(name: string, options: { deterministic: boolean }, fn: (value: unknown) => unknown): unknown;
  prepare(sql: string): SqliteStatement;
  close(): unknown;
}

interface SqliteStatement {
  readonly reader: boolean;
  all(bindings: unknown[]): unknown[];
  run(bindings: unknown[]): { changes: number; lastInsertRowid: number | bigint };
}

/** What Knex hands its client's `_query`: the compiled SQL, its bindings, and the driver's response once run. */
interface CompiledQuery {
  sql: string;
  bindings?: unknown[];
  options?: { safeIntegers?: unknown };
  response?: unknown;
  context?: { lastID: number | bigint; changes: number };
}

/** Knex's better-sqlite3 client (not part of Knex's typed API, hence the require). */
const BetterSqlite3Client = createRequire(__filename)('knex/lib/dialects/better-sqlite3') as new (config: Knex.Config) => {
  readonly driver: unknown;
  readonly connectionSettings: unknown;
  _query(connection: SqliteConnection, obj: CompiledQuery): Promise<CompiledQuery>;
  _formatBindings(bindings: readonly unknown[] | undefined): unknown[];
  acquireRawConnection(): Promise<SqliteConnection>;
  destroyRawConnection(conn: SqliteConnection): Promise<unknown>;
  destroy(callback?: (err?: unknown) => void): Promise<void>;
};

/** What the LIMIT override uses of Knex's SQLite query compiler (not part of Knex's typed API either). */
interface SqliteQueryCompiler {
  single: { limit?: unknown; offset?: unknown };
  limit(): string;
}

const SqliteQueryCompiler = createRequire(__filename)('knex/lib/dialects/sqlite3/query/sqlite-querycompiler') as new (
  ...args: unknown[]
) => SqliteQueryCompiler;

/**
 * Knex's SQLite query compiler, with an integer LIMIT written as text (`limit 20`) where Knex binds
 * it (`limit ?`). SQLite reads a bound LIMIT when it plans the statement, so every new binding of it
 * expires the statement and the next run prepares it again: a prepared statement saves nothing
 * then. The text is an integer Knex parsed (`limit()` keeps only `parseInt`'s result): nothing a
 * request sends reaches the SQL text. OFFSET stays bound: SQLite does not plan with it.
 */
class SqliteLiteralLimitCompiler extends SqliteQueryCompiler {
  override limit(): string {
    const { limit, offset } = this.single;
    if (typeof limit === 'number' && Number.isInteger(limit)) return `limit ${limit}`;
    // SQLite writes no OFFSET without a LIMIT: -1 is "no limit" (Knex binds it).
    if (limit === undefined || limit === null) return offset ? 'limit -1' : '';
    return super.limit();
  }
}

/** Distinct statements kept prepared per SQLite connection; the least recently added go first beyond it. */
export const STATEMENT_CACHE_SIZE = 500;

/** Each SQLite connection's prepared statements by SQL text. */
const STATEMENTS = new WeakMap<SqliteConnection, Map<string, SqliteStatement>>();

/**
 * The SQLite connections with a read snapshot open (`beginSnapshot`). Outside a transaction SQLite
 * takes and releases a read lock on the write-ahead log for every statement, with system calls that
 * cost more than a lookup by key; reads that share a snapshot take it once, and see one state of the
 * database (a row, its author and its tags come from the same commit).
 *
 * How long a snapshot lasts keeps every read seeing the writes committed before its request arrived:
 * - begun while serving requests the event loop received together (`requestsArrived`), it serves
 *   the reads of those requests until the loop has run their callbacks (its check phase): they were
 *   all received before the snapshot began;
 * - begun anywhere else (a timer, work resumed after a pool or file callback), it ends once the
 *   current callback and the promise continuations it made ready have run, before any other callback;
 * - and whatever Knex runs (a write, a transaction's BEGIN, a read in a transaction) ends every
 *   snapshot first: a write, and any read after it, sees the latest rows.
 * Kept across clients: a transaction's client is a fresh object whose statements must end them too.
 */
const SNAPSHOTS = new Set<SqliteConnection>();

/** Whether requests received together are being served (set by `requestsArrived` until the check phase). */
let servingArrivals = false;

/** Ends every open read snapshot (a read-only transaction: its COMMIT releases the read lock). */
function endSnapshots(): void {
  for (const conn of SNAPSHOTS) {
    SNAPSHOTS.delete(conn);
    if (conn.open && conn.inTransaction) cachedStatement(conn, 'COMMIT').run([]);
  }
}

/** Begins a read snapshot on `conn` (a deferred BEGIN: its first read takes the lock). */
function beginSnapshot(conn: SqliteConnection): void {
  cachedStatement(conn, 'BEGIN').run([]);
  // Queued once: its tick runs when the microtask queue is empty (Node runs the ticks queued by
  // microtasks after draining them), that is once this callback and what it made ready have run.
  if (!servingArrivals && SNAPSHOTS.size === 0) queueMicrotask(endSnapshotsAfterCallback);
  SNAPSHOTS.add(conn);
}

function endSnapshotsAfterCallback(): void {
  process.nextTick(endSnapshots);
}

/**
 * Tells the database layer that a request was received (the API's first middleware calls it). The
 * first of a batch ends any snapshot begun before (a timer's), and the batch's snapshots end in the
 * loop's check phase, after the callbacks of every request the loop received with it.
 */
export function requestsArrived(): void {
  if (servingArrivals) return;
  servingArrivals = true;
  if (SNAPSHOTS.size > 0) endSnapshots();
  setImmediate(endArrivals);
}

function endArrivals(): void {
  servingArrivals = false;
  endSnapshots();
}

/** What every SQLite connection gets (`all`) and what the pool's connection, which writes, gets first (`writer`). */
interface SqliteSetup {
  all(conn: SqliteConnection): void;
  writer(conn: SqliteConnection): void;
}

/**
 * Knex's better-sqlite3 client with each connection's statements prepared once per SQL text: Knex
 * still builds every query (hooks' included), and the driver runs an already prepared statement
 * with the new bindings instead of compiling the SQL again. SQLite re-prepares a cached statement
 * by itself when the schema changes.
 */
class CachedStatementsSqliteClient extends BetterSqlite3Client {
  /** Set once the pool is destroyed: reads go to Knex then, which reports the closed pool. */
  private closed = false;
  /** The pool's connection once it is set up (SQLite's pool has one). */
  private writer: SqliteConnection | undefined;
  private reader: SqliteConnection | undefined;

  /** Read by the shape reader (sql-shapes.ts): this client's SQL text holds the LIMIT. */
  readonly writesLimitAsText = true;

  constructor(config: Knex.Config, private readonly setup: SqliteSetup) {
    super(config);
  }

  queryCompiler(builder: unknown, formatter: unknown): SqliteQueryCompiler {
    return new SqliteLiteralLimitCompiler(this, builder, formatter);
  }

  override async acquireRawConnection(): Promise<SqliteConnection> {
    const conn = await super.acquireRawConnection();
    try {
      this.setup.writer(conn);
      this.setup.all(conn);
    } catch (err) {
      conn.close();
      throw err;
    }
    this.writer = conn;
    return conn;
  }

  override async destroyRawConnection(conn: SqliteConnection): Promise<void> {
    SNAPSHOTS.delete(conn);
    if (conn === this.writer) this.writer = undefined;
    await super.destroyRawConnection(conn);
  }

  /**
   * The connection for a read outside transactions (see `selectRows`), which must see committed rows
   * only and never wait for a writer. While no transaction is open, the pool's own connection: read
   * beside the pool, it has nothing uncommitted to show, and its page cache stays warm. While one is
   * open, a second connection to the file, opened at first need: it sees the rows committed before,
   * and SQLite drops its page cache whenever another connection has written, which is why it is not
   * the one every read goes to. None for an in-memory database in a transaction (a second connection
   * would open another, empty one) or once the pool is destroyed.
   */
  readConnection(): SqliteConnection | undefined {
    if (this.closed) return undefined;
    const writer = this.writer;
    if (writer && SNAPSHOTS.has(writer)) return writer;
    if (writer?.open && !writer.inTransaction) return writer;
    if (this.reader) return this.reader;
    const { filename } = this.connectionSettings as { filename: string };
    if (filename === ':memory:' || filename === '') return undefined;
    const Driver = this.driver as new (filename: string) => SqliteConnection;
    this.reader = new Driver(filename);
    this.setup.all(this.reader);
    this.reader.pragma('query_only = ON');
    return this.reader;
  }

  override async destroy(callback?: (err?: unknown) => void): Promise<void> {
    this.closed = true;
    if (this.writer) SNAPSHOTS.delete(this.writer);
    this.writer = undefined;
    if (this.reader) SNAPSHOTS.delete(this.reader);
    this.reader?.close();
    this.reader = undefined;
    return super.destroy(callback);
  }

  override async _query(connection: SqliteConnection, obj: CompiledQuery): Promise<CompiledQuery> {
    // Whatever Knex runs (a write, a BEGIN, a read in a transaction) sees the latest committed rows.
    if (SNAPSHOTS.size > 0) endSnapshots();
    // A query asking for its own integer mode changes the statement's state: prepared for it alone.
    if (obj.options?.safeIntegers !== undefined || !obj.sql || !connection) return super._query(connection, obj);
    const statement = cachedStatement(connection, obj.sql);
    const bindings = this._formatBindings(obj.bindings);
    if (statement.reader) {
      obj.response = statement.all(bindings);
      return obj;
    }
    const response = statement.run(bindings);
    obj.response = response;
    obj.context = { lastID: response.lastInsertRowid, changes: response.changes };
    return obj;
  }

}

// Kept by connection, not on the client: a transaction's client is a fresh object of this class.
function cachedStatement(connection: SqliteConnection, sql: string): SqliteStatement {
  let cache = STATEMENTS.get(connection);
  if (!cache) STATEMENTS.set(connection, (cache = new Map()));
  let statement = cache.get(sql);
  if (!statement) {
    statement = connection.prepare(sql);
    if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    cache.set(sql, statement);
  }
  return statement;
}

/**
 * Knex's own log: its warnings go to the console, except the connection errors it warns about on
 * every failed acquire, with a stack trace. The API logs a database outage once (see outage.ts).
 */
const KNEX_LOG = {
  warn(message: unknown) {
    if (typeof message === 'string' && /^(Acquire connection error|Connection Error): /.test(message)) return;
    console.warn(message);
  },
};

export interface DatabaseConfig {
  dialect: Dialect;
  knex: Knex.Config;
  /** Shown in logs: the SQLite file or the PostgreSQL URL without its password. */
  description: string;
}

/**
 * `DATABASE_URL` unset → the SQLite file `defaultSqliteFile`; `sqlite:PATH` → that SQLite file;
 * `postgres://…` or `postgresql://…` → PostgreSQL.
 */
export function databaseConfig(url: string | undefined, defaultSqliteFile: string, sqlite: SqliteSettings = loadSqliteSettings()): DatabaseConfig {
  if (url && /^postgres(ql)?:\/\//.test(url)) {
    const shown = url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
    return { dialect: 'postgres', description: shown, knex: { client: 'pg', connection: url, pool: { min: 0, max: 10 }, log: KNEX_LOG } };
  }
  let file = defaultSqliteFile;
  if (url) {
    if (!url.startsWith('sqlite:')) throw new Error(`DATABASE_URL must start with sqlite: or postgres://, got "${url}"`);
    file = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
  }
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  // What every connection needs, the pool's and the read connection alike.
  const setup: SqliteSetup = {
    all(conn) {
      conn.pragma('busy_timeout = 5000');
      conn.pragma(`cache_size = ${-sqlite.cacheSizeMib * 1024}`);
      conn.pragma(`mmap_size = ${sqlite.mmapSizeMib * 1024 * 1024}`);
      // LIKE as on PostgreSQL: case-sensitive (filters' i-variants compare lowercased sides, see filters.ts)...
      conn.pragma('case_sensitive_like = ON');
      // ...and beside SQLite's own lower(), which folds A-Z only, one folding every letter as PostgreSQL's does.
      conn.function('unicode_lower', { deterministic: true }, (v: unknown) => (typeof v === 'string' ? unicodeLower(v) : v));
    },
    writer(conn) {
      conn.pragma('foreign_keys = ON');
      conn.pragma('journal_mode = WAL');
      conn.pragma(`synchronous = ${sqlite.synchronous}`);
    },
  };
  return {
    dialect: 'sqlite',
    description: file,
    knex: {
      // Knex constructs its client with the config alone: the setup comes along bound.
      client: class extends CachedStatementsSqliteClient {
        constructor(config: Knex.Config) {
          super(config, setup);
        }
      } as unknown as typeof knex.Client,
      connection: { filename: file },
      useNullAsDefault: true,
      log: KNEX_LOG,
    },
  };
}

/** A Knex instance on DATABASE_URL (`url`); SQLite's tuning comes from the environment (settings.ts). */
export function connect(url: string | undefined, defaultSqliteFile: string, sqlite?: SqliteSettings): Db {
  return knex(databaseConfig(url, defaultSqliteFile, sqlite).knex);
}

export function dialectOf(db: Db): Dialect {
  return db.client.dialect === 'postgresql' ? 'postgres' : 'sqlite';
}

/**
 * Text in lowercase as PostgreSQL's `lower()` makes it: one letter for one letter (İ is i, Σ is σ
 * wherever it stands), where JavaScript's `toLowerCase` makes İ two characters and a final Σ ς.
 */
export function unicodeLower(text: string): string {
  return text.replace(/[İΣ]/g, (c) => (c === 'İ' ? 'i' : 'σ')).toLowerCase();
}

/** `count(*)` is a string on PostgreSQL and a number on SQLite. */
export function countOf(row: Record<string, unknown> | undefined): number {
  return row ? Number(Object.values(row)[0]) : 0;
}

let readQueries = 0;

/**
 * The rows of a SELECT that Knex built, compiled once per shape (`compiledQuery`). Outside a
 * transaction on SQLite, it runs on the read connection (`readConnection` above: it never sees
 * another request's uncommitted writes) from a statement prepared once per SQL text, without a trip
 * through Knex's pool, and is reported to `query` and `query-response` listeners as Knex reports its
 * own; in a transaction (its reads must see its writes, and run on its connection) and on
 * PostgreSQL, Knex runs its SQL text.
 */
export async function selectRows(db: Db, query: Knex.QueryBuilder): Promise<Row[]> {
  const { sql, bindings } = compiledQuery(query);
  const reader = readerOf(db);
  if (reader) return readRows(db, reader, sql, bindings);
  return rawRows(await db.raw(sql, bindings as Knex.RawBinding[]));
}

/** The first row of a SELECT that Knex built (`LIMIT 1`), run as `selectRows` runs it. */
export async function selectFirst(db: Db, query: Knex.QueryBuilder): Promise<Row | undefined> {
  return (await selectRows(db, query.first() as unknown as Knex.QueryBuilder))[0];
}

/**
 * The rows a write that Knex built returns (an insert with `returning`), compiled once per shape
 * (`compiledQuery`: an insert's shape is its table, columns and `returning`). Run by Knex from its SQL
 * text, on the connection of `db` (the operation's transaction).
 */
export async function writeReturning(db: Db, query: Knex.QueryBuilder): Promise<Row[]> {
  const { sql, bindings } = compiledQuery(query);
  return rawRows(await db.raw(sql, bindings as Knex.RawBinding[]));
}

/** The rows of a raw SELECT: an array on SQLite, the result's `rows` on PostgreSQL. */
function rawRows(result: Row[] | { rows: Row[] }): Row[] {
  return Array.isArray(result) ? result : result.rows;
}

/** SQL of fixed statements, by their owner (a spec object), then by dialect and variant. */
const FIXED_SQL = new WeakMap<object, Map<string, string>>();

/**
 * The rows of a fixed SELECT: one whose SQL depends only on `owner` (e.g. a relation's spec) and
 * `variant` (e.g. how many keys it looks up), not on the values bound. `build` makes it with Knex
 * the first time for each dialect; later calls reuse that SQL text and bind `bindings`, in the
 * order of its placeholders, without building a query. Run as `selectRows` runs a query.
 */
export async function selectFixed(db: Db, owner: object, variant: string, build: () => Knex.QueryBuilder, bindings: readonly unknown[]): Promise<Row[]> {
  let byVariant = FIXED_SQL.get(owner);
  if (!byVariant) FIXED_SQL.set(owner, (byVariant = new Map()));
  const key = `${db.client.dialect} ${variant}`;
  let sql = byVariant.get(key);
  if (sql === undefined) byVariant.set(key, (sql = build().toSQL().sql));
  const reader = readerOf(db);
  if (reader) return readRows(db, reader, sql, bindings);
  return rawRows(await db.raw(sql, bindings as Knex.RawBinding[]));
}

/**
 * The row of `table` whose primary key `pk` is `key`, with `columns`, or undefined: a fixed SELECT
 * (`selectFixed`) built once per list of columns, given as the same array every time.
 */
export async function selectByKey(db: Db, table: string, pk: string, columns: readonly string[], key: unknown): Promise<Row | undefined> {
  const build = () => db(table).select(columns).where(pk, key as Knex.Value).limit(1, { skipBinding: true });
  const [row] = await selectFixed(db, columns, `${table} ${pk}`, build, [key]);
  return row;
}

type Row = Record<string, any>;

function readerOf(db: Db): { client: CachedStatementsSqliteClient; connection: SqliteConnection } | undefined {
  const client: unknown = db.client;
  if (!(client instanceof CachedStatementsSqliteClient) || db.isTransaction) return undefined;
  const connection = client.readConnection();
  return connection && { client, connection };
}

function readRows(db: Db, reader: NonNullable<ReturnType<typeof readerOf>>, sql: string, bindings: readonly unknown[]): Row[] {
  const query = { sql, bindings, method: 'select', __knexQueryUid: `read-${++readQueries}` };
  db.emit('query', query);
  try {
    const { client, connection } = reader;
    if (!SNAPSHOTS.has(connection) && !connection.inTransaction) beginSnapshot(connection);
    const rows = cachedStatement(connection, sql).all(client._formatBindings(bindings)) as Row[];
    db.emit('query-response', rows, query);
    return rows;
  } catch (err) {
    db.emit('query-error', err, query);
    throw err;
  }
}
