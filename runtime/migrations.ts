/**
 * Running the generated migrations with Knex. Migrations are modules in the generated code,
 * listed in order; each runs in its own transaction.
 */
import type { Knex } from 'knex';
import { dialectOf, type Db } from './db';

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

/** Applies every pending migration (all in one transaction); returns the names applied. */
export async function migrateLatest(db: Db, migrations: readonly Migration[]): Promise<string[]> {
  const [, applied] = (await withSqliteForeignKeysDeferred(db, (config) =>
    db.migrate.latest({ ...config, migrationSource: migrationSource(migrations) }),
  )) as [number, string[]];
  return applied;
}

/** Reverts the last batch; returns the names reverted. */
export async function migrateRollback(db: Db, migrations: readonly Migration[]): Promise<string[]> {
  const [, reverted] = (await withSqliteForeignKeysDeferred(db, (config) =>
    db.migrate.rollback({ ...config, migrationSource: migrationSource(migrations) }),
  )) as [number, string[]];
  return reverted;
}
