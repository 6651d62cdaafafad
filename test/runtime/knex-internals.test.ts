/**
 * Each assumption runtime/db/knex-internals.ts makes about Knex's internals, checked against the
 * installed Knex on both databases: a Knex upgrade that breaks one fails here, with a message that
 * names the module and the assumption.
 */
import type { Knex } from 'knex';
import { connect } from '../../runtime';
import {
  BetterSqlite3Client,
  Mysql2Client,
  MysqlColumnCompiler,
  MysqlQueryCompiler,
  MysqlTableCompiler,
  sqliteBindings,
  SqliteQueryCompiler,
} from '../../runtime/db/knex-internals';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';

/** Fails with the module and the assumption named, when `holds` is false. */
function assume(assumption: string, holds: boolean, detail: string | (() => string) = ''): void {
  if (holds) return;
  const shown = typeof detail === 'function' ? detail() : detail;
  throw new Error(`runtime/db/knex-internals.ts: the installed Knex breaks the assumption "${assumption}"${shown ? `: ${shown}` : ''}`);
}

describe.each(DIALECTS)('Knex internals the runtime reads (%s)', (dialect) => {
  let database: TestDatabase;
  let db: Knex;
  beforeAll(async () => {
    database = await createDatabase(dialect);
    db = database.db;
    await db.schema.createTable('items', (t) => {
      t.increments('id');
      t.string('name');
    });
  });
  afterAll(() => database.drop());

  it('shared config: a symbol in the configuration reaches transactions and their builders', async () => {
    const key = Symbol('probe');
    const config = db.client.config as Record<symbol, unknown>;
    config[key] = 'here';
    try {
      await db.transaction(async (trx) => {
        assume('shared config', (trx.client.config as Record<symbol, unknown>)[key] === 'here', 'the transaction client has another config');
        assume('shared config', (trx('items').client.config as Record<symbol, unknown>)[key] === 'here', "the transaction's builders have another config");
      });
      const clone = (db as unknown as { withUserParams(p: object): Knex }).withUserParams({});
      assume('shared config', (clone.client.config as Record<symbol, unknown>)[key] === 'here', 'withUserParams (the migrator) drops it');
    } finally {
      delete config[key];
    }
  });
});

describe('Knex internals the runtime reads (MySQL classes)', () => {
  it('mysql2 client: the class of `client: "mysql2"`, with the compilers it makes and processResponse', () => {
    const prototype = Mysql2Client.prototype as unknown as Record<string, unknown>;
    for (const method of ['queryCompiler', 'tableCompiler', 'columnCompiler', 'processResponse', 'acquireRawConnection', '_query']) {
      assume('mysql2 client', typeof prototype[method] === 'function', `no ${method}()`);
    }
    const client = new Mysql2Client({ client: 'mysql2', connection: {} });
    const inserted = client.processResponse({ sql: '', method: 'insert', response: [{ insertId: 7, affectedRows: 1 }, undefined] }, undefined);
    assume('mysql2 client', JSON.stringify(inserted) === '[7]', JSON.stringify(inserted));
  });

  it('MySQL compilers: the methods the runtime overrides or calls', () => {
    const methods: [string, object, string[]][] = [
      ['query', MysqlQueryCompiler.prototype, ['insert', '_returningCheck']],
      ['table', MysqlTableCompiler.prototype, ['createQuery', 'unique', 'dropIndex', 'dropUnique', 'pushQuery', 'tableName', '_indexCommand']],
      ['column', MysqlColumnCompiler.prototype, ['increments', 'bigincrements', 'timestamp', 'text', 'defaultTo']],
    ];
    for (const [kind, prototype, names] of methods) {
      for (const name of names) assume('MySQL compilers', typeof (prototype as Record<string, unknown>)[name] === 'function', `${kind} compiler has no ${name}()`);
    }
    const table = MysqlTableCompiler.prototype as unknown as Record<string, unknown>;
    assume('MySQL compilers', table.addColumnsPrefix === 'add ' && table.dropColumnPrefix === 'drop ', 'column prefixes');
  });
});

describe('Knex internals the runtime reads (SQLite classes)', () => {
  it('better-sqlite3 client: the class of `client: "better-sqlite3"`, with _query, _formatBindings and queryCompiler', () => {
    const prototype = BetterSqlite3Client.prototype as unknown as Record<string, unknown>;
    for (const method of ['_query', '_formatBindings', 'acquireRawConnection', 'destroyRawConnection', 'destroy', 'queryCompiler']) {
      assume('better-sqlite3 client', typeof prototype[method] === 'function', `no ${method}()`);
    }
    const date = new Date(1000);
    assume('better-sqlite3 client', JSON.stringify(sqliteBindings([date, true, 'a'])) === JSON.stringify([1000, 1, 'a']), '_formatBindings');
    // Every value of a query and of a raw statement enters through parameter(): our override writes booleans.
    const db = connect('sqlite::memory:', '');
    try {
      const seen: unknown[] = [];
      const client = db.client as unknown as { parameter: (value: unknown, builder: unknown, holder: { bindings: unknown[] }) => string };
      const own = client.parameter;
      client.parameter = function (this: unknown, value, builder, holder) {
        seen.push(value);
        return own.call(this, value, builder, holder);
      };
      const query = db('items').select('id').where('a', 5).whereIn('b', ['x', true]).update({ c: false }).toSQL();
      const raw = db.raw('select ? as v, ? as w', [7, true]).toSQL();
      assume('better-sqlite3 client', JSON.stringify(seen) === JSON.stringify([false, 5, 'x', true, 7, true]), `parameter() saw ${JSON.stringify(seen)}`);
      assume('better-sqlite3 client', JSON.stringify(query.bindings) === '[5,"x"]' && JSON.stringify(raw.bindings) === '[7]', 'parameter() binds a plain value');
      assume('better-sqlite3 client', raw.sql === 'select ? as v, 1 as w', `raw: ${raw.sql}`);
    } finally {
      void db.destroy();
    }
  });

  it('better-sqlite3 client: _query leaves rows in response and a write in context', async () => {
    const client = new BetterSqlite3Client({ client: 'better-sqlite3', connection: { filename: ':memory:' }, useNullAsDefault: true });
    const conn = await client.acquireRawConnection();
    try {
      await client._query(conn, { sql: 'create table t (a integer)' });
      const write = await client._query(conn, { sql: 'insert into t (a) values (?)', bindings: [7] });
      assume('better-sqlite3 client', write.context?.changes === 1 && write.context.lastID === 1, JSON.stringify(write.context));
      const read = await client._query(conn, { sql: 'select a from t', bindings: [] });
      assume('better-sqlite3 client', JSON.stringify(read.response) === '[{"a":7}]', JSON.stringify(read.response));
    } finally {
      await client.destroyRawConnection(conn);
      await client.destroy();
    }
  });

  it('SQLite compiler: made with (client, builder, formatter), `single` is the builder’s, limit() writes the LIMIT', () => {
    const db = connect('sqlite::memory:', '');
    try {
      const builder = db('items').select('id').limit(3);
      const compiler = new SqliteQueryCompiler(db.client, builder, undefined);
      assume('SQLite compiler', compiler.single.limit === 3, 'single.limit');
      assume('SQLite compiler', typeof SqliteQueryCompiler.prototype.limit === 'function', 'limit()');
      assume('SQLite compiler', builder.toSQL().sql.endsWith('limit 3'), `our override is not used: ${builder.toSQL().sql}`);
    } finally {
      void db.destroy();
    }
  });
});
