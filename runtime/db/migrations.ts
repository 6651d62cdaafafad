/**
 * Running the generated migrations with Knex. Migrations are modules in the generated code,
 * listed in order; each runs in its own transaction.
 *
 * The runtime has a few tables of its own (today: the refresh tokens already used, see auth/tokens.ts),
 * created by its own migrations, recorded apart in `svc_runtime_migrations` so that the generated
 * migrations, their names and their rollbacks stay exactly what the specs call for.
 *
 * Any number of instances may start at once on one database: migrating holds a lock, so one
 * instance applies the pending migrations while the others wait, then find nothing left to apply.
 * The lock is the dialect adapter's (an advisory lock on PostgreSQL, a lock file's transaction on
 * SQLite), released when the run ends, or when its process dies; so is how the migrator runs
 * (SQLite defers foreign keys while it rebuilds tables).
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

/** Knex's migrator configuration of the service's migrations. */
const MIGRATOR_CONFIG: Knex.MigratorConfigWithLifecycleHooks = { tableName: 'svc_migrations' };

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

/** Runs `run` holding the database's migration lock (see the top of this file). */
export function withMigrationLock<T>(db: Db, run: () => Promise<T>): Promise<T> {
  return dialectOf(db).withMigrationLock(db, run);
}

/**
 * Renames the foreign key constraint `from` of `table` to `to` where the database names its foreign
 * keys (PostgreSQL; SQLite's follow their column by themselves). Generated migrations call it when
 * they rename a foreign key column.
 */
export function renameForeignKey(knex: Knex, table: string, from: string, to: string): Promise<void> {
  return dialectOf(knex).renameForeignKey(knex, table, from, to);
}

/**
 * Creates `name`, an index serving case-insensitive substring matches (`lower(column) LIKE
 * lower(pattern)`: search fields and `icontains` lookups) on `column` of `table`, where the database
 * has such an index (PostgreSQL: a trigram GIN index; SQLite has none and scans, which its adapter
 * keeps cheap). Generated migrations call it for every column that a search or an `icontains` filter reads.
 */
export function createSearchIndex(knex: Knex, table: string, column: string, name: string): Promise<void> {
  return dialectOf(knex).createSearchIndex?.(knex, table, column, name) ?? Promise.resolve();
}

/** Drops the search index `name` of `table` that `createSearchIndex` made, where it made one. */
export function dropSearchIndex(knex: Knex, table: string, name: string): Promise<void> {
  return dialectOf(knex).dropSearchIndex?.(knex, table, name) ?? Promise.resolve();
}

/** Renames the search index `from` of `table` to `to` (its column was renamed), where `createSearchIndex` made one. */
export function renameSearchIndex(knex: Knex, table: string, from: string, to: string): Promise<void> {
  return dialectOf(knex).renameSearchIndex?.(knex, table, from, to) ?? Promise.resolve();
}

/**
 * Applies every pending migration (all in one transaction), then the runtime's own pending
 * migrations, holding the migration lock; returns the names of the service's migrations applied.
 */
export function migrateLatest(db: Db, migrations: readonly Migration[]): Promise<string[]> {
  return withMigrationLock(db, () => applyPending(db, migrations));
}

async function applyPending(db: Db, migrations: readonly Migration[]): Promise<string[]> {
  const [, applied] = (await dialectOf(db).runMigrations(db, MIGRATOR_CONFIG, (config) =>
    db.migrate.latest({ ...config, migrationSource: migrationSource(migrations) }),
  )) as [number, string[]];
  // Only new tables here: no table rebuild (SQLite), so run without the dialect's additions.
  await db.migrate.latest({ tableName: 'svc_runtime_migrations', migrationSource: migrationSource(RUNTIME_MIGRATIONS) });
  return applied;
}

/** Reverts the last batch, holding the migration lock; returns the names reverted. */
export function migrateRollback(db: Db, migrations: readonly Migration[]): Promise<string[]> {
  return withMigrationLock(db, async () => {
    const [, reverted] = (await dialectOf(db).runMigrations(db, MIGRATOR_CONFIG, (config) =>
      db.migrate.rollback({ ...config, migrationSource: migrationSource(migrations) }),
    )) as [number, string[]];
    return reverted;
  });
}
