/**
 * What each dialect adapter answers, on its own database: which URLs it accepts, which driver
 * errors it reads as constraint violations and outages (raised by the database itself where it
 * can), how it folds case and locks rows, and that migrations written before the adapters (which
 * tell PostgreSQL by the Knex client's name) still run.
 */
import type { Knex } from 'knex';
import { connect, isConstraintViolation, migrateLatest, renameForeignKey } from '../../runtime';
import { dialectOf } from '../../runtime/db/connection';
import { isConnectionFailure } from '../../runtime/db/driver-errors';
import { DIALECTS as ADAPTERS, dialectForUrl } from '../../runtime/db/dialects';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';

const error = (code: string, message = 'x') => Object.assign(new Error(message), { code });
/** An error as mysql2 makes them: its own code, the server's errno and SQLSTATE. */
const mysqlError = (code: string, errno: number, sqlState: string, fatal = false) =>
  Object.assign(new Error('x'), { code, errno, sqlState, fatal });

describe('the adapter of a DATABASE_URL', () => {
  it.each([
    [undefined, 'sqlite'],
    ['', 'sqlite'],
    ['sqlite:/tmp/x.sqlite3', 'sqlite'],
    ['sqlite::memory:', 'sqlite'],
    ['postgres://u@h/db', 'postgres'],
    ['postgresql://u@h/db', 'postgres'],
    ['mysql://u@h/db', 'mysql'],
    ['mariadb://u@h/db', 'mysql'],
  ])('%j is %s', (url, name) => {
    expect(dialectForUrl(url).name).toBe(name);
  });

  it('is none for another scheme, and the message lists what each adapter accepts', () => {
    expect(() => dialectForUrl('oracle://db')).toThrow('DATABASE_URL must start with sqlite:, postgres:// or mysql://, got "oracle://db"');
  });

  it('is what the database made by connect() answers, on it and on its transactions', async () => {
    const db = connect('sqlite::memory:', '');
    try {
      expect(dialectOf(db).name).toBe('sqlite');
      await db.transaction(async (trx) => expect(dialectOf(trx)).toBe(dialectOf(db)));
    } finally {
      await db.destroy();
    }
    const pg = connect('postgres://postgres@127.0.0.1:1/none', '');
    expect(dialectOf(pg).name).toBe('postgres');
    await pg.destroy();
    const my = connect('mysql://root@127.0.0.1:1/none', '');
    expect(dialectOf(my).name).toBe('mysql');
    await my.destroy();
  });
});

describe('driver errors each adapter reads', () => {
  const byName = Object.fromEntries(ADAPTERS.map((d) => [d.name, d]));
  it.each([
    ['sqlite', error('SQLITE_CONSTRAINT_UNIQUE'), true],
    ['sqlite', error('SQLITE_CONSTRAINT_FOREIGNKEY'), true],
    ['sqlite', error('23505'), false],
    ['postgres', error('23505'), true],
    ['postgres', error('23503'), true],
    ['postgres', error('SQLITE_CONSTRAINT'), false],
    ['postgres', error('42601'), false],
    ['mysql', mysqlError('ER_DUP_ENTRY', 1062, '23000'), true],
    ['mysql', mysqlError('ER_NO_REFERENCED_ROW_2', 1452, '23000'), true],
    ['mysql', mysqlError('ER_PARSE_ERROR', 1064, '42000'), false],
    ['mysql', error('23505'), false],
    ['postgres', mysqlError('ER_DUP_ENTRY', 1062, '23000'), false],
  ])('%s: constraint violation %j → %s', (name, err, expected) => {
    expect(byName[name].isConstraintViolation(err)).toBe(expected);
  });

  it.each([
    ['sqlite', error('SQLITE_BUSY'), true],
    ['sqlite', error('SQLITE_IOERR_WRITE'), true],
    ['sqlite', error('SQLITE_CONSTRAINT'), false],
    ['sqlite', error('57P01'), false],
    ['postgres', error('57P01'), true],
    ['postgres', error('08006'), true],
    ['postgres', error('57014'), true],
    // Codes only: node-postgres's code-less errors of a broken connection are marked where they happen (driver-errors.ts).
    ['postgres', new Error('Connection terminated unexpectedly'), false],
    ['postgres', error('SQLITE_BUSY'), false],
    ['postgres', error('23505'), false],
    ['mysql', mysqlError('PROTOCOL_CONNECTION_LOST', 0, '', true), true],
    ['mysql', mysqlError('ER_CON_COUNT_ERROR', 1040, '08004'), true],
    ['mysql', mysqlError('ER_SERVER_SHUTDOWN', 1053, '08S01'), true],
    ['mysql', new Error("Can't add new command when connection is in closed state"), true],
    ['mysql', mysqlError('ER_DUP_ENTRY', 1062, '23000'), false],
    ['mysql', mysqlError('ER_LOCK_DEADLOCK', 1213, '40001'), false],
  ])('%s: connection failure %j → %s', (name, err, expected) => {
    expect(byName[name].isConnectionFailure(err)).toBe(expected);
  });
});

describe.each(DIALECTS)('the %s adapter on its database', (dialect) => {
  let database: TestDatabase;
  let db: Knex;
  beforeAll(async () => {
    database = await createDatabase(dialect);
    db = database.db;
    await db.schema.createTable('items', (t) => {
      t.increments('id');
      t.string('name').notNullable().unique();
    });
    await db('items').insert([{ name: 'ÉLAN' }, { name: 'Kelvin' }, { name: 'other' }, { name: 'STRAẞE' }]);
  });
  afterAll(() => database.drop());

  it('is the adapter named after the database', () => {
    expect(dialectOf(db).name).toBe(dialect);
  });

  it('reads its own constraint violation as one, and not as an outage', async () => {
    const err = await db('items')
      .insert({ name: 'other' })
      .catch((e: unknown) => e);
    expect(dialectOf(db).isConstraintViolation(err as Error)).toBe(true);
    expect(isConstraintViolation(err)).toBe(true);
    expect(isConnectionFailure(err)).toBe(false);
  });

  it('says which constraint a violation broke, the same on both databases but for what SQLite does not tell', async () => {
    await db.schema.createTable('pairs', (t) => {
      t.increments('id');
      t.integer('a').notNullable();
      t.integer('b').notNullable();
      t.integer('item_id').references('id').inTable('items').onDelete('RESTRICT');
      t.unique(['a', 'b'], { indexName: 'pairs_a_b_unique' });
    });
    const failure = (query: Promise<unknown>) =>
      query.then(
        () => undefined,
        (e: unknown) => dialectOf(db).constraintOf(e as Error),
      );
    const unique = await failure(db('items').insert({ name: 'other' }));
    // What each driver tells: PostgreSQL the constraint, its table and columns; SQLite the table and
    // columns of a unique one, nothing of a foreign key; MySQL the index, and the foreign key's name.
    const expected = {
      postgres: {
        unique: { kind: 'unique', constraint: 'items_name_unique', table: 'items', columns: ['name'] },
        pair: { kind: 'unique', constraint: 'pairs_a_b_unique', table: 'pairs', columns: ['a', 'b'] },
        held: { kind: 'foreign_key', constraint: 'pairs_item_id_foreign', table: 'pairs', stillReferenced: true },
        missing: { kind: 'foreign_key', constraint: 'pairs_item_id_foreign', table: 'pairs', stillReferenced: false },
      },
      sqlite: {
        unique: { kind: 'unique', table: 'items', columns: ['name'] },
        pair: { kind: 'unique', table: 'pairs', columns: ['a', 'b'] },
        held: { kind: 'foreign_key', stillReferenced: true },
        missing: { kind: 'foreign_key' },
      },
      mysql: {
        unique: { kind: 'unique', constraint: 'items_name_unique' },
        pair: { kind: 'unique', constraint: 'pairs_a_b_unique' },
        held: { kind: 'foreign_key', constraint: 'pairs_item_id_foreign', table: 'pairs', stillReferenced: true },
        missing: { kind: 'foreign_key', constraint: 'pairs_item_id_foreign', table: 'pairs', stillReferenced: false },
      },
    }[dialect];
    expect(unique).toEqual(expected.unique);
    await db('pairs').insert({ a: 1, b: 2, item_id: 1 });
    const pair = await failure(db('pairs').insert({ a: 1, b: 2 }));
    expect(pair).toEqual(expected.pair);
    const held = await failure(db('items').where('id', 1).delete());
    expect(held).toEqual(expected.held);
    const missing = await failure(db('pairs').insert({ a: 3, b: 4, item_id: 999 }));
    expect(missing).toEqual(expected.missing);
    const notNull = await failure(db('pairs').insert({ a: null, b: 5 }));
    expect(notNull?.kind).toBe('other');
    expect(await failure(db.raw('select * from no_such_table'))).toBeUndefined();
    await db.schema.dropTable('pairs');
  });

  it.each([
    ['=', 'élan', ['ÉLAN']],
    ['LIKE', '%elv%', ['Kelvin']],
    ['LIKE', '%ÉL%', ['ÉLAN']],
    ['=', 'OTHER', ['other']],
    ['=', 'straße', ['STRAẞE']],
    ['LIKE', '%\u212a%', ['Kelvin']],
  ] as const)('folds case as PostgreSQL’s lower(): %s %j', async (comparison, value, expected) => {
    const query = db('items').select('name');
    dialectOf(db).whereLower(query, '??', 'name', comparison, value);
    expect((await query).map((r: { name: string }) => r.name)).toEqual(expected);
  });

  it('locks rows for update where the database needs it', () => {
    const query = db('items').select('id').where('id', 1);
    dialectOf(db).lockForUpdate(query);
    expect(/for update/i.test(query.toSQL().sql)).toBe(dialect !== 'sqlite');
  });

  it('writes a LIMIT as text where it says so', () => {
    expect(db('items').select('id').limit(7).toSQL().sql.endsWith('limit 7')).toBe(dialectOf(db).limitAsText);
  });

  it('runs migrations that rename a foreign key constraint, and those written before the adapters', async () => {
    const named = async (table: string): Promise<string[]> => {
      if (dialect === 'postgres')
        return (await db.raw("select conname from pg_constraint where conrelid = ?::regclass and contype = 'f'", [table])).rows.map(
          (r: { conname: string }) => r.conname,
        );
      if (dialect === 'mysql') {
        const [rows] = await db.raw(
          "select constraint_name as name from information_schema.table_constraints where table_schema = database() and table_name = ? and constraint_type = 'FOREIGN KEY'",
          [table],
        );
        return rows.map((r: { name: string }) => r.name);
      }
      return [];
    };
    const migrations = [
      {
        name: '0001_links',
        async up(knex: Knex) {
          await knex.schema.createTable('links', (t) => {
            t.increments('id');
            t.integer('item_id').references('items.id');
          });
        },
        async down() {},
      },
      {
        name: '0002_rename',
        async up(knex: Knex) {
          await knex.schema.alterTable('links', (t) => t.renameColumn('item_id', 'thing_id'));
          await renameForeignKey(knex, 'links', 'links_item_id_foreign', 'links_thing_id_foreign');
        },
        async down() {},
      },
      {
        // As migrations generated before the adapters tell PostgreSQL.
        name: '0003_by_client_name',
        async up(knex: Knex) {
          if ((knex.client.config as { client?: unknown }).client === 'pg') {
            await knex.raw('alter table ?? rename constraint ?? to ??', ['links', 'links_thing_id_foreign', 'links_thing_foreign']);
          }
        },
        async down() {},
      },
    ];
    expect(await migrateLatest(db, migrations)).toEqual(['0001_links', '0002_rename', '0003_by_client_name']);
    expect(await named('links')).toEqual({ postgres: ['links_thing_foreign'], mysql: ['links_thing_id_foreign'], sqlite: [] }[dialect]);
    await db('links').insert({ thing_id: 1 });
    const err = await db('links')
      .insert({ thing_id: 999 })
      .catch((e: unknown) => e);
    expect(isConstraintViolation(err)).toBe(true);
  });
});
