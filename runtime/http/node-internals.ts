/**
 * What the runtime assumes about Node's HTTP server beyond its documented API, in one place (the
 * `engines` field of `package.json` names the Node versions). `test/runtime/node-internals.test.ts`
 * checks every assumption below against the running Node and names this file when one breaks.
 */
import { createHook } from 'node:async_hooks';
import * as http from 'node:http';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * An `IncomingMessage` gets its own count of event listeners (`_eventsCount`, from EventEmitter)
 * once the first listener is added, unless its constructor already made one: declared at 0 (what
 * the prototype says) so the request's hidden class does not change when Express listens to it.
 */
export function declareListenerCount(message: http.IncomingMessage): void {
  if (!Object.hasOwn(message, '_eventsCount')) (message as unknown as { _eventsCount: number })._eventsCount = 0;
}

/** The properties Node's server sets on a response after making it: its per-socket request limit. */
export const SERVER_RESPONSE_PROPERTIES = ['_maxRequestsPerSocket'] as const;

/**
 * The key under which Node's server hands each response its `uniqueHeaders` option: a symbol on the
 * server whose description is `kUniqueHeaders`; null when a version of Node has none.
 */
export function uniqueHeadersKey(server: http.Server): symbol | null {
  return Object.getOwnPropertySymbols(server).find((key) => key.description === 'kUniqueHeaders') ?? null;
}

/** The response a server socket is writing (`_httpMessage`), if any: an error on it must not write a second answer. */
export function inFlightResponse(socket: Duplex): { headersSent?: boolean } | undefined {
  return (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
}

/**
 * Gives a response made outside any server (a request sent in process, see mcp.ts) its connection,
 * as Node's server does for each response (`assignSocket`): the response then writes its head and
 * body to `socket` and emits 'finish'; destroying `socket` afterwards makes it emit 'close', as a
 * closed connection does, which the request log and transactions wait for.
 */
export function attachSocket(res: http.ServerResponse, socket: Duplex): void {
  res.assignSocket(socket as Socket);
}

/**
 * The key under which a response keeps the headers set on it (`kOutHeaders`): an object mapping
 * each lower-case name to `[name, value]`, null until the first `setHeader`; null when a version of
 * Node keeps them otherwise.
 */
export const OUT_HEADERS_KEY: symbol | null = (() => {
  const res = new http.ServerResponse(new http.IncomingMessage(new Socket()));
  res.setHeader('X-Probe', '1');
  const key = Object.getOwnPropertySymbols(res).find((k) => k.description === 'kOutHeaders');
  const headers = key && (res as unknown as Record<symbol, unknown>)[key];
  return headers && typeof headers === 'object' && (headers as Record<string, unknown>)['x-probe'] !== undefined ? key! : null;
})();

/** The prototype of the header objects `outHeaders` makes: nothing to inherit, no `__proto__` setter. */
const HEADERS_PROTOTYPE: object = Object.freeze(Object.create(null));

/** The headers of a response as Node keeps them: each under its lower-case name, as `[name, value]`. */
export type OutHeaders = Record<string, [string, string | number]>;

/**
 * The object `res` keeps its headers in (`OUT_HEADERS_KEY`), for a caller that sets headers it has
 * checked (a name that is a token, a value of visible ASCII characters or a number) without
 * `setHeader` checking them again: `headers['x-name'] = ['x-name', value]`, a new array each time
 * (Node's `appendHeader` adds to the array it finds). Undefined when the head is sent, or where Node
 * keeps headers otherwise: then `setHeader`.
 *
 * A response that has no header yet is given an ordinary object, where `setHeader` would make one
 * without a prototype, which the engine stores as a hash table and enumerates the slow way when the
 * head is written. Set with literal names, in one order, the headers of every response share one
 * hidden class, and each of those stores is a single check of it.
 */
export function outHeaders(res: http.ServerResponse): OutHeaders | undefined {
  const key = OUT_HEADERS_KEY;
  if (!key || res.headersSent) return undefined;
  const target = res as unknown as Record<symbol, OutHeaders | null>;
  return target[key] ?? (target[key] = Object.create(HEADERS_PROTOTYPE) as OutHeaders);
}

/** The queued callback `holdTickShape` keeps alive. */
let heldTick: object | undefined;

/**
 * Keeps one of the objects `process.nextTick` queues alive for the life of the process, so that
 * every later one gets the same hidden classes, and returns it.
 *
 * `nextTick` makes each callback it queues an object literal whose first two keys are symbols (its
 * async ids). V8 remembers, for each of those two keys, the one hidden class it saw the object have
 * there; on seeing another it gives up and defines them the slow way, in the runtime, from then on.
 * Another class is what a service gets when the engine's memory reducer collects while it is idle
 * after its start (it does once the start has loaded the application and its database client, before
 * the first request): with no callback queued, none is alive, the collector drops their classes, and
 * the next callback is given new ones. Every request queues several: a health check took 18 µs of
 * CPU instead of 14 from the first request on. One object kept alive keeps its classes and their
 * transitions alive. It is caught by an async hook enabled for one `nextTick`.
 */
export function holdTickShape(): object | undefined {
  if (heldTick) return heldTick;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject' && heldTick === undefined) heldTick = resource as object;
    },
  }).enable();
  try {
    process.nextTick(() => undefined);
  } finally {
    hook.disable();
  }
  return heldTick;
}
