/**
 * SQLite's Knex client, made for speed: statements prepared once per connection, an integer LIMIT
 * and a boolean written as text (so a prepared statement stays valid for every page, and for every
 * request of a filter on a flag), and reads outside
 * transactions served beside Knex's pool, on a connection that never sees uncommitted rows, in read
 * snapshots shared by the requests received together. Its state is one `SqliteReads` per database.
 */
import * as fs from 'node:fs';
import type { Knex } from 'knex';
import { databaseOfClient } from '../database';
import {
  BetterSqlite3Client,
  sqliteBindings,
  SqliteQueryCompiler,
  type ClientQuery,
  type SqliteConnection,
  type SqliteQueryCompilerInternals,
  type SqliteStatement,
} from '../knex-internals';
import type { DirectReads } from './dialect';

type Row = Record<string, any>;

/** Distinct statements kept prepared per SQLite connection; the least recently added go first beyond it. */
export const STATEMENT_CACHE_SIZE = 500;

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

/** A row's object made from its values, in the order of its statement's columns. */
type RowMaker = (values: unknown[]) => Row;

/**
 * A `*` that SQLite expands into a table's columns (`select *`, `t.*`; not `count(*)`): which
 * columns a statement answers, and in which order, then depends on the schema when it runs.
 */
const EXPANDED_COLUMNS = /(?:^|[^(])\*/;

/**
 * The function that makes a row of `statement` from its values, as better-sqlite3 makes one (each
 * column's value under its name, in order; of two columns of one name, the later's value) but with
 * its properties written in one object literal, compiled once for the statement; undefined where
 * the driver's own objects are kept.
 *
 * better-sqlite3 makes each row's object a property at a time, finding each column's name in the
 * engine's string table first: for a page of 20 rows of 7 columns that was a third of the time of
 * the read. Asked for arrays (`raw`), it makes each row with one call, and the compiled literal
 * makes the objects of every row of the statement alike (one hidden class) at once.
 *
 * Kept to statements whose columns are named in their SQL text: with a `*`, a schema changed while
 * the service runs (SQLite prepares a statement again by itself then) could answer other columns.
 * A column named `__proto__` (a literal would set the prototype) and an engine where code cannot be
 * compiled at run time (`--disallow-code-generation-from-strings`) keep the driver's objects too.
 */
function rowMaker(statement: SqliteStatement, sql: string): RowMaker | undefined {
  if (!statement.reader || EXPANDED_COLUMNS.test(sql)) return undefined;
  const names = statement.columns().map((column) => column.name);
  if (names.includes('__proto__')) return undefined;
  let make: RowMaker;
  try {
    // The names are JSON string literals: nothing of them is code.
    make = new Function('v', `return { ${names.map((name, i) => `${JSON.stringify(name)}: v[${i}]`).join(', ')} };`) as RowMaker;
  } catch {
    return undefined;
  }
  statement.raw(true);
  return make;
}

/** What every SQLite connection gets (`all`) and what the pool's connection, which writes, gets first (`writer`). */
export interface SqliteSetup {
  all(conn: SqliteConnection): void;
  writer(conn: SqliteConnection): void;
}

/**
 * One SQLite database's connections, prepared statements and read snapshots.
 *
 * A read snapshot (`beginSnapshot`): outside a transaction SQLite takes and releases a read lock on
 * the write-ahead log for every statement, with system calls that cost more than a lookup by key;
 * reads that share a snapshot take it once, and see one state of the database (a row, its author
 * and its tags come from the same commit). How long a snapshot lasts keeps every read seeing the
 * writes committed before its request arrived:
 * - begun while serving requests the event loop received together (`requestsArrived`), it serves
 *   the reads of those requests until the loop has run their callbacks (its check phase): they were
 *   all received before the snapshot began;
 * - begun anywhere else (a timer, work resumed after a pool or file callback), it ends once the
 *   current callback and the promise continuations it made ready have run, before any other callback;
 * - and whatever Knex runs on this database (a write, a transaction's BEGIN, a read in a
 *   transaction) ends its snapshots first: a write, and any read after it, sees the latest rows.
 */
export class SqliteReads implements DirectReads {
  /** Each connection's prepared statements by SQL text (a transaction's client is a fresh object: kept by connection). */
  private readonly statements = new WeakMap<SqliteConnection, Map<string, SqliteStatement>>();
  /** The statements that answer their rows as arrays (`raw`), each with the maker of its rows' objects. */
  private readonly rowMakers = new WeakMap<SqliteStatement, RowMaker>();
  /** The connections with a read snapshot open. */
  private readonly snapshots = new Set<SqliteConnection>();
  /** Whether requests received together are being served (set by `requestsArrived` until the check phase). */
  private servingArrivals = false;
  /** Set once the pool is destroyed: reads go to Knex then, which reports the closed pool. */
  private closed = false;
  /** The pool's connection once it is set up (SQLite's pool has one). */
  private writer: SqliteConnection | undefined;
  private reader: SqliteConnection | undefined;
  /** The database file's device and inode when the service first opened it (none in memory). */
  private identity: { dev: number; ino: number } | undefined;
  /** Set when `checkFile` found another file, or none, at the path: reads fail too until it is back. */
  private lost = false;

  constructor(
    /** The database file (`:memory:` or empty: a database of the connection's own). */
    readonly file: string,
    private readonly setup: SqliteSetup,
  ) {}

  /** The statement of `sql` prepared on `connection`, prepared at first need. */
  statement(connection: SqliteConnection, sql: string): SqliteStatement {
    let cache = this.statements.get(connection);
    if (!cache) this.statements.set(connection, (cache = new Map()));
    let statement = cache.get(sql);
    if (!statement) {
      statement = connection.prepare(sql);
      const make = rowMaker(statement, sql);
      if (make) this.rowMakers.set(statement, make);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
      cache.set(sql, statement);
    }
    return statement;
  }

  /** The rows a statement that returns rows answers for `values`, as objects (see `rowMaker`). */
  rows(statement: SqliteStatement, values: unknown[]): Row[] {
    const rows = statement.all(values);
    const make = this.rowMakers.get(statement);
    if (make) for (let i = 0; i < rows.length; i++) rows[i] = make(rows[i] as unknown[]);
    return rows as Row[];
  }

  /** Sets up the pool's new connection, the one that writes. */
  writerOpened(conn: SqliteConnection): void {
    try {
      this.setup.writer(conn);
      this.setup.all(conn);
    } catch (err) {
      conn.close();
      throw err;
    }
    this.writer = conn;
    if (!this.identity && this.file !== '' && this.file !== ':memory:') {
      const { dev, ino } = fs.statSync(this.file);
      this.identity = { dev, ino };
    }
  }

  /**
   * Fails, as an unreachable database (`SQLITE_CANTOPEN`: a 503 and a logged outage), when the
   * file at the database's path is no longer the one the service opened: deleted (the connections
   * would go on writing to the unlinked file, lost at the next start) or replaced by another file
   * (a restored copy, a new database). One `stat` (a few microseconds); run before whatever Knex runs
   * outside a transaction (a transaction's BEGIN, a write on its own, readiness's `select 1`), never
   * for the reads served beside it, which fail too once it has failed (their rows would vanish at
   * the next start), each checking again. The same file back at the path (renamed back) serves
   * again; any other needs a restart, which opens it.
   */
  checkFile(): void {
    const identity = this.identity;
    if (!identity) return;
    const now = fs.statSync(this.file, { throwIfNoEntry: false });
    this.lost = !(now && now.ino === identity.ino && now.dev === identity.dev);
    if (!this.lost) return;
    const what = now ? 'was replaced by another file' : 'was deleted';
    throw Object.assign(new Error(`the database file ${this.file} ${what} since the service opened it; restart the service once the file is back`), {
      code: 'SQLITE_CANTOPEN',
    });
  }

  writerClosed(conn: SqliteConnection): void {
    this.snapshots.delete(conn);
    if (conn === this.writer) this.writer = undefined;
  }

  /** The pool is destroyed: the read connection closes, and reads go to Knex from now on. */
  poolClosed(): void {
    this.closed = true;
    if (this.writer) this.snapshots.delete(this.writer);
    this.writer = undefined;
    if (this.reader) this.snapshots.delete(this.reader);
    this.reader?.close();
    this.reader = undefined;
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
  connection(): SqliteConnection | undefined {
    if (this.closed) return undefined;
    const writer = this.writer;
    if (writer && this.snapshots.has(writer)) return writer;
    if (writer?.open && !writer.inTransaction) return writer;
    if (this.reader) return this.reader;
    if (this.file === ':memory:' || this.file === '') return undefined;
    const Driver = require('better-sqlite3') as new (filename: string, options: { fileMustExist: boolean }) => SqliteConnection;
    // Never creates the file: one deleted meanwhile is an outage, not a new empty database.
    this.reader = new Driver(this.file, { fileMustExist: true });
    this.setup.all(this.reader);
    this.reader.pragma('query_only = ON');
    return this.reader;
  }

  all(connection: unknown, sql: string, bindings: readonly unknown[]): Row[] {
    if (this.lost) this.checkFile();
    const conn = connection as SqliteConnection;
    if (!this.snapshots.has(conn) && !conn.inTransaction) this.beginSnapshot(conn);
    return this.rows(this.statement(conn, sql), sqliteBindings(bindings));
  }

  /**
   * The rows a write on a transaction's connection returns (an insert's `RETURNING`; none for a
   * statement without one), run from the statement the connection keeps prepared, its values
   * bound as the client binds them (`writeBindings`): what Knex's runner would run, without it.
   */
  returned(connection: unknown, sql: string, bindings: readonly unknown[]): Row[] {
    if (this.lost) this.checkFile();
    const statement = this.statement(connection as SqliteConnection, sql);
    const values = writeBindings(bindings);
    if (statement.reader) return this.rows(statement, values);
    statement.run(values);
    return [];
  }

  /**
   * Tells the database that a request was received (the API's first middleware calls it). The
   * first of a batch ends any snapshot begun before (a timer's), and the batch's snapshots end in the
   * loop's check phase, after the callbacks of every request the loop received with it.
   */
  requestsArrived(): void {
    if (this.servingArrivals) return;
    this.servingArrivals = true;
    if (this.snapshots.size > 0) this.endSnapshots();
    setImmediate(this.endArrivals);
  }

  private readonly endArrivals = (): void => {
    this.servingArrivals = false;
    this.endSnapshots();
  };

  /** Ends every open read snapshot (a read-only transaction: its COMMIT releases the read lock). */
  endSnapshots(): void {
    for (const conn of this.snapshots) {
      this.snapshots.delete(conn);
      if (conn.open && conn.inTransaction) this.statement(conn, 'COMMIT').run([]);
    }
  }

  /** Whether a read snapshot is open. */
  get inSnapshot(): boolean {
    return this.snapshots.size > 0;
  }

  /** Begins a read snapshot on `conn` (a deferred BEGIN: its first read takes the lock). */
  private beginSnapshot(conn: SqliteConnection): void {
    this.statement(conn, 'BEGIN').run([]);
    // Queued once: its tick runs when the microtask queue is empty (Node runs the ticks queued by
    // microtasks after draining them), that is once this callback and what it made ready have run.
    if (!this.servingArrivals && this.snapshots.size === 0) queueMicrotask(this.endSnapshotsAfterCallback);
    this.snapshots.add(conn);
  }

  private readonly endSnapshotsAfterCallback = (): void => {
    process.nextTick(this.endSnapshotsNow);
  };

  private readonly endSnapshotsNow = (): void => this.endSnapshots();
}

/** Values as the client binds them: a list (a `list` field's value) as its JSON text, the form its column holds here, then as Knex makes them bindable. */
function writeBindings(bindings: readonly unknown[]): unknown[] {
  return sqliteBindings(bindings.map((b) => (Array.isArray(b) ? JSON.stringify(b) : b)));
}

/**
 * Knex's better-sqlite3 client with each connection's statements prepared once per SQL text: Knex
 * still builds every query (hooks' included), and the driver runs an already prepared statement
 * with the new bindings instead of compiling the SQL again. SQLite re-prepares a cached statement
 * by itself when the schema changes. The database's `SqliteReads` is reached from the client's
 * configuration, which a transaction's client shares.
 */
export class CachedStatementsSqliteClient extends BetterSqlite3Client {
  private get reads(): SqliteReads {
    return databaseOfClient(this as unknown as Knex.Client).reads as SqliteReads;
  }

  queryCompiler(builder: unknown, formatter: unknown): SqliteQueryCompilerInternals {
    return new SqliteLiteralLimitCompiler(this, builder, formatter);
  }

  /**
   * A boolean is written into the SQL text as 1 or 0, the integer better-sqlite3 would bind, where
   * every other value is bound. SQLite plans a statement with the value bound to a column that has
   * an index and ANALYZE's samples (`is_published = ?`), and a new binding of it expires the
   * statement: every run prepared it again (for a page and its count, about 5 % of the request).
   * A boolean has two values: two statements, each prepared once.
   */
  override parameter(value: unknown, builder: unknown, bindingsHolder: { bindings: unknown[] }): string {
    if (value === true) return '1';
    if (value === false) return '0';
    return super.parameter(value, builder, bindingsHolder);
  }

  override async acquireRawConnection(): Promise<SqliteConnection> {
    // A new connection after the file went would create an empty database at its path.
    this.reads.checkFile();
    const conn = await super.acquireRawConnection();
    this.reads.writerOpened(conn);
    return conn;
  }

  override async destroyRawConnection(conn: SqliteConnection): Promise<void> {
    this.reads.writerClosed(conn);
    await super.destroyRawConnection(conn);
  }

  override async destroy(callback?: (err?: unknown) => void): Promise<void> {
    this.reads.poolClosed();
    return super.destroy(callback);
  }

  /** A list (a `list` field's value) is bound as its JSON text, the form its column holds here. */
  override _formatBindings(bindings: readonly unknown[] | undefined): unknown[] {
    return writeBindings(bindings ?? []);
  }

  override async _query(connection: SqliteConnection, obj: ClientQuery): Promise<ClientQuery> {
    const reads = this.reads;
    // Whatever Knex runs (a write, a BEGIN, a read in a transaction) sees the latest committed rows.
    if (reads.inSnapshot) reads.endSnapshots();
    // A transaction or a write of its own goes to the file the service opened, or to none.
    if (connection && !connection.inTransaction) reads.checkFile();
    // A query asking for its own integer mode changes the statement's state: prepared for it alone.
    if (obj.options?.safeIntegers !== undefined || !obj.sql || !connection) return super._query(connection, obj);
    const statement = reads.statement(connection, obj.sql);
    const bindings = this._formatBindings(obj.bindings);
    if (statement.reader) {
      obj.response = reads.rows(statement, bindings);
      return obj;
    }
    const response = statement.run(bindings);
    obj.response = response;
    obj.context = { lastID: response.lastInsertRowid, changes: response.changes };
    return obj;
  }
}
