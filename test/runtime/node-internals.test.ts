/**
 * The assumptions of runtime/http/node-internals.ts, checked against the running Node. Each failure
 * names the module and the assumption: a Node upgrade that breaks one shows here.
 */
import { spawnSync } from 'node:child_process';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import {
  attachSocket,
  declareListenerCount,
  holdTickShape,
  inFlightResponse,
  OUT_HEADERS_KEY,
  outHeaders,
  SERVER_RESPONSE_PROPERTIES,
  uniqueHeadersKey,
} from '../../runtime/http/node-internals';
import { ServiceResponse } from '../../runtime/http/server';
import { FROM_SOURCES } from '../support/from-sources';

const MODULE = 'runtime/http/node-internals.ts';

function holds(assumption: string, found: unknown, expected: unknown): void {
  expect({ module: MODULE, assumption, found }).toEqual({ module: MODULE, assumption, found: expected });
}

/** Serves one request on a plain Node server and hands `inspect` the server, request and response. */
async function serveOne<T>(inspect: (server: http.Server, req: http.IncomingMessage, res: http.ServerResponse) => T): Promise<T> {
  let seen: T | undefined;
  const server = http.createServer((req, res) => {
    seen = inspect(server, req, res);
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  return seen!;
}

describe(`${MODULE}: Node's HTTP server`, () => {
  it('a message gets its own _eventsCount with its first listener, unless declared; declared, it stays one property', () => {
    const plain = new http.IncomingMessage(new net.Socket());
    const before = Object.keys(plain);
    plain.on('data', () => undefined);
    holds('the first listener adds _eventsCount', Object.keys(plain).filter((k) => !before.includes(k)), ['_eventsCount']);
    const declared = new http.IncomingMessage(new net.Socket());
    declareListenerCount(declared);
    const keys = Object.keys(declared);
    declared.on('data', () => undefined);
    holds('declared at 0, a listener adds no property', [keys.includes('_eventsCount'), Object.keys(declared).length === keys.length], [true, true]);
  });

  it('the server sets SERVER_RESPONSE_PROPERTIES and its uniqueHeaders key on each response after making it', async () => {
    const seen = await serveOne((server, _req, res) => {
      const key = uniqueHeadersKey(server);
      const made = Object.keys(new ServiceResponse(new http.IncomingMessage(new net.Socket())));
      return {
        key: typeof key,
        keyOnResponse: key !== null && Object.getOwnPropertySymbols(res).includes(key),
        set: SERVER_RESPONSE_PROPERTIES.filter((p) => Object.hasOwn(res, p)),
        declared: SERVER_RESPONSE_PROPERTIES.filter((p) => made.includes(p)),
      };
    });
    holds('a server has a kUniqueHeaders symbol', seen.key, 'symbol');
    holds('a response gets it', seen.keyOnResponse, true);
    holds('the server sets these on a response', seen.set, [...SERVER_RESPONSE_PROPERTIES]);
    holds('ServiceResponse declares them', seen.declared, [...SERVER_RESPONSE_PROPERTIES]);
  });

  it('a socket names the response it is writing (_httpMessage)', async () => {
    const same = await serveOne((_server, req, res) => inFlightResponse(req.socket) === res);
    holds('inFlightResponse(socket) is the response being served', same, true);
  });

  it('a response made outside a server writes to the socket attached to it, and closes with it', async () => {
    const written: Buffer[] = [];
    const socket = new Duplex({ read() {}, write: (chunk: Buffer, _encoding, callback) => (written.push(chunk), callback()) });
    const res = new http.ServerResponse(new http.IncomingMessage(socket as net.Socket));
    attachSocket(res, socket);
    const events: string[] = [];
    const closed = new Promise<void>((resolve) => res.once('close', () => (events.push('close'), resolve())));
    await new Promise<void>((resolve) => {
      res.once('finish', () => (events.push('finish'), socket.destroy(), resolve()));
      res.end('ok');
    });
    await closed;
    holds('the response writes its head and body to the socket', Buffer.concat(written).toString().endsWith('\r\n\r\nok'), true);
    holds('it emits finish, then close once the socket is destroyed', [events, res.closed], [['finish', 'close'], true]);
  });

  it('a response keeps its headers under OUT_HEADERS_KEY, null until the first; what outHeaders sets there is what setHeader sets', async () => {
    const fresh = new http.ServerResponse(new http.IncomingMessage(new net.Socket()));
    holds('OUT_HEADERS_KEY is found', typeof OUT_HEADERS_KEY, 'symbol');
    holds('a new response has none yet', (fresh as unknown as Record<symbol, unknown>)[OUT_HEADERS_KEY!], null);
    const head = await serveOne((_server, _req, res) => {
      const headers = outHeaders(res)!;
      headers['x-frame-options'] = ['X-Frame-Options', 'DENY'];
      headers['referrer-policy'] = ['Referrer-Policy', 'no-referrer'];
      res.setHeader('Content-Type', 'text/plain');
      const same = outHeaders(res) === headers;
      headers['content-length'] = ['content-length', 2];
      const seen = { same, names: res.getHeaderNames(), frame: res.getHeader('x-frame-options'), length: res.getHeader('Content-Length'), has: res.hasHeader('Referrer-Policy') };
      res.removeHeader('Referrer-Policy');
      res.appendHeader('X-Frame-Options', 'SAMEORIGIN');
      return { ...seen, after: res.getHeaderNames(), frames: res.getHeader('x-frame-options') };
    });
    holds('getHeader, hasHeader and getHeaderNames read them, in the order they were set', [head.same, head.names, head.frame, head.length, head.has], [
      true,
      ['x-frame-options', 'referrer-policy', 'content-type', 'content-length'],
      'DENY',
      2,
      true,
    ]);
    holds('removeHeader removes one; appendHeader adds to one', [head.after, head.frames], [['x-frame-options', 'content-type', 'content-length'], ['DENY', 'SAMEORIGIN']]);
    const sent = await serveOne((_server, _req, res) => {
      res.flushHeaders();
      return outHeaders(res);
    });
    holds('a response whose head is sent has none to set (setHeader throws there)', sent, undefined);
  });

  it.each([
    ['headers set through outHeaders first', true],
    ['headers set through outHeaders after setHeader', false],
  ])('%s are written in the head in the order they were set', async (_name, first) => {
    const server = http.createServer((_req, res) => {
      if (!first) res.setHeader('X-First', '1');
      outHeaders(res)!['x-request-id'] = ['X-Request-Id', 'r-1'];
      res.setHeader('Content-Type', 'text/plain');
      outHeaders(res)!['x-trace'] = ['X-Trace', 'first'];
      outHeaders(res)!['x-trace'] = ['X-Trace', 'second'];
      res.setHeader('X-Gone', '1');
      res.removeHeader('X-Gone');
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.end('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
        let text = '';
        socket.on('data', (chunk) => (text += chunk));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
      const lines = raw.split('\r\n\r\n')[0].split('\r\n').slice(1);
      const set = [...(first ? [] : ['X-First: 1']), 'X-Request-Id: r-1', 'Content-Type: text/plain', 'X-Trace: second'];
      holds('the head lists them in the order they were set, a header set twice once, with its last value', lines.slice(0, set.length), set);
      holds('a removed header is not sent', lines.filter((line) => line.startsWith('X-Gone')), []);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe(`${MODULE}: process.nextTick`, () => {
  it('queues each callback as an object with its two async ids: holdTickShape keeps one, and nextTick works as before', () => {
    const held = holdTickShape();
    const keys = held === undefined ? [] : Reflect.ownKeys(held).map((key) => (typeof key === 'symbol' ? `symbol ${key.description}` : key));
    holds('a TickObject is caught: its callback and arguments, and its two async ids', keys.slice(0, 4), ['callback', 'args', 'symbol async_id_symbol', 'symbol trigger_async_id_symbol']);
    holds('the same one on a second call', holdTickShape(), held);
    let ran = 0;
    return new Promise<void>((resolve) =>
      process.nextTick(() => {
        ran += 1;
        setImmediate(() => {
          holds('nextTick runs callbacks as before, once', ran, 1);
          resolve();
        });
      }),
    );
  });

  it('a callback queued after full collections with none queued has the hidden class of the one held', () => {
    const root = path.resolve(__dirname, '../..');
    const script = `
      const { createHook } = require('node:async_hooks');
      const { holdTickShape } = require(${JSON.stringify(path.join(root, 'runtime/http/node-internals.ts'))});
      const held = holdTickShape();
      const later = () => {
        let caught;
        const hook = createHook({ init(id, type, trigger, resource) { if (type === 'TickObject') caught = resource; } }).enable();
        process.nextTick(() => {});
        hook.disable();
        return caught;
      };
      (async () => {
        for (let i = 0; i < 1000; i++) await new Promise((resolve) => process.nextTick(resolve));
        for (let i = 0; i < 3; i++) { gc(); await new Promise((resolve) => setTimeout(resolve, 10)); }
        console.log(JSON.stringify({ same: %HaveSameMap(held, later()) }));
      })();
    `;
    const run = spawnSync(process.execPath, ['--expose-gc', '--allow-natives-syntax', ...FROM_SOURCES, '-e', script], {
      cwd: root,
      encoding: 'utf8',
    });
    holds('the child ran', [run.status, run.stderr], [0, '']);
    holds('the same hidden class', JSON.parse(run.stdout), { same: true });
  });
});
