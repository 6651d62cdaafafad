/**
 * Every part of Knex the runtime reads that is not Knex's typed, documented API: private fields of
 * its query builder, its dialect classes under `knex/lib`, the way a transaction's client is made,
 * the shape of its events and log messages. Each assumption is named here, once, and checked
 * against the installed Knex by `test/runtime/knex-internals.test.ts`, so that an upgrade which
 * breaks one fails a test that names it and this file. The rest of the runtime reaches Knex's
 * internals only through what this module exports.
 */
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import type { Knex } from 'knex';

const requireKnex = createRequire(__filename);

/* -------------------------------------------------------------------- clients and events */

/**
 * Assumption "query uid": the object Knex passes to its `query`, `query-response` and
 * `query-error` listeners carries the query's id as `__knexQueryUid`.
 */
export const QUERY_UID = '__knexQueryUid';

/**
 * Assumption "connection uid": the object of a query event also carries the id of the connection
 * the query ran on as `__knexUid` (a string), the same for every statement of a transaction and
 * its savepoints.
 */
export const CONNECTION_UID = '__knexUid';

/** The id of a query in a Knex event (see "query uid"). */
export function queryUidOf(query: unknown): unknown {
  return (query as Record<string, unknown> | undefined)?.[QUERY_UID];
}

/**
 * Assumption "error prefix": with `compileSqlOnError: false` in its configuration (connection.ts),
 * Knex prefixes the message of an error its driver threw with the statement's SQL text as it sent
 * it, its placeholders unfilled (`insert into "users" ("email") values ($1) - <driver's message>`).
 * The same SQL text is the `sql` of the query its `query-error` listeners receive.
 */
/** The driver's own message of an error Knex prefixed with `sql` (see "error prefix"); the message itself otherwise. */
export function driverMessageOf(message: string, sql: string | undefined): string {
  return sql !== undefined && message.startsWith(`${sql} - `) ? message.slice(sql.length + 3) : message;
}

/**
 * Assumption "connection warnings": Knex warns through its `log.warn` on every failed acquire,
 * with a message starting "Acquire connection error: " or "Connection Error: ".
 */
export const CONNECTION_WARNING = /^(Acquire connection error|Connection Error): /;

/* -------------------------------------------------------------------- connections of the pool */

/**
 * A connection of `client`'s pool, as Knex's runner acquires one (the pool's timeout and validation
 * apply); on a transaction's client, the transaction's connection, which it never releases.
 */
export function acquireConnection(client: Knex.Client): Promise<unknown> {
  return (client as unknown as { acquireConnection(): Promise<unknown> }).acquireConnection();
}

/* ------------------------------------------------------------------------- SQLite classes */

/** What the SQLite client and the statement cache use of a better-sqlite3 connection. */
export interface SqliteConnection {
  readonly open: boolean;
  readonly inTransaction: boolean;
  pragma(source: string): unknown;
  function(name: string, options: { deterministic: boolean }, fn: (value: unknown) => unknown): unknown;
  prepare(sql: string): SqliteStatement;
  close(): unknown;
}

export interface SqliteStatement {
  readonly reader: boolean;
  all(bindings: unknown[]): unknown[];
  run(bindings: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  /** Its result columns, in order (a statement that returns rows). */
  columns(): { name: string }[];
  /** Whether `all` answers each row as an array of its values, in the order of `columns()`, instead of an object. */
  raw(toggle: boolean): SqliteStatement;
}

/** What Knex hands its client's `_query`: the compiled SQL, its bindings, and the driver's response once run. */
export interface ClientQuery {
  sql: string;
  bindings?: unknown[];
  options?: { safeIntegers?: unknown };
  response?: unknown;
  context?: { lastID: number | bigint; changes: number };
}

/**
 * Assumption "better-sqlite3 client": `knex/lib/dialects/better-sqlite3` exports Knex's client
 * class for better-sqlite3 (the one `client: 'better-sqlite3'` makes). Knex runs every statement
 * through its `_query(connection, obj)`, which leaves the rows of a read in `obj.response` and a
 * write's `{lastID, changes}` in `obj.context`; `_formatBindings` makes values bindable (dates,
 * booleans) without reading the client's state; `driver` is the better-sqlite3 constructor and `connectionSettings.filename` the file;
 * `queryCompiler(builder, formatter)` makes the compiler of each query; every value a query or a
 * raw statement binds enters its SQL text through `parameter(value, builder, bindingsHolder)`,
 * which adds a plain value to `bindingsHolder.bindings` and answers its placeholder, `?`.
 */
export const BetterSqlite3Client = requireKnex('knex/lib/dialects/better-sqlite3') as new (config: Knex.Config) => {
  readonly driver: unknown;
  readonly connectionSettings: unknown;
  readonly config: Knex.Config;
  _query(connection: SqliteConnection, obj: ClientQuery): Promise<ClientQuery>;
  _formatBindings(bindings: readonly unknown[] | undefined): unknown[];
  parameter(value: unknown, builder: unknown, bindingsHolder: { bindings: unknown[] }): string;
  acquireRawConnection(): Promise<SqliteConnection>;
  destroyRawConnection(conn: SqliteConnection): Promise<unknown>;
  destroy(callback?: (err?: unknown) => void): Promise<void>;
};

/** What the LIMIT override uses of Knex's SQLite query compiler. */
export interface SqliteQueryCompilerInternals {
  single: { limit?: unknown; offset?: unknown };
  limit(): string;
}

/**
 * Assumption "SQLite compiler": `knex/lib/dialects/sqlite3/query/sqlite-querycompiler` exports the
 * SQLite query compiler, made with `(client, builder, formatter)`; it keeps the builder's `_single`
 * as `single` and writes the LIMIT clause (with the OFFSET's "-1" when there is no limit) from its
 * `limit()` method.
 */
export const SqliteQueryCompiler = requireKnex('knex/lib/dialects/sqlite3/query/sqlite-querycompiler') as new (
  ...args: unknown[]
) => SqliteQueryCompilerInternals;

/** Values made bindable for better-sqlite3 as Knex makes them (see "better-sqlite3 client"). */
export function sqliteBindings(bindings: readonly unknown[]): unknown[] {
  return BetterSqlite3Client.prototype._formatBindings(bindings);
}

/* -------------------------------------------------------------------------- MySQL classes */

/** What Knex's MySQL client hands `processResponse`: the compiled query, the driver's `[rows, fields]`. */
export interface MysqlClientQuery {
  sql: string;
  method?: string;
  output?: unknown;
  response?: [unknown, unknown];
  /** Set by the runtime's MySQL query compiler on an insert with `returning` (see mysql-client.ts). */
  returning?: { column: string; values: readonly Record<string, unknown>[] };
  /** Set by the runtime's MySQL query compiler on an insert it wrote RETURNING into (MariaDB). */
  returningRows?: boolean;
}

/**
 * Assumption "mysql2 client": `knex/lib/dialects/mysql2` exports Knex's client class for mysql2 (the
 * one `client: 'mysql2'` makes). It makes each query's compiler with `queryCompiler(builder,
 * formatter)`, each schema statement's with `tableCompiler(tableBuilder)` and
 * `columnCompiler(tableBuilder, columnBuilder)`, and reads a statement's result with
 * `processResponse(obj, runner)`, where `obj.response` is mysql2's `[rows, fields]`; an insert's
 * rows are the driver's result header (`insertId`, `affectedRows`).
 */
export const Mysql2Client = requireKnex('knex/lib/dialects/mysql2') as new (config: Knex.Config) => {
  readonly config: Knex.Config;
  queryCompiler(builder: unknown, formatter: unknown): unknown;
  tableCompiler(tableBuilder: unknown): unknown;
  columnCompiler(tableBuilder: unknown, columnBuilder: unknown): unknown;
  processResponse(obj: MysqlClientQuery, runner: unknown): unknown;
};

/**
 * Assumption "MySQL compilers": `knex/lib/dialects/mysql/{query/mysql-querycompiler,
 * schema/mysql-tablecompiler, schema/mysql-columncompiler}` export Knex's MySQL compilers, made with
 * `(client, builder, formatter)`, `(client, tableBuilder)` and `(client, tableBuilder,
 * columnBuilder)`. The query compiler keeps the builder's `_single` as `single` (`insert`,
 * `returning`), compiles an insert with `insert()` and warns from `_returningCheck()` that MySQL
 * has no RETURNING. The table compiler writes SQL with `pushQuery(sql | {sql, output})`
 * (an `output(rows)` runs with the runner as `this` and the statement's rows, which runs more SQL with
 * `query({sql, bindings})`), names the table with `tableName()` and quotes with `formatter`; its
 * `unique(columns, {indexName, predicate})` and `dropIndex(columns, name)` write an index's SQL. The
 * column compiler writes a column's default with `defaultTo(value)`, '' for a text column.
 */
export const MysqlQueryCompiler = requireKnex('knex/lib/dialects/mysql/query/mysql-querycompiler') as new (...args: unknown[]) => {
  single: Record<string, unknown>;
  client: unknown;
  insert(): string | { sql: string };
  _returningCheck(): void;
};
export const MysqlTableCompiler = requireKnex('knex/lib/dialects/mysql/schema/mysql-tablecompiler') as new (...args: unknown[]) => {
  single: Record<string, unknown>;
  client: unknown;
  formatter: { wrap(name: string): string; columnize(columns: unknown): string };
  tableNameRaw: string;
  tableName(): string;
  pushQuery(query: string | { sql: string; bindings?: unknown[]; output?: (this: MysqlRunner, response: unknown) => unknown }): void;
  unique(columns: string[], options?: unknown): void;
  dropIndex(columns: string[], indexName?: string): void;
  index(columns: string[], indexName?: unknown, options?: unknown): void;
  _indexCommand(type: string, table: string, columns: string[]): string;
};
export const MysqlColumnCompiler = requireKnex('knex/lib/dialects/mysql/schema/mysql-columncompiler') as new (...args: unknown[]) => {
  defaultTo(value: unknown, ...rest: unknown[]): string | undefined;
};

/** The runner a schema statement's `output` runs with (see "MySQL compilers"). */
export interface MysqlRunner {
  query(query: { sql: string; bindings?: unknown[]; output?: (response: unknown) => unknown }): Promise<unknown>;
}

/* ---------------------------------------------------------- acquisitions and pg's clients */

/**
 * Assumption "acquisition": every connection Knex hands out, to a query or to a transaction, comes
 * from its client's `acquireConnection()`, which rejects with the error of opening a connection (or
 * a KnexTimeoutError) when none can be had, and with "Unable to acquire a connection" once the
 * client's `pool` is gone (destroyed). `failed` sees each error of a pool that exists before it goes
 * on; the method is replaced on this one client, so other databases in the process are untouched.
 */
export function onAcquireFailure(client: Knex.Client, failed: (err: unknown) => void): void {
  const internals = client as unknown as { acquireConnection(): Promise<unknown>; pool?: unknown };
  const acquire = internals.acquireConnection;
  internals.acquireConnection = async function acquireConnection(this: { pool?: unknown }) {
    if (!this.pool) return acquire.call(this);
    try {
      return await acquire.call(this);
    } catch (err) {
      failed(err);
      throw err;
    }
  };
}

/** What `guardPgClient` uses of a node-postgres Client. */
interface PgClientInternals {
  query(...args: unknown[]): unknown;
  on(event: 'error' | 'end', listener: () => void): unknown;
  connection?: { stream?: { destroy(err?: Error): void } };
}

/**
 * Assumption "pg client": node-postgres's Client (what Knex's pool holds on PostgreSQL) runs each
 * of Knex's statements through `query(config, callback)`; when its connection breaks it emits
 * `error` (and `end` when the socket closes) before it calls the callbacks of the queries pending
 * on it (on a later tick), and the callbacks of queries sent to it later get an error too; its
 * socket is `connection.stream`, and destroying that with an error fails the query under way with
 * that error and breaks the client (Knex then drops it from its pool: `__knex__disposed`).
 *
 * `broken` sees every error a query of `client` gets once the connection has broken; with a
 * `readTimeoutMs`, a statement without an answer for that long destroys the socket with `timeout()`.
 * The form with a callback is guarded: the one Knex uses.
 */
export function guardPgClient(client: unknown, options: { readTimeoutMs: number; timeout: () => Error; broken: (err: unknown) => void }): void {
  const pg = client as PgClientInternals;
  let isBroken = false;
  pg.on('error', () => void (isBroken = true));
  pg.on('end', () => void (isBroken = true));
  const query = pg.query;
  const arm = () => {
    if (options.readTimeoutMs <= 0) return undefined;
    const timer = setTimeout(() => pg.connection?.stream?.destroy(options.timeout()), options.readTimeoutMs);
    timer.unref();
    return timer;
  };
  pg.query = function guardedQuery(...args: unknown[]) {
    const callback = args[args.length - 1];
    if (typeof callback !== 'function') return query.apply(pg, args);
    const timer = arm();
    args[args.length - 1] = (err: unknown, result: unknown) => {
      if (timer) clearTimeout(timer);
      if (err && isBroken) options.broken(err);
      (callback as (err: unknown, result: unknown) => void)(err, result);
    };
    return query.apply(pg, args);
  };
}

/* ------------------------------------------------------------------------------ transactions */

/**
 * Assumption "transactors": a transaction of Knex 3.3 (`knex/lib/execution/transaction`, which every
 * dialect's transaction class extends) acquires its connection and then, in `_onAcquire(container,
 * connection)`, makes a client bound to that connection (`makeTxClient`) and the transactor the
 * callback receives (`makeTransactor`, a Knex instance from `makeKnex` of
 * `knex/lib/knex-builder/make-knex` with `commit`, `rollback`, `savepoint`, `isCompleted`,
 * `isTransaction`). `makeKnex` gives every instance, one by one, a closure for each query method,
 * the accessors and methods it shares with every other instance, an EventEmitter's fields and
 * methods, and four listeners on its client. A client makes its transactions with `transaction()`.
 *
 * That is about 22 KB of objects and 65 µs of CPU per transaction (an empty one on SQLite took 90 µs
 * where its BEGIN and COMMIT take 2). `lightTransactions` gives a client's transactions a transactor
 * made as `makeKnex` makes one, but for what every instance shares: the methods and accessors are
 * on one prototype, made once from an instance of `makeKnex`. `_onAcquire`, `makeTxClient` and
 * `makeTransactor` below are Knex's, with that one change; `test/runtime/knex-internals.test.ts`
 * holds the hash of the two files they come from, and runs every kind of transaction both ways.
 */
const makeKnex = requireKnex('knex/lib/knex-builder/make-knex') as (client: unknown) => KnexInstance;

/** A Knex instance as `makeKnex` makes one: a function with properties. */
type KnexInstance = ((tableName?: unknown, options?: unknown) => unknown) & Record<string, any>;

/** What `_onAcquire` uses of Knex's Transaction (see "transactors"). */
interface TransactionInternals extends EventEmitter {
  client: ClientInternals;
  outerTx: TransactionInternals | null;
  userParams: unknown;
  trxClient?: ClientInternals;
  transactor?: KnexInstance;
  _resolver(value?: unknown): void;
  _rejecter(error?: unknown): void;
  _onAcquire(container: (trx: KnexInstance) => unknown, connection: unknown): Promise<unknown>;
  begin(connection: unknown): Promise<unknown>;
  savepoint(connection: unknown): Promise<unknown>;
  commit(connection: unknown, value?: unknown): Promise<unknown>;
  release(connection: unknown, value?: unknown): Promise<unknown>;
  rollback(connection: unknown, error?: unknown): Promise<unknown>;
  rollbackTo(connection: unknown, error?: unknown): Promise<unknown>;
  isCompleted(): boolean;
}

/** What a transaction's client is made of (see "transactors"). */
interface ClientInternals extends EventEmitter {
  transacting?: boolean;
  logger: { warn(message: string): void };
  transaction(...args: unknown[]): TransactionInternals;
  query(connection: unknown, obj: unknown): Promise<unknown>;
  stream(connection: unknown, obj: unknown, stream: unknown, options: unknown): Promise<unknown>;
  acquireConnection(): Promise<unknown>;
  releaseConnection(connection: unknown): Promise<unknown>;
  [key: string]: unknown;
}

/** An instance's own properties that are its own state, not shared (see "transactors"). */
const INSTANCE_STATE = new Set(['length', 'name', 'prototype', 'arguments', 'caller', 'context', '_internalListeners', '_events', '_eventsCount', '_maxListeners']);

let shared: { instance: object; context: object } | undefined;

/**
 * What every Knex instance has alike, read once off one `makeKnex` made (on a client that only
 * listens): its query methods, accessors and EventEmitter methods on a prototype of functions;
 * its context's methods on the prototype of contexts, but `withUserParams` (which closes over
 * that instance, and which a transaction refuses anyway).
 */
function sharedParts(): { instance: object; context: object } {
  if (shared) return shared;
  const sample = makeKnex(new EventEmitter());
  const instance = Object.create(Function.prototype) as object;
  for (const key of Object.getOwnPropertyNames(sample)) {
    if (INSTANCE_STATE.has(key)) continue;
    const descriptor = Object.getOwnPropertyDescriptor(sample, key)!;
    if (descriptor.get || descriptor.set || typeof descriptor.value === 'function') Object.defineProperty(instance, key, descriptor);
  }
  const context: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(sample.context as Record<string, unknown>)) {
    if (typeof value === 'function' && key !== 'withUserParams') context[key] = value;
  }
  context.withUserParams = () => {
    throw new Error('Cannot set user params on a transaction - it can only inherit params from main knex instance');
  };
  return (shared = { instance, context });
}

/** Knex's `createQueryBuilder` (make-knex.js): what calling an instance does. */
function createQueryBuilder(context: Record<string, any>, tableName: unknown, options: unknown): unknown {
  const qb = context.queryBuilder();
  if (!tableName) context.client.logger.warn('calling knex without a tableName is deprecated. Use knex.queryBuilder() instead.');
  return tableName ? qb.table(tableName, options) : qb;
}

/** `makeKnex(client)` with the shared parts on its prototype: its own are its context, EventEmitter state and listeners. */
function lightKnex(client: ClientInternals): KnexInstance {
  const parts = sharedParts();
  const knex: KnexInstance = function (tableName?: unknown, options?: unknown) {
    return createQueryBuilder(knex.context as Record<string, any>, tableName, options);
  } as KnexInstance;
  Object.setPrototypeOf(knex, parts.instance);
  const context = Object.create(parts.context) as Record<string, unknown>;
  context.client = client;
  context.userParams = {};
  knex.context = context;
  EventEmitter.call(knex as unknown as EventEmitter);
  const internal: { eventName: string; listener: (...args: any[]) => void }[] = [];
  knex._internalListeners = internal;
  const forward = (eventName: string, listener: (...args: any[]) => void) => {
    client.on(eventName, listener);
    internal.push({ eventName, listener });
  };
  forward('start', (obj) => knex.emit('start', obj));
  forward('query', (obj) => knex.emit('query', obj));
  forward('query-error', (err, obj) => knex.emit('query-error', err, obj));
  forward('query-response', (response, obj, builder) => knex.emit('query-response', response, obj, builder));
  return knex;
}

/** Knex's `makeTxClient` (transaction.js): a client that always answers `connection` and never releases it. */
function makeTxClient(trx: TransactionInternals, client: ClientInternals, connection: unknown): ClientInternals {
  const trxClient = Object.create(client.constructor.prototype) as ClientInternals;
  for (const key of ['version', 'config', 'driver', 'connectionSettings'] as const) trxClient[key] = client[key];
  trxClient.transacting = true;
  trxClient.valueForUndefined = client.valueForUndefined;
  trxClient.logger = client.logger;
  // Its savepoints are light transactions too.
  trxClient.transaction = client.transaction;
  trxClient.on('start', (arg) => {
    trx.emit('start', arg);
    client.emit('start', arg);
  });
  trxClient.on('query', (arg) => {
    trx.emit('query', arg);
    client.emit('query', arg);
  });
  trxClient.on('query-error', (err, obj) => {
    trx.emit('query-error', err, obj);
    client.emit('query-error', err, obj);
  });
  trxClient.on('query-response', (response, obj, builder) => {
    trx.emit('query-response', response, obj, builder);
    client.emit('query-response', response, obj, builder);
  });
  const guarded = <A extends unknown[]>(run: (conn: unknown, obj: unknown, ...rest: A) => Promise<unknown>) =>
    function (conn: unknown, obj: unknown, ...rest: A): Promise<unknown> {
      const completed = trx.isCompleted();
      return new Promise((resolve, reject) => {
        try {
          if (conn !== connection) throw new Error('Invalid connection for transaction query.');
          if (completed) throw new Error('Transaction query already complete, run with DEBUG=knex:tx for more info');
          resolve(run.call(trxClient, conn, obj, ...rest));
        } catch (e) {
          reject(e);
        }
      });
    };
  trxClient.query = guarded(trxClient.query);
  trxClient.stream = guarded(trxClient.stream as (conn: unknown, obj: unknown, stream: unknown, options: unknown) => Promise<unknown>);
  // Every statement of the transaction (Knex's runner, and the runtime's own reads and writes in
  // it, savepoints included) asks for its connection here: past the transaction's deadline it is
  // refused, so the work fails and the transaction rolls back (`limitTransaction`).
  trxClient.acquireConnection = () => {
    const deadline = deadlines.get(connection as object);
    return deadline && Date.now() >= deadline.at ? Promise.reject(deadline.error()) : Promise.resolve(connection);
  };
  trxClient.releaseConnection = () => Promise.resolve();
  return trxClient;
}

/** The deadlines of transactions in flight, by their connection (`limitTransaction`). */
const deadlines = new WeakMap<object, { at: number; error: () => Error }>();

/**
 * From `at` (a `Date.now()` time) on, every statement `trx` (a transaction of a database
 * `lightTransactions` made light) or a savepoint in it would run is refused with `error()`
 * before it reaches the database; its COMMIT and ROLLBACK are not statements of its work and still
 * run. Returns what lifts the limit, to call once the transaction has ended.
 */
export async function limitTransaction(trx: Knex.Transaction, at: number, error: () => Error): Promise<() => void> {
  const connection = (await acquireConnection(trx.client)) as object;
  deadlines.set(connection, { at, error });
  return () => deadlines.delete(connection);
}

/** Knex's `makeTransactor` (transaction.js), on a light instance. */
function makeTransactor(trx: TransactionInternals, connection: unknown, trxClient: ClientInternals): KnexInstance {
  const transactor = lightKnex(trxClient);
  transactor.isTransaction = true;
  transactor.userParams = trx.userParams || {};
  transactor.context.transaction = function (this: { _transaction(...args: unknown[]): unknown }, container: unknown, options?: Record<string, unknown>) {
    if (!options) options = { doNotRejectOnRollback: true };
    else if (options.doNotRejectOnRollback === undefined) options.doNotRejectOnRollback = true;
    return this._transaction(container, options, trx);
  };
  transactor.savepoint = (container: unknown, options: unknown) => transactor.transaction(container, options);
  if (trx.client.transacting) {
    transactor.commit = (value: unknown) => trx.release(connection, value);
    transactor.rollback = (error: unknown) => trx.rollbackTo(connection, error);
  } else {
    transactor.commit = (value: unknown) => trx.commit(connection, value);
    transactor.rollback = (error: unknown) => trx.rollback(connection, error);
  }
  transactor.isCompleted = () => trx.isCompleted();
  return transactor;
}

/** Knex's `Transaction.prototype._onAcquire` (transaction.js), with the functions above. */
async function onAcquire(this: TransactionInternals, container: (trx: KnexInstance) => unknown, connection: unknown): Promise<unknown> {
  const trxClient = (this.trxClient = makeTxClient(this, this.client, connection));
  const init = this.client.transacting ? this.savepoint(connection) : this.begin(connection);
  const executionPromise = new Promise((resolver, rejecter) => {
    this._resolver = resolver;
    this._rejecter = rejecter;
  });
  init
    .then(() => makeTransactor(this, connection, trxClient))
    .then((transactor) => {
      this.transactor = transactor;
      if (this.outerTx) transactor.parentTransaction = this.outerTx.transactor;
      transactor.executionPromise = executionPromise;
      let result: unknown;
      try {
        result = container(transactor);
      } catch (err) {
        result = Promise.reject(err);
      }
      if (result && typeof (result as PromiseLike<unknown>).then === 'function') {
        (result as Promise<unknown>).then((value) => transactor.commit(value)).catch((err: unknown) => transactor.rollback(err));
      }
      return null;
    })
    .catch((e: unknown) => this._rejecter(e));
  return executionPromise;
}

/**
 * Makes the transactions of `client` (and their savepoints) with light transactors (see
 * "transactors"): the same statements, events and completion as Knex's, at a fraction of the cost.
 */
export function lightTransactions(client: Knex.Client): void {
  const internals = client as unknown as ClientInternals;
  const make = internals.transaction;
  internals.transaction = function transaction(this: ClientInternals, ...args: unknown[]) {
    const trx = make.apply(this, args);
    trx._onAcquire = onAcquire;
    return trx;
  };
}
