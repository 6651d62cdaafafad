/**
 * Request logs: one JSON line per request with its id, route pattern, status and user; the id
 * echoed in `X-Request-Id` and carried by error lines; never a password or a token.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import express from 'express';
import request from 'supertest';
import {
  ConfigurationError,
  connect,
  createApi,
  createLogger,
  loadSettings,
  startServer,
  type Logger,
  type RunningServer,
} from '../../runtime';
import { logLevelOf, newUuid, requestLine } from '../../runtime/http/logging';
import { DIALECTS } from '../support/databases';
import { testKeys } from '../support/keys';
import { startBlog, type RunningService } from '../support/services';
import { FROM_SOURCES } from '../support/from-sources';

const { createService } = require('../../generated/app');
const { DEFAULT_SETTINGS } = require('../../generated/settings');

const root = path.resolve(__dirname, '../..');

type Line = Record<string, unknown>;

/** A logger at `level` whose lines are kept, as written, in `raw` and parsed in `lines`. */
function capture(level = 'info'): { logger: Logger; lines: Line[]; raw: string[] } {
  const raw: string[] = [];
  const lines: Line[] = [];
  const logger = createLogger(
    { SVC_LOG_LEVEL: level },
    {
      write(text: string) {
        raw.push(text);
        lines.push(JSON.parse(text));
      },
    },
  );
  return { logger, lines, raw };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('newUuid', () => {
  it('gives random version 4 UUIDs, each one once, across the draws of their random bytes', () => {
    const ids = Array.from({ length: 1000 }, () => newUuid());
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
    // Random bits: each of the 30 hex digits that are neither the version nor the variant takes
    // all 16 values over a thousand ids (missing one has a chance of about 10^-27).
    for (const at of [0, 7, 9, 12, 15, 16, 17, 20, 24, 35]) expect(new Set(ids.map((id) => id[at])).size).toBe(16);
    expect(new Set(ids.map((id) => id[19]))).toEqual(new Set(['8', '9', 'a', 'b']));
  });
});

describe('SVC_LOG_LEVEL', () => {
  it('defaults to info and refuses unknown levels', () => {
    expect(logLevelOf({})).toBe('info');
    expect(logLevelOf({ SVC_LOG_LEVEL: 'WARN' })).toBe('warn');
    expect(() => logLevelOf({ SVC_LOG_LEVEL: 'verbose' })).toThrow(
      new ConfigurationError('SVC_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"'),
    );
  });
});

describe('output', () => {
  const print = (env: Record<string, string>) =>
    spawnSync(
      process.execPath,
      [...FROM_SOURCES, '-e', "require('./runtime').createLogger().info({ reqId: 'r-1', status: 200 }, 'request')"],
      {
        cwd: root,
        env: { ...process.env, SVC_LOG_LEVEL: 'info', ...env },
        encoding: 'utf8',
      },
    ).stdout;

  it('goes out whole and in order: lines of one turn together, the rest at exit, also when the process exits at once', () => {
    // 300 lines of ~100 bytes, some of them with characters of 2 and 4 bytes in UTF-8, and one of 3
    // times the 4 KiB of a write: more than one write, one line written alone, and process.exit right after.
    const script =
      "const log = require('./runtime').createLogger(); const pad = (i) => i === 150 ? 'é'.repeat(6000) : i % 3 === 0 ? 'x'.repeat(40) : i % 3 === 1 ? 'é'.repeat(20) : '😀'.repeat(10);" +
      " for (let i = 0; i < 300; i++) log.info({ n: i, pad: pad(i) }, 'line'); process.exit(0)";
    const { stdout } = spawnSync(process.execPath, [...FROM_SOURCES, '-e', script], {
      cwd: root,
      env: { ...process.env, SVC_LOG_LEVEL: 'info', NODE_ENV: 'production' },
      encoding: 'utf8',
    });
    const lines = stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { n: number; pad: string });
    expect(lines.map((l) => l.n)).toEqual([...Array(300).keys()]);
    const pad = (i: number) =>
      i === 150 ? 'é'.repeat(6000) : i % 3 === 0 ? 'x'.repeat(40) : i % 3 === 1 ? 'é'.repeat(20) : '😀'.repeat(10);
    expect(lines.map((l) => l.pad)).toEqual([...Array(300).keys()].map(pad));
  });

  it('goes out whole and in order to a file too, where it is written in larger batches', () => {
    // 2,000 lines of ~100 bytes into a file: batches of up to 64 KiB, and process.exit right after.
    const script =
      "const log = require('./runtime').createLogger(); for (let i = 0; i < 2000; i++) log.info({ n: i, pad: 'x'.repeat(40) }, 'line'); process.exit(0)";
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-log-'));
    const file = path.join(dir, 'out.log');
    const fd = fs.openSync(file, 'w');
    try {
      spawnSync(process.execPath, [...FROM_SOURCES, '-e', script], {
        cwd: root,
        env: { ...process.env, SVC_LOG_LEVEL: 'info', NODE_ENV: 'production' },
        stdio: ['ignore', fd, 'inherit'],
      });
    } finally {
      fs.closeSync(fd);
    }
    const lines = fs
      .readFileSync(file, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { n: number });
    fs.rmSync(dir, { recursive: true, force: true });
    expect(lines.map((l) => l.n)).toEqual([...Array(2000).keys()]);
  });

  it("counts a request line's bytes from its parts: the batches to stdout stay within their size", () => {
    const lines = [
      requestLine('r-1', 'GET', '/api/articles/:pk/', 200, 1.25, 7),
      requestLine('0f8a3c1e-1b2c-4d5e-8f90-a1b2c3d4e5f6', 'DELETE', undefined, 0, 0, undefined),
      // Characters of 2, 3 and 4 bytes in UTF-8, and escapes, in the route and a user id that is a string.
      requestLine('r-2', 'PATCH', '/api/cafés/:pk/€"\\', 409, 12.5, 'ü-😀-"\n'),
      requestLine('r-3', 'GET', '/api/€', 200, 3, '\u00e9\ud800'),
    ];
    for (const { line, bytes } of lines) {
      expect(bytes).toBe(Buffer.byteLength(line));
      expect(line.endsWith('}\n')).toBe(true);
    }
    const { time, ...fields } = JSON.parse(lines[2].line);
    expect(new Date(time).toISOString()).toBe(time);
    expect(fields).toEqual({
      level: 30,
      reqId: 'r-2',
      method: 'PATCH',
      route: '/api/cafés/:pk/€"\\',
      status: 409,
      durationMs: 12.5,
      userId: 'ü-😀-"\n',
      msg: 'request',
    });
    expect(Object.keys(JSON.parse(lines[1].line))).toEqual(['level', 'time', 'reqId', 'method', 'status', 'durationMs', 'msg']);
  });

  it("writes a line's time as toISOString writes it, the milliseconds padded, across seconds and days", () => {
    const instants = [
      '2026-11-27T08:32:05.000Z',
      '2026-11-27T08:32:05.007Z',
      '2026-11-27T08:32:05.050Z',
      '2026-11-27T08:32:05.999Z',
      '2026-11-27T08:32:06.000Z',
    ];
    const more = [Date.UTC(2026, 11, 31, 23, 59, 59, 999), Date.UTC(2027, 0, 1), Date.UTC(2028, 1, 29, 12, 0, 0, 42), 0];
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    try {
      for (const at of [...instants.map((t) => Date.parse(t)), ...more]) {
        jest.setSystemTime(at);
        // Twice: the second line of a millisecond shares the first's string.
        for (let i = 0; i < 2; i++)
          expect(JSON.parse(requestLine('r', 'GET', undefined, 200, 1, undefined).line).time).toBe(new Date(at).toISOString());
      }
    } finally {
      jest.useRealTimers();
    }
  });

  it('is one JSON line on stdout, and readable lines with NODE_ENV=development', () => {
    const { time, ...line } = JSON.parse(print({ NODE_ENV: 'production' }));
    expect(line).toEqual({ level: 30, reqId: 'r-1', status: 200, msg: 'request' });
    expect(typeof time).toBe('string');
    // pino-pretty: `[HH:MM:ss.l] INFO: request` and the fields below, indented.
    // eslint-disable-next-line no-control-regex -- the escape sequences of terminal colours
    const pretty = print({ NODE_ENV: 'development', NO_COLOR: '1', FORCE_COLOR: '0' }).replace(/\x1b\[[0-9;]*m/g, '');
    expect(pretty).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: request\n\s+reqId: "r-1"\n\s+status: 200\n$/);
  });
});

describe.each(DIALECTS)('request logs (%s)', (dialect) => {
  let svc: RunningService;
  let log: ReturnType<typeof capture>;

  beforeAll(async () => {
    log = capture();
    svc = await startBlog(dialect, {}, { logger: log.logger });
  });
  afterAll(() => svc.close());
  beforeEach(() => {
    log.lines.length = 0;
    log.raw.length = 0;
  });

  it('logs one line per request with the id from X-Request-Id, echoed in the response', async () => {
    const res = await request(svc.app).get('/api/articles/?page=1').set('X-Request-Id', 'req-42.abc');
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toBe('req-42.abc');
    expect(log.lines).toHaveLength(1);
    const { time, durationMs, ...rest } = log.lines[0];
    expect(rest).toEqual({ level: 30, reqId: 'req-42.abc', method: 'GET', route: '/api/articles/', status: 200, msg: 'request' });
    expect(new Date(time as string).toISOString()).toBe(time);
    expect(typeof durationMs).toBe('number');
  });

  it('logs the route pattern, not the URL, and no route when none matched', async () => {
    await request(svc.app).get('/api/articles/12345/');
    await request(svc.app).get('/api/nowhere/secret-value');
    expect(log.lines.map(({ route, status }) => ({ route, status }))).toEqual([
      { route: '/api/articles/:pk/', status: 404 },
      { route: undefined, status: 404 },
    ]);
    expect(log.raw.join('')).not.toContain('12345');
    expect(log.raw.join('')).not.toContain('secret-value');
  });

  it.each([
    ['too long', 'x'.repeat(129)],
    ['with a space', 'a b'],
    ['with a quote', 'a"b'],
  ])('replaces an X-Request-Id %s with a new UUID', async (_what, given) => {
    const res = await request(svc.app).get('/api/health').set('X-Request-Id', given);
    expect(res.headers['x-request-id']).toMatch(UUID);
    expect(log.lines[0].reqId).toBe(res.headers['x-request-id']);
  });

  it('reads X-Request-Id in any case, and replaces one sent twice with a new UUID', async () => {
    const res = await request(svc.app).get('/api/health').set('x-ReQuest-iD', 'mixed-1');
    expect(res.headers['x-request-id']).toBe('mixed-1');
    expect(log.lines[0].reqId).toBe('mixed-1');
    const server = http.createServer(svc.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const id = await new Promise<string | undefined>((resolve, reject) => {
        // An array is sent as one header line per value.
        const headers = { 'X-Request-Id': ['r-1', 'r-2'] };
        http
          .get({ host: '127.0.0.1', port, path: '/api/health', headers }, (answer) => {
            answer.resume();
            resolve(answer.headers['x-request-id'] as string | undefined);
          })
          .on('error', reject);
      });
      expect(id).toMatch(UUID);
      expect(log.lines[1].reqId).toBe(id);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('gives every request its own id when none is sent', async () => {
    const a = await request(svc.app).get('/api/health');
    const b = await request(svc.app).get('/api/health');
    expect(a.headers['x-request-id']).toMatch(UUID);
    expect(b.headers['x-request-id']).toMatch(UUID);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
    expect(log.lines.map((l) => l.reqId)).toEqual([a.headers['x-request-id'], b.headers['x-request-id']]);
  });

  it('never logs a password, a token or a body; logs the user id of authenticated requests', async () => {
    const password = 'Correct-Horse-42';
    const reg = await request(svc.app).post('/api/auth/register/').send({ username: 'logged', email: 'logged@example.com', password });
    expect(reg.status).toBe(201);
    const login = await request(svc.app).post('/api/auth/login/').send({ username: 'logged', password });
    expect(login.status).toBe(200);
    const wrong = await request(svc.app).post('/api/auth/login/').send({ username: 'logged', password: 'Wrong-Password-1' });
    expect(wrong.status).toBe(401);
    const me = await request(svc.app).get('/api/auth/me/').set('Authorization', `Bearer ${login.body.access_token}`);
    expect(me.status).toBe(200);
    const refresh = await request(svc.app).post('/api/auth/refresh/').send({ refresh_token: login.body.refresh_token });
    expect(refresh.status).toBe(200);
    const bad = await request(svc.app).get('/api/auth/me/').set('Authorization', 'Bearer not-a-token-but-secret');
    expect(bad.status).toBe(401);

    expect(log.lines.map(({ route, status, userId }) => ({ route, status, userId }))).toEqual([
      { route: '/api/auth/register/', status: 201, userId: undefined },
      { route: '/api/auth/login/', status: 200, userId: undefined },
      { route: '/api/auth/login/', status: 401, userId: undefined },
      { route: '/api/auth/me/', status: 200, userId: me.body.id },
      { route: '/api/auth/refresh/', status: 200, userId: undefined },
      { route: '/api/auth/me/', status: 401, userId: undefined },
    ]);
    const text = log.raw.join('');
    for (const secret of [
      password,
      'Wrong-Password-1',
      'not-a-token-but-secret',
      reg.body.access_token,
      reg.body.refresh_token,
      login.body.access_token,
      login.body.refresh_token,
      refresh.body.access_token,
      refresh.body.refresh_token,
      'logged@example.com',
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  it('writes the request line as pino writes the same fields, with and without a route and a user', async () => {
    await request(svc.app)
      .post('/api/auth/register/')
      .send({ username: 'layout', email: 'layout@example.com', password: 'Correct-Horse-42' });
    const login = await request(svc.app).post('/api/auth/login/').send({ username: 'layout', password: 'Correct-Horse-42' });
    const me = await request(svc.app).get('/api/auth/me/').set('Authorization', `Bearer ${login.body.access_token}`);
    log.lines.length = 0;
    log.raw.length = 0;
    await request(svc.app)
      .get('/api/auth/me/')
      .set('Authorization', `Bearer ${login.body.access_token}`)
      .set('X-Request-Id', 'a/b+c=d@e:f');
    await request(svc.app).get('/api/nowhere/');
    const written = [...log.raw];
    expect(written).toHaveLength(2);
    expect(log.lines[0]).toMatchObject({ reqId: 'a/b+c=d@e:f', route: '/api/auth/me/', userId: me.body.id });
    expect(log.lines[1]).not.toHaveProperty('route');
    // The same fields through pino itself: the lines differ in nothing but their time.
    for (const line of [...log.lines]) {
      const { level, time, msg, ...fields } = line;
      log.logger.info(fields, msg as string);
    }
    const untimed = (text: string) => text.replace(/"time":"[^"]*"/, '"time":""');
    expect(log.raw.slice(2).map(untimed)).toEqual(written.map(untimed));
    expect(written.every((text) => text.endsWith('}\n'))).toBe(true);
  });
});

describe("request logs through the service's own server", () => {
  // Served by startServer rather than supertest's own server: the same lines.
  let svc: RunningService;
  let running: RunningServer;
  let log: ReturnType<typeof capture>;
  beforeAll(async () => {
    log = capture();
    svc = await startBlog('sqlite', {}, { logger: log.logger });
    running = await startServer(svc.app, { host: '127.0.0.1', port: 0, signals: [], log: () => undefined });
  });
  afterAll(async () => {
    await running.shutdown();
    await svc.close();
  });

  it('logs one line per request, and one for a request whose client left while its body was read (the 400 the body parser answered)', async () => {
    const res = await fetch(`http://127.0.0.1:${running.port}/api/articles/?page=1`, { headers: { 'X-Request-Id': 'served-1' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('served-1');
    await res.text();
    // A body that never ends: the request is in flight when its connection closes.
    const socket = net.connect(running.port, '127.0.0.1');
    await new Promise((resolve) => socket.on('connect', resolve));
    socket.write(
      'POST /api/auth/login/ HTTP/1.1\r\nHost: x\r\nX-Request-Id: cut-1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"user',
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.destroy();
    for (let i = 0; i < 100 && log.lines.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 50)); // no second line for either
    expect(log.lines.map(({ time, durationMs, ...rest }) => rest)).toEqual([
      { level: 30, reqId: 'served-1', method: 'GET', route: '/api/articles/', status: 200, msg: 'request' },
      { level: 30, reqId: 'cut-1', method: 'POST', route: '/api/auth/login/', status: 400, msg: 'request' },
    ]);
  });
});

describe('error lines carry the request id', () => {
  it('logs an unhandled error with its stack and the request id, and answers 500', async () => {
    const log = capture();
    const db = connect('sqlite::memory:', '');
    const app = createApi({
      title: 'T',
      version: '1',
      basePath: '/api',
      settings: loadSettings(DEFAULT_SETTINGS, {}),
      db,
      logger: log.logger,
      routes: [
        {
          method: 'get',
          path: '/boom/',
          handlers: [
            () => {
              throw new Error('kaboom');
            },
          ],
        },
      ],
    });
    const res = await request(app).get('/api/boom/').set('X-Request-Id', 'boom-1');
    await db.destroy();
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ detail: 'Internal Server Error' });
    const [error, line] = log.lines;
    expect(error).toMatchObject({ level: 50, reqId: 'boom-1', msg: 'unhandled error', err: { type: 'Error', message: 'kaboom' } });
    expect((error.err as { stack: string }).stack).toMatch(/^Error: kaboom\n\s+at /);
    expect(line).toMatchObject({ level: 30, reqId: 'boom-1', route: '/api/boom/', status: 500, msg: 'request' });
  });

  it('logs the start of a database outage with the id of the request that met it', async () => {
    const log = capture();
    const db = connect('postgres://postgres@127.0.0.1:1/nothing', '');
    const { app } = createService({ db, keys: testKeys(), settings: loadSettings(DEFAULT_SETTINGS, {}), logger: log.logger });
    const res = await request(app).get('/api/categories/').set('X-Request-Id', 'outage-1');
    await db.destroy();
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ detail: 'Service Unavailable' });
    expect(log.lines[0]).toMatchObject({ level: 50, reqId: 'outage-1' });
    expect(log.lines[0].msg).toMatch(/^database outage: .*ECONNREFUSED/);
    expect(log.lines[1]).toMatchObject({ reqId: 'outage-1', route: '/api/categories/', status: 503 });
  });

  it('logs nothing below the level: warn keeps the errors, not the request lines', async () => {
    const log = capture('warn');
    const db = connect('sqlite::memory:', '');
    const app = express();
    app.use(
      createApi({
        title: 'T',
        version: '1',
        basePath: '',
        settings: loadSettings(DEFAULT_SETTINGS, {}),
        db,
        logger: log.logger,
        routes: [],
      }),
    );
    expect((await request(app).get('/nothing')).status).toBe(404);
    await db.destroy();
    expect(log.lines).toEqual([]);
  });
});
