/**
 * What runtime/db/database.ts assumes of Knex's configuration, checked against the installed Knex on
 * every database: the state it keeps under a symbol of `client.config` reaches transactions, their
 * builders and the migrator's copy. A Knex upgrade that breaks it fails here, naming the assumption.
 */
import type { Knex } from 'knex';
import { DIALECTS, itemsDatabase, type TestDatabase } from '../support/databases';

/** Fails with the module and the assumption named, when `holds` is false. */
function assume(assumption: string, holds: boolean, detail: string | (() => string) = ''): void {
  if (holds) return;
  const shown = typeof detail === 'function' ? detail() : detail;
  throw new Error(`runtime/db/database.ts: the installed Knex breaks the assumption "${assumption}"${shown ? `: ${shown}` : ''}`);
}

describe.each(DIALECTS)('Knex configuration the runtime shares (%s)', (dialect) => {
  let database: TestDatabase;
  let db: Knex;
  beforeAll(async () => {
    database = await itemsDatabase(dialect);
    db = database.db;
  });
  afterAll(() => database.drop());

  it('shared config: a symbol in the configuration reaches transactions and their builders', async () => {
    const key = Symbol('probe');
    const config = db.client.config as Record<symbol, unknown>;
    config[key] = 'here';
    try {
      await db.transaction(async (trx) => {
        assume(
          'shared config',
          (trx.client.config as Record<symbol, unknown>)[key] === 'here',
          'the transaction client has another config',
        );
        assume(
          'shared config',
          (trx('items').client.config as Record<symbol, unknown>)[key] === 'here',
          "the transaction's builders have another config",
        );
      });
      const clone = (db as unknown as { withUserParams(p: object): Knex }).withUserParams({});
      assume('shared config', (clone.client.config as Record<symbol, unknown>)[key] === 'here', 'withUserParams (the migrator) drops it');
    } finally {
      delete config[key];
    }
  });
});
