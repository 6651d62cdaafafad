/**
 * The blog's entry point as a process (generated/main.ts, transpiled on load): start-up failures
 * print one line on stderr and exit non-zero (port in use, database unreachable, bad settings), and
 * SIGTERM drains the requests in flight, closes idle keep-alive connections at once and exits 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import knex from 'knex';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';
import { testKeys } from '../support/keys';
import { FROM_SOURCES } from '../support/from-sources';

const root = path.resolve(__dirname, '../..');

jest.setTimeout(60_000);

interface ServiceProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the output once it matches `pattern`; rejects after `ms` or when the process exits first. */
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children: ChildProcess[] = [];
let dir: string;
let keyEnv: Record<string, string>;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-lifecycle-'));
  const keys = testKeys();
  fs.writeFileSync(path.join(dir, 'private.pem'), keys.privateKey);
  fs.writeFileSync(path.join(dir, 'public.pem'), keys.publicKey);
  keyEnv = { SVC_JWT_PRIVATE_KEY_FILE: path.join(dir, 'private.pem'), SVC_JWT_PUBLIC_KEY_FILE: path.join(dir, 'public.pem') };
});

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function start(env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, [...FROM_SOURCES, path.join(root, 'generated/main.ts')], {
    cwd: dir,
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...keyEnv, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  const listeners = new Set<() => void>();
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    for (const l of listeners) l();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      for (const l of listeners) l();
      resolve({ code, signal });
    }),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor(pattern, ms = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = out.match(pattern);
          if (m) done(() => resolve(m));
          else if (child.exitCode !== null || child.signalCode !== null)
            done(() => reject(new Error(`exited before ${pattern}: ${out}${err}`)));
        };
        const timer = setTimeout(() => done(() => reject(new Error(`no ${pattern} after ${ms} ms: ${out}${err}`))), ms);
        const done = (fn: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          fn();
        };
        listeners.add(check);
        check();
      });
    },
  };
}

async function listening(service: ServiceProcess): Promise<number> {
  const m = await service.waitFor(/Blog API listening on http:\/\/127\.0\.0\.1:(\d+)\/api /);
  return Number(m[1]);
}

function get(
  port: number,
  urlPath: string,
  agent: http.Agent,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: urlPath, agent }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      })
      .on('error', reject);
  });
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
  });
}

const sqliteUrl = (name: string) => `sqlite:${path.join(dir, `${name}.sqlite3`)}`;

describe('start-up failures: one line on stderr, exit 1', () => {
  it('the port is already taken', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const service = start({ DATABASE_URL: sqliteUrl('taken'), PORT: String(port) });
      expect(await service.exited).toEqual({ code: 1, signal: null });
      expect(service.stderr()).toBe(`cannot listen on 127.0.0.1:${port}: the address is already in use\n`);
      expect(service.stdout()).not.toContain('listening');
    } finally {
      taken.close();
    }
  });

  it('the database is unreachable', async () => {
    const service = start({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' });
    expect(await service.exited).toEqual({ code: 1, signal: null });
    expect(service.stderr()).toBe('cannot open the database: connect ECONNREFUSED 127.0.0.1:1\n');
  });

  it.each([
    ['SVC_SHUTDOWN_TIMEOUT', 'soon', 'configuration error: SVC_SHUTDOWN_TIMEOUT must be a positive integer, got "soon"'],
    ['PORT', 'http', 'configuration error: PORT must be an integer from 0 to 65535, got "http"'],
    ['SVC_DOCS', 'hidden', 'configuration error: SVC_DOCS must be one of public, off, staff, got "hidden"'],
    ['SVC_SECURITY_HEADERS', 'some', 'configuration error: SVC_SECURITY_HEADERS must be true or false, got "some"'],
    ['SVC_REQUEST_TIMEOUT', '5', 'configuration error: SVC_HEADERS_TIMEOUT (10) must not be over SVC_REQUEST_TIMEOUT (5)'],
    ['SVC_MAX_CONNECTIONS', 'many', 'configuration error: SVC_MAX_CONNECTIONS must be a positive integer, got "many"'],
    [
      'DATABASE_URL',
      'oracle://db',
      'cannot open the database: DATABASE_URL must start with sqlite:, postgres:// or mysql://, got "oracle://db"',
    ],
  ])('a bad %s', async (name, value, line) => {
    const service = start({ DATABASE_URL: sqliteUrl('settings'), [name]: value });
    expect(await service.exited).toEqual({ code: 1, signal: null });
    expect(service.stderr()).toBe(`${line}\n`);
  });
});

describe('SIGTERM', () => {
  it('with an idle keep-alive connection open: exits 0 at once', async () => {
    const service = start({ DATABASE_URL: sqliteUrl('idle') });
    const port = await listening(service);
    const agent = new http.Agent({ keepAlive: true });
    const answer = await get(port, '/api/health', agent);
    expect(answer.status).toBe(200);
    expect(answer.headers.connection).toBe('keep-alive');
    expect(Object.values(agent.freeSockets).flat()).toHaveLength(1);
    const sent = Date.now();
    service.child.kill('SIGTERM');
    expect(await service.exited).toEqual({ code: 0, signal: null });
    // The keep-alive timeout is 5 s: the exit must not wait for it.
    expect(Date.now() - sent).toBeLessThan(2000);
    expect(service.stdout()).toContain('SIGTERM: shutting down\n');
    expect(service.stderr()).toBe('');
    agent.destroy();
  });

  describe('with a request in flight (PostgreSQL)', () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createDatabase('postgres');
    });
    afterAll(() => database.drop());

    it('stops accepting, completes the request with 200 and Connection: close, then exits 0', async () => {
      const service = start({ DATABASE_URL: database.url });
      const port = await listening(service);
      const agent = new http.Agent({ keepAlive: true });
      expect((await get(port, '/api/categories/', agent)).headers.connection).toBe('keep-alive');

      // Hold the categories table so the next list waits on the lock.
      const trx = await database.db.transaction();
      let answer: Awaited<ReturnType<typeof get>>;
      try {
        await trx.raw('lock table categories in access exclusive mode');
        const pending = get(port, '/api/categories/', agent);
        let waiting = 0;
        for (let i = 0; i < 400 && waiting === 0; i++) {
          await new Promise((r) => setTimeout(r, 25));
          const [row] = await database
            .db('pg_stat_activity')
            .where({ datname: database.db.raw('current_database()'), wait_event_type: 'Lock' })
            .count({ n: '*' });
          waiting = Number(row.n);
        }
        // The list's count and page queries both wait.
        expect(waiting).toBeGreaterThan(0);

        service.child.kill('SIGTERM');
        await service.waitFor(/shutting down: waiting up to 10000 ms for 1 request in flight\n/);
        expect(await refused(port)).toBe(true);
        await trx.commit();
        answer = await pending;
      } finally {
        if (!trx.isCompleted()) await trx.rollback();
      }
      expect(answer.status).toBe(200);
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body)).toEqual({ items: [], count: 0 });
      expect(await service.exited).toEqual({ code: 0, signal: null });
      expect(service.stderr()).toBe('');
      agent.destroy();
    });
  });
});

function post(port: number, urlPath: string, body: unknown): Promise<{ status: number; body: string }> {
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: urlPath,
        method: 'POST',
        agent: false,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

describe.each(DIALECTS)('SIGTERM under 100 concurrent registrations (%s)', (dialect) => {
  let database: TestDatabase | undefined;
  afterAll(() => database?.drop());

  it('every request is answered or wrote nothing: the users in the database are exactly those answered 201', async () => {
    let url = sqliteUrl(`drain-${process.pid}`);
    if (dialect !== 'sqlite') {
      database = await createDatabase(dialect);
      url = database.url;
    }
    // One second of drain, then one more for the transactions in flight.
    // A hundred accounts from one address: past the registration throttle's default, which is not what is tested here.
    const service = start({ DATABASE_URL: url, SVC_SHUTDOWN_TIMEOUT: '1', SVC_REGISTRATIONS_PER_ADDRESS: '1000' });
    const port = await listening(service);
    const names = Array.from({ length: 100 }, (_, i) => `drain${i}`);
    let answered = 0;
    let firstAnswer!: () => void;
    const first = new Promise<void>((resolve) => (firstAnswer = resolve));
    const requests = names.map((username) =>
      post(port, '/api/auth/register/', { username, email: `${username}@example.com`, password: 'long enough' }).finally(() => {
        answered += 1;
        firstAnswer();
      }),
    );
    // bcrypt makes each registration slow: once the first is answered, the others are in flight.
    await first;
    service.child.kill('SIGTERM');
    const outcomes = await Promise.allSettled(requests);
    expect(await service.exited).toEqual({ code: 0, signal: null });
    expect(service.stderr()).toBe('');

    const statuses = outcomes.map((o) => (o.status === 'fulfilled' ? o.value.status : 'cut'));
    const created = names.filter((_, i) => statuses[i] === 201);
    // Every answer is a 201, or the 503 of a transaction refused once the drain was over.
    for (const [i, outcome] of outcomes.entries()) {
      if (outcome.status === 'fulfilled' && outcome.value.status !== 201) {
        expect({ status: outcome.value.status, body: JSON.parse(outcome.value.body) }).toEqual({
          status: 503,
          body: { detail: 'Service Unavailable' },
        });
      }
      expect(statuses[i] === 201 || statuses[i] === 503 || statuses[i] === 'cut').toBe(true);
    }
    // The drain was over before every registration was: some were cut or refused.
    expect(created.length).toBeGreaterThan(0);
    expect(created.length).toBeLessThan(names.length);
    expect(service.stdout()).toMatch(/shutting down: closing the connections of \d+ requests? in flight after 1000 ms/);

    const db =
      dialect !== 'sqlite'
        ? database!.db
        : knex({ client: 'better-sqlite3', connection: { filename: url.slice('sqlite:'.length) }, useNullAsDefault: true });
    try {
      const rows: string[] = await db('users').whereIn('username', names).pluck('username');
      // Answered 201 = in the database; no row whose request was cut or refused.
      expect(rows.sort()).toEqual(created.sort());
    } finally {
      if (dialect === 'sqlite') await db.destroy();
    }
    expect(answered).toBe(names.length);
  });
});
