/**
 * The database timeouts (SVC_DB_CONNECT_TIMEOUT, SVC_DB_ACQUIRE_TIMEOUT, SVC_DB_STATEMENT_TIMEOUT):
 * a database that does not answer makes requests and readiness answer 503 with Retry-After within
 * the bound the timeouts set, not in the minutes TCP takes to give up, and the service serves again
 * by itself once the database answers. The statement timeout is PostgreSQL's `statement_timeout`
 * sent with each connection's start-up, never a session SET a transaction pooler would lose.
 *
 * The bounds asserted are generous multiples of the timeouts (the machine may be loaded); what they
 * rule out is a request hanging for as long as the database stays silent.
 */
import * as net from 'node:net';
import request from 'supertest';
import type { Express } from 'express';
import { connect, loadSettings, migrateLatest, type Db } from '../../runtime';
import { RETRY_AFTER_SECONDS } from '../../runtime/core/errors';
import {
  ConfigurationError,
  DEFAULT_DATABASE_SETTINGS,
  loadDatabaseSettings,
  loadSqliteSettings,
  type DatabaseSettings,
} from '../../runtime/core/settings';
import { DatabaseTimeoutError } from '../../runtime/db/dialects/dialect';
import { isConnectionFailure } from '../../runtime/db/driver-errors';
import { createDatabase, DIALECTS, pgUrl, type TestDatabase } from '../support/databases';
import { testKeys } from '../support/keys';

const { createService } = require('../../generated/app');
const { migrations } = require('../../generated/migrations');
const { DEFAULT_SETTINGS } = require('../../generated/settings');

const UNAVAILABLE = { detail: 'Service Unavailable' };

/** Short timeouts: a request waits at most acquire + statement + 1 s = 2.5 s for a silent database. */
const SHORT: DatabaseSettings = {
  connectTimeoutMs: 500,
  acquireTimeoutMs: 1000,
  statementTimeoutMs: 500,
  poolMax: 4,
  transactionTimeoutMs: 30_000,
};
/** What the assertions allow: twice the worst case, for a loaded machine. */
const BOUND_MS = 5000;

describe('loadDatabaseSettings', () => {
  it('has defaults', () => {
    expect(loadDatabaseSettings({})).toEqual({
      connectTimeoutMs: 5000,
      acquireTimeoutMs: 5000,
      statementTimeoutMs: 10_000,
      poolMax: 10,
      transactionTimeoutMs: 30_000,
    });
    expect(loadDatabaseSettings({})).toEqual(DEFAULT_DATABASE_SETTINGS);
  });

  it('reads seconds, decimals allowed, and a statement timeout of 0 as none', () => {
    expect(
      loadDatabaseSettings({
        SVC_DB_CONNECT_TIMEOUT: '1.5',
        SVC_DB_ACQUIRE_TIMEOUT: ' 2 ',
        SVC_DB_STATEMENT_TIMEOUT: '0',
        SVC_DB_POOL_MAX: '3',
        SVC_DB_TRANSACTION_TIMEOUT: '0',
      }),
    ).toEqual({ connectTimeoutMs: 1500, acquireTimeoutMs: 2000, statementTimeoutMs: 0, poolMax: 3, transactionTimeoutMs: 0 });
  });

  it.each([
    ['SVC_DB_CONNECT_TIMEOUT', '0', 'SVC_DB_CONNECT_TIMEOUT must be a positive number of seconds, got "0"'],
    ['SVC_DB_ACQUIRE_TIMEOUT', '-1', 'SVC_DB_ACQUIRE_TIMEOUT must be a positive number of seconds, got "-1"'],
    ['SVC_DB_STATEMENT_TIMEOUT', '5s', 'SVC_DB_STATEMENT_TIMEOUT must be a non-negative number of seconds, got "5s"'],
    ['SVC_DB_POOL_MAX', '0', 'SVC_DB_POOL_MAX must be a positive integer, got "0"'],
    ['SVC_DB_TRANSACTION_TIMEOUT', '30s', 'SVC_DB_TRANSACTION_TIMEOUT must be a non-negative number of seconds, got "30s"'],
  ])('refuses %s=%s', (name, value, message) => {
    expect(() => loadDatabaseSettings({ [name]: value })).toThrow(new ConfigurationError(message));
  });
});

/**
 * A TCP server between the service and PostgreSQL that can go silent: while silent it accepts
 * connections and never answers, and drops what either side sends on the connections it already
 * forwards (a partition as the service sees it: nothing refused, nothing answered). Back, it closes
 * the connections whose bytes it dropped and forwards new ones again.
 */
class SilentProxy {
  private readonly server: net.Server;
  private readonly spoilt = new Set<net.Socket>();
  private readonly sockets = new Set<net.Socket>();
  silent = false;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {
    this.server = net.createServer((client) => this.accept(client));
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  private accept(client: net.Socket): void {
    this.track(client);
    if (this.silent) {
      this.spoilt.add(client);
      return;
    }
    const upstream = net.connect(this.target);
    this.track(upstream);
    const forward = (from: net.Socket, to: net.Socket) =>
      from.on('data', (chunk) => {
        if (this.silent) {
          this.spoilt.add(from).add(to);
          return;
        }
        to.write(chunk);
      });
    forward(client, upstream);
    forward(upstream, client);
    for (const [a, b] of [
      [client, upstream],
      [upstream, client],
    ]) {
      a.on('close', () => b.destroy());
      a.on('error', () => b.destroy());
    }
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
  }

  back(): void {
    this.silent = false;
    for (const socket of this.spoilt) socket.destroy();
    this.spoilt.clear();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

async function elapsed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = Date.now();
  const value = await run();
  return { value, ms: Date.now() - start };
}

const postgres = DIALECTS.includes('postgres') ? describe : describe.skip;

postgres('a PostgreSQL server that goes silent', () => {
  let database: TestDatabase;
  let proxy: SilentProxy;
  let db: Db;
  let app: Express;
  const logged: unknown[] = [];

  beforeAll(async () => {
    database = await createDatabase('postgres');
    await migrateLatest(database.db, migrations);
    await database.db('categories').insert({ name: 'Reachable', description: '' });
    // The server itself, also when the suites run through a pooler: the proxy is the path under test.
    const url = new URL(pgUrl(new URL(database.url).pathname.slice(1)));
    proxy = new SilentProxy({ host: url.hostname, port: Number(url.port || 5432) });
    await proxy.start();
    url.port = String(proxy.port);
    db = connect(url.toString(), '', loadSqliteSettings({}), SHORT);
    ({ app } = createService({
      db,
      keys: testKeys(),
      settings: loadSettings(DEFAULT_SETTINGS, {}),
      logError: (e: unknown) => logged.push(e),
    }));
  });
  afterAll(async () => {
    // The outage's start and end only: no request failed as an error of its own (a 500).
    expect(logged.map(String)).toEqual([
      expect.stringMatching(/^database outage: .+; answering 503 Service Unavailable until the database answers again$/),
      expect.stringMatching(/^database outage over after \d+\.\d s; \d+ requests were answered 503$/),
    ]);
    await db.destroy();
    await proxy.close();
    await database.drop();
  });

  function expectUnavailable(res: request.Response) {
    expect({ status: res.status, body: res.body, retryAfter: res.headers['retry-after'] }).toEqual({
      status: 503,
      body: UNAVAILABLE,
      retryAfter: String(RETRY_AFTER_SECONDS),
    });
  }

  it('sends statement_timeout with the start-up of each connection, not as a session SET', async () => {
    const { rows } = await db.raw(
      "select current_setting('statement_timeout') as value, source from pg_settings where name = 'statement_timeout'",
    );
    expect(rows).toEqual([{ value: '500ms', source: 'client' }]);
  });

  it('a statement that runs past the statement timeout is cancelled: a connection failure, a 503', async () => {
    const err = await db.raw('select pg_sleep(3)').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as { code?: string }).code).toBe('57014');
    expect(isConnectionFailure(err)).toBe(true);
  });

  it('serves while the server answers', async () => {
    const res = await request(app).get('/api/categories/');
    expect(res.status).toBe(200);
    expect((await request(app).get('/api/health/ready')).status).toBe(200);
  });

  it('while it is silent, requests on open connections, on new ones and readiness answer 503 within the bound', async () => {
    // Open connections in the pool first, so that some requests meet a connection that was working.
    await Promise.all(Array.from({ length: 4 }, () => request(app).get('/api/categories/')));
    proxy.silent = true;
    const { value: responses, ms } = await elapsed(() =>
      Promise.all([
        ...Array.from({ length: 8 }, () => request(app).get('/api/categories/')),
        request(app).get('/api/health/ready'),
        request(app).get('/api/articles/1/'),
      ]),
    );
    for (const res of responses) expectUnavailable(res);
    expect(ms).toBeLessThan(BOUND_MS);
    const again = await elapsed(() => request(app).get('/api/health/ready'));
    expectUnavailable(again.value);
    expect(again.ms).toBeLessThan(BOUND_MS);
  });

  it('a statement the server does not answer is given up at the statement timeout and a second, its connection closed', async () => {
    const err = await db.raw('select 1').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isConnectionFailure(err)).toBe(true);
    expect(err instanceof DatabaseTimeoutError || (err as { name?: string }).name === 'KnexTimeoutError').toBe(true);
  });

  it('serves again by itself once the server answers', async () => {
    proxy.back();
    const res = await request(app).get('/api/categories/');
    expect(res.status).toBe(200);
    expect(res.body.items.map((c: { name: string }) => c.name)).toEqual(['Reachable']);
    expect((await request(app).get('/api/health/ready')).status).toBe(200);
  });
});

postgres('a PostgreSQL address that accepts connections and never answers', () => {
  let silent: net.Server;
  const held: net.Socket[] = [];
  let db: Db;
  let app: Express;

  beforeAll(async () => {
    silent = net.createServer((socket) => void held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    const { port } = silent.address() as net.AddressInfo;
    db = connect(`postgres://postgres@127.0.0.1:${port}/none`, '', loadSqliteSettings({}), SHORT);
    ({ app } = createService({ db, keys: testKeys(), settings: loadSettings(DEFAULT_SETTINGS, {}), logError: () => undefined }));
  });
  afterAll(async () => {
    await db.destroy();
    for (const socket of held) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it('readiness and requests answer 503 within the bound', async () => {
    const { value: responses, ms } = await elapsed(() =>
      Promise.all([
        request(app).get('/api/health/ready'),
        request(app).get('/api/categories/'),
        request(app).post('/api/auth/login/').send({ username: 'a', password: 'b' }),
      ]),
    );
    for (const res of responses) {
      expect({ status: res.status, body: res.body, retryAfter: res.headers['retry-after'] }).toEqual({
        status: 503,
        body: UNAVAILABLE,
        retryAfter: String(RETRY_AFTER_SECONDS),
      });
    }
    expect(ms).toBeLessThan(BOUND_MS);
  });
});
