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
import type { ListItemType } from '../core/catalogue';
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
 * The column type of a `list` field whose items are of type `items` on the database `knex` opens (a
 * native array on PostgreSQL, JSON elsewhere). Generated migrations call it for every list column.
 */
export function listColumnType(knex: Knex, items: ListItemType): string {
  return dialectOf(knex).listColumnType(items);
}

/** The default `values` of a list column, as that database writes it. */
export function listDefault(knex: Knex, items: ListItemType, values: readonly unknown[]): string {
  return dialectOf(knex).listLiteral(items, values);
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

/** The service's migrations against a database: which are applied (in the order they were), which pending. */
export interface MigrationStatus {
  applied: { name: string; batch: number }[];
  pending: string[];
  /** Applied to the database but not among the service's migrations (from another version of it). */
  unknown: string[];
}

/** The migrations applied to `db` and those pending; reads only. */
export async function migrationStatus(db: Db, migrations: readonly Migration[]): Promise<MigrationStatus> {
  const table = MIGRATOR_CONFIG.tableName!;
  const rows: { name: string; batch: number }[] = (await db.schema.hasTable(table))
    ? await db(table).select('name', 'batch').orderBy('id')
    : [];
  const done = new Set(rows.map((r) => r.name));
  const known = new Set(migrations.map((m) => m.name));
  return {
    applied: rows.filter((r) => known.has(r.name)).map((r) => ({ name: r.name, batch: Number(r.batch) })),
    pending: migrations.filter((m) => !done.has(m.name)).map((m) => m.name),
    unknown: rows.filter((r) => !known.has(r.name)).map((r) => r.name),
  };
}

/** What reverting a migration would lose: tables with rows, columns with values, rows. */
export interface DataLoss {
  migration: string;
  /** `table (N rows)`, `table.column (N values)`, `table: N rows`. */
  losses: string[];
}

/**
 * Reverting cannot be checked for data loss where schema changes commit by themselves (MySQL): each
 * `down` would be done before its loss could be seen. Nothing was reverted; `allowDataLoss` runs it.
 */
export class UncheckedRollbackError extends Error {
  constructor(database: string) {
    super(`${database} commits each schema change by itself: a rollback cannot be checked for data loss first, nor undone; allow data loss to run it`);
    this.name = 'UncheckedRollbackError';
  }
}

/** Reverting would lose data, and the caller did not allow it: nothing was reverted. */
export class DataLossError extends Error {
  constructor(readonly loss: DataLoss) {
    super(`reverting ${loss.migration} would lose data: ${loss.losses.join(', ')}`);
    this.name = 'DataLossError';
  }
}

/** Row counts and non-null values per column of every table but the migrators' own. */
type Census = Map<string, { rows: number; columns: Map<string, number> }>;

const OWN_TABLES = /^svc_/;

async function census(knex: Knex): Promise<Census> {
  const out: Census = new Map();
  for (const table of (await dialectOf(knex).listTables(knex)).sort()) {
    if (OWN_TABLES.test(table)) continue;
    const columns = Object.keys(await knex(table).columnInfo());
    const [counts] = await knex(table).select(
      knex.raw('count(*) as ??', ['__rows']),
      ...columns.map((c, i) => knex.raw('count(??) as ??', [c, `c${i}`])),
    );
    out.set(table, { rows: Number(counts.__rows), columns: new Map(columns.map((c, i) => [c, Number(counts[`c${i}`])])) });
  }
  return out;
}

/** What went missing between two censuses: a table that had rows, a column that had values, rows. */
function lost(before: Census, after: Census): string[] {
  const out: string[] = [];
  for (const [table, was] of before) {
    const now = after.get(table);
    if (!now) {
      if (was.rows > 0) out.push(`table ${table} (${was.rows} rows)`);
      continue;
    }
    if (now.rows < was.rows) out.push(`${was.rows - now.rows} rows of ${table}`);
    for (const [column, values] of was.columns) {
      if (values > 0 && !now.columns.has(column)) out.push(`column ${table}.${column} (${values} values)`);
    }
  }
  return out;
}

/**
 * Reverts the last `steps` applied migrations, newest first, in one transaction, holding the
 * migration lock; returns the names reverted. Before and after each migration's `down` the tables
 * are counted: a table that had rows and is gone, a column that held values and is gone, or rows
 * gone from a table, is data loss, and unless `allowDataLoss` it throws DataLossError after rolling
 * everything back (nothing is reverted). A type narrowed by a `down` is not seen as a loss. Where
 * schema changes are not transactional (MySQL), nothing can be tried and undone: without
 * `allowDataLoss` it throws UncheckedRollbackError before reverting anything.
 */
export function rollbackMigrations(
  db: Db,
  migrations: readonly Migration[],
  steps: number,
  options: { allowDataLoss?: boolean } = {},
): Promise<string[]> {
  return withMigrationLock(db, async () => {
    const status = await migrationStatus(db, migrations);
    if (status.unknown.length) {
      throw new Error(`the database has migrations this service does not know (${status.unknown.join(', ')}): revert them with the version that applied them`);
    }
    const byName = new Map(migrations.map((m) => [m.name, m]));
    const targets = status.applied
      .slice(-steps)
      .reverse()
      .map((a) => byName.get(a.name)!);
    if (!targets.length) return [];
    if (!options.allowDataLoss && !dialectOf(db).transactionalSchemaChanges) throw new UncheckedRollbackError(dialectOf(db).name);
    const table = MIGRATOR_CONFIG.tableName!;
    return dialectOf(db).runMigrations(db, MIGRATOR_CONFIG, (config) =>
      db.transaction(async (trx) => {
        await config.beforeAll?.(trx, targets);
        for (const m of targets) {
          const before = options.allowDataLoss ? undefined : await census(trx);
          await m.down(trx);
          if (before) {
            const losses = lost(before, await census(trx));
            if (losses.length) throw new DataLossError({ migration: m.name, losses });
          }
          await trx(table).where({ name: m.name }).delete();
        }
        await config.afterAll?.(trx, targets);
        return targets.map((m) => m.name);
      }),
    );
  });
}
