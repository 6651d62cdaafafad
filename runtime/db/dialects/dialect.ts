/**
 * What the runtime asks of a database: one interface, and one adapter per database implementing it
 * (sqlite.ts, postgres.ts, mysql.ts). Every difference between the databases the runtime serves is an answer
 * of its adapter — how a URL opens it, what its driver's errors mean, how it folds case, how it
 * locks a row, how migrations hold a lock and rename a constraint — so the rest of the runtime
 * asks the adapter of a database (`dialectOf` in connection.ts) and never compares names, and
 * adding a database is one new adapter and its test run.
 */
import type { Knex } from 'knex';
import type { ListItemType } from '../../core/catalogue';
import type { DatabaseSettings, SqliteSettings } from '../../core/settings';

type Db = Knex;
type Row = Record<string, any>;

/** A driver's error, as drivers throw them: a `code` (SQLSTATE, SQLite's or Node's), a message. */
export interface DriverError {
  code?: unknown;
  errno?: unknown;
  message?: unknown;
  /** PostgreSQL: the constraint violated, its table, and the detail naming the key. */
  constraint?: unknown;
  table?: unknown;
  detail?: unknown;
  /** The SQLSTATE, where the driver keeps it apart from its own `code` (mysql2). */
  sqlState?: unknown;
  /** Whether the driver says its connection is unusable after this error (mysql2). */
  fatal?: unknown;
  /** The statement that failed (mysql2). */
  sql?: unknown;
}

/**
 * Which constraint a violation broke, as far as the driver says: the runtime names it in the 409
 * (operations/conflicts.ts) through what the generated code knows of each table. Every part the
 * driver does not give is absent (SQLite's foreign key errors give nothing but the kind).
 */
export interface ConstraintViolation {
  /** `unique` (a unique constraint or index, the primary key too), `foreign_key`, or any other (`not_null`, `check`…). */
  kind: 'unique' | 'foreign_key' | 'other';
  /** The constraint's or index's name. */
  constraint?: string;
  /** The table of the constraint: for a foreign key, the table that refers. */
  table?: string;
  /** The columns of a unique constraint. */
  columns?: string[];
  /** For a foreign key: true when a row still referred to is being deleted or its key changed, false when a row refers to a missing one. */
  stillReferenced?: boolean;
}

/**
 * The mark of an error that means the database cannot be reached, whatever its code or message: an
 * error the pool met opening a connection, or one a query met on a connection that broke under it
 * (node-postgres says "Connection terminated…" without a code). A registered symbol, so that every
 * copy of the runtime a process loads reads the marks another made.
 */
const CONNECTION_FAILURE = Symbol.for('svcgen.connectionFailure');

/** Marks `err` as a connection failure (see CONNECTION_FAILURE); returns it. */
export function markConnectionFailure<T>(err: T): T {
  if (err && typeof err === 'object' && !Object.isFrozen(err))
    Object.defineProperty(err, CONNECTION_FAILURE, { value: true, configurable: true });
  return err;
}

/** Whether `err` was marked as a connection failure. */
export function isMarkedConnectionFailure(err: unknown): boolean {
  return !!err && typeof err === 'object' && (err as Record<symbol, unknown>)[CONNECTION_FAILURE] === true;
}

/**
 * A database that did not answer a statement in time, its connection closed: Node's `ETIMEDOUT`
 * (the server never answered), so that it is a connection failure for every database.
 */
export class DatabaseTimeoutError extends Error {
  override name = 'DatabaseTimeoutError';
  readonly code = 'ETIMEDOUT';
}

/** What opening a database needs beside its URL. */
export interface OpenOptions {
  /** The SQLite file of a service whose DATABASE_URL is unset. */
  defaultSqliteFile: string;
  /** SQLite's tuning (settings.ts). */
  sqlite: SqliteSettings;
  /** Timeouts and pool size (settings.ts). */
  database: DatabaseSettings;
}

/** A database an adapter opened: Knex's configuration of it, and what the runtime keeps for it. */
export interface OpenedDatabase {
  knex: Knex.Config;
  /** Shown in logs: the SQLite file, or the URL without its password. */
  description: string;
  /** Reads outside transactions served beside Knex's pool, when the database has such a path. */
  reads?: DirectReads;
  /** Reads run their own way through Knex (named statements), when the database has such a path. */
  pooled?: PooledReads;
}

/**
 * Reads that a database runs its own way through Knex (PostgreSQL: outside transactions, statements
 * prepared once per connection under a name, see postgres-reads.ts).
 */
export interface PooledReads {
  /** The rows of Knex's SQL text `sql` (`?` placeholders) with `bindings`, on `db` (a database or a transaction). */
  rows(db: Knex, sql: string, bindings: readonly unknown[]): Promise<Row[]>;
}

/**
 * Reads that a database serves beside Knex's pool (SQLite: outside transactions, on a connection of
 * its own, from statements prepared once per SQL text, in read snapshots shared by the requests
 * received together; see sqlite-client.ts).
 */
export interface DirectReads {
  /** The connection to read on now, or undefined when Knex must run the read (a closed pool…). */
  connection(): unknown;
  /** The rows of `sql` on `connection`, run synchronously. */
  all(connection: unknown, sql: string, bindings: readonly unknown[]): Row[];
  /**
   * The connection a transaction of the database holds now, when the runtime may run the
   * transaction's statements on it itself (SQLite: the pool's one connection, in a transaction);
   * undefined when Knex must run them.
   */
  transactionConnection(): unknown;
  /**
   * What runs `sql` (a SELECT, or a write with RETURNING) on `connection`, the transaction's
   * (`transactionConnection`), synchronously, answering its rows; undefined when `sql` answers none
   * (Knex runs it then).
   */
  inTransaction(connection: unknown, sql: string): ((bindings: readonly unknown[]) => Row[]) | undefined;
  /** `bindings` as the database binds them, for a statement Knex runs from its text (`db.raw`). */
  bindings(bindings: readonly unknown[]): unknown[];
  /** Watches what Knex runs on `db` (its events), once it is made. */
  attach(db: Knex): void;
  /** Requests were received: their reads share one state of the database (see sqlite-client.ts). */
  requestsArrived(): void;
}

export interface Dialect {
  /** Its name in logs and tests. */
  readonly name: string;
  /** How a DATABASE_URL of this database starts (`postgres://`), for the message of a URL no adapter accepts. */
  readonly urlPrefix: string;
  /** Whether `url` names a database of this kind. */
  accepts(url: string): boolean;
  /** The database at `url` (unset or empty: the service's default SQLite file, for SQLite's adapter). */
  open(url: string | undefined, options: OpenOptions): OpenedDatabase;

  /** Whether this driver's error (one error, not its causes) is a constraint violation: a 409. */
  isConstraintViolation(err: DriverError): boolean;
  /** What this driver's constraint violation says of the constraint it broke; undefined for any other error. */
  constraintOf(err: DriverError): ConstraintViolation | undefined;
  /** Whether this driver's error (one error, not its causes) means the database cannot be reached: a 503. */
  isConnectionFailure(err: DriverError): boolean;
  /**
   * The driver's message of `err` without the values the database quoted in it (for log lines),
   * where this driver's messages quote them beyond what the log writer already leaves out.
   */
  messageWithoutValues?(err: DriverError, message: string): string;

  /**
   * Adds `lower(column) = lower(value)` or `lower(column) LIKE lower(pattern)` to `query`, with
   * PostgreSQL's `lower()` on every database; `text` is the column's SQL with `??` for `column`.
   */
  whereLower(query: Knex.QueryBuilder, text: string, column: string, comparison: '=' | 'LIKE', value: string): void;
  /**
   * Adds the case-sensitive `column LIKE pattern` (escaped with `\\`) to `query`, as PostgreSQL
   * compares, whatever the column's collation; `text` is the column's SQL with `??` for `column`.
   */
  whereLike(query: Knex.QueryBuilder, text: string, column: string, pattern: string): void;
  /** The SQL of `text` (a value's SQL) cast to text, for a text match on a column of another type. */
  asText(text: string): string;
  /**
   * Adds to `query` that the list column `column` holds every one of `values` (`contains`) or at
   * least one (`overlap`), each compared exactly (case included) as an item of type `items`.
   * `values` are bindable items (at least one), never SQL.
   */
  whereList(query: Knex.QueryBuilder, column: string, items: ListItemType, op: 'contains' | 'overlap', values: readonly unknown[]): void;

  /**
   * The column type of a `list` field holding items of type `items`: a native array where the
   * database has them (PostgreSQL), JSON text elsewhere. A list is bound as a JavaScript array, which
   * the adapter's client writes in that form.
   */
  listColumnType(items: ListItemType): string;
  /** `values`, a list of items of type `items`, as the text of a list column's DEFAULT. */
  listLiteral(items: ListItemType, values: readonly unknown[]): string;
  /** The rows of a raw statement's result (`db.raw`). */
  rowsOf(result: unknown): Row[];
  /**
   * `query`, an insert of `rows` built without `returning`, made to answer `columns` of the rows it
   * inserts when `writeReturning` (connection.ts) runs it: Knex's `returning` where its compiler
   * writes RETURNING (PostgreSQL, SQLite); MySQL's has none, and its adapter answers them by
   * `writtenRows`. Only the generated key, or a column `rows` give, is answered on every database.
   */
  returning(query: Knex.QueryBuilder, rows: Row | readonly Row[], columns: readonly string[]): Knex.QueryBuilder;
  /**
   * The rows the write `query` returns, run on `db` from `sql`, its text (as Knex compiled it, or a
   * statement made from it that ends as it does), with `bindings`.
   */
  writtenRows(db: Db, sql: string, bindings: readonly unknown[], query: Knex.QueryBuilder): Promise<Row[]>;
  /** Makes `query` lock the rows it reads until the transaction ends, where the database needs it. */
  lockForUpdate(query: Knex.QueryBuilder): void;
  /** Whether its Knex client writes an integer LIMIT into the SQL text instead of binding it. */
  readonly limitAsText: boolean;
  /** Whether its Knex client writes a boolean value into the SQL text instead of binding it. */
  readonly booleansAsText: boolean;
  /**
   * Whether an INSERT answers the columns its `returning` names (SQLite, PostgreSQL); MySQL's answers
   * the generated key alone, and the row is read again by it.
   */
  readonly insertReturnsRows: boolean;
  /**
   * Whether one row's many-to-many relation is read in the statement of its foreign keys
   * (`loadRelations`): where each statement is a round trip to a server (PostgreSQL, MySQL). SQLite
   * runs statements in the process, where a join that repeats the row's columns on every related
   * record costs more than a lookup of its own.
   */
  readonly joinsManyToMany: boolean;
  /**
   * Whether a schema change (CREATE, ALTER, DROP) is undone with the transaction it ran in (SQLite,
   * PostgreSQL); MySQL commits each one by itself, so a migration's `down` cannot be tried and undone.
   */
  readonly transactionalSchemaChanges: boolean;

  /** Runs `run` holding the database's migration lock, so that one instance migrates at a time. */
  withMigrationLock<T>(db: Db, run: () => Promise<T>): Promise<T>;
  /** Runs Knex's migrator (`run`) with `config` and what this database adds to it. */
  runMigrations<T>(
    db: Db,
    config: Knex.MigratorConfigWithLifecycleHooks,
    run: (config: Knex.MigratorConfigWithLifecycleHooks) => Promise<T>,
  ): Promise<T>;
  /**
   * The Knex a migration runs with, given `knex`, the one the migrator gives it: where the
   * database's Knex compiler writes a schema statement otherwise than the service needs (MySQL:
   * unique indexes over live rows, text defaults, indexes a foreign key needs), one whose schema
   * builder writes it as it is needed; absent where Knex's own does.
   */
  migrationKnex?(knex: Knex): Knex;
  /** Renames the foreign key constraint `from` of `table` to `to`, where the database names them. */
  renameForeignKey(knex: Knex, table: string, from: string, to: string): Promise<void>;
  /**
   * Creates index `name` on `table` serving `whereLower(…, 'LIKE', …)` on `column` (a text column);
   * absent where the database has no such index (the match then reads every row).
   */
  createSearchIndex?(knex: Knex, table: string, column: string, name: string): Promise<void>;
  /** Drops the index `createSearchIndex` made (absent with it). */
  dropSearchIndex?(knex: Knex, table: string, name: string): Promise<void>;
  /** Renames the index `createSearchIndex` made, after its column (absent with it). */
  renameSearchIndex?(knex: Knex, table: string, from: string, to: string): Promise<void>;

  /**
   * The SQL of `column` (`??`, bound to it) with the ASCII letters A–Z folded to a–z and every other
   * character as it is, the same on every database: what a case-insensitive unique field
   * (`ignore_case`) is unique by, and how its value is looked up.
   */
  readonly foldedColumnSql: string;
  /**
   * Creates the unique index `name` of `table` over the folded value of `column` (`foldedColumnSql`),
   * over the rows where `whereNull` is NULL when given: an expression index where the database has
   * them, else an indexed invisible generated column named `name` (MySQL: columns and indexes are
   * named apart).
   */
  createFoldedUnique(knex: Knex, table: string, column: string, name: string, whereNull?: string): Promise<void>;
  /** Drops what `createFoldedUnique` made. */
  dropFoldedUnique(knex: Knex, table: string, name: string): Promise<void>;

  /** The names of the database's own tables (the current schema's; not the database's catalogue), sorted. */
  listTables(knex: Knex): Promise<string[]>;
  /** After rows were inserted with explicit keys: the table's key sequence moved past them, where the database keeps one apart. */
  syncKeySequence(knex: Knex, table: string, pk: string): Promise<void>;
  /** A table's primary key columns, foreign keys and indexes (not the primary key's), for `svcgen pull`. */
  describeKeys(knex: Knex, table: string): Promise<TableKeys>;
  /**
   * The item type of each of a table's array columns that a list field can be (`svcgen pull`), where
   * the database has arrays; elsewhere a list is a JSON column, which pull cannot tell from `json`.
   */
  listColumns?(knex: Knex, table: string): Promise<Record<string, ListItemType>>;

  /** Where the database has read replicas (DATABASE_REPLICA_URLS): how commit positions are read and compared. */
  readonly positions?: CommitPositions;
}

/**
 * Positions in a database's history of commits, for read replicas: a write's position after its
 * commit on the primary, how far a replica has replayed, and their order. A position is text
 * (PostgreSQL: a WAL LSN, `0/3000148`).
 */
export interface CommitPositions {
  /** A SELECT of one row whose one column is the primary's current position: every commit so far is at or before it. */
  readonly currentSql: string;
  /** A SELECT of one row whose one column is how far the replica it runs on has replayed (null on a primary). */
  readonly replayedSql: string;
  /** Whether `text` is a position (checked before it is compared: it comes from a request header). */
  valid(text: string): boolean;
  /** Whether `replayed` is at or past `wanted`. */
  reached(replayed: string, wanted: string): boolean;
}

/** What `describeKeys` finds of one table. */
export interface TableKeys {
  primaryKey: string[];
  foreignKeys: { column: string; table: string; refColumn: string; onDelete: string }[];
  indexes: { name: string; columns: string[]; unique: boolean }[];
}
