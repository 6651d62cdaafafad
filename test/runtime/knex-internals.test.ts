/**
 * Each assumption runtime/db/knex-internals.ts makes about Knex's internals, checked against the
 * installed Knex on both databases: a Knex upgrade that breaks one fails here, with a message that
 * names the module and the assumption.
 */
import knex, { type Knex } from 'knex';
import { connect } from '../../runtime';
import {
  BetterSqlite3Client,
  CONNECTION_UID,
  CONNECTION_WARNING,
  driverMessageOf,
  guardPgClient,
  Mysql2Client,
  MysqlColumnCompiler,
  MysqlQueryCompiler,
  MysqlTableCompiler,
  onAcquireFailure,
  queryUidOf,
  sqliteBindings,
  SqliteQueryCompiler,
} from '../../runtime/db/knex-internals';
import { createDatabase, DIALECTS, pgUrl, type TestDatabase } from '../support/databases';

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

  it('query uid: query events carry __knexQueryUid, the same on the query and its response', async () => {
    const seen: unknown[] = [];
    const onQuery = (q: unknown) => seen.push(queryUidOf(q));
    const onResponse = (_r: unknown, q: unknown) => seen.push(queryUidOf(q));
    db.on('query', onQuery).on('query-response', onResponse);
    try {
      await db('items').select('id');
    } finally {
      db.removeListener('query', onQuery).removeListener('query-response', onResponse);
    }
    assume('query uid', seen.length === 2 && typeof seen[0] === 'string' && seen[0] === seen[1], JSON.stringify(seen));
  });

  it('error prefix: with compileSqlOnError false, a failed statement\'s SQL text, placeholders unfilled, comes before the driver\'s message', async () => {
    // `db` is made by connect(), which sets `compileSqlOnError: false`.
    let event: { sql?: string } | undefined;
    const onError = (_e: unknown, q: { sql?: string }) => (event = q);
    db.on('query-error', onError);
    let message = '';
    try {
      await db('items').insert({ name: 'secret-value', missing: 'other-secret' });
    } catch (err) {
      message = (err as Error).message;
    } finally {
      db.removeListener('query-error', onError);
    }
    assume('error prefix', event?.sql !== undefined && message.startsWith(`${event.sql} - `), message);
    assume('error prefix', !message.includes('secret'), message);
    assume('error prefix', driverMessageOf(message, event?.sql) === message.slice((event?.sql ?? '').length + 3));
  });

  it('connection uid: the statements of a transaction, its savepoints and its ROLLBACK carry one __knexUid', async () => {
    const seen: { sql: string; uid: unknown }[] = [];
    const onQuery = (q: { sql: string }) => seen.push({ sql: q.sql, uid: (q as Record<string, unknown>)[CONNECTION_UID] });
    db.on('query', onQuery);
    try {
      await db.transaction(async (trx) => {
        await trx.transaction(async (inner) => inner('items').select('id'));
        await trx('items').select('id');
        throw new Error('roll back');
      }).catch(() => undefined);
    } finally {
      db.removeListener('query', onQuery);
    }
    const uids = new Set(seen.map((q) => q.uid));
    assume('connection uid', uids.size === 1 && typeof seen[0]?.uid === 'string' && /^BEGIN/i.test(seen[0].sql) && /^ROLLBACK/i.test(seen[seen.length - 1].sql), JSON.stringify(seen));
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

  it('connection warnings: a failed acquire is warned about with the words the log filter drops', async () => {
    const warnings: string[] = [];
    const db = knex({ client: 'pg', connection: 'postgres://postgres@127.0.0.1:1/none', pool: { min: 0, max: 1 }, acquireConnectionTimeout: 2000, log: { warn: (m: string) => warnings.push(m) } });
    try {
      await db.raw('select 1').catch(() => undefined);
    } finally {
      await db.destroy();
    }
    assume('connection warnings', warnings.length > 0 && warnings.every((w) => CONNECTION_WARNING.test(w)), JSON.stringify(warnings));
  });
});

const postgres = DIALECTS.includes('postgres') ? describe : describe.skip;

postgres('Knex and node-postgres internals the runtime reads (acquisitions and pg clients)', () => {
  it('acquisition: a connection that cannot be opened rejects acquireConnection with its error; a destroyed pool is no failure', async () => {
    const failures: unknown[] = [];
    const db = knex({ client: 'pg', connection: 'postgres://postgres@127.0.0.1:1/none', pool: { min: 0, max: 1 }, log: { warn: () => undefined } });
    onAcquireFailure(db.client, (err) => failures.push(err));
    const err = await db.raw('select 1').then(
      () => undefined,
      (e: unknown) => e,
    );
    const trxErr = await db.transaction(async () => undefined).then(
      () => undefined,
      (e: unknown) => e,
    );
    assume('acquisition', failures.length === 2 && failures[0] === err && failures[1] === trxErr, String(err));
    await db.destroy();
    const after = await db.raw('select 1').then(
      () => undefined,
      (e: unknown) => e,
    );
    assume('acquisition', after instanceof Error && failures.length === 2, `after destroy: ${String(after)}, ${failures.length} failures`);
  });

  function pgWithGuard(readTimeoutMs: number, seen: { broken: unknown[] }): Knex {
    return knex({
      client: 'pg',
      connection: pgUrl('postgres'),
      pool: {
        min: 0,
        max: 1,
        afterCreate(client: unknown, done: (err: unknown, client: unknown) => void) {
          guardPgClient(client, { readTimeoutMs, timeout: () => Object.assign(new Error('silent'), { code: 'ETIMEDOUT' }), broken: (e) => seen.broken.push(e) });
          done(null, client);
        },
      },
    });
  }

  it('pg client: a statement past the read timeout fails with the timeout error, breaks its client, and the pool opens another', async () => {
    const seen = { broken: [] as unknown[] };
    const db = pgWithGuard(300, seen);
    try {
      const { rows: before } = await db.raw('select pg_backend_pid() as pid');
      const err = await db.raw('select pg_sleep(3)').then(
        () => undefined,
        (e: unknown) => e,
      );
      assume('pg client', (err as { code?: string }).code === 'ETIMEDOUT' && seen.broken.includes(err), String(err));
      const { rows: after } = await db.raw('select pg_backend_pid() as pid');
      assume('pg client', after[0].pid !== before[0].pid, 'the broken client was used again');
    } finally {
      await db.destroy();
    }
  });

  it('pg client: a connection terminated under a transaction fails its statement and its ROLLBACK with errors the guard sees', async () => {
    const seen = { broken: [] as unknown[] };
    const db = pgWithGuard(0, seen);
    const admin = knex({ client: 'pg', connection: pgUrl('postgres'), pool: { min: 0, max: 1 } });
    try {
      const err = await db
        .transaction(async (trx) => {
          const { rows } = await trx.raw('select pg_backend_pid() as pid');
          await admin.raw('select pg_terminate_backend(?)', [rows[0].pid]);
          await trx.raw('select 1');
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      // The statement meets PostgreSQL's 57P01 (a code) or the closed socket, the ROLLBACK the broken
      // client: the guard sees what came after the break, and the transaction's error is an outage.
      const messages = seen.broken.map((e) => (e as Error).message);
      const coded = (err as { code?: string }).code === '57P01' || (err as { code?: string }).code === 'ECONNRESET';
      // (A socket's error is made by Node's own realm, not the test's: no `instanceof Error` here.)
      const message = (err as { message?: unknown } | undefined)?.message;
      assume('pg client', typeof message === 'string' && seen.broken.length > 0 && (coded || messages.includes(message)), `${String(err)}; seen ${messages.join(' | ')}`);
    } finally {
      await admin.destroy();
      await db.destroy();
    }
  });
});
