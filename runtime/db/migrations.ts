/**
 * Running the generated migrations with Knex. Migrations are modules in the generated code,
 * listed in order; each runs in its own transaction.
 *
 * The runtime has a few tables of its own (the refresh tokens already used, see auth/tokens.ts; the
 * Idempotency-Key of POST requests, see operations/idempotency.ts),
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
    getMigration: async (m) => ({ up: (knex: Knex) => m.up(migrationKnex(knex)), down: (knex: Knex) => m.down(migrationKnex(knex)) }),
  };
}

/**
 * The Knex a migration runs with, given the one it runs on: its dialect's where Knex's compiler writes
 * a schema statement otherwise than the service needs (MySQL, see dialects/mysql-schema.ts), so
 * that generated migrations, which call Knex's schema builder, do the same on every database.
 */
export function migrationKnex(knex: Knex): Knex {
  return dialectOf(knex).migrationKnex?.(knex) ?? knex;
}

/** Knex's migrator configuration of the service's migrations. */
const MIGRATOR_CONFIG: Knex.MigratorConfigWithLifecycleHooks = { tableName: 'svc_migrations' };

/** The table where the runtime keeps the ids (`jti`) of refresh tokens already exchanged, until they expire. */
export const USED_REFRESH_TOKENS_TABLE = 'svc_used_refresh_tokens';

/**
 * The table where the runtime keeps what ends refresh tokens before they expire: a family of tokens
 * a reused one belonged to (`fam:<id>`), or every token of a user whose password changed
 * (`user:<id>`); tokens of the key issued at or before `issued_before` are refused, until `expires_at`
 * (when every such token has expired anyway).
 */
export const TOKEN_REVOCATIONS_TABLE = 'svc_token_revocations';

/** The table where the runtime keeps the Idempotency-Key of POST requests with their answers (operations/idempotency.ts). */
export const IDEMPOTENCY_KEYS_TABLE = 'svc_idempotency_keys';

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
  {
    name: 'runtime_0002_token_revocations',
    async up(knex) {
      await knex.schema.createTable(TOKEN_REVOCATIONS_TABLE, (t) => {
        t.string('key', 100).primary();
        // Seconds since the epoch, as `iat` and `exp` are.
        t.bigInteger('issued_before').notNullable();
        t.bigInteger('expires_at').notNullable().index();
      });
    },
    async down(knex) {
      await knex.schema.dropTableIfExists(TOKEN_REVOCATIONS_TABLE);
    },
  },
  {
    name: 'runtime_0003_idempotency_keys',
    async up(knex) {
      await knex.schema.createTable(IDEMPOTENCY_KEYS_TABLE, (t) => {
        // The SHA-256 of the caller and the key, in hex.
        t.string('id', 64).primary();
        // The request that holds the key now (random, per request).
        t.string('claim', 32).notNullable();
        // The SHA-256 of the method, the path and query, the caller and the body.
        t.string('fingerprint', 64).notNullable();
        t.integer('status').nullable();
        // The answer's JSON text: `longtext` on MySQL/MariaDB, whose `text` holds 64 KB.
        t.text('body', 'longtext').nullable();
        t.string('etag', 64).nullable();
        // Seconds since the epoch: compared as plain integers on every database.
        t.bigInteger('expires_at').notNullable().index();
      });
    },
    async down(knex) {
      await knex.schema.dropTableIfExists(IDEMPOTENCY_KEYS_TABLE);
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
 * Creates the unique index `name` of `table` over `column` compared without ASCII case (a field's
 * `ignore_case`), among the rows where `whereNull` is NULL when given (the live rows).
 */
export function createFoldedUnique(knex: Knex, table: string, column: string, name: string, whereNull?: string): Promise<void> {
  return dialectOf(knex).createFoldedUnique(knex, table, column, name, whereNull);
}

/** Drops the index `createFoldedUnique` made. */
export function dropFoldedUnique(knex: Knex, table: string, name: string): Promise<void> {
  return dialectOf(knex).dropFoldedUnique(knex, table, name);
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
 * What a start does when the database has migrations the service does not know (applied by
 * another version of it: a newer release rolled back, the other colour of a blue/green deployment,
 * another branch): `refuse` (the default) stops with UnknownMigrationsError; `serve` goes on beside
 * them, when none of the service's own migrations is pending. `SVC_UNKNOWN_MIGRATIONS` sets it.
 */
export type UnknownMigrationsPolicy = 'refuse' | 'serve';

export const UNKNOWN_MIGRATIONS_POLICIES: readonly UnknownMigrationsPolicy[] = ['refuse', 'serve'];

/**
 * The database has migrations the service does not know, and the policy refuses them, or the
 * service's own are pending beside them (two versions' histories diverged): nothing was applied.
 */
export class UnknownMigrationsError extends Error {
  constructor(
    readonly unknown: readonly string[],
    readonly pending: readonly string[],
  ) {
    const names = unknown.join(', ');
    const revert = `revert them with the version that applied them (its \`migrate rollback ${unknown.length}\`)`;
    super(
      pending.length
        ? `the database has migrations this version of the service does not know (${names}) and lacks some of its own (${pending.join(', ')}): ` +
            `the two versions' migrations diverged; ${revert}, then start this version`
        : `the database has migrations this version of the service does not know (${names}), applied by another version (a newer release, another branch): ` +
            `${revert} before starting this one, or, if this version can run beside them (they only added tables, or columns that are nullable or have a default), ` +
            'set SVC_UNKNOWN_MIGRATIONS=serve',
    );
    this.name = 'UnknownMigrationsError';
  }
}

/** How `migrateLatest` treats migrations the service does not know. */
export interface MigrateOptions {
  /** `refuse` unless given. */
  unknown?: UnknownMigrationsPolicy;
  /** Told the names of the unknown migrations the `serve` policy goes on beside. */
  onUnknown?: (names: string[]) => void;
}

/**
 * Applies every pending migration (all in one transaction), then the runtime's own pending
 * migrations, holding the migration lock; returns the names of the service's migrations applied.
 * Migrations of the database the service does not know are refused (UnknownMigrationsError) unless
 * `options.unknown` is `serve` and none of the service's is pending; then nothing of the service's
 * is applied.
 */
export function migrateLatest(db: Db, migrations: readonly Migration[], options: MigrateOptions = {}): Promise<string[]> {
  return withMigrationLock(db, () => applyPending(db, migrations, options));
}

async function applyPending(db: Db, migrations: readonly Migration[], options: MigrateOptions): Promise<string[]> {
  const status = await migrationStatus(db, migrations);
  let applied: string[] = [];
  if (status.unknown.length) {
    // Knex's own check would only call the database corrupt.
    if (options.unknown !== 'serve' || status.pending.length) throw new UnknownMigrationsError(status.unknown, status.pending);
    options.onUnknown?.(status.unknown);
  } else {
    [, applied] = (await dialectOf(db).runMigrations(db, MIGRATOR_CONFIG, (config) =>
      db.migrate.latest({ ...config, migrationSource: migrationSource(migrations) }),
    )) as [number, string[]];
  }
  // Only new tables here: no table rebuild (SQLite), so run without the dialect's additions.
  await db.migrate.latest({ tableName: RUNTIME_MIGRATIONS_TABLE, migrationSource: migrationSource(await runtimeMigrationsOf(db)) });
  return applied;
}

/** Where the runtime records its own migrations. */
const RUNTIME_MIGRATIONS_TABLE = 'svc_runtime_migrations';

/**
 * The runtime's migrations, and beside them those of a newer runtime this database already has
 * (a release rolled back): each of those only added a table of its own, which this runtime never
 * reads, so it is left as it is, known by name (Knex would otherwise call the database corrupt).
 */
async function runtimeMigrationsOf(db: Db): Promise<readonly Migration[]> {
  if (!(await db.schema.hasTable(RUNTIME_MIGRATIONS_TABLE))) return RUNTIME_MIGRATIONS;
  const known = new Set(RUNTIME_MIGRATIONS.map((m) => m.name));
  const newer = ((await db(RUNTIME_MIGRATIONS_TABLE).pluck('name')) as string[]).filter((name) => !known.has(name));
  const leftAsTheyAre = newer.map((name) => ({
    name,
    async up() {},
    async down() {
      throw new Error(`${name} is a migration of a newer runtime: revert it with the release that applied it`);
    },
  }));
  return [...RUNTIME_MIGRATIONS, ...leftAsTheyAre];
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
  /** `table T (N rows)`, `column T.C (N values)`, `N rows of T` (`1 row`, `1 value` for one). */
  losses: string[];
}

/**
 * Reverting cannot be checked for data loss where schema changes commit by themselves (MySQL): each
 * `down` would be done before its loss could be seen. Nothing was reverted; `allowDataLoss` runs it.
 */
export class UncheckedRollbackError extends Error {
  constructor(database: string) {
    super(
      `${database} commits each schema change by itself: a rollback cannot be checked for data loss first, nor undone; allow data loss to run it`,
    );
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

/** `n` `noun`s, singular for one: `1 value`, `7 values`. */
const counted = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;

/** A column of `table` that a `down` took away while it added another one holding as many values: maybe a rename. */
interface RenameCandidate {
  table: string;
  gone: string;
  added: string;
}

/**
 * What went missing between two censuses: a table that had rows, a column that had values (unless
 * `renamed` says it is now another column of its table), rows.
 */
function lost(before: Census, after: Census, renamed: readonly RenameCandidate[] = []): string[] {
  const out: string[] = [];
  for (const [table, was] of before) {
    const now = after.get(table);
    if (!now) {
      if (was.rows > 0) out.push(`table ${table} (${counted(was.rows, 'row')})`);
      continue;
    }
    if (now.rows < was.rows) out.push(`${counted(was.rows - now.rows, 'row')} of ${table}`);
    for (const [column, values] of was.columns) {
      if (values > 0 && !now.columns.has(column) && !renamed.some((r) => r.table === table && r.gone === column)) {
        out.push(`column ${table}.${column} (${counted(values, 'value')})`);
      }
    }
  }
  return out;
}

/**
 * The columns that held values and are gone from a table that gained, each, a column holding as many:
 * the pairs a rename would make (`renameColumn` back, in the `down` of a rename). Each gone column
 * is paired with every such new column; `sameValues` tells which pair is the rename.
 */
function renameCandidates(before: Census, after: Census): RenameCandidate[] {
  const out: RenameCandidate[] = [];
  for (const [table, was] of before) {
    const now = after.get(table);
    if (!now || now.rows !== was.rows) continue;
    for (const [gone, values] of was.columns) {
      if (values === 0 || now.columns.has(gone)) continue;
      for (const [added, count] of now.columns) {
        if (!was.columns.has(added) && count === values) out.push({ table, gone, added });
      }
    }
  }
  return out;
}

/**
 * Every row's value of `column` in `table`, in the order of the table's primary key, as JSON text;
 * undefined when the table has no primary key (its rows cannot be matched one for one).
 */
async function columnValues(knex: Knex, table: string, column: string): Promise<string[] | undefined> {
  const { primaryKey } = await dialectOf(knex).describeKeys(knex, table);
  if (!primaryKey.length || primaryKey.includes(column)) return undefined;
  const rows: Record<string, unknown>[] = await knex(table).select(knex.ref(column).as('v')).orderBy(primaryKey);
  return rows.map((r) => JSON.stringify(r.v instanceof Buffer ? r.v.toString('base64') : r.v));
}

/** Thrown inside the savepoint of a first try of a `down` to undo it: the values of the columns it added. */
class UndoProbe extends Error {
  constructor(readonly added: Map<RenameCandidate, string[] | undefined>) {
    super('undo the probe');
  }
}

/**
 * Runs `m.down` in `trx`, and throws DataLossError when it lost data (see `lost`). A column that
 * the `down` took away is not lost when the same `down` added a column to its table holding the same
 * values row for row (a rename, back): the `down` is first tried in a savepoint, the new columns'
 * values read and the savepoint rolled back, the old columns' values read and compared, then the
 * `down` run again. A `down` that drops no column with values runs once.
 */
async function revertChecked(trx: Knex.Transaction, m: Migration): Promise<void> {
  const before = await census(trx);
  let added: Map<RenameCandidate, string[] | undefined>;
  try {
    await trx.transaction(async (savepoint) => {
      await m.down(migrationKnex(savepoint));
      const after = await census(savepoint);
      const candidates = renameCandidates(before, after);
      if (!candidates.length) {
        const losses = lost(before, after);
        if (losses.length) throw new DataLossError({ migration: m.name, losses });
        return;
      }
      const values = new Map<RenameCandidate, string[] | undefined>();
      for (const c of candidates) values.set(c, await columnValues(savepoint, c.table, c.added));
      throw new UndoProbe(values);
    });
    return;
  } catch (err) {
    if (!(err instanceof UndoProbe)) throw err;
    added = err.added;
  }
  const renamed: RenameCandidate[] = [];
  for (const [c, values] of added) {
    if (values === undefined || renamed.some((r) => r.table === c.table && (r.gone === c.gone || r.added === c.added))) continue;
    const old = await columnValues(trx, c.table, c.gone);
    if (old !== undefined && old.length === values.length && old.every((v, i) => v === values[i])) renamed.push(c);
  }
  await m.down(migrationKnex(trx));
  const losses = lost(before, await census(trx), renamed);
  if (losses.length) throw new DataLossError({ migration: m.name, losses });
}

/**
 * Reverts the last `steps` applied migrations, newest first, in one transaction, holding the
 * migration lock; returns the names reverted. Before and after each migration's `down` the tables
 * are counted: a table that had rows and is gone, a column that held values and is gone, or rows
 * gone from a table, is data loss, and unless `allowDataLoss` it throws DataLossError after rolling
 * everything back (nothing is reverted). A column a `down` renames back is not lost: its values are
 * all in the column it becomes (see `revertChecked`). A type narrowed by a `down` is not seen as a loss. Where
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
      throw new Error(
        `the database has migrations this service does not know (${status.unknown.join(', ')}): revert them with the version that applied them`,
      );
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
          if (options.allowDataLoss) await m.down(migrationKnex(trx));
          else await revertChecked(trx, m);
          await trx(table).where({ name: m.name }).delete();
        }
        await config.afterAll?.(trx, targets);
        return targets.map((m) => m.name);
      }),
    );
  });
}
