/**
 * The assumptions of runtime/http/node-internals.ts, checked against the running Node. Each failure
 * names the module and the assumption: a Node upgrade that breaks one shows here.
 */
import * as http from 'node:http';
import * as net from 'node:net';
import { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { attachSocket, declareListenerCount, inFlightResponse, SERVER_RESPONSE_PROPERTIES, uniqueHeadersKey } from '../../runtime/http/node-internals';
import { ServiceResponse } from '../../runtime/http/server';

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
});
