/**
 * What the runtime keeps for each database (each Knex instance `connect()` makes): its dialect
 * adapter, the SQL text of its fixed statements, and the reads it serves
 * beside Knex's pool. One object per database, stored in its Knex configuration, so the database,
 * its transactions and every query built on them reach it with a few property reads (`databaseOf`),
 * and two databases in one process never share it; nothing of it sits in a module-level map.
 */
import type { Knex } from 'knex';
import type { DatabaseSettings } from '../core/settings';
import type { Dialect, DirectReads, PooledReads } from './dialects/dialect';

export interface Database {
  readonly dialect: Dialect;
  /** The SQL text of its fixed statements (`selectFixed`), by their owner, then by variant. */
  readonly fixedSql: WeakMap<object, Map<string, string>>;
  /** Reads outside transactions served beside Knex's pool (SQLite). */
  readonly reads: DirectReads | undefined;
  /** Reads run through Knex as named statements outside transactions (PostgreSQL, postgres-reads.ts). */
  readonly pooled: PooledReads | undefined;
  /** Its timeouts and pool size. */
  readonly settings: DatabaseSettings;
  /** The reads its read replicas serve (replicas.ts), when DATABASE_REPLICA_URLS names some. */
  replicas?: ReplicaReads;
}

/**
 * What a read outside a transaction asks of a database's read replicas (replicas.ts): the rows of a
 * SELECT from one that may serve the request, or undefined when none may (the primary answers).
 */
export interface ReplicaReads {
  select(sql: string, bindings: readonly unknown[]): Promise<Record<string, any>[] | undefined>;
}

/**
 * The key of a database's state in its Knex configuration: a registered symbol, the same for every
 * copy of the runtime a process loads (a module registry of its own, a second install), so that
 * each copy finds the state another made.
 */
const DATABASE = Symbol.for('svcgen.database');

/** `config` with a new database's state for `dialect` (each Knex instance made from it gets this state). */
export function withDatabaseState(
  config: Knex.Config,
  dialect: Dialect,
  reads: DirectReads | undefined,
  settings: DatabaseSettings,
  pooled?: PooledReads,
): Knex.Config {
  const database: Database = { dialect, fixedSql: new WeakMap(), reads, settings, pooled };
  return { ...config, [DATABASE]: database } as Knex.Config;
}

/** The state of the database a Knex instance, transaction or query builder's client belongs to. */
export function databaseOfClient(client: Knex.Client): Database {
  // Knex's `client.config`: the configuration the instance was made with, which its transactions' clients share.
  const database = (client.config as Record<symbol, unknown>)[DATABASE] as Database | undefined;
  if (!database) throw new Error('svcgen: this Knex instance was not made by connect() (runtime/db/connection.ts)');
  return database;
}

/** The state of `db`, a database `connect()` made or one of its transactions. */
export function databaseOf(db: Knex): Database {
  return databaseOfClient(db.client);
}
