/**
 * Each assumption runtime/db/knex-internals.ts makes about Knex's internals, checked against the
 * installed Knex on both databases: a Knex upgrade that breaks one fails here, with a message that
 * names the module and the assumption.
 */
import knex, { type Knex } from 'knex';
import { connect } from '../../runtime';
import {
  BetterSqlite3Client,
  BOUND_WHERE_TYPES,
  builderInternals,
  configOf,
  CONNECTION_UID,
  CONNECTION_WARNING,
  driverMessageOf,
  guardPgClient,
  isRaw,
  Mysql2Client,
  MysqlColumnCompiler,
  MysqlQueryCompiler,
  MysqlTableCompiler,
  onAcquireFailure,
  onlyFilters,
  queryUidOf,
  sqliteBindings,
  SqliteQueryCompiler,
  statementsOf,
  UNBOUND_JOIN_CLAUSES,
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

  it('builder fields: _statements, _single and _method hold the clauses, limit and method; clone copies them', () => {
    const query = db('items').select('id').where('name', 'a').limit(5).offset(10);
    const b = builderInternals(query);
    assume('builder fields', Array.isArray(b._statements) && b._statements.some((s) => s.grouping === 'where'), '_statements');
    assume('builder fields', b._single.limit === 5 && b._single.offset === 10, '_single.limit/offset');
    const first = builderInternals(db('items').first('id') as unknown as Knex.QueryBuilder);
    assume('builder fields', first._method === 'first', '_method');
    const copy = b.clone();
    assume('builder fields', copy._statements !== b._statements && copy._statements.length === b._statements.length, 'clone()');
    assume('builder fields', builderInternals(db('items').limit(1, { skipBinding: true }))._single.skipBinding !== undefined, '_single.skipBinding');
    for (const field of ['_timeout', '_connection', '_queryContext', '_debug', '_options', '_comments'] as const) {
      const q = builderInternals(db('items').select('id'));
      assume('builder fields', !(field in q) || q[field] === undefined || (Array.isArray(q[field]) && (q[field] as unknown[]).length === 0) || q[field] === false, field);
    }
    assume('builder fields', builderInternals(db('items').timeout(5))._timeout === 5, '_timeout');
    assume('builder fields', builderInternals(db('items').queryContext({ a: 1 }))._queryContext !== undefined, '_queryContext');
    assume('builder fields', (builderInternals(db('items').comment('c'))._comments ?? []).length === 1, '_comments');
  });

  it('builder fields: onlyFilters tells a query of its table\'s rows filtered from one that selects, joins, groups, orders, limits or locks', () => {
    const table = dialect === 'postgres' ? db('items').withSchema('public') : db('items');
    const filtered = table.where('name', 'a').whereNull('id');
    expect(onlyFilters(filtered.where((q) => q.where('id', 1).orWhere('id', 2)))).toBe(true);
    expect(onlyFilters(db('items').whereIn('id', db('items').select('id')))).toBe(true);
    const others: [string, Knex.QueryBuilder][] = [
      ['select', db('items').select('name').where('id', 1)],
      ['join', db('items').join('items as other', 'other.id', 'items.id')],
      ['groupBy', db('items').select('name').groupBy('name')],
      ['orderBy', db('items').orderBy('name')],
      ['distinct', db('items').distinct('name')],
      ['count', db('items').count('id')],
      ['limit', db('items').limit(2)],
      ['offset', db('items').offset(2)],
      ['forUpdate', db('items').forUpdate()],
      ['first', db('items').first('id') as unknown as Knex.QueryBuilder],
      ['union', db('items').where('id', 1).union(db('items').where('id', 2))],
    ];
    for (const [name, query] of others) expect([name, onlyFilters(query)]).toEqual([name, false]);
  });

  it('where records: conditions on values keep their value in `value`, with the types the shape reader binds', () => {
    const q = db('items')
      .where('id', 1)
      .whereIn('id', [1, 2])
      .whereBetween('id', [1, 9])
      .whereLike('name', 'a%')
      .whereILike('name', 'b%')
      .having('id', '>', 1)
      .havingIn('id', [3])
      .havingBetween('id', [4, 5])
      .where((w) => w.where('id', 2));
    const statements = statementsOf(q);
    const types = statements.map((s) => s.type as string);
    for (const type of BOUND_WHERE_TYPES) assume('where records', types.includes(type), `no "${type}" record`);
    const basic = statements.find((s) => s.type === 'whereBasic')!;
    assume('where records', basic.grouping === 'where' && basic.column === 'id' && basic.operator === '=' && basic.value === 1 && basic.bool === 'and', JSON.stringify(basic));
    assume('where records', statements.some((s) => s.type === 'whereWrapped' && typeof s.value === 'function'), 'whereWrapped');
    const join = statementsOf(db('items').join('other', (j) => j.on('other.id', '=', 'items.id').orOn((k) => k.on('a', 'b')).andOnNull('x').onVal('y', 1)))[0];
    assume('where records', join.grouping === 'join' && Array.isArray(join.clauses) && 'joinType' in join && 'table' in join, () => Object.keys(join).join(', '));
    const clauseTypes = (join.clauses as { type: string }[]).map((c) => c.type);
    for (const type of UNBOUND_JOIN_CLAUSES) if (type !== 'onRaw') assume('where records', clauseTypes.includes(type), `no "${type}" join clause`);
    assume('where records', !UNBOUND_JOIN_CLAUSES.has(clauseTypes[clauseTypes.length - 1]), 'onVal must bind');
    const raw = statementsOf(db('items').join('other', (j) => j.on(db.raw('1 = 1'))))[0];
    assume('where records', (raw.clauses as { type: string }[]).some((c) => c.type === 'onRaw'), 'onRaw');
  });

  it('raw marker: knex.raw values have isRawInstance, sql and bindings', () => {
    const raw = db.raw('lower(?)', ['A']);
    assume('raw marker', isRaw(raw) && raw.sql === 'lower(?)' && Array.isArray(raw.bindings), () => Object.keys(raw).join(', '));
  });

  it('shared config: a symbol in the configuration reaches transactions and their builders', async () => {
    const key = Symbol('probe');
    const config = configOf(db.client);
    config[key] = 'here';
    try {
      await db.transaction(async (trx) => {
        assume('shared config', configOf(trx.client)[key] === 'here', 'the transaction client has another config');
        assume('shared config', configOf(trx('items').client)[key] === 'here', "the transaction's builders have another config");
      });
      const clone = (db as unknown as { withUserParams(p: object): Knex }).withUserParams({});
      assume('shared config', configOf(clone.client)[key] === 'here', 'withUserParams (the migrator) drops it');
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
    // `db` is made by connect(), which sets KNEX_ERROR_PREFIX.
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
