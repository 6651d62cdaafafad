/**
 * What the runtime reads of Knex's and node-postgres's public API to tell a connection failure:
 * the ids Knex's query events carry (of the query, of its connection), the SQL text Knex puts
 * before a driver's message (`compileSqlOnError: false`), the pool's failed acquisitions, and on
 * PostgreSQL a connection whose server stops answering or that is closed under a transaction.
 */
import knex, { type Knex } from 'knex';
import { connect, QUERY_UID } from '../../runtime/db/connection';
import { DatabaseTimeoutError } from '../../runtime/db/dialects/dialect';
import { isConnectionFailure } from '../../runtime/db/driver-errors';
import { loggableError, recordFailedStatements } from '../../runtime/db/outage';
import { DEFAULT_DATABASE_SETTINGS } from '../../runtime/core/settings';
import { DIALECTS, itemsDatabase, pgUrl, type TestDatabase } from '../support/databases';

const settle = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (e: unknown) => e,
  );

describe.each(DIALECTS)('Knex query events (%s)', (dialect) => {
  let database: TestDatabase;
  let db: Knex;
  beforeAll(async () => {
    database = await itemsDatabase(dialect);
    db = database.db;
  });
  afterAll(() => database.drop());

  it('carry the query id, the same on a query and its response', async () => {
    const seen: unknown[] = [];
    const onQuery = (q: Record<string, unknown>) => seen.push(q[QUERY_UID]);
    const onResponse = (_r: unknown, q: Record<string, unknown>) => seen.push(q[QUERY_UID]);
    db.on('query', onQuery).on('query-response', onResponse);
    try {
      await db('items').select('id');
    } finally {
      db.removeListener('query', onQuery).removeListener('query-response', onResponse);
    }
    expect(seen).toHaveLength(2);
    expect(typeof seen[0]).toBe('string');
    expect(seen[1]).toBe(seen[0]);
  });

  it('carry one connection id for a transaction, its savepoints and its ROLLBACK', async () => {
    const seen: { sql: string; uid: unknown }[] = [];
    const onQuery = (q: { sql: string; __knexUid?: unknown }) => seen.push({ sql: q.sql, uid: q.__knexUid });
    db.on('query', onQuery);
    try {
      await settle(
        db.transaction(async (trx) => {
          await trx.transaction(async (inner) => inner('items').select('id'));
          await trx('items').select('id');
          throw new Error('roll back');
        }),
      );
    } finally {
      db.removeListener('query', onQuery);
    }
    expect(new Set(seen.map((q) => q.uid)).size).toBe(1);
    expect(typeof seen[0].uid).toBe('string');
    expect(seen[0].sql).toMatch(/^BEGIN/i);
    expect(seen[seen.length - 1].sql).toMatch(/^ROLLBACK/i);
  });

  it("a failed statement is logged by its SQL text and the driver's message, never a value bound to it", async () => {
    recordFailedStatements(db);
    const err = await settle(db('items').insert({ name: 'secret-value', missing: 'other-secret' }));
    const logged = loggableError(err);
    expect(logged.statement).toMatch(/^insert into/);
    expect(JSON.stringify(logged)).not.toContain('secret');
    expect(logged.message.startsWith('insert into')).toBe(false);
  });
});

const postgres = DIALECTS.includes('postgres') ? describe : describe.skip;

postgres('PostgreSQL connections that fail', () => {
  it('a pool that cannot open a connection fails queries and transactions with connection failures; a destroyed one does not', async () => {
    const db = connect('postgres://postgres@127.0.0.1:1/none', '', undefined, {
      ...DEFAULT_DATABASE_SETTINGS,
      connectTimeoutMs: 500,
      acquireTimeoutMs: 2000,
    });
    const err = await settle(db.raw('select 1'));
    const trxErr = await settle(db.transaction(async () => undefined));
    expect(isConnectionFailure(err)).toBe(true);
    expect(isConnectionFailure(trxErr)).toBe(true);
    await db.destroy();
    const after = await settle(db.raw('select 1'));
    expect(after).toBeInstanceOf(Error);
  });

  it('a statement past the statement timeout and a second without an answer closes its connection; the pool opens another', async () => {
    // A server that answers nothing at all is in test/http/timeouts.test.ts; here the socket's own bound, with no statement timeout on the server.
    const db = connect(pgUrl('postgres'), '', undefined, { ...DEFAULT_DATABASE_SETTINGS, statementTimeoutMs: 300, poolMax: 1 });
    try {
      const { rows: before } = await db.raw('select pg_backend_pid() as pid');
      const err = await settle(db.raw('set statement_timeout = 0; select pg_sleep(3)'));
      expect(err).toBeInstanceOf(DatabaseTimeoutError);
      expect(isConnectionFailure(err)).toBe(true);
      const { rows: after } = await db.raw('select pg_backend_pid() as pid');
      expect(after[0].pid).not.toBe(before[0].pid);
    } finally {
      await db.destroy();
    }
  });

  it('a connection terminated under a transaction fails it with a connection failure', async () => {
    const db = connect(pgUrl('postgres'), '', undefined, { ...DEFAULT_DATABASE_SETTINGS, poolMax: 1 });
    const admin = knex({ client: 'pg', connection: pgUrl('postgres'), pool: { min: 0, max: 1 } });
    try {
      const err = await settle(
        db.transaction(async (trx) => {
          const { rows } = await trx.raw('select pg_backend_pid() as pid');
          await admin.raw('select pg_terminate_backend(?)', [rows[0].pid]);
          await trx.raw('select 1');
        }),
      );
      expect(isConnectionFailure(err)).toBe(true);
    } finally {
      await admin.destroy();
      await db.destroy();
    }
  });
});
