/**
 * Serving a generated service, hand-written on node:http because no shutdown library waits for the
 * service's transactions to commit: the HTTP server, its answers to requests that never reach
 * Express, and a graceful shutdown.
 *
 * - A request whose head the HTTP parser refuses is answered in JSON: headers over Node's limit
 *   (16 KB by default) 431 `{"detail": "Request Header Fields Too Large"}`, or 414
 *   `{"detail": "URI Too Long"}` when it is the request line that is over `MAX_URL_LENGTH`; a
 *   malformed request 400 `{"detail": "Bad Request"}`; a head or a body that takes too long 408
 *   `{"detail": "Request Timeout"}` (see ServerLimits for the timeouts and the connection cap).
 * - On SIGTERM or SIGINT the server stops accepting connections, closes idle keep-alive connections
 *   at once, lets the requests in flight finish (answered with `Connection: close`), waits at most
 *   `shutdownTimeoutMs` for them, then runs `onClose` (closing the database pool) and settles
 *   `closed`. With `transactions` (the service's TransactionGate), what the timeout closes is only
 *   the requests holding no transaction: new transactions are refused (503), those in flight get
 *   `shutdownTimeoutMs` more to commit and be answered, and then the ones that have not reached
 *   their COMMIT roll back and are closed; a request whose COMMIT is under way is answered, never
 *   cut. A second signal closes every connection at once (transactions not yet committing roll back).
 * - Failing to listen (a port in use, an address not on this machine) rejects with one line.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { ConfigurationError } from '../core/settings';

/** The longest request target (path and query string) served, in bytes; longer is a 414. */
export const MAX_URL_LENGTH = 8192;

/** How long in-flight requests may take after a shutdown signal, unless told otherwise. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

/** What a shutdown asks of the service's transactions (the runtime's TransactionGate). */
export interface ShutdownTransactions {
  /** Whether the request holds a transaction (`open`), has passed the point of committing (`committing`), or neither. */
  holding(req: object): 'open' | 'committing' | undefined;
  /** Transactions that begin from now on are refused (503). */
  refuse(): void;
  /** Transactions whose work ends from now on roll back (503) instead of committing. */
  abort(): void;
}

export interface ServeOptions {
  host: string;
  port: number;
  /**
   * How long to wait for requests in flight after a shutdown signal before closing their
   * connections; with `transactions`, as long again for the requests holding a transaction.
   */
  shutdownTimeoutMs?: number;
  /** The service's transactions: a shutdown never cuts a request whose transaction committed. */
  transactions?: ShutdownTransactions;
  /** Runs once every connection is closed, before `closed` settles: closes the database pool. */
  onClose?: () => unknown;
  /** The signals that start a graceful shutdown; `[]` for none (call `shutdown()`). */
  signals?: readonly NodeJS.Signals[];
  /** Progress of a shutdown; defaults to console.log. */
  log?: (message: string) => void;
  /** Timeouts and the connection cap; defaults to `DEFAULT_SERVER_LIMITS` (`serverLimits()` reads them from the environment). */
  limits?: ServerLimits;
}

/**
 * How long the server waits for a client, and how many clients it serves at once:
 * - `headersTimeoutMs` (`SVC_HEADERS_TIMEOUT`, seconds): a request whose head is not all in by then
 *   is answered 408 `{"detail": "Request Timeout"}` and its connection closed;
 * - `requestTimeoutMs` (`SVC_REQUEST_TIMEOUT`): the same for a request whose body is not all in by
 *   then (counted from its start, so at least the headers timeout);
 * - `keepAliveTimeoutMs` (`SVC_KEEP_ALIVE_TIMEOUT`): a keep-alive connection idle that long between
 *   requests is closed, without an answer (HTTP lets a server close an idle connection);
 * - `maxConnections` (`SVC_MAX_CONNECTIONS`): connections open at once; one more is closed as soon as
 *   it is accepted, before it sends anything (the client sees the connection reset or closed), so
 *   that what the server holds stays bounded however many clients come.
 * Node checks the two timeouts at an interval (30 s by default); here it is a quarter of the shorter
 * one, at most 1 s, so a slow client is cut within a second of its timeout.
 */
export interface ServerLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
}

export const DEFAULT_SERVER_LIMITS: ServerLimits = Object.freeze({
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1000,
});

/** `SVC_HEADERS_TIMEOUT`, `SVC_REQUEST_TIMEOUT`, `SVC_KEEP_ALIVE_TIMEOUT` (seconds) and `SVC_MAX_CONNECTIONS`, checked. */
export function serverLimits(env: NodeJS.ProcessEnv = process.env): ServerLimits {
  const positive = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined) return fallback;
    const text = raw.trim();
    if (!/^\d{1,7}$/.test(text) || Number(text) < 1) throw new ConfigurationError(`${name} must be a positive integer, got "${raw}"`);
    return Number(text);
  };
  const limits = {
    headersTimeoutMs: positive('SVC_HEADERS_TIMEOUT', DEFAULT_SERVER_LIMITS.headersTimeoutMs / 1000) * 1000,
    requestTimeoutMs: positive('SVC_REQUEST_TIMEOUT', DEFAULT_SERVER_LIMITS.requestTimeoutMs / 1000) * 1000,
    keepAliveTimeoutMs: positive('SVC_KEEP_ALIVE_TIMEOUT', DEFAULT_SERVER_LIMITS.keepAliveTimeoutMs / 1000) * 1000,
    maxConnections: positive('SVC_MAX_CONNECTIONS', DEFAULT_SERVER_LIMITS.maxConnections),
  };
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new ConfigurationError(
      `SVC_HEADERS_TIMEOUT (${limits.headersTimeoutMs / 1000}) must not be over SVC_REQUEST_TIMEOUT (${limits.requestTimeoutMs / 1000})`,
    );
  }
  return limits;
}

export interface RunningServer {
  server: http.Server;
  /** The port listened on (the one the system chose when `port` is 0). */
  port: number;
  /** Starts a graceful shutdown (what a signal does); settles with `closed`. */
  shutdown(): Promise<void>;
  /** Settles once the server is closed and `onClose` has run; rejects when `onClose` throws. */
  closed: Promise<void>;
}

/** `HOST` and `PORT` from the environment, checked: a bad port is a ConfigurationError, not a crash at listen. */
export function listenAddress(env: NodeJS.ProcessEnv = process.env): { host: string; port: number } {
  const host = env.HOST?.trim() || '127.0.0.1';
  const raw = env.PORT?.trim() || '8000';
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65535) throw new ConfigurationError(`PORT must be an integer from 0 to 65535, got "${env.PORT}"`);
  return { host, port };
}

const JSON_CLIENT_ERRORS: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

type ClientError = Error & { code?: string; rawPacket?: Buffer; bytesParsed?: number };

/**
 * Whether a head that overflowed the parser's limit did so in its request line. The parser hands
 * over the chunk it was reading: when that chunk starts a request and has no line break before
 * the point of failure (or its first line is over `maxUrlLength`), the request line is the culprit.
 */
function requestLineTooLong(err: ClientError, maxUrlLength: number): boolean {
  const packet = err.rawPacket;
  if (!packet) return false;
  const text = packet
    .subarray(0, typeof err.bytesParsed === 'number' && err.bytesParsed > 0 ? err.bytesParsed : packet.length)
    .toString('latin1');
  if (!/^[A-Z]+ /.test(text)) return false;
  const end = text.indexOf('\n');
  return end < 0 || end > maxUrlLength;
}

/**
 * Answers in JSON the requests Node's HTTP parser refuses before they reach Express (its default
 * answers have no body), then closes the connection. `responseOn(socket)` names the response the
 * socket is serving, if any: one whose head is sent is not followed by a second answer.
 */
export function answerClientErrors(
  server: http.Server,
  maxUrlLength = MAX_URL_LENGTH,
  responseOn: (socket: Duplex) => http.ServerResponse | undefined = () => undefined,
): void {
  const answered = new WeakSet<Duplex>();
  server.on('clientError', (err: ClientError, socket: Duplex) => {
    if (answered.has(socket)) return;
    answered.add(socket);
    if (err.code === 'ECONNRESET' || !socket.writable || responseOn(socket)?.headersSent) {
      socket.destroy();
      return;
    }
    let status = JSON_CLIENT_ERRORS[err.code ?? ''] ?? 400;
    if (status === 431 && requestLineTooLong(err, maxUrlLength)) status = 414;
    const body = JSON.stringify({ detail: http.STATUS_CODES[status] });
    socket.end(
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
    // The rest of what the client sends is read and dropped until it closes, so that the answer is
    // not lost to a reset; a client that never closes is cut off.
    setTimeout(() => socket.destroy(), 5000).unref();
  });
}

/** An error as one line for the console: the first line of its message, with its code when the message does not name it. */
export function errorLine(err: unknown): string {
  if (!err || typeof err !== 'object') return String(err).split('\n')[0];
  const { code, message, errors, name } = err as { code?: unknown; message?: unknown; errors?: unknown; name?: unknown };
  const text = (
    typeof message === 'string' && message ? message : Array.isArray(errors) && errors.length ? errorLine(errors[0]) : String(name ?? err)
  ).split('\n')[0];
  return typeof code === 'string' && !text.includes(code) ? `${text} (${code})` : text;
}

function listenError(err: NodeJS.ErrnoException, host: string, port: number): Error {
  const where = `${host}:${port}`;
  if (err.code === 'EADDRINUSE') return new Error(`cannot listen on ${where}: the address is already in use`);
  if (err.code === 'EADDRNOTAVAIL') return new Error(`cannot listen on ${where}: the address is not available on this machine`);
  if (err.code === 'EACCES') return new Error(`cannot listen on ${where}: permission denied`);
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') return new Error(`cannot listen on ${where}: unknown host "${host}"`);
  return new Error(`cannot listen on ${where}: ${err.message}`);
}

/**
 * Serves `app` on `host:port` until a shutdown signal; resolves once listening, rejects with a
 * one-line error when the server cannot listen.
 */
/**
 * The prototypes an application gives its requests and responses, as Express's `app.request` and
 * `app.response` (its documented extension points, "Overriding the Express API").
 */
interface RequestPrototypes {
  request?: object;
  response?: object;
}

/**
 * Node's request and response classes whose instances are born with the application's prototypes
 * (`IncomingMessage` and `ServerResponse`, options of `http.createServer`): subclasses of Node's
 * whose prototypes inherit from the application's and become them (`app.request`, `app.response`).
 * Express otherwise swaps each request's and response's prototype on arrival
 * (`Object.setPrototypeOf`), which costs V8 the shapes it had learnt of both: about 60 µs of CPU per
 * request. With them that swap finds the prototype in place and changes nothing. None for an
 * application without its own prototypes.
 */
export function requestClasses(app: RequestPrototypes): Pick<http.ServerOptions, 'IncomingMessage' | 'ServerResponse'> {
  const { request, response } = app;
  if (!(request instanceof http.IncomingMessage) || !(response instanceof http.ServerResponse)) return {};
  class Request extends http.IncomingMessage {}
  class Response extends http.ServerResponse {}
  Object.setPrototypeOf(Request.prototype, request);
  Object.setPrototypeOf(Response.prototype, response);
  app.request = Request.prototype;
  app.response = Response.prototype;
  return { IncomingMessage: Request, ServerResponse: Response as unknown as typeof http.ServerResponse };
}

export async function startServer(app: http.RequestListener & RequestPrototypes, options: ServeOptions): Promise<RunningServer> {
  const timeoutMs = options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
  const log = options.log ?? ((message: string) => console.log(message));
  const signals = options.signals ?? ['SIGTERM', 'SIGINT'];
  const responses = new Set<http.ServerResponse>();
  let closing = false;

  const limits = options.limits ?? DEFAULT_SERVER_LIMITS;
  const server = http.createServer(
    {
      ...requestClasses(app),
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4))),
    },
    (req, res) => {
      responses.add(res);
      res.on('close', responseClosed);
      if (closing) res.setHeader('Connection', 'close');
      app(req, res);
    },
  );
  function responseClosed(this: http.ServerResponse): void {
    responses.delete(this);
    // A keep-alive connection whose response had started before the shutdown is idle now.
    if (closing) server.closeIdleConnections();
  }
  server.maxConnections = limits.maxConnections;
  // A client error is rare: the responses in flight are searched for the socket's then.
  answerClientErrors(server, MAX_URL_LENGTH, (socket) => {
    for (const res of responses) if (res.socket === socket) return res;
    return undefined;
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => reject(listenError(err, options.host, options.port));
    server.once('error', onError);
    server.listen(options.port, options.host, () => {
      server.removeListener('error', onError);
      resolve();
    });
  });

  let settle!: { resolve: () => void; reject: (err: unknown) => void };
  const closed = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  let shuttingDown = false;
  let forceTimer: NodeJS.Timeout | undefined;

  const shutdown = (): Promise<void> => {
    if (shuttingDown) return closed;
    shuttingDown = true;
    closing = true;
    for (const res of responses) if (!res.headersSent) res.setHeader('Connection', 'close');
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const inFlight = (n: number) => `${n} request${n === 1 ? '' : 's'} in flight`;
    if (responses.size > 0) log(`shutting down: waiting up to ${timeoutMs} ms for ${inFlight(responses.size)}`);
    forceTimer = setTimeout(() => {
      const transactions = options.transactions;
      if (!transactions) {
        log(`shutting down: closing the connections of ${inFlight(responses.size)} after ${timeoutMs} ms`);
        server.closeAllConnections();
        return;
      }
      // Requests with no transaction have written nothing (none can begin now): closed. Those with
      // one get as long again to commit and be answered.
      transactions.refuse();
      const cut = [...responses].filter((res) => !transactions.holding(res.req));
      const held = responses.size - cut.length;
      const waiting = held > 0 ? `; waiting up to ${timeoutMs} ms for ${held} with a transaction` : '';
      log(`shutting down: closing the connections of ${inFlight(cut.length)} after ${timeoutMs} ms${waiting}`);
      if (held === 0) {
        server.closeAllConnections();
        return;
      }
      for (const res of cut) res.socket?.destroy();
      server.closeIdleConnections();
      forceTimer = setTimeout(() => {
        // What has not reached its COMMIT rolls back and is closed; a COMMIT under way is answered,
        // and then every connection left (none with a request) is closed.
        transactions.abort();
        const committing = [...responses].filter((res) => transactions.holding(res.req) === 'committing');
        const uncommitted = [...responses].filter((res) => !committing.includes(res));
        log(`shutting down: rolling back and closing ${inFlight(uncommitted.length)} after ${timeoutMs} ms more`);
        for (const res of uncommitted) res.socket?.destroy();
        const answered = committing.map((res) => (res.closed ? undefined : new Promise((resolve) => res.once('close', resolve))));
        void Promise.all(answered).then(() => server.closeAllConnections());
      }, timeoutMs);
    }, timeoutMs);
    stopped
      .then(async () => {
        clearTimeout(forceTimer);
        for (const signal of signals) process.removeListener(signal, onSignal);
        await options.onClose?.();
      })
      .then(settle.resolve, settle.reject);
    return closed;
  };

  function onSignal(signal: NodeJS.Signals): void {
    if (shuttingDown) {
      log(`${signal} again: closing every connection now`);
      clearTimeout(forceTimer);
      options.transactions?.refuse();
      options.transactions?.abort();
      server.closeAllConnections();
      return;
    }
    log(`${signal}: shutting down`);
    void shutdown().catch(() => undefined);
  }
  for (const signal of signals) process.on(signal, onSignal);

  return { server, port: (server.address() as AddressInfo).port, shutdown, closed };
}
