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

/** The prototype of the header objects `presetHeaders` makes: nothing to inherit, no `__proto__` setter. */
const HEADERS_PROTOTYPE: object = Object.freeze(Object.create(null));

/**
 * Sets the same headers on many responses at once: `preset(res)` gives a response that has no
 * header yet its own copy of `headers` (checked once, here, as `setHeader` checks them) and returns
 * true; a response that has some already is left alone (false: set them one by one).
 *
 * Node keeps a response's headers in an object without a prototype, which the engine stores as a
 * hash table: each `setHeader` inserts into it, and writing the head enumerates it the slow way.
 * The copy is an ordinary object whose properties are added in one order every time, so every
 * response's headers share one hidden class, and what `setHeader` adds later extends it.
 */
export function presetHeaders(headers: readonly (readonly [string, string])[]): (res: http.ServerResponse) => boolean {
  for (const [name, value] of headers) {
    http.validateHeaderName(name);
    http.validateHeaderValue(name, value);
  }
  const key = OUT_HEADERS_KEY;
  if (!key) return () => false;
  const entries = headers.map(([name, value]) => [name.toLowerCase(), [name, value]] as const);
  return (res) => {
    const target = res as unknown as Record<symbol, unknown>;
    if (target[key] !== null) return false;
    const copy = Object.create(HEADERS_PROTOTYPE) as Record<string, unknown>;
    for (let i = 0; i < entries.length; i++) copy[entries[i][0]] = entries[i][1];
    target[key] = copy;
    return true;
  };
}

/**
 * A setter of the header `name` (checked once, here) for values the caller has checked (visible
 * ASCII characters, or a number): straight into the response's headers, without `setHeader`
 * checking them again. The first header of a response makes its headers an ordinary object, as
 * `presetHeaders` does (where `setHeader` would make the engine's hash table). On a response whose
 * head is sent, or where Node keeps its headers otherwise, it is `setHeader`.
 */
export function checkedHeader(name: string): (res: http.ServerResponse, value: string | number) => void {
  http.validateHeaderName(name);
  const key = name.toLowerCase();
  const outHeaders = OUT_HEADERS_KEY;
  if (!outHeaders) return (res, value) => void res.setHeader(name, value);
  return (res, value) => {
    if (res.headersSent) {
      res.setHeader(name, value);
      return;
    }
    const target = res as unknown as Record<symbol, Record<string, unknown> | null>;
    const headers = target[outHeaders] ?? (target[outHeaders] = Object.create(HEADERS_PROTOTYPE) as Record<string, unknown>);
    headers[key] = [name, value];
  };
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
