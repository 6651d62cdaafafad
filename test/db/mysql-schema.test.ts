/**
 * What MySQL/MariaDB's sessions and migrations make of Knex's schema statements: every table
 * compares text byte by byte (the server's binary, no-pad collation); on MariaDB a schema statement
 * that already ran runs again without an error (a migration that stopped halfway is completed by
 * running it again); a migration's unique index over live rows, text defaults and dropped indexes a
 * foreign key needs are PostgreSQL's (mysql-schema.ts). And inserts answer their rows without
 * Knex's warning that MySQL has no RETURNING.
 */
import type { Knex } from 'knex';
import { insertReturning } from '../../runtime/db/inserts';
import { migrationKnex } from '../../runtime/db/migrations';
import { createDatabase, DIALECTS, mysqlIndexes, type TestDatabase } from '../support/databases';

async function isMariadb(db: Knex): Promise<boolean> {
  const [[{ version }]] = (await db.raw('select version() as version')) as [{ version: string }[]];
  return /mariadb/i.test(version);
}

async function columnsOf(db: Knex, table: string): Promise<{ name: string; extra: string; default: string | null }[]> {
  const [rows] = (await db.raw(
    'select column_name as name, extra as extra, column_default as `default` from information_schema.columns where table_schema = database() and table_name = ? order by ordinal_position',
    [table],
  )) as [{ name: string; extra: string; default: string | null }[]];
  return rows;
}

const onMysql = DIALECTS.includes('mysql') ? describe : describe.skip;

onMysql('MySQL schema statements', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createDatabase('mysql');
  });
  afterAll(() => database?.drop());

  it('creates every table in utf8mb4 compared as bytes, without padding', async () => {
    const { db } = database;
    await db.schema.createTable('colours', (t) => {
      t.increments('id');
      t.string('name', 20).notNullable();
    });
    const [[{ collation, version }]] = (await db.raw(
      "select table_collation as collation, version() as version from information_schema.tables where table_schema = database() and table_name = 'colours'",
    )) as [{ collation: string; version: string }[]];
    expect(collation).toBe(/mariadb/i.test(version) ? 'utf8mb4_nopad_bin' : 'utf8mb4_0900_bin');
    await db('colours').insert([{ name: 'a' }, { name: 'a ' }, { name: 'A' }]);
    expect(await db('colours').where('name', 'a').count({ n: '*' })).toEqual([{ n: 1 }]);
  });

  it('makes keys signed, timestamps ISO 8601 text and texts LONGTEXT with their defaults', async () => {
    const { db } = database;
    await migrationKnex(db).schema.createTable('shades', (t) => {
      t.increments('id');
      t.integer('colour_id').notNullable().references('id').inTable('colours');
      t.timestamp('seen_at', { useTz: true }).notNullable();
      t.text('notes').notNullable().defaultTo('');
    });
    const [columns] = (await db.raw(
      "select column_name as name, column_type as type from information_schema.columns where table_schema = database() and table_name = 'shades' order by ordinal_position",
    )) as [{ name: string; type: string }[]];
    // MySQL 8 writes no display width (`int`), MariaDB does (`int(11)`).
    expect(columns.map((c) => ({ ...c, type: c.type.replace(/^int\(11\)$/, 'int') }))).toEqual([
      { name: 'id', type: 'int' },
      { name: 'colour_id', type: 'int' },
      { name: 'seen_at', type: 'varchar(24)' },
      { name: 'notes', type: 'longtext' },
    ]);
    const [colour] = await db('colours').select('id').limit(1);
    await db('shades').insert({ colour_id: colour.id, seen_at: '2024-05-01T12:00:00.000Z' });
    expect(await db('shades').select('seen_at', 'notes')).toEqual([{ seen_at: '2024-05-01T12:00:00.000Z', notes: '' }]);
  });

  it('keeps a charset or collation a table names itself', async () => {
    const { db } = database;
    await db.schema.createTable('labels', (t) => {
      t.collate('utf8mb4_general_ci');
      t.string('name', 20);
    });
    const [[{ collation }]] = (await db.raw(
      "select table_collation as collation from information_schema.tables where table_schema = database() and table_name = 'labels'",
    )) as [{ collation: string }[]];
    expect(collation).toBe('utf8mb4_general_ci');
  });

  it('runs a schema statement that already ran again on MariaDB', async () => {
    const { db } = database;
    const [[{ version }]] = (await db.raw('select version() as version')) as [{ version: string }[]];
    if (!/mariadb/i.test(version)) return;
    const add = () =>
      migrationKnex(db).schema.alterTable('colours', (t) => {
        t.string('hex', 7).nullable();
        t.integer('rank').nullable();
        t.index(['hex'], 'colours_hex_index');
        t.unique(['rank'], { indexName: 'colours_rank_unique' });
      });
    await add();
    await add();
    const drop = () =>
      migrationKnex(db).schema.alterTable('colours', (t) => {
        t.dropIndex(['hex'], 'colours_hex_index');
        t.dropUnique(['rank'], 'colours_rank_unique');
        t.dropColumn('hex');
        t.dropColumn('rank');
      });
    await drop();
    await drop();
    const [columns] = (await db.raw(
      "select column_name as name from information_schema.columns where table_schema = database() and table_name = 'colours' order by ordinal_position",
    )) as [{ name: string }[]];
    expect(columns.map((c) => c.name)).toEqual(['id', 'name']);
  });

  it("answers an insert's rows by INSERT … RETURNING on MariaDB, from the result header on MySQL, with no warning", async () => {
    const { db } = database;
    const mariadb = await isMariadb(db);
    const warn = jest.spyOn(console, 'warn');
    try {
      const row = { name: 'teal' };
      const [made] = await insertReturning(db, db('colours').insert(row), row, mariadb ? ['id', 'name'] : ['id']);
      expect(made).toEqual(mariadb ? { id: expect.any(Number), name: 'teal' } : { id: expect.any(Number) });
      expect(await db('colours').where('id', made.id).first()).toEqual({ id: made.id, name: 'teal' });
      // A key given is answered; an insert INSERT IGNORE skipped answers none.
      const again = { id: made.id, name: 'other' };
      expect(await insertReturning(db, db('colours').insert(again).onConflict('id').ignore(), again, ['id'])).toEqual([]);
      const given = { id: made.id + 100, name: 'given' };
      expect(await insertReturning(db, db('colours').insert(given).onConflict('id').ignore(), given, ['id'])).toEqual([
        { id: made.id + 100 },
      ]);
      // In a transaction too.
      await db.transaction(async (trx) => {
        const [inTrx] = await insertReturning(trx, trx('colours').insert({ name: 'in trx' }), { name: 'in trx' }, ['id']);
        expect(inTrx.id).toBeGreaterThan(made.id);
      });
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });

  it('makes a unique index over live rows of an invisible generated column, dropped with it', async () => {
    const knex = migrationKnex(database.db);
    await knex.schema.createTable('coupons', (t) => {
      t.increments('id');
      t.string('code', 20).notNullable();
      t.string('deleted_at', 24).nullable();
      t.unique(['code'], { indexName: 'coupons_code_unique', predicate: knex.whereNull('deleted_at') });
    });
    const { db } = database;
    await db('coupons').insert([
      { code: 'A', deleted_at: '2024-01-01T00:00:00.000Z' },
      { code: 'A', deleted_at: '2024-01-02T00:00:00.000Z' },
      { code: 'A' },
    ]);
    await expect(db('coupons').insert({ code: 'A' })).rejects.toMatchObject({ code: 'ER_DUP_ENTRY' });
    const live = (await columnsOf(db, 'coupons')).find((c) => c.name.startsWith('svc_live_'));
    expect(live?.extra).toMatch(/invisible/i);
    expect(await db('coupons').select('*').first()).not.toHaveProperty(live!.name);
    // Added to a table that has rows, then dropped with its column.
    await knex.schema.alterTable('coupons', (t) => {
      t.dropIndex(['code'], 'coupons_code_unique');
    });
    expect((await columnsOf(db, 'coupons')).map((c) => c.name)).toEqual(['id', 'code', 'deleted_at']);
    await knex.schema.alterTable('coupons', (t) => {
      t.unique(['code'], { indexName: 'coupons_code_unique', predicate: knex.whereNull('deleted_at') });
    });
    expect((await mysqlIndexes(db, 'coupons')).find((i) => i.name === 'coupons_code_unique')).toEqual({
      name: 'coupons_code_unique',
      unique: true,
      columns: ['code', live!.name],
    });
    await expect(db('coupons').insert({ code: 'A' })).rejects.toMatchObject({ code: 'ER_DUP_ENTRY' });
    await db('coupons').insert({ code: 'B' });
  });

  it('gives a foreign key an index of its own before the index it used is dropped', async () => {
    const knex = migrationKnex(database.db);
    await knex.schema.createTable('swatches', (t) => {
      t.increments('id');
      t.integer('colour_id').notNullable();
      t.integer('rank').notNullable();
      // InnoDB looks the foreign key's rows up with this index, and makes none of its own.
      t.index(['colour_id', 'rank'], 'swatches_colour_id_rank_index');
      t.foreign('colour_id', 'swatches_colour_id_foreign').references('id').inTable('colours');
    });
    const { db } = database;
    await knex.schema.alterTable('swatches', (t) => {
      t.dropIndex(['colour_id', 'rank'], 'swatches_colour_id_rank_index');
    });
    const [indexes] = (await db.raw(
      "select index_name as name, column_name as col from information_schema.statistics where table_schema = database() and table_name = 'swatches' and index_name <> 'PRIMARY' order by index_name, seq_in_index",
    )) as [{ name: string; col: string }[]];
    expect(indexes).toEqual([{ name: 'swatches_colour_id_foreign', col: 'colour_id' }]);
  });

  it("keeps a text column's default in the schema, on a table made and on a column added", async () => {
    const knex = migrationKnex(database.db);
    await knex.schema.createTable('notes', (t) => {
      t.increments('id');
      t.text('body').notNullable().defaultTo('');
      t.text('summary', 'mediumtext').nullable().defaultTo("it's");
    });
    const { db } = database;
    await db('notes').insert({});
    await knex.schema.alterTable('notes', (t) => {
      t.text('footer').notNullable().defaultTo('end');
    });
    const columns = await columnsOf(db, 'notes');
    // MariaDB shows the expression's value quoted, MySQL its text with the charset introducer.
    const plain = (value: string | null) => value?.replace(/^_utf8mb4\\?'|^'|\\?'$|'$/g, '').replace(/\\'|''/g, "'");
    expect(columns.map((c) => [c.name, plain(c.default)])).toEqual([
      ['id', undefined],
      ['body', ''],
      ['summary', "it's"],
      ['footer', 'end'],
    ]);
    expect(await db('notes').select('body', 'summary', 'footer')).toEqual([{ body: '', summary: "it's", footer: 'end' }]);
  });
});
