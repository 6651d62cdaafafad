/**
 * What the runtime asks of a database: one interface, and one adapter per database implementing it
 * (sqlite.ts, postgres.ts). Every difference between the databases the runtime serves is an answer
 * of its adapter — how a URL opens it, what its driver's errors mean, how it folds case, how it
 * locks a row, how migrations hold a lock and rename a constraint — so the rest of the runtime
 * asks the adapter of a database (`dialectOf` in connection.ts) and never compares names, and
 * adding a database is one new adapter and its test run.
 */
import type { Knex } from 'knex';
import type { SqliteSettings } from '../../core/settings';

type Db = Knex;
type Row = Record<string, any>;

/** A driver's error, as drivers throw them: a `code` (SQLSTATE, SQLite's or Node's), a message. */
export interface DriverError {
  code?: unknown;
  errno?: unknown;
  message?: unknown;
}

/** What opening a database needs beside its URL. */
export interface OpenOptions {
  /** The SQLite file of a service whose DATABASE_URL is unset. */
  defaultSqliteFile: string;
  /** SQLite's tuning (settings.ts). */
  sqlite: SqliteSettings;
}

/** A database an adapter opened: Knex's configuration of it, and what the runtime keeps for it. */
export interface OpenedDatabase {
  knex: Knex.Config;
  /** Shown in logs: the SQLite file, or the URL without its password. */
  description: string;
  /** Reads outside transactions served beside Knex's pool, when the database has such a path. */
  reads?: DirectReads;
}

/**
 * Reads outside transactions that a database serves beside Knex's pool (SQLite: from statements
 * prepared once per connection, in read snapshots shared by the requests received together).
 */
export interface DirectReads {
  /** The connection to read on now, or undefined when Knex must run the read (a closed pool…). */
  connection(): unknown;
  /** The rows of `sql` on `connection`, run synchronously. */
  all(connection: unknown, sql: string, bindings: readonly unknown[]): Row[];
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
  /** Whether this driver's error (one error, not its causes) means the database cannot be reached: a 503. */
  isConnectionFailure(err: DriverError): boolean;

  /**
   * Adds `lower(column) = lower(value)` or `lower(column) LIKE lower(pattern)` to `query`, with
   * PostgreSQL's `lower()` on every database; `text` is the column's SQL with `??` for `column`.
   */
  whereLower(query: Knex.QueryBuilder, text: string, column: string, comparison: '=' | 'LIKE', value: string): void;
  /** Makes `query` lock the rows it reads until the transaction ends, where the database needs it. */
  lockForUpdate(query: Knex.QueryBuilder): void;
  /** Whether its Knex client writes an integer LIMIT into the SQL text instead of binding it. */
  readonly limitAsText: boolean;

  /** Runs `run` holding the database's migration lock, so that one instance migrates at a time. */
  withMigrationLock<T>(db: Db, run: () => Promise<T>): Promise<T>;
  /** Runs Knex's migrator (`run`) with `config` and what this database adds to it. */
  runMigrations<T>(
    db: Db,
    config: Knex.MigratorConfigWithLifecycleHooks,
    run: (config: Knex.MigratorConfigWithLifecycleHooks) => Promise<T>,
  ): Promise<T>;
  /** Renames the foreign key constraint `from` of `table` to `to`, where the database names them. */
  renameForeignKey(knex: Knex, table: string, from: string, to: string): Promise<void>;
  /** The names of the database's own tables (the current schema's; not the database's catalogue), sorted. */
  listTables(knex: Knex): Promise<string[]>;
  /** After rows were inserted with explicit keys: the table's key sequence moved past them, where the database keeps one apart. */
  syncKeySequence(knex: Knex, table: string, pk: string): Promise<void>;
  /** A table's primary key columns, foreign keys and indexes (not the primary key's), for `svcgen pull`. */
  describeKeys(knex: Knex, table: string): Promise<TableKeys>;
}

/** What `describeKeys` finds of one table. */
export interface TableKeys {
  primaryKey: string[];
  foreignKeys: { column: string; table: string; refColumn: string; onDelete: string }[];
  indexes: { name: string; columns: string[]; unique: boolean }[];
}
