/**
 * The database layer on real databases: reads outside a transaction (`selectRows`, `selectFirst`)
 * never see another transaction's uncommitted writes and see its rows once committed; reads in a
 * transaction see its own writes; reads are reported to `query` listeners; statements prepared
 * once keep answering for new bindings and after a schema change; SQLite's settings.
 */
import { createRequire } from 'node:module';
import { ConfigurationError, connect, type Db } from '../../runtime';
import { loadSqliteSettings } from '../../runtime/core/settings';
import { requestsArrived, selectFirst, selectRows } from '../../runtime/db/connection';
import { insertReturning } from '../../runtime/db/inserts';
import { withBooleanLiterals } from '../../runtime/db/dialects/sqlite-client';
import { databaseOf } from '../../runtime/db/database';
import { createDatabase, DIALECTS, itemsDatabase, type TestDatabase } from '../support/databases';

describe.each(DIALECTS)('reads (%s)', (dialect) => {
  let database: TestDatabase;
  let db: Db;
  beforeAll(async () => {
    database = await itemsDatabase(dialect, [{ name: 'one' }, { name: 'two' }]);
    db = database.db;
  });
  afterAll(() => database.drop());

  const names = async (reader: Db) => (await selectRows(reader, reader('items').select('name').orderBy('id'))).map((r) => r.name);

  it('outside a transaction, do not see its uncommitted writes, and see them once committed', async () => {
    const trx = await db.transaction();
    try {
      await trx('items').insert({ name: 'pending' });
      // On SQLite the pool's one connection is the transaction's: this read must not wait for it either.
      expect(await names(db)).toEqual(['one', 'two']);
      expect(await selectFirst(db, db('items').select('id').where('name', 'pending'))).toBeUndefined();
      await trx.commit();
    } catch (err) {
      await trx.rollback();
      throw err;
    }
    expect(await names(db)).toEqual(['one', 'two', 'pending']);
    await db('items').where('name', 'pending').delete();
  });

  it('in a transaction, see its own writes; rolled back, they are gone', async () => {
    await db
      .transaction(async (trx) => {
        await trx('items').insert({ name: 'mine' });
        expect(await names(trx)).toEqual(['one', 'two', 'mine']);
        expect(await selectFirst(trx, trx('items').select('name').where('name', 'mine'))).toEqual({ name: 'mine' });
        throw new Error('roll back');
      })
      .catch((err: Error) => expect(err.message).toBe('roll back'));
    expect(await names(db)).toEqual(['one', 'two']);
  });

  it('bind new values to a statement run before, and are reported to query listeners', async () => {
    const sql: string[] = [];
    const listener = (q: { sql: string }) => sql.push(q.sql);
    db.on('query', listener);
    try {
      const byName = (name: string) => selectFirst(db, db('items').select('id', 'name').where('name', name));
      expect(await byName('one')).toEqual({ id: 1, name: 'one' });
      expect(await byName('two')).toEqual({ id: 2, name: 'two' });
      expect(await byName('three')).toBeUndefined();
    } finally {
      db.removeListener('query', listener);
    }
    expect(sql.map((s) => s.replace(/[`"]/g, '').replace(/\$\d/g, '?'))).toEqual(
      Array(3).fill('select id, name from items where name = ? limit ?'),
    );
  });

  it('bind booleans, beside a quoted question mark, in and out of a transaction, and return the rows a write returns', async () => {
    const flagged = (reader: Db, flag: boolean) =>
      selectRows(
        reader,
        reader('items')
          .select('name', reader.raw("'?' as q"))
          .where('name', '<>', 'x')
          .andWhere(reader.raw('? = ?', [flag, true]))
          .orderBy('id'),
      );
    expect(await flagged(db, true)).toEqual([
      { name: 'one', q: '?' },
      { name: 'two', q: '?' },
    ]);
    expect(await flagged(db, false)).toEqual([]);
    const seen: string[] = [];
    const listener = (q: { sql: string }) => seen.push(q.sql);
    db.on('query', listener);
    try {
      await db
        .transaction(async (trx) => {
          expect(await flagged(trx, true)).toHaveLength(2);
          expect(await flagged(trx, false)).toEqual([]);
          const added = { name: 'added' };
          const [row] = await insertReturning(trx, trx('items').insert(added), added, ['id', 'name']);
          expect(row).toEqual({ id: expect.any(Number), name: 'added' });
          expect(await names(trx)).toEqual(['one', 'two', 'added']);
          throw new Error('roll back');
        })
        .catch((err: Error) => expect(err.message).toBe('roll back'));
    } finally {
      db.removeListener('query', listener);
    }
    // Each statement run in the transaction, the runtime's own included, is told to the listeners once.
    expect(seen.filter((sql) => /^insert/i.test(sql))).toHaveLength(1);
    expect(seen.filter((sql) => /'\\?\?' as q/.test(sql))).toHaveLength(2);
    expect(await names(db)).toEqual(['one', 'two']);
  });

  it('follow a schema change', async () => {
    const all = () => selectRows(db, db('items').select('*').orderBy('id'));
    expect(await all()).toEqual([
      { id: 1, name: 'one' },
      { id: 2, name: 'two' },
    ]);
    await db.schema.alterTable('items', (t) => t.integer('rank').notNullable().defaultTo(7));
    expect(await all()).toEqual([
      { id: 1, name: 'one', rank: 7 },
      { id: 2, name: 'two', rank: 7 },
    ]);
  });
});

/** What the tests use of a better-sqlite3 connection of their own (the package has no types of its own). */
interface SqliteConnection {
  prepare(sql: string): { run(...values: unknown[]): unknown; all(): unknown[] };
  pragma(source: string): unknown;
  close(): void;
}
const Database = createRequire(__filename)('better-sqlite3') as new (filename: string) => SqliteConnection;

describe('booleans written into SQLite statements', () => {
  it('as 1 and 0 in place of their placeholders, never a quoted one, the other values bound in order', () => {
    expect(withBooleanLiterals('select ? as a, \'?\' as q, "?" as b where x = ? and y = ?', [true, 5, false])).toEqual({
      sql: 'select 1 as a, \'?\' as q, "?" as b where x = ? and y = 0',
      bindings: [5],
    });
    const same = { sql: 'select ? where z = ?', bindings: [1, 'a'] };
    expect(withBooleanLiterals(same.sql, same.bindings)).toEqual(same);
    // Placeholders that do not match the values (a text Knex did not write): bound as they are.
    expect(withBooleanLiterals('select 1', [true])).toEqual({ sql: 'select 1', bindings: [true] });
  });
});

describe('read snapshots (sqlite)', () => {
  // Another writer of the same file: a second worker process, a migration, an admin's shell.
  let database: TestDatabase;
  let db: Db;
  let other: SqliteConnection;
  beforeAll(async () => {
    database = await itemsDatabase('sqlite', [{ name: 'one' }]);
    db = database.db;
    other = new Database(database.url.slice('sqlite:'.length));
    other.pragma('busy_timeout = 5000');
  });
  afterAll(async () => {
    other.close();
    await database.drop();
  });
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  beforeEach(async () => {
    other.prepare("delete from items where name <> 'one'").run();
    // Jest may run this hook in the same turn as the last test's reads: their snapshot ends first.
    await nextTurn();
  });

  const names = async () => (await selectRows(db, db('items').select('name').orderBy('id'))).map((r) => r.name);
  const insertElsewhere = (name: string) => other.prepare('insert into items (name) values (?)').run(name);

  it.each([
    ['the reads of one callback and the continuations it made ready', () => undefined],
    ['the reads of requests received together', () => requestsArrived(db)],
  ])('%s see one state of the database; the next turn of the loop sees later commits', async (_name, arrive) => {
    arrive();
    expect(await names()).toEqual(['one']);
    insertElsewhere('elsewhere');
    // The author, tags and page of a response come from the same state as its row.
    expect(await names()).toEqual(['one']);
    await nextTurn();
    expect(await names()).toEqual(['one', 'elsewhere']);
  });

  it('end before a statement Knex runs: a write, a transaction, and the reads after them see the latest rows', async () => {
    expect(await names()).toEqual(['one']);
    insertElsewhere('elsewhere');
    await db('items').insert({ name: 'here' });
    expect(await names()).toEqual(['one', 'elsewhere', 'here']);
    // The snapshot of that read is on the pool's connection: the transaction's BEGIN ends it first.
    await db.transaction(async (trx) => {
      await trx('items').insert({ name: 'in a transaction' });
      expect(await names()).toEqual(['one', 'elsewhere', 'here']);
    });
    expect(await names()).toEqual(['one', 'elsewhere', 'here', 'in a transaction']);
  });

  it('begun before a request arrived, end when it arrives: its reads see what was committed before', async () => {
    expect(await names()).toEqual(['one']);
    insertElsewhere('elsewhere');
    requestsArrived(db);
    expect(await names()).toEqual(['one', 'elsewhere']);
    await nextTurn();
  });

  it('never keep the read lock past the turn: a writer elsewhere can checkpoint the whole log', async () => {
    expect(await names()).toEqual(['one']);
    await nextTurn();
    insertElsewhere('elsewhere');
    // A reader holding a snapshot would keep the log's frames: a TRUNCATE checkpoint would be busy.
    expect(other.pragma('wal_checkpoint(TRUNCATE)')).toEqual([expect.objectContaining({ busy: 0 })]);
  });
});

describe('rows (sqlite)', () => {
  // The service makes each row's object from the values the driver answers (sqlite-client.ts, `rowMaker`).
  let database: TestDatabase;
  let db: Db;
  let own: SqliteConnection;
  beforeAll(async () => {
    database = await itemsDatabase('sqlite', [{ name: 'one', rank: 2 }, { name: 'two' }], true);
    db = database.db;
    own = new Database(database.url.slice('sqlite:'.length));
  });
  afterAll(async () => {
    own.close();
    await database.drop();
  });

  // Beside the pool (a read outside transactions) and through Knex's runner (`_query`).
  const readers: [string, (sql: string) => Promise<object[]>][] = [
    [
      'beside the pool',
      async (sql) => {
        const reads = databaseOf(db).reads!;
        return reads.all(reads.connection()!, sql, []);
      },
    ],
    ['by Knex', (sql) => db.raw(sql)],
  ];

  it.each([
    'select id, name, rank from items order by id',
    'select rank, id as key, name from items order by id',
    // Two columns of one name: the later's value, at the place of the first.
    'select id as x, name, rank as x from items order by id',
    'select count(*) as n, max(rank) * 2 as double from items',
    'select * from items order by id',
    // A column named __proto__ sets no prototype.
    'select name as "__proto__", id from items order by id',
    "select 'a*b' as text, id from items order by id",
  ])("are the driver's own, their columns in order: %s", async (sql) => {
    const expected = own.prepare(sql).all() as object[];
    for (const [, read] of readers) {
      for (let run = 0; run < 2; run++) {
        const rows = await read(sql);
        expect(rows.map((row) => Object.entries(row))).toEqual(expected.map((row) => Object.entries(row)));
        expect(rows.map((row) => Object.getPrototypeOf(row))).toEqual(expected.map((row) => Object.getPrototypeOf(row)));
      }
    }
  });

  it('follow the table when it is made again with its columns in another order', async () => {
    await db.schema.createTable('pairs', (t) => {
      t.integer('a');
      t.integer('b');
    });
    await db('pairs').insert({ a: 1, b: 2 });
    const named = () => selectRows(db, db('pairs').select('a', 'b'));
    const star = () => selectRows(db, db('pairs').select('*'));
    expect([await named(), await star()]).toEqual([[{ a: 1, b: 2 }], [{ a: 1, b: 2 }]]);
    await db.schema.dropTable('pairs');
    await db.schema.createTable('pairs', (t) => {
      t.integer('b');
      t.integer('a');
    });
    await db('pairs').insert({ a: 1, b: 2 });
    expect([await named(), await star()]).toEqual([[{ a: 1, b: 2 }], [{ b: 2, a: 1 }]]);
    expect(Object.keys((await star())[0])).toEqual(['b', 'a']);
  });
});

describe('reads after the database is closed (sqlite)', () => {
  it('fail as Knex fails, instead of reading on', async () => {
    const database = await createDatabase('sqlite');
    await database.db.schema.createTable('items', (t) => t.increments('id'));
    expect(await selectRows(database.db, database.db('items').select('id'))).toEqual([]);
    await database.drop();
    await expect(selectRows(database.db, database.db('items').select('id'))).rejects.toThrow();
  });
});

describe('SQLite settings', () => {
  it('default to synchronous NORMAL, a 64 MiB page cache and 256 MiB of mmap', () => {
    expect(loadSqliteSettings({})).toEqual({ synchronous: 'NORMAL', cacheSizeMib: 64, mmapSizeMib: 256 });
  });

  it('read SVC_SQLITE_* from the environment', () => {
    const env = { SVC_SQLITE_SYNCHRONOUS: 'full', SVC_SQLITE_CACHE_SIZE: '8', SVC_SQLITE_MMAP_SIZE: '0' };
    expect(loadSqliteSettings(env)).toEqual({ synchronous: 'FULL', cacheSizeMib: 8, mmapSizeMib: 0 });
  });

  it.each([
    [{ SVC_SQLITE_SYNCHRONOUS: 'sometimes' }, 'SVC_SQLITE_SYNCHRONOUS must be one of OFF, NORMAL, FULL, EXTRA, got "sometimes"'],
    [{ SVC_SQLITE_CACHE_SIZE: '-1' }, 'SVC_SQLITE_CACHE_SIZE must be a whole number of MiB (0 or more), got "-1"'],
    [{ SVC_SQLITE_MMAP_SIZE: '1.5' }, 'SVC_SQLITE_MMAP_SIZE must be a whole number of MiB (0 or more), got "1.5"'],
  ])('reject %j', (env, message) => {
    expect(() => loadSqliteSettings(env)).toThrow(new ConfigurationError(message));
  });

  it('are applied to the connection', async () => {
    const database = await createDatabase('sqlite');
    const db = connect(database.url, '', { synchronous: 'FULL', cacheSizeMib: 3, mmapSizeMib: 5 });
    try {
      const pragma = async (name: string) => Object.values((await db.raw(`PRAGMA ${name}`))[0])[0];
      expect([await pragma('synchronous'), await pragma('cache_size'), await pragma('mmap_size'), await pragma('journal_mode')]).toEqual([
        2,
        -3 * 1024,
        5 * 1024 * 1024,
        'wal',
      ]);
    } finally {
      await db.destroy();
      await database.drop();
    }
  });
});
