/**
 * What the runtime assumes about Node's HTTP server beyond its documented API, in one place (the
 * `engines` field of `package.json` names the Node versions). `test/runtime/node-internals.test.ts`
 * checks every assumption below against the running Node and names this file when one breaks.
 */
import type * as http from 'node:http';
import type { Socket } from 'node:net';
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
