/**
 * What MySQL/MariaDB's sessions make of Knex's schema statements: every table compares text byte by
 * byte (the server's binary, no-pad collation), and on MariaDB a schema statement that already ran
 * runs again without an error (a migration that stopped halfway is completed by running it again).
 */
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';

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
    await db.schema.createTable('shades', (t) => {
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
      db.schema.alterTable('colours', (t) => {
        t.string('hex', 7).nullable();
        t.integer('rank').nullable();
        t.index(['hex'], 'colours_hex_index');
        t.unique(['rank'], { indexName: 'colours_rank_unique' });
      });
    await add();
    await add();
    const drop = () =>
      db.schema.alterTable('colours', (t) => {
        t.dropIndex(['hex'], 'colours_hex_index');
        t.dropUnique(['rank'], 'colours_rank_unique');
        t.dropColumn('hex');
        t.dropColumn('rank');
      });
    await drop();
    await drop();
    const [columns] = (await db.raw("select column_name as name from information_schema.columns where table_schema = database() and table_name = 'colours' order by ordinal_position")) as [{ name: string }[]];
    expect(columns.map((c) => c.name)).toEqual(['id', 'name']);
  });
});
