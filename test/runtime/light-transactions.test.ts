/**
 * Light transactions (runtime/db/knex-internals.ts, "transactors"): every transaction of a database
 * `connect` opens is made with a light transactor. Each scenario below runs on that database and on
 * a plain Knex instance of the same configuration (Knex's own transactors), on every database, and
 * must give the same results, the same rows and the same events. The Knex sources the light
 * transactor copies are pinned by their hash: an upgrade that changes them fails here.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import knex, { type Knex } from 'knex';
import { databaseConfig } from '../../runtime/db/connection';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';

const KNEX_SOURCES: Record<string, string> = {
  'knex/lib/execution/transaction.js': '17ebc527bce986224880a2303c934c5a69ae0311619dd2cc723460a8806e3eba',
  'knex/lib/knex-builder/make-knex.js': '36a2ca79e0477bee557b73f6d867e3d92ac6d85c2092a7f2230eedc278506d7c',
};

const sha256 = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(require.resolve(file))).digest('hex');

type Scenario = (db: Knex, table: string) => Promise<unknown>;

/** What a promise settled with, as comparable data. */
async function settled(promise: Promise<unknown>): Promise<unknown> {
  try {
    return { value: await promise };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

const scenarios: [string, Scenario][] = [
  ['a commit returns the callback value and keeps the rows', async (db, t) => {
    const result = await settled(db.transaction(async (trx) => (await trx(t).insert({ name: 'a' }), 'done')));
    return { result, rows: await db(t).pluck('name') };
  }],
  ['a throw rolls back and rejects with the error', async (db, t) => {
    const result = await settled(db.transaction(async (trx) => {
      await trx(t).insert({ name: 'a' });
      throw new Error('boom');
    }));
    return { result, rows: await db(t).pluck('name') };
  }],
  ['a savepoint that throws rolls back alone', async (db, t) => {
    const result = await settled(db.transaction(async (trx) => {
      await trx(t).insert({ name: 'outer' });
      const inner = await settled(trx.transaction(async (sp) => {
        await sp(t).insert({ name: 'inner' });
        throw new Error('inner boom');
      }));
      await trx(t).insert({ name: 'after' });
      return inner;
    }));
    return { result, rows: await db(t).orderBy('id').pluck('name') };
  }],
  ['a savepoint that commits, and one made without a callback', async (db, t) => {
    const result = await settled(db.transaction(async (trx) => {
      await trx.savepoint(async (sp) => sp(t).insert({ name: 'sp' }));
      const sp2 = await trx.transaction();
      await sp2(t).insert({ name: 'sp2' });
      await sp2.commit();
      return [trx.isTransaction, sp2.isTransaction, sp2.isCompleted()];
    }));
    return { result, rows: await db(t).orderBy('id').pluck('name') };
  }],
  ['a manual rollback resolves with undefined and keeps nothing', async (db, t) => {
    const result = await settled(db.transaction(async (trx) => {
      await trx(t).insert({ name: 'a' });
      await trx.rollback();
    }));
    return { result, rows: await db(t).pluck('name') };
  }],
  ['a manual commit with a value', async (db, t) => {
    const result = await settled(db.transaction((trx) => {
      void trx(t).insert({ name: 'a' }).then(() => trx.commit('committed'));
    }));
    return { result, rows: await db(t).pluck('name') };
  }],
  ['a transaction made without a callback, committed by hand', async (db, t) => {
    const trx = await db.transaction();
    await trx(t).insert({ name: 'a' });
    const before = trx.isCompleted();
    await trx.commit();
    return { before, after: trx.isCompleted(), done: await settled(trx.executionPromise), rows: await db(t).pluck('name') };
  }],
  ['a query after the end is refused', async (db, t) => {
    let kept: Knex.Transaction | undefined;
    await db.transaction(async (trx) => {
      kept = trx;
      await trx(t).insert({ name: 'a' });
    });
    return { completed: kept!.isCompleted(), late: await settled(kept!(t).select('name')) };
  }],
  ['the query methods, raw, fn, schema and queryBuilder of a transactor', async (db, t) => {
    return settled(db.transaction(async (trx) => {
      await trx.insert({ name: 'x' }).into(t);
      const selected = await trx.select('name').from(t);
      const counted = await trx.queryBuilder().from(t).count({ n: '*' });
      const raw = await trx.raw('select 1 as one');
      return {
        selected,
        counted: Number(counted[0].n),
        raw: raw !== undefined,
        fn: typeof trx.fn.now().toQuery(),
        hasTable: await trx.schema.hasTable(t),
        userParams: trx.userParams,
        isTransaction: trx.isTransaction,
        completedInside: trx.isCompleted(),
        callable: typeof trx,
      };
    }));
  }],
  ['events reach the transactor, the transaction and the database', async (db, t) => {
    const seen: string[] = [];
    const onDb = (q: { sql: string }) => seen.push(`db:${q.sql.split(' ')[0].toLowerCase()}`);
    db.on('query', onDb);
    try {
      const trx = db.transaction(async (tx) => {
        tx.on('query', (q: { sql: string }) => seen.push(`trx:${q.sql.split(' ')[0].toLowerCase()}`));
        await tx(t).insert({ name: 'a' });
        await tx(t).where('name', 'nope').first();
      });
      await trx;
    } finally {
      db.removeListener('query', onDb);
    }
    return seen.filter((e) => !e.endsWith('begin;') && !e.endsWith('commit;')).sort();
  }],
  ['concurrent transactions each commit', async (db, t) => {
    await Promise.all([1, 2, 3, 4, 5].map((i) => db.transaction(async (trx) => trx(t).insert({ name: `n${i}` }))));
    return (await db(t).pluck('name')).sort();
  }],
];

describe('the Knex sources light transactors copy', () => {
  it.each(Object.keys(KNEX_SOURCES))('%s is the one the copy was made from', (file) => {
    expect({ file, sha256: sha256(file) }).toEqual({ file, sha256: KNEX_SOURCES[file] });
  });
});

describe.each(DIALECTS)('light transactions (%s)', (dialect) => {
  let database: TestDatabase;
  let plain: Knex;
  let n = 0;
  beforeAll(async () => {
    database = await createDatabase(dialect);
    plain = knex(databaseConfig(database.url, '').knex);
  });
  afterAll(async () => {
    await plain.destroy();
    await database.drop();
  });

  async function table(db: Knex): Promise<string> {
    const name = `light_${++n}`;
    await db.schema.createTable(name, (t) => {
      t.increments('id');
      t.string('name');
    });
    return name;
  }

  it.each(scenarios)('%s: as with Knex', async (_name, scenario) => {
    const light = await scenario(database.db, await table(database.db));
    const knexs = await scenario(plain, await table(plain));
    expect(light).toEqual(knexs);
  });

  it('a light transactor shares its methods: its own properties are its state', async () => {
    await database.db.transaction(async (trx) => {
      const own = Object.getOwnPropertyNames(trx).filter((k) => typeof (trx as unknown as Record<string, unknown>)[k] === 'function');
      expect(own.sort()).toEqual(['commit', 'isCompleted', 'rollback', 'savepoint']);
    });
  });
});
