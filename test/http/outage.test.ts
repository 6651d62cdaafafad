/**
 * Database outages: while the database cannot be reached, every request that needs it is a 503
 * `{"detail": "Service Unavailable"}` with `Retry-After`, the outage is logged once when it starts
 * and once when it ends, and the service answers again as soon as the database does, without a
 * restart. On PostgreSQL (and MySQL, when the suites run on it) a TCP proxy between the service and
 * the server is cut and restored; on
 * SQLite another connection holds the write lock beyond the busy timeout.
 */
import * as net from 'node:net';
import knex from 'knex';
import request from 'supertest';
import type { Express } from 'express';
import { connect, loadSettings, migrateLatest, type Db } from '../../runtime';
import { RETRY_AFTER_SECONDS } from '../../runtime/core/errors';
import { DatabaseTimeoutError, markConnectionFailure } from '../../runtime/db/dialects/dialect';
import { isConnectionFailure } from '../../runtime/db/driver-errors';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';
import { createUser, takeErrors } from '../support/fixtures';
import { testKeys } from '../support/keys';
import { startBlog, type RunningService } from '../support/services';

const { createService } = require('../../generated/app');
const { migrations } = require('../../generated/migrations');
const { DEFAULT_SETTINGS } = require('../../generated/settings');

const UNAVAILABLE = { detail: 'Service Unavailable' };
const OUTAGE_START = /^database outage: .+; answering 503 Service Unavailable until the database answers again$/;
const OUTAGE_END = /^database outage over after \d+\.\d s; \d+ requests? (was|were) answered 503$/;

/** A TCP proxy on the loopback interface that can be cut (listener closed, every connection destroyed) and restored on the same port. */
class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server?.close(() => resolve()) ?? resolve());
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}

/** The database servers the proxy test runs on: PostgreSQL always, MySQL when the suites run on it. */
const SERVERS: ('postgres' | 'mysql')[] = ['postgres', ...(DIALECTS.includes('mysql') ? (['mysql'] as const) : [])];

describe.each(SERVERS)('a %s outage behind a TCP proxy', (server) => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let db: Db;
  let app: Express;
  const log: unknown[] = [];

  beforeAll(async () => {
    database = await createDatabase(server);
    await migrateLatest(database.db, migrations);
    await database.db('categories').insert({ name: 'Reachable', description: '' });
    const url = new URL(database.url);
    proxy = new TcpProxy({ host: url.hostname, port: Number(url.port || (server === 'mysql' ? 3306 : 5432)) });
    await proxy.start();
    url.port = String(proxy.port);
    db = connect(url.toString(), '');
    ({ app } = createService({
      db,
      keys: testKeys(),
      settings: loadSettings(DEFAULT_SETTINGS, {}),
      logError: (e: unknown) => log.push(e),
    }));
  });
  afterAll(async () => {
    await proxy.cut();
    await db.destroy();
    await database.drop();
  });

  const lines = () => log.map((e) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e)));

  async function expectUnavailable(res: request.Response) {
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['retry-after']).toBe(String(RETRY_AFTER_SECONDS));
    expect(res.body).toEqual(UNAVAILABLE);
  }

  it('serves while the database answers', async () => {
    const res = await request(app).get('/api/categories/');
    expect(res.status).toBe(200);
    expect(res.body.items.map((c: { name: string }) => c.name)).toEqual(['Reachable']);
    expect(lines()).toEqual([]);
  });

  it('answers 503 with Retry-After while the proxy is cut, and logs the outage once', async () => {
    const consoleLines: unknown[] = [];
    const spies = (['log', 'warn', 'error'] as const).map((name) =>
      jest.spyOn(console, name).mockImplementation((...args) => void consoleLines.push(args)),
    );
    try {
      await proxy.cut();
      await duringOutage();
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    // Nothing else reaches the console: the driver's connection errors are not logged per request.
    expect(consoleLines).toEqual([]);
  });

  async function duringOutage() {
    for (let i = 0; i < 5; i++) await expectUnavailable(await request(app).get('/api/categories/'));
    await expectUnavailable(await request(app).get('/api/articles/1/'));
    await expectUnavailable(await request(app).post('/api/auth/login/').send({ username: 'nobody', password: 'pw' }));
    const concurrent = await Promise.all(Array.from({ length: 8 }, () => request(app).get('/api/tags/')));
    for (const res of concurrent) await expectUnavailable(res);
    const ready = await request(app).get('/api/health/ready');
    expect({ status: ready.status, body: ready.body }).toEqual({ status: 503, body: { detail: 'Service Unavailable' } });
    expect(ready.headers['retry-after']).toBe(String(RETRY_AFTER_SECONDS));
    // Liveness does not ask the database: the process still serves.
    expect((await request(app).get('/api/health')).status).toBe(200);
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatch(OUTAGE_START);
    // The cause is the driver's: a new connection refused, or a pooled one the cut closed under the
    // request that took it (PostgreSQL's "Connection terminated", MySQL's PROTOCOL_CONNECTION_LOST).
    expect(lines()[0]).toMatch(server === 'mysql' ? /ECONNREFUSED|PROTOCOL_CONNECTION_LOST/ : /ECONNREFUSED|Connection terminated/);
  }

  it('a request that needs no database is still served', async () => {
    expect((await request(app).get('/api/openapi.json')).status).toBe(200);
    expect((await request(app).get('/api/nowhere')).status).toBe(404);
  });

  it('answers 200 again once the proxy is back, without a restart, and logs the end once', async () => {
    await proxy.start();
    const res = await request(app).get('/api/categories/');
    expect(res.status).toBe(200);
    expect(res.body.items.map((c: { name: string }) => c.name)).toEqual(['Reachable']);
    expect((await request(app).get('/api/health/ready')).status).toBe(200);
    expect(lines()).toHaveLength(2);
    expect(lines()[1]).toMatch(OUTAGE_END);
    expect(lines()[1]).toMatch(/; 16 requests were answered 503$/);
  });

  it('a second outage is logged once again, and recovers again', async () => {
    log.length = 0;
    await proxy.cut();
    for (let i = 0; i < 3; i++) await expectUnavailable(await request(app).get('/api/categories/'));
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatch(OUTAGE_START);
    await proxy.start();
    expect((await request(app).get('/api/categories/')).status).toBe(200);
    expect((await request(app).get('/api/categories/')).status).toBe(200);
    expect(lines()).toHaveLength(2);
    expect(lines()[1]).toMatch(/; 3 requests were answered 503$/);
  });

  it('a failing query that is not a connection failure is still a 500, logged', async () => {
    await database.db.schema.renameTable('tags', 'tags_away');
    try {
      const res = await request(app).get('/api/tags/');
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ detail: 'Internal Server Error' });
      expect(res.headers['retry-after']).toBeUndefined();
    } finally {
      await database.db.schema.renameTable('tags_away', 'tags');
    }
    expect(lines()).toHaveLength(3);
    expect(lines()[2]).toMatch(server === 'mysql' ? /Table '\w+\.tags' doesn't exist/ : /relation "tags" does not exist/);
  });
});

describe('a SQLite file locked beyond the busy timeout', () => {
  let svc: RunningService;
  let locker: Db;
  beforeAll(async () => {
    svc = await startBlog('sqlite');
    locker = knex({
      client: 'better-sqlite3',
      connection: { filename: svc.database.url.slice('sqlite:'.length) },
      useNullAsDefault: true,
      pool: { min: 1, max: 1 },
    });
  });
  afterAll(async () => {
    await locker.destroy();
    await svc.close();
  });

  it('is a 503 with Retry-After, logged once; the write succeeds once the lock is gone', async () => {
    const staff = await createUser(svc, { is_staff: true });
    const trx = await locker.transaction();
    try {
      await trx.raw('insert into categories (name, description) values (?, ?)', ['Held', '']);
      const res = await request(svc.app).post('/api/categories/').set('Authorization', staff.bearer).send({ name: 'Waiting' });
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe(String(RETRY_AFTER_SECONDS));
      expect(res.body).toEqual(UNAVAILABLE);
      const logged = takeErrors(svc);
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatch(OUTAGE_START);
      expect(logged[0]).toMatch(/SQLITE_BUSY/);
    } finally {
      await trx.rollback();
    }
    const res = await request(svc.app).post('/api/categories/').set('Authorization', staff.bearer).send({ name: 'Waiting' });
    expect(res.status).toBe(201);
    const logged = takeErrors(svc);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/^database outage over after \d+\.\d s; 1 request was answered 503$/);
  });
});

describe('isConnectionFailure', () => {
  it.each([
    ['ECONNREFUSED', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })],
    ['ECONNRESET', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['ETIMEDOUT', Object.assign(new Error('connect ETIMEDOUT'), { code: 'ETIMEDOUT' })],
    [
      'a terminated connection under a statement, marked by its client',
      markConnectionFailure(new Error('select 1 - Connection terminated unexpectedly')),
    ],
    [
      'the rollback on a terminated connection, marked by its client',
      markConnectionFailure(new Error('ROLLBACK - Client has encountered a connection error and is not queryable')),
    ],
    ['a statement the server did not answer in time', new DatabaseTimeoutError('the database did not answer within 2000 ms')],
    [
      '57014 query_canceled (the statement timeout)',
      Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
    ],
    ['a pool acquire timeout', Object.assign(new Error('Knex: Timeout acquiring a connection.'), { name: 'KnexTimeoutError' })],
    ['57P01 admin_shutdown', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })],
    [
      '57P02 crash_shutdown',
      Object.assign(new Error('terminating connection because of crash of another server process'), { code: '57P02' }),
    ],
    ['57P03 cannot_connect_now', Object.assign(new Error('the database system is starting up'), { code: '57P03' })],
    ['08006 connection_failure', Object.assign(new Error('connection failure'), { code: '08006' })],
    ['SQLITE_BUSY', Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })],
    ['SQLITE_CANTOPEN', Object.assign(new Error('unable to open database file'), { code: 'SQLITE_CANTOPEN' })],
    ['an AggregateError of refusals', Object.assign(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })], ''), {})],
    ['a cause', new Error('wrapped', { cause: Object.assign(new Error('x'), { code: 'ECONNRESET' }) })],
  ])('%s is one', (_what, err) => {
    expect(isConnectionFailure(err)).toBe(true);
  });

  it.each([
    ['a constraint violation', Object.assign(new Error('duplicate key'), { code: '23505' })],
    ['a syntax error', Object.assign(new Error('syntax error'), { code: '42601' })],
    ['SQLITE_CONSTRAINT', Object.assign(new Error('UNIQUE constraint failed'), { code: 'SQLITE_CONSTRAINT_UNIQUE' })],
    ['a plain error', new Error('exploded')],
    ['a destroyed pool', new Error('Unable to acquire a connection')],
    // Only marks and codes count: the same words in a message prove nothing (a hook's own error may say them).
    ['a message alone', new Error('select 1 - Connection terminated unexpectedly')],
    ['not an error', 'ECONNREFUSED'],
  ])('%s is not', (_what, err) => {
    expect(isConnectionFailure(err)).toBe(false);
  });
});
