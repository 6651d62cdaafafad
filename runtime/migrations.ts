/**
 * Running the generated migrations with Knex. Migrations are modules in the generated code,
 * listed in order; each runs in its own transaction.
 *
 * The runtime has a few tables of its own (today: the refresh tokens already used, see tokens.ts),
 * created by its own migrations, recorded apart in `svc_runtime_migrations` so that the generated
 * migrations, their names and their rollbacks stay exactly what the specs call for.
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

/**
 * Applies every pending migration (all in one transaction), then the runtime's own pending
 * migrations; returns the names of the service's migrations applied.
 */
export async function migrateLatest(db: Db, migrations: readonly Migration[]): Promise<string[]> {
  const [, applied] = (await withSqliteForeignKeysDeferred(db, (config) =>
    db.migrate.latest({ ...config, migrationSource: migrationSource(migrations) }),
  )) as [number, string[]];
  // Only new tables here: no SQLite table rebuild, so no need to defer foreign keys.
  await db.migrate.latest({ tableName: 'svc_runtime_migrations', migrationSource: migrationSource(RUNTIME_MIGRATIONS) });
  return applied;
}

/** Reverts the last batch; returns the names reverted. */
export async function migrateRollback(db: Db, migrations: readonly Migration[]): Promise<string[]> {
  const [, reverted] = (await withSqliteForeignKeysDeferred(db, (config) =>
    db.migrate.rollback({ ...config, migrationSource: migrationSource(migrations) }),
  )) as [number, string[]];
  return reverted;
}
