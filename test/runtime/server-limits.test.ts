/**
 * The server's timeouts and connection cap (SVC_HEADERS_TIMEOUT, SVC_REQUEST_TIMEOUT,
 * SVC_KEEP_ALIVE_TIMEOUT, SVC_MAX_CONNECTIONS), with short settings on a real server: a slow head
 * or body is answered 408 in JSON at its timeout, an idle keep-alive connection is closed, a
 * connection over the cap is closed before it is served.
 */
import * as net from 'node:net';
import express from 'express';
import { ConfigurationError, startServer, type RunningServer } from '../../runtime';
import { DEFAULT_SERVER_LIMITS, serverLimits } from '../../runtime/http/server';
import { startBlog, type RunningService } from '../support/services';

jest.setTimeout(30_000);

interface Exchange {
  answer: string;
  /** Milliseconds from the connection to its close. */
  ms: number;
  error?: string;
}

/**
 * Connects, sends `head` at once, then `trickle` one byte every `everyMs`, and reads until the
 * server closes the connection (or `giveUpMs` passes: then `answer` is what came and error 'open').
 */
function exchange(port: number, head: string, trickle = '', everyMs = 300, giveUpMs = 10_000): Promise<Exchange> {
  return new Promise((resolve) => {
    const start = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    let i = 0;
    const timer = setInterval(() => {
      if (i < trickle.length && socket.writable) socket.write(trickle[i++]);
    }, everyMs);
    const done = (error?: string) => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ answer, ms: Date.now() - start, error });
    };
    const giveUp = setTimeout(() => {
      socket.destroy();
      done('open');
    }, giveUpMs);
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('close', () => done());
    socket.on('error', (err: NodeJS.ErrnoException) => done(err.code));
    if (head) socket.write(head);
  });
}

const REQUEST_TIMEOUT =
  /^HTTP\/1\.1 408 Request Timeout\r\nContent-Type: application\/json; charset=utf-8\r\nContent-Length: 28\r\nConnection: close\r\n\r\n\{"detail":"Request Timeout"\}$/;

describe('server limits from the environment', () => {
  it('default to 10 s for a head, 30 s for a request, 5 s idle, 1000 connections', () => {
    expect(serverLimits({})).toEqual(DEFAULT_SERVER_LIMITS);
    expect(DEFAULT_SERVER_LIMITS).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 1000,
    });
  });

  it('read every variable (seconds)', () => {
    expect(
      serverLimits({ SVC_HEADERS_TIMEOUT: '2', SVC_REQUEST_TIMEOUT: ' 3 ', SVC_KEEP_ALIVE_TIMEOUT: '4', SVC_MAX_CONNECTIONS: '50' }),
    ).toEqual({
      headersTimeoutMs: 2000,
      requestTimeoutMs: 3000,
      keepAliveTimeoutMs: 4000,
      maxConnections: 50,
    });
  });

  it.each([
    [{ SVC_HEADERS_TIMEOUT: '0' }, 'SVC_HEADERS_TIMEOUT must be a positive integer, got "0"'],
    [{ SVC_REQUEST_TIMEOUT: '1.5' }, 'SVC_REQUEST_TIMEOUT must be a positive integer, got "1.5"'],
    [{ SVC_KEEP_ALIVE_TIMEOUT: 'soon' }, 'SVC_KEEP_ALIVE_TIMEOUT must be a positive integer, got "soon"'],
    [{ SVC_MAX_CONNECTIONS: '-1' }, 'SVC_MAX_CONNECTIONS must be a positive integer, got "-1"'],
    [{ SVC_HEADERS_TIMEOUT: '40' }, 'SVC_HEADERS_TIMEOUT (40) must not be over SVC_REQUEST_TIMEOUT (30)'],
  ])('refuse %j', (env, message) => {
    expect(() => serverLimits(env)).toThrow(new ConfigurationError(message));
  });
});

describe('timeouts and the connection cap, on the blog', () => {
  let svc: RunningService;
  let running: RunningServer;
  beforeAll(async () => {
    svc = await startBlog('sqlite');
    running = await startServer(svc.app, {
      host: '127.0.0.1',
      port: 0,
      signals: [],
      log: () => undefined,
      limits: serverLimits({ SVC_HEADERS_TIMEOUT: '1', SVC_REQUEST_TIMEOUT: '2', SVC_KEEP_ALIVE_TIMEOUT: '1', SVC_MAX_CONNECTIONS: '3' }),
    });
  });
  afterAll(async () => {
    await running.shutdown();
    await svc.close();
  });

  it('a head sent one byte at a time → 408 {"detail": "Request Timeout"} at the headers timeout', async () => {
    const res = await exchange(running.port, 'GET /api/health HTTP/1.1\r\nHost: x\r\n', 'X-Slow: ' + 'a'.repeat(100), 300);
    expect(res.answer).toMatch(REQUEST_TIMEOUT);
    expect(res.ms).toBeGreaterThanOrEqual(900);
    expect(res.ms).toBeLessThan(2500);
  });

  it('a body sent one byte at a time → 408 {"detail": "Request Timeout"} at the request timeout', async () => {
    const head = 'POST /api/auth/login/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n';
    const res = await exchange(running.port, head, '{"username": "' + 'a'.repeat(180), 300);
    expect(res.answer).toMatch(REQUEST_TIMEOUT);
    expect(res.ms).toBeGreaterThanOrEqual(1900);
    expect(res.ms).toBeLessThan(3500);
    // The request the application had begun to read ends without an error logged.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(svc.errors).toEqual([]);
  });

  it('a connection that sends nothing is answered 408 at the headers timeout', async () => {
    const res = await exchange(running.port, '');
    expect(res.answer).toMatch(REQUEST_TIMEOUT);
    expect(res.ms).toBeLessThan(2500);
  });

  it('an idle keep-alive connection is closed after the keep-alive timeout, without another answer', async () => {
    const res = await exchange(running.port, 'GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(res.answer).toMatch(
      /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\nConnection: keep-alive\r\nKeep-Alive: timeout=1\r\n[\s\S]*\{"status":"ok"\}$/,
    );
    // Node keeps the connection about a second longer than it announces, so that a client that
    // reuses it at the last moment does not meet a closed one.
    expect(res.ms).toBeGreaterThanOrEqual(900);
    expect(res.ms).toBeLessThan(3500);
  });

  it('a connection over the cap is closed at once, unanswered; once one closes, a new one is served', async () => {
    const held = [0, 1, 2].map(() => net.connect(running.port, '127.0.0.1'));
    await Promise.all(held.map((s) => new Promise((resolve) => s.once('connect', resolve))));
    // The server counts a connection once it has accepted it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const over = await exchange(running.port, 'GET /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(over.answer).toBe('');
    expect(over.ms).toBeLessThan(500);
    held[0].destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const served = await exchange(running.port, 'GET /api/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(served.answer).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\{"status":"ok"\}$/);
    for (const s of held) s.destroy();
  });
});

describe('a timeout of a request whose answer has begun', () => {
  it('closes the connection without a second answer', async () => {
    const app = express();
    // Answers at once, without reading the body the client is still sending.
    app.post('/stream', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('started');
    });
    const running = await startServer(app, {
      host: '127.0.0.1',
      port: 0,
      signals: [],
      shutdownTimeoutMs: 100,
      log: () => undefined,
      limits: serverLimits({ SVC_HEADERS_TIMEOUT: '1', SVC_REQUEST_TIMEOUT: '1', SVC_KEEP_ALIVE_TIMEOUT: '1' }),
    });
    try {
      const head = 'POST /stream HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 200\r\n\r\n';
      const res = await exchange(running.port, head, 'a'.repeat(20), 300);
      expect(res.answer).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n7\r\nstarted\r\n$/);
      expect(res.answer).not.toContain('408');
      expect(res.error).toBeUndefined();
      expect(res.ms).toBeLessThan(3500);
    } finally {
      await running.shutdown();
    }
  });
});
