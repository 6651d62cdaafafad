/**
 * `migrate status` and `migrate rollback` (runtime/db/migrations.ts, the commands of runMain): the
 * applied and pending migrations, and reverting the last N in one transaction, refused when a
 * `down` would drop a table with rows, a column with values, or rows, unless data loss is allowed.
 * MySQL, whose schema changes commit by themselves, refuses a rollback it cannot check unless data
 * loss is allowed. Real SQLite, PostgreSQL and MySQL.
 */
import type { Knex } from 'knex';
import { migrateLatest, type Migration } from '../../runtime';
import { DataLossError, migrationStatus, rollbackMigrations, UncheckedRollbackError } from '../../runtime/db/migrations';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';

const ITEMS: Migration = {
  name: '0001_items',
  up: (k: Knex) =>
    k.schema.createTable('items', (t) => {
      t.increments('id');
      t.string('name', 50).notNullable();
    }),
  down: (k: Knex) => k.schema.dropTable('items'),
};
const NOTE: Migration = {
  name: '0002_items_note',
  up: (k: Knex) =>
    k.schema.alterTable('items', (t) => {
      t.string('note', 50).nullable();
    }),
  down: (k: Knex) =>
    k.schema.alterTable('items', (t) => {
      t.dropColumn('note');
    }),
};
const TAGS: Migration = {
  name: '0003_tags',
  up: (k: Knex) =>
    k.schema.createTable('tags', (t) => {
      t.increments('id');
      t.string('label', 50);
    }),
  down: (k: Knex) => k.schema.dropTable('tags'),
};
const PENDING: Migration = {
  name: '0004_later',
  up: (k: Knex) => k.schema.createTable('later', (t) => t.increments('id')),
  down: (k: Knex) => k.schema.dropTable('later'),
};

describe.each(DIALECTS)('migrate status and rollback (%s)', (dialect) => {
  let database: TestDatabase;
  const db = () => database.db;
  beforeEach(async () => {
    database = await createDatabase(dialect);
  });
  afterEach(() => database.drop());
  // Where a schema change is undone with its transaction, a rollback is tried and checked first.
  const checked = dialect !== 'mysql';
  const itChecked = checked ? it : it.skip;
  const itUnchecked = checked ? it.skip : it;

  it('status: nothing applied on a new database; then applied in order, the rest pending, nothing changed', async () => {
    expect(await migrationStatus(db(), [ITEMS, NOTE])).toEqual({ applied: [], pending: ['0001_items', '0002_items_note'], unknown: [] });
    expect(await db().schema.hasTable('svc_migrations')).toBe(false);
    await migrateLatest(db(), [ITEMS, NOTE]);
    expect(await migrationStatus(db(), [ITEMS, NOTE, TAGS, PENDING])).toEqual({
      applied: [
        { name: '0001_items', batch: 1 },
        { name: '0002_items_note', batch: 1 },
      ],
      pending: ['0003_tags', '0004_later'],
      unknown: [],
    });
    expect(await db().schema.hasTable('tags')).toBe(false);
    expect(await migrationStatus(db(), [ITEMS])).toEqual({
      applied: [{ name: '0001_items', batch: 1 }],
      pending: [],
      unknown: ['0002_items_note'],
    });
  });

  itChecked('rolls back the last migration when nothing is lost, and the last N newest first', async () => {
    await migrateLatest(db(), [ITEMS, NOTE, TAGS]);
    expect(await rollbackMigrations(db(), [ITEMS, NOTE, TAGS], 1)).toEqual(['0003_tags']);
    expect(await db().schema.hasTable('tags')).toBe(false);
    expect((await migrationStatus(db(), [ITEMS, NOTE, TAGS])).pending).toEqual(['0003_tags']);
    // An empty column and an empty table lose nothing.
    expect(await rollbackMigrations(db(), [ITEMS, NOTE, TAGS], 2)).toEqual(['0002_items_note', '0001_items']);
    expect(await db().schema.hasTable('items')).toBe(false);
    expect(await rollbackMigrations(db(), [ITEMS, NOTE, TAGS], 1)).toEqual([]);
    // And the migrations apply again.
    expect(await migrateLatest(db(), [ITEMS, NOTE, TAGS])).toEqual(['0001_items', '0002_items_note', '0003_tags']);
  });

  itChecked('refuses to drop a column that holds values: nothing reverted; with allowDataLoss it goes', async () => {
    await migrateLatest(db(), [ITEMS, NOTE]);
    await db()('items').insert([
      { name: 'a', note: 'kept' },
      { name: 'b', note: null },
    ]);
    const refused = await rollbackMigrations(db(), [ITEMS, NOTE], 1).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DataLossError);
    expect((refused as DataLossError).loss).toEqual({ migration: '0002_items_note', losses: ['column items.note (1 value)'] });
    expect(await db()('items').select('name', 'note').orderBy('id')).toEqual([
      { name: 'a', note: 'kept' },
      { name: 'b', note: null },
    ]);
    expect((await migrationStatus(db(), [ITEMS, NOTE])).applied.map((a) => a.name)).toEqual(['0001_items', '0002_items_note']);

    expect(await rollbackMigrations(db(), [ITEMS, NOTE], 1, { allowDataLoss: true })).toEqual(['0002_items_note']);
    expect(Object.keys(await db()('items').columnInfo()).sort()).toEqual(['id', 'name']);
  });

  itChecked('refuses to drop a table with rows; N steps are all or nothing', async () => {
    await migrateLatest(db(), [ITEMS, NOTE, TAGS]);
    await db()('items').insert({ name: 'a' });
    // 0003 and 0002 lose nothing (tags is empty, note has no values); 0001 would drop a row.
    const refused = await rollbackMigrations(db(), [ITEMS, NOTE, TAGS], 3).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DataLossError);
    expect((refused as Error).message).toBe('reverting 0001_items would lose data: table items (1 row)');
    expect(await db().schema.hasTable('tags')).toBe(true);
    expect(await db().schema.hasColumn('items', 'note')).toBe(true);
    expect((await migrationStatus(db(), [ITEMS, NOTE, TAGS])).pending).toEqual([]);
    expect(await rollbackMigrations(db(), [ITEMS, NOTE, TAGS], 3, { allowDataLoss: true })).toEqual([
      '0003_tags',
      '0002_items_note',
      '0001_items',
    ]);
    expect(await db().schema.hasTable('items')).toBe(false);
  });

  itUnchecked('refuses any rollback it cannot check, reverting nothing; with allowDataLoss the last N go, newest first', async () => {
    await migrateLatest(db(), [ITEMS, NOTE, TAGS]);
    await db()('items').insert({ name: 'a', note: 'kept' });
    const refused = await rollbackMigrations(db(), [ITEMS, NOTE, TAGS], 1).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UncheckedRollbackError);
    expect((refused as Error).message).toBe(
      'mysql commits each schema change by itself: a rollback cannot be checked for data loss first, nor undone; allow data loss to run it',
    );
    expect(await db().schema.hasTable('tags')).toBe(true);
    expect((await migrationStatus(db(), [ITEMS, NOTE, TAGS])).pending).toEqual([]);
    expect(await rollbackMigrations(db(), [ITEMS, NOTE, TAGS], 2, { allowDataLoss: true })).toEqual(['0003_tags', '0002_items_note']);
    expect(await db().schema.hasTable('tags')).toBe(false);
    expect(await db()('items').select('name')).toEqual([{ name: 'a' }]);
    expect((await migrationStatus(db(), [ITEMS, NOTE, TAGS])).pending).toEqual(['0002_items_note', '0003_tags']);
  });
});
