/**
 * Hand-written because neither Knex nor better-sqlite3 keeps statements prepared across queries or
 * shares a read snapshot between requests: SQLite's reads outside transactions, served on a
 * connection the runtime opens itself (better-sqlite3's public API), from statements prepared once
 * per SQL text, in read snapshots shared by the requests received together. Knex (its own
 * `better-sqlite3` client, unchanged) runs every write and transaction on its pool's one
 * connection, set up through `pool.afterCreate`; within a transaction, the runtime's own statements
 * run on that connection from statements prepared once too (Knex prepares each statement it runs
 * anew: for an insert, a third of a create's time). Its state is one `SqliteReads` per database.
 */
import * as fs from 'node:fs';
import type { Knex } from 'knex';
import type { DirectReads } from './dialect';

type Row = Record<string, any>;

/** What the runtime uses of a better-sqlite3 statement (its public API). */
export interface SqliteStatement {
  readonly reader: boolean;
  all(...bindings: unknown[]): unknown[];
  run(...bindings: unknown[]): unknown;
  /** Its result columns, in order (a statement that returns rows). */
  columns(): { name: string }[];
  /** Whether `all` answers each row as an array of its values, in the order of `columns()`, instead of an object. */
  raw(toggle: boolean): SqliteStatement;
}

/** What the runtime uses of a better-sqlite3 connection (its public API). */
export interface SqliteConnection {
  readonly open: boolean;
  readonly inTransaction: boolean;
  pragma(source: string): unknown;
  function(name: string, options: { deterministic: boolean }, fn: (value: unknown) => unknown): unknown;
  prepare(sql: string): SqliteStatement;
  close(): unknown;
}

/** Distinct statements kept prepared per read connection; the least recently added go first beyond it. */
export const STATEMENT_CACHE_SIZE = 500;

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

/**
 * A value as better-sqlite3 binds it, made as Knex's SQLite client makes it for the statements it
 * runs (a date as its milliseconds, a boolean as 1 or 0), and a list (a `list` field's value) as
 * its JSON text, the form its column holds here.
 */
export function sqliteValue(value: unknown): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.valueOf();
  if (Array.isArray(value)) return JSON.stringify(value);
  return value;
}

/**
 * The `?` placeholders of an SQL text Knex compiled, by position: those outside its quoted strings
 * and identifiers (Knex writes every value as a placeholder; a quoted `?` is text).
 */
function placeholderPositions(sql: string): number[] {
  const positions: number[] = [];
  let quote = '';
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '?') positions.push(i);
  }
  return positions;
}

/** A statement with its boolean values written in its text (`withBooleanLiterals`), and its other values. */
interface Literalized {
  sql: string;
  keep: readonly number[];
}

/**
 * Per SQL text, per pattern of its boolean values, the text with them written in as `1` and `0`
 * (SQLite's booleans): with `is_published = ?` bound, SQLite plans a lookup joined to its related
 * rows several times slower than with `is_published = 1` (measured: 28 against 4.5 µs for the
 * blog's retrieve), and the booleans a statement binds are almost always the spec's and hooks'
 * constants. Only `1` or `0` is written into the text: no value of a request's becomes SQL. A
 * statement has at most 2^n texts for its n booleans, each prepared once.
 */
const literalized = new Map<string, Map<string, Literalized>>();

/** At most this many SQL texts keep their literal forms; past it, booleans are bound (the cache stays bounded). */
const LITERALIZED_KEPT = 2000;

export function withBooleanLiterals(sql: string, bindings: readonly unknown[]): { sql: string; bindings: readonly unknown[] } {
  let pattern = '';
  for (let i = 0; i < bindings.length; i++) {
    const value = bindings[i];
    if (typeof value === 'boolean') pattern += value ? `${i}t` : `${i}f`;
  }
  if (pattern === '') return { sql, bindings };
  let byPattern = literalized.get(sql);
  if (!byPattern) {
    if (literalized.size >= LITERALIZED_KEPT) return { sql, bindings };
    literalized.set(sql, (byPattern = new Map()));
  }
  let found = byPattern.get(pattern);
  if (!found) {
    const positions = placeholderPositions(sql);
    if (positions.length !== bindings.length) return { sql, bindings };
    let text = '';
    let from = 0;
    const keep: number[] = [];
    for (let i = 0; i < positions.length; i++) {
      const value = bindings[i];
      if (typeof value !== 'boolean') {
        keep.push(i);
        continue;
      }
      text += `${sql.slice(from, positions[i])}${value ? '1' : '0'}`;
      from = positions[i] + 1;
    }
    found = { sql: text + sql.slice(from), keep };
    byPattern.set(pattern, found);
  }
  const kept = found.keep.map((i) => bindings[i]);
  return { sql: found.sql, bindings: kept };
}

/** What every SQLite connection gets (`all`) and what the pool's connection, which writes, gets first (`writer`). */
export interface SqliteSetup {
  all(conn: SqliteConnection): void;
  writer(conn: SqliteConnection): void;
}

/** A query as Knex's `query` event tells it: its SQL, its bindings, and the pool connection's id on Knex's own statements. */
interface KnexQueryEvent {
  sql?: unknown;
  bindings?: unknown;
  __knexUid?: unknown;
}

/**
 * One SQLite database's read connection, its prepared statements and read snapshots.
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
 *   transaction: Knex's `query` event, told before the statement runs) ends the snapshot first: a
 *   write, and any read after it, sees the latest rows.
 */
export class SqliteReads implements DirectReads {
  /** The read connection's prepared statements by SQL text. */
  private readonly statements = new Map<string, SqliteStatement>();
  /** The pool connection's (the writer's) prepared statements by SQL text, for the runtime's statements in transactions. */
  private readonly writerStatements = new Map<string, SqliteStatement>();
  /** The statements that answer their rows as arrays (`raw`), each with the maker of its rows' objects. */
  private readonly rowMakers = new WeakMap<SqliteStatement, RowMaker>();
  /** Whether the read connection has a snapshot open. */
  private inSnapshot = false;
  /** Whether requests received together are being served (set by `requestsArrived` until the check phase). */
  private servingArrivals = false;
  /** Knex's pool connection, the one that writes, once it is set up. */
  private writer: SqliteConnection | undefined;
  /** The connection the runtime reads on outside transactions, opened at first need. */
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

  private get inMemory(): boolean {
    return this.file === '' || this.file === ':memory:';
  }

  /**
   * Knex's connection settings (Knex's connection provider), asked again whenever its
   * `expirationChecker` says so: while the pool's connection is not open, that is before the pool
   * makes a new one. A new connection after the file went would create an empty database at its
   * path, so the file is checked first. The function carries the file name too, where Knex's SQLite
   * client looks for it when it is made.
   */
  connectionSettings(): Knex.ConnectionConfigProvider & { filename: string } {
    const settings = (): Knex.StaticConnectionConfig => {
      this.checkFile();
      return { filename: this.file, expirationChecker: () => !this.writer?.open } as Knex.BetterSqlite3ConnectionConfig;
    };
    return Object.assign(settings, { filename: this.file });
  }

  /** Sets up the pool's new connection, the one that writes (Knex's `pool.afterCreate`). */
  readonly afterCreate = (conn: SqliteConnection, done: (err: unknown, conn: SqliteConnection) => void): void => {
    try {
      this.setup.writer(conn);
      this.setup.all(conn);
      if (!this.identity && !this.inMemory) {
        const { dev, ino } = fs.statSync(this.file);
        this.identity = { dev, ino };
      }
    } catch (err) {
      conn.close();
      done(err, conn);
      return;
    }
    this.writerStatements.clear();
    this.writer = conn;
    done(null, conn);
  };

  /**
   * Watches what Knex runs on `db`: before each of its statements (Knex's `query` event) the open
   * snapshot ends, and, outside a transaction, the file is checked (`checkFile`); a list bound
   * to a builder's write is bound as its JSON text (the event hands over the query's bindings).
   */
  attach(db: Knex): void {
    db.on('query', (query: KnexQueryEvent) => {
      const { bindings, __knexUid: connection } = query;
      if (Array.isArray(bindings)) {
        for (let i = 0; i < bindings.length; i++) if (Array.isArray(bindings[i])) bindings[i] = JSON.stringify(bindings[i]);
      }
      // The runtime's own reads are told without a pool connection's id.
      if (connection === undefined) return;
      if (this.inSnapshot) this.endSnapshot();
      if (this.writer && !this.writer.inTransaction) {
        try {
          this.checkFile();
        } catch (err) {
          // Told as Knex tells a statement that failed, then thrown: Knex rejects the query with it.
          db.emit('query-error', err, query);
          throw err;
        }
      }
    });
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
    throw Object.assign(
      new Error(`the database file ${this.file} ${what} since the service opened it; restart the service once the file is back`),
      {
        code: 'SQLITE_CANTOPEN',
      },
    );
  }

  /**
   * The connection for a read outside transactions, which must see committed rows only and never
   * wait for a writer: a second connection to the file, read-only, opened at first need once Knex's
   * pool has opened its own. None (Knex runs the read) for an in-memory database (a second
   * connection would open another, empty one), before the pool's connection is open, and once it
   * is closed (the pool destroyed: the read connection closes with it, and Knex reports the closed pool).
   */
  connection(): SqliteConnection | undefined {
    if (this.inMemory || !this.writer) return undefined;
    if (!this.writer.open) {
      this.closeReader();
      return undefined;
    }
    if (this.reader) return this.reader;
    const Driver = require('better-sqlite3') as new (
      filename: string,
      options: { readonly: boolean; fileMustExist: boolean },
    ) => SqliteConnection;
    // Never creates the file: one deleted meanwhile is an outage, not a new empty database.
    const reader = new Driver(this.file, { readonly: true, fileMustExist: true });
    try {
      this.setup.all(reader);
    } catch (err) {
      reader.close();
      throw err;
    }
    this.reader = reader;
    return reader;
  }

  private closeReader(): void {
    this.inSnapshot = false;
    this.statements.clear();
    this.reader?.close();
    this.reader = undefined;
  }

  /** The statement of `sql` prepared on `conn` (the read connection, or the writer with its own `statements`), prepared at first need. */
  private statement(conn: SqliteConnection, sql: string, statements = this.statements): SqliteStatement {
    let statement = statements.get(sql);
    if (!statement) {
      statement = conn.prepare(sql);
      const make = rowMaker(statement, sql);
      if (make) this.rowMakers.set(statement, make);
      if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value as string);
      statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * The pool's connection while it holds a transaction: SQLite's pool has one connection, so a
   * transaction in flight holds this one. None before it is open, once it is closed, or outside a
   * transaction (Knex runs the statement, and reports the closed pool or the failed BEGIN).
   */
  transactionConnection(): SqliteConnection | undefined {
    const writer = this.writer;
    return writer?.open && writer.inTransaction ? writer : undefined;
  }

  inTransaction(connection: unknown, sql: string): ((bindings: readonly unknown[]) => Row[]) | undefined {
    const conn = connection as SqliteConnection;
    const statement = this.statement(conn, sql, this.writerStatements);
    if (!statement.reader) return undefined;
    return (bindings) => {
      const literal = withBooleanLiterals(sql, bindings);
      const run = literal.sql === sql ? statement : this.statement(conn, literal.sql, this.writerStatements);
      const rows = run.all(...this.bindings(literal.bindings));
      const make = this.rowMakers.get(run);
      if (make) for (let i = 0; i < rows.length; i++) rows[i] = make(rows[i] as unknown[]);
      return rows as Row[];
    };
  }

  all(connection: unknown, sql: string, bindings: readonly unknown[]): Row[] {
    if (this.lost) this.checkFile();
    const conn = connection as SqliteConnection;
    if (!this.inSnapshot) this.beginSnapshot(conn);
    const literal = withBooleanLiterals(sql, bindings);
    const statement = this.statement(conn, literal.sql);
    const rows = statement.all(...this.bindings(literal.bindings));
    const make = this.rowMakers.get(statement);
    if (make) for (let i = 0; i < rows.length; i++) rows[i] = make(rows[i] as unknown[]);
    return rows as Row[];
  }

  bindings(bindings: readonly unknown[]): unknown[] {
    return bindings.map(sqliteValue);
  }

  /**
   * Tells the database that a request was received (the API's first middleware calls it). The
   * first of a batch ends any snapshot begun before (a timer's), and the batch's snapshots end in the
   * loop's check phase, after the callbacks of every request the loop received with it.
   */
  requestsArrived(): void {
    if (this.servingArrivals) return;
    this.servingArrivals = true;
    if (this.inSnapshot) this.endSnapshot();
    setImmediate(this.endArrivals);
  }

  private readonly endArrivals = (): void => {
    this.servingArrivals = false;
    this.endSnapshot();
  };

  /** Ends the open read snapshot (a read-only transaction: its COMMIT releases the read lock). */
  private endSnapshot(): void {
    if (!this.inSnapshot) return;
    this.inSnapshot = false;
    const reader = this.reader;
    if (reader?.open && reader.inTransaction) this.statement(reader, 'COMMIT').run();
  }

  /** Begins a read snapshot on `conn` (a deferred BEGIN: its first read takes the lock). */
  private beginSnapshot(conn: SqliteConnection): void {
    this.statement(conn, 'BEGIN').run();
    // Queued once: its tick runs when the microtask queue is empty (Node runs the ticks queued by
    // microtasks after draining them), that is once this callback and what it made ready have run.
    if (!this.servingArrivals) queueMicrotask(this.endSnapshotAfterCallback);
    this.inSnapshot = true;
  }

  private readonly endSnapshotAfterCallback = (): void => {
    process.nextTick(this.endSnapshotNow);
  };

  private readonly endSnapshotNow = (): void => this.endSnapshot();
}
