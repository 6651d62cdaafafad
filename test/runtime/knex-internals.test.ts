/**
 * Each assumption runtime/db/knex-internals.ts makes about Knex's internals, checked against the
 * installed Knex on both databases: a Knex upgrade that breaks one fails here, with a message that
 * names the module and the assumption.
 */
import type { Knex } from 'knex';
import {
  Mysql2Client,
  MysqlColumnCompiler,
  MysqlQueryCompiler,
  MysqlTableCompiler,
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
    for (const method of ['queryCompiler', 'tableCompiler', 'columnCompiler', 'processResponse']) {
      assume('mysql2 client', typeof prototype[method] === 'function', `no ${method}()`);
    }
    const client = new Mysql2Client({ client: 'mysql2', connection: {} });
    const inserted = client.processResponse({ sql: '', method: 'insert', response: [{ insertId: 7, affectedRows: 1 }, undefined] }, undefined);
    assume('mysql2 client', JSON.stringify(inserted) === '[7]', JSON.stringify(inserted));
  });

  it('MySQL compilers: the methods the runtime overrides or calls', () => {
    const methods: [string, object, string[]][] = [
      ['query', MysqlQueryCompiler.prototype, ['insert', '_returningCheck']],
      ['table', MysqlTableCompiler.prototype, ['unique', 'dropIndex', 'dropUnique', 'pushQuery', 'tableName', '_indexCommand']],
      ['column', MysqlColumnCompiler.prototype, ['defaultTo']],
    ];
    for (const [kind, prototype, names] of methods) {
      for (const name of names) assume('MySQL compilers', typeof (prototype as Record<string, unknown>)[name] === 'function', `${kind} compiler has no ${name}()`);
    }
  });
});
