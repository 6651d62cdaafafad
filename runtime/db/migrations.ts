/**
 * Running the generated migrations with Knex. Migrations are modules in the generated code,
 * listed in order; each runs in its own transaction.
 *
 * The runtime has a few tables of its own (today: the refresh tokens already used, see tokens.ts),
 * created by its own migrations, recorded apart in `svc_runtime_migrations` so that the generated
 * migrations, their names and their rollbacks stay exactly what the specs call for.
 *
 * Any number of instances may start at once on one database: migrating holds a lock, so one
 * instance applies the pending migrations while the others wait, then find nothing left to apply.
 * On PostgreSQL the lock is an advisory lock held by a transaction open for the whole run; on SQLite
 * an exclusive transaction on a small database beside the service's (`<file>.migrate-lock`), held
 * by its own connection. Either is released when the run ends, or when its process dies.
 */
import type { Knex } from 'knex';
import { dialectOf, type Db } from './connection';

export interface Migration {
  name: string;
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

export function migrationSource(migrations: readonly Migration[]): Knex.MigrationSource<Migration> {
  return {
    getMigrations: async () => [...migrations],
    getMigrationName: (m) => m.name,
    getMigration: async (m) => ({ up: m.up, down: m.down }),
  };
}

/**
 * SQLite alters most columns by rebuilding the table (create, copy, drop, rename). With foreign keys
 * enforced, dropping the old table would run its ON DELETE actions and empty the tables that
 * reference it, and the pragma cannot change inside a transaction. So the migrations run with the
 * pragma off (SQLite connections are one per pool, so the transaction uses this connection), every
 * foreign key is checked before the transaction commits, and the pragma is restored afterwards.
 */
async function withSqliteForeignKeysDeferred<T>(db: Db, run: (config: Knex.MigratorConfigWithLifecycleHooks) => Promise<T>): Promise<T> {
  const config: Knex.MigratorConfigWithLifecycleHooks = { tableName: 'svc_migrations' };
  if (dialectOf(db) !== 'sqlite') return run(config);
  const [{ foreign_keys: enabled }] = (await db.raw('PRAGMA foreign_keys')) as { foreign_keys: number }[];
  if (!enabled) return run(config);
  await db.raw('PRAGMA foreign_keys = OFF');
  try {
    return await run({
      ...config,
      beforeAll: async (trx) => {
        const [{ foreign_keys: still }] = (await trx.raw('PRAGMA foreign_keys')) as { foreign_keys: number }[];
        if (still) throw new Error('migrations: could not turn SQLite foreign keys off for the migration (use one connection per SQLite pool)');
      },
      afterAll: async (trx) => {
        const violations = (await trx.raw('PRAGMA foreign_key_check')) as { table: string; rowid: number; parent: string }[];
        if (violations.length) {
          const shown = violations.slice(0, 5).map((v) => `${v.table} row ${v.rowid} → ${v.parent}`);
          throw new Error(`migrations: ${violations.length} rows break a foreign key (${shown.join(', ')}); nothing was applied`);
        }
      },
    });
  } finally {
    await db.raw('PRAGMA foreign_keys = ON');
  }
}

/** The table where the runtime keeps the ids (`jti`) of refresh tokens already exchanged, until they expire. */
export const USED_REFRESH_TOKENS_TABLE = 'svc_used_refresh_tokens';

/** The runtime's own tables, the same for every generated service. */
export const RUNTIME_MIGRATIONS: readonly Migration[] = [
  {
    name: 'runtime_0001_used_refresh_tokens',
    async up(knex) {
      await knex.schema.createTable(USED_REFRESH_TOKENS_TABLE, (t) => {
        t.string('jti', 64).primary();
        // Seconds since the epoch: compared as plain integers on both databases.
        t.bigInteger('expires_at').notNullable().index();
      });
    },
    async down(knex) {
      await knex.schema.dropTableIfExists(USED_REFRESH_TOKENS_TABLE);
    },
  },
];

/** The PostgreSQL advisory lock key of migrating, the same for every service (they wait in turn). */
const PG_LOCK_KEY = 'svc_migrations';
/** How long an instance waits for another's SQLite migration before giving up. */
const SQLITE_LOCK_WAIT_MS = 120_000;

/**
 * The exclusive transaction is tried without waiting and tried again every 50 ms: waiting inside
 * SQLite would block the event loop, and with it a run of this same process holding the lock.
 */
async function withSqliteLock<T>(file: string, run: () => Promise<T>): Promise<T> {
  const Database = require('better-sqlite3') as new (file: string, options: { timeout: number }) => { exec(sql: string): void; close(): void };
  const lock = new Database(`${file}.migrate-lock`, { timeout: 0 });
  try {
    const deadline = Date.now() + SQLITE_LOCK_WAIT_MS;
    for (;;) {
      try {
        lock.exec('BEGIN EXCLUSIVE');
        break;
      } catch (err) {
        if ((err as { code?: unknown }).code !== 'SQLITE_BUSY') throw err;
        if (Date.now() > deadline) throw new Error(`migrations: another process has been migrating ${file} for ${SQLITE_LOCK_WAIT_MS / 1000} s`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    try {
      return await run();
    } finally {
      lock.exec('COMMIT');
    }
  } finally {
    lock.close();
  }
}

/** Runs `run` holding the database's migration lock (see the top of this file). */
export async function withMigrationLock<T>(db: Db, run: () => Promise<T>): Promise<T> {
  if (dialectOf(db) === 'postgres') {
    return db.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [PG_LOCK_KEY]);
      return run();
    });
  }
  const file = (db.client.config.connection as { filename?: string } | undefined)?.filename;
  return !file || file === ':memory:' ? run() : withSqliteLock(file, run);
}

/**
 * Applies every pending migration (all in one transaction), then the runtime's own pending
 * migrations, holding the migration lock; returns the names of the service's migrations applied.
 */
export function migrateLatest(db: Db, migrations: readonly Migration[]): Promise<string[]> {
  return withMigrationLock(db, () => applyPending(db, migrations));
}

async function applyPending(db: Db, migrations: readonly Migration[]): Promise<string[]> {
  const [, applied] = (await withSqliteForeignKeysDeferred(db, (config) =>
    db.migrate.latest({ ...config, migrationSource: migrationSource(migrations) }),
  )) as [number, string[]];
  // Only new tables here: no SQLite table rebuild, so no need to defer foreign keys.
  await db.migrate.latest({ tableName: 'svc_runtime_migrations', migrationSource: migrationSource(RUNTIME_MIGRATIONS) });
  return applied;
}

/** Reverts the last batch, holding the migration lock; returns the names reverted. */
export function migrateRollback(db: Db, migrations: readonly Migration[]): Promise<string[]> {
  return withMigrationLock(db, async () => {
    const [, reverted] = (await withSqliteForeignKeysDeferred(db, (config) =>
      db.migrate.rollback({ ...config, migrationSource: migrationSource(migrations) }),
    )) as [number, string[]];
    return reverted;
  });
}
