/**
 * startServer with a real HTTP server on the loopback interface: graceful shutdown (requests in
 * flight finish with `Connection: close`, idle keep-alive connections close at once, the timeout
 * cuts the rest, signals), JSON answers to requests Node's parser refuses (431, 414, 400), and
 * one-line listen errors.
 */
import * as http from 'node:http';
import * as net from 'node:net';
import express from 'express';
import { ConfigurationError, startServer, type RunningServer } from '../../runtime';
import { errorLine, listenAddress } from '../../runtime/http/server';
import { startBlog, type RunningService } from '../support/services';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function get(port: number, path: string, options: { agent?: http.Agent; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: options.agent ?? false, headers: options.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
  });
}

/** Sends raw bytes and reads the whole answer until the server closes the connection. */
function rawExchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', (err) => (answer ? resolve(answer) : reject(err)));
    socket.write(text);
  });
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/** An app with a request that waits until the test lets it go. */
function slowApp() {
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const app = express();
  app.get('/slow', async (_req, res) => {
    entered();
    await released;
    res.json({ done: true });
  });
  app.get('/fast', (_req, res) => res.json({ fast: true }));
  return { app, inside, release };
}

describe('graceful shutdown', () => {
  const logs: string[] = [];
  const log = (m: string) => logs.push(m);
  afterEach(() => {
    logs.length = 0;
  });

  it('a request in flight completes with 200 and Connection: close; the port stops accepting; onClose runs after it', async () => {
    const { app, inside, release } = slowApp();
    const order: string[] = [];
    const traced: http.RequestListener = (req, res) => {
      res.on('finish', () => order.push('response sent'));
      app(req, res);
    };
    const running = await startServer(traced, { host: '127.0.0.1', port: 0, signals: [], log, onClose: () => void order.push('onClose') });
    const agent = new http.Agent({ keepAlive: true });
    const slow = get(running.port, '/slow', { agent });
    await inside;
    const closed = running.shutdown();
    expect(await refused(running.port)).toBe(true);
    release();
    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body)).toEqual({ done: true });
    await closed;
    await running.closed;
    expect(order).toEqual(['response sent', 'onClose']);
    expect(logs).toEqual(['shutting down: waiting up to 10000 ms for 1 request in flight']);
    agent.destroy();
  });

  it('closes an idle keep-alive connection at once', async () => {
    const { app } = slowApp();
    const running = await startServer(app, { host: '127.0.0.1', port: 0, signals: [], log });
    const agent = new http.Agent({ keepAlive: true });
    const answer = await get(running.port, '/fast', { agent });
    expect(answer.status).toBe(200);
    expect(answer.headers.connection).toBe('keep-alive');
    const sockets = Object.values(agent.freeSockets).flat();
    expect(sockets).toHaveLength(1);
    const clientClosed = new Promise<void>((resolve) => sockets[0]!.once('close', () => resolve()));
    const started = Date.now();
    await running.shutdown();
    await clientClosed;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(logs).toEqual([]);
    agent.destroy();
  });

  it('cuts the requests still in flight after the timeout, then closes', async () => {
    const { app, inside, release } = slowApp();
    let closedPool = false;
    const running = await startServer(app, {
      host: '127.0.0.1',
      port: 0,
      signals: [],
      log,
      shutdownTimeoutMs: 200,
      onClose: () => void (closedPool = true),
    });
    const slow = get(running.port, '/slow').then(
      () => 'answered',
      (err: NodeJS.ErrnoException) => err.code,
    );
    await inside;
    const started = Date.now();
    await running.shutdown();
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await slow).toBe('ECONNRESET');
    expect(closedPool).toBe(true);
    expect(logs).toEqual([
      'shutting down: waiting up to 200 ms for 1 request in flight',
      'shutting down: closing the connections of 1 request in flight after 200 ms',
    ]);
    release();
  });

  it('starts on a signal, settles closed, and leaves no listener behind', async () => {
    const { app } = slowApp();
    const before = process.listenerCount('SIGUSR2');
    const running = await startServer(app, { host: '127.0.0.1', port: 0, signals: ['SIGUSR2'], log });
    expect(process.listenerCount('SIGUSR2')).toBe(before + 1);
    process.emit('SIGUSR2', 'SIGUSR2');
    await running.closed;
    expect(process.listenerCount('SIGUSR2')).toBe(before);
    expect(logs).toEqual(['SIGUSR2: shutting down']);
    expect(await refused(running.port)).toBe(true);
  });

  it('closed rejects when onClose fails', async () => {
    const { app } = slowApp();
    const running = await startServer(app, {
      host: '127.0.0.1',
      port: 0,
      signals: [],
      log,
      onClose: () => Promise.reject(new Error('pool stuck')),
    });
    await expect(running.shutdown()).rejects.toThrow('pool stuck');
  });
});

describe('requests Node refuses before Express, on the blog', () => {
  let svc: RunningService;
  let running: RunningServer;
  beforeAll(async () => {
    svc = await startBlog('sqlite');
    running = await startServer(svc.app, { host: '127.0.0.1', port: 0, signals: [], log: () => undefined });
  });
  afterAll(async () => {
    await running.shutdown();
    await svc.close();
  });

  it('a 100 KB query string → 414 {"detail": "URI Too Long"} in JSON', async () => {
    const answer = await get(running.port, `/api/articles/?title=${'a'.repeat(100 * 1024)}`);
    expect(answer.status).toBe(414);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body)).toEqual({ detail: 'URI Too Long' });
  });

  it('a 12 KB query string (under the parser limit) → 414 from the application', async () => {
    const answer = await get(running.port, `/api/articles/?title=${'a'.repeat(12 * 1024)}`);
    expect(answer.status).toBe(414);
    expect(JSON.parse(answer.body)).toEqual({ detail: 'URI Too Long' });
  });

  it('20 KB of headers → 431 {"detail": "Request Header Fields Too Large"} in JSON', async () => {
    const answer = await get(running.port, '/api/health', { headers: { 'X-Big': 'b'.repeat(20 * 1024) } });
    expect(answer.status).toBe(431);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(answer.body)).toEqual({ detail: 'Request Header Fields Too Large' });
  });

  it('many small headers over the limit → 431', async () => {
    const headers: Record<string, string> = {};
    for (let i = 0; i < 400; i++) headers[`x-h${i}`] = 'v'.repeat(60);
    const answer = await get(running.port, '/api/health', { headers });
    expect(answer.status).toBe(431);
    expect(JSON.parse(answer.body)).toEqual({ detail: 'Request Header Fields Too Large' });
  });

  it('a malformed request → 400 {"detail": "Bad Request"} in JSON', async () => {
    const answer = await rawExchange(running.port, 'NOT HTTP AT ALL\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer).toContain('\r\nContent-Type: application/json; charset=utf-8\r\n');
    expect(answer.endsWith('\r\n\r\n{"detail":"Bad Request"}')).toBe(true);
  });

  it('a header with a NUL byte → 400 in JSON', async () => {
    const answer = await rawExchange(running.port, 'GET /api/health HTTP/1.1\r\nHost: x\r\nX-Nul: a\u0000b\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(answer.endsWith('{"detail":"Bad Request"}')).toBe(true);
  });

  it('still serves ordinary requests', async () => {
    const answer = await get(running.port, '/api/health');
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ status: 'ok' });
  });

  it("sends the headers of an answer once each: the security headers, the request id, the body's, then those Node adds", async () => {
    const answer = await rawExchange(running.port, 'GET /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    const names = answer
      .split('\r\n\r\n')[0]
      .split('\r\n')
      .slice(1)
      .map((line) => line.slice(0, line.indexOf(':')).toLowerCase());
    expect(names.slice(0, 5).sort()).toEqual([
      'content-security-policy',
      'cross-origin-opener-policy',
      'referrer-policy',
      'x-content-type-options',
      'x-frame-options',
    ]);
    expect(names.slice(5)).toEqual(['x-request-id', 'content-type', 'content-length', 'date', 'connection']);
    expect(answer.endsWith('\r\n\r\n{"status":"ok"}')).toBe(true);
  });
});

describe("requests and responses born with the application's prototypes", () => {
  it("an Express app's request and response have its prototypes from the start, and its API works", async () => {
    const app = express();
    app.locals.name = 'probe';
    const seen: { request: boolean; response: boolean; swapped: boolean }[] = [];
    const born = new WeakMap<object, object>();
    app.use((req, res, next) => {
      // What Express's own handling left: the prototype the server made the request with, unchanged.
      seen.push({
        request: Object.getPrototypeOf(req) === app.request,
        response: Object.getPrototypeOf(res) === app.response,
        swapped: born.get(req) !== Object.getPrototypeOf(req),
      });
      next();
    });
    app.get('/probe/:id', (req, res) => {
      res
        .status(201)
        .json({ id: req.params.id, host: req.get('host')?.startsWith('127.0.0.1:'), app: req.app.locals.name, query: req.query });
    });
    const running = await startServer(app, { host: '127.0.0.1', port: 0, signals: [] });
    running.server.prependListener('request', (req: object) => born.set(req, Object.getPrototypeOf(req)));
    try {
      const answer = await get(running.port, '/probe/7?x=1');
      expect(answer.status).toBe(201);
      expect(JSON.parse(answer.body)).toEqual({ id: '7', host: true, app: 'probe', query: { x: '1' } });
      expect(seen).toEqual([{ request: true, response: true, swapped: false }]);
    } finally {
      await running.shutdown();
    }
  });

  it("a plain request listener gets Node's own classes", async () => {
    const running = await startServer((req, res) => res.end(String(Object.getPrototypeOf(req) === http.IncomingMessage.prototype)), {
      host: '127.0.0.1',
      port: 0,
      signals: [],
    });
    try {
      expect((await get(running.port, '/')).body).toBe('true');
    } finally {
      await running.shutdown();
    }
  });
});

describe('starting', () => {
  it('a port in use rejects with one line', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', () => resolve()));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const failed = startServer(express(), { host: '127.0.0.1', port, signals: ['SIGUSR2'] });
      await expect(failed).rejects.toThrow(new Error(`cannot listen on 127.0.0.1:${port}: the address is already in use`));
      expect(process.listenerCount('SIGUSR2')).toBe(0);
    } finally {
      taken.close();
    }
  });

  it('listenAddress reads HOST and PORT, and refuses a bad port', () => {
    expect(listenAddress({})).toEqual({ host: '127.0.0.1', port: 8000 });
    expect(listenAddress({ HOST: '0.0.0.0', PORT: '0' })).toEqual({ host: '0.0.0.0', port: 0 });
    for (const port of ['http', '-1', '65536', '80.5']) {
      expect(() => listenAddress({ PORT: port })).toThrow(ConfigurationError);
      expect(() => listenAddress({ PORT: port })).toThrow(`PORT must be an integer from 0 to 65535, got "${port}"`);
    }
  });

  it('errorLine: one line, with the code when the message lacks it', () => {
    expect(errorLine(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }))).toBe(
      'connect ECONNREFUSED 127.0.0.1:1',
    );
    expect(errorLine(Object.assign(new Error('database "x" does not exist'), { code: '3D000' }))).toBe(
      'database "x" does not exist (3D000)',
    );
    expect(errorLine(new Error('first\nsecond'))).toBe('first');
    expect(errorLine(new AggregateError([Object.assign(new Error('connect ECONNREFUSED ::1:1'), { code: 'ECONNREFUSED' })], ''))).toBe(
      'connect ECONNREFUSED ::1:1',
    );
  });
});
