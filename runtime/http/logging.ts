/**
 * Request logs, hand-written on pino rather than pino-http: one JSON line per request with the route's
 * pattern in place of the URL, built from a few fields without a child logger or serializers per
 * request, and request ids.
 *
 * - A request's id is its `X-Request-Id` header when that is 1 to 128 characters among letters,
 *   digits and `-` `_` `.` `:` `@` `/` `+` `=`; otherwise a new random UUID (`newUuid`). The
 *   response echoes it in `X-Request-Id`, and every line logged about the request carries it as `reqId`.
 * - When the response is finished (or the connection closed first), one line at level `info`:
 *   `{time, reqId, method, route, status, durationMs, userId?, msg: "request"}`. `route` is the
 *   route's pattern (`/api/articles/:pk/`), never the URL: no ids, query strings or tokens end up in
 *   the logs; a request no route matched has no `route`. Headers and bodies are never logged, nor
 *   the values a failed statement bound (error lines hold its SQL text with placeholders).
 * - `createLogger` reads `SVC_LOG_LEVEL` (`fatal`, `error`, `warn`, `info`, `debug`, `trace`,
 *   `silent`; default `info`) and writes JSON lines to stdout, or readable colored lines through
 *   pino-pretty when `NODE_ENV` is `development` (and pino-pretty is installed).
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import type { ServerResponse } from 'node:http';
// Imported: the global `performance` is a getter that looks the module up on each use.
import { performance } from 'node:perf_hooks';
import type { Request, RequestHandler, Response } from 'express';
import pino, { type DestinationStream, type Logger } from 'pino';
import { ConfigurationError } from '../core/settings';
import { errorLogFields } from '../db/outage';

export type { Logger } from 'pino';

declare global {
  namespace Express {
    interface Request {
      /** The request's id: its valid `X-Request-Id`, or a generated UUID. */
      id?: string;
      /** When the request log began timing the request (`performance.now()`). */
      startedAt?: number;
    }
  }
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** What an `X-Request-Id` from a client may be; anything else is replaced by a new id. */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9\-_.:@/+=]{1,128}$/;

/** `SVC_LOG_LEVEL`, checked. */
export function logLevelOf(env: NodeJS.ProcessEnv = process.env): LogLevel {
  const raw = env.SVC_LOG_LEVEL?.trim().toLowerCase() || 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) {
    throw new ConfigurationError(`SVC_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.SVC_LOG_LEVEL}"`);
  }
  return raw as LogLevel;
}

/** Whether `NODE_ENV` asks for development output. */
export function isDevelopment(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.NODE_ENV?.trim().toLowerCase() === 'development';
}

/** pino-pretty's stream when it can be loaded (it is a development dependency). */
function prettyStream(): DestinationStream | undefined {
  try {
    const pretty = require('pino-pretty') as (options: object) => DestinationStream;
    return pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  } catch {
    return undefined;
  }
}

/**
 * A stream of JSON lines that also takes a line whose size in bytes its writer already knows
 * (`writeLine`): the request log's lines, which it builds from parts of known size.
 */
interface LineStream extends DestinationStream {
  writeLine?(line: string, bytes: number): void;
}

let stdoutLines: LineStream | undefined;

/** The most written at once to a pipe or socket: a pipe keeps writes up to this size whole (workers of a cluster share stdout). */
const ATOMIC_WRITE_BYTES = 4096;

/**
 * The most written at once to a regular file: a write to a file is never interleaved with another
 * process's (the kernel holds the file's position for the whole write), so the batch is larger.
 */
const FILE_WRITE_BYTES = 65536;

/** The size of stdout's writes: larger when it is a regular file (`FILE_WRITE_BYTES`). */
function batchBytes(): number {
  try {
    return fs.fstatSync(1).isFile() ? FILE_WRITE_BYTES : ATOMIC_WRITE_BYTES;
  } catch {
    return ATOMIC_WRITE_BYTES;
  }
}

/** How long a line waits, at most, for the lines written after it. */
export const LOG_FLUSH_MS = 10;

/**
 * Standard output for log lines, written in batches: the lines of the requests answered within
 * `LOG_FLUSH_MS` go out together, in writes of at most 4 KiB to a pipe or a socket (so that lines
 * of several processes never interleave) and 64 KiB to a file, where a write per line would cost a
 * system call per request. Under load a batch is written as soon as it is full; a line waits at
 * most `LOG_FLUSH_MS`, and what is pending when the process exits is written then. One for the
 * process, as there is one stdout.
 *
 * Each line is encoded into the batch's buffer as it comes (its size is known: `writeLine`), so
 * that no line outlives its request as a string: a batch kept as text is a tree of a few thousand
 * pieces that the collector copies while it waits and that is flattened and measured again when
 * written. A full buffer is handed to the writer, which keeps it until written (a pipe that is
 * full is retried), and the next batch gets a new one.
 */
export function batchedStdout(): LineStream {
  if (stdoutLines) return stdoutLines;
  // In 'buffer' mode sonic-boom takes Buffers (its types know only strings).
  const out = pino.destination({ dest: 1, sync: true, contentMode: 'buffer' }) as unknown as { write(chunk: Buffer): boolean };
  const most = batchBytes();
  let batch = Buffer.allocUnsafe(most);
  let used = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (used === 0) return;
    const full = batch.subarray(0, used);
    batch = Buffer.allocUnsafe(most);
    used = 0;
    out.write(full);
  };
  process.on('exit', flush);
  const writeLine = (line: string, size: number) => {
    if (used + size > most) flush();
    if (size > most) {
      // A line larger than a batch (a long stack) goes out alone.
      out.write(Buffer.from(line, 'utf8'));
      return;
    }
    // A line with as many bytes as code units is ASCII, which latin1 encodes as UTF-8 does, faster.
    used += batch.write(line, used, size === line.length ? 'latin1' : 'utf8');
    if (!timer) {
      timer = setTimeout(flush, LOG_FLUSH_MS);
      // A line waiting to be written keeps no process alive ('exit' writes it).
      timer.unref();
    }
  };
  stdoutLines = { write: (line: string) => writeLine(line, Buffer.byteLength(line)), writeLine };
  return stdoutLines;
}

/**
 * The service's logger as the environment sets it up; `destination` replaces stdout (tests capture
 * the lines there). ISO times; no `pid` or `hostname` (the platform adds where a line came from).
 */
export function createLogger(env: NodeJS.ProcessEnv = process.env, destination?: DestinationStream): Logger {
  const options = { level: logLevelOf(env), base: undefined, timestamp: pino.stdTimeFunctions.isoTime };
  const pretty = destination ? undefined : isDevelopment(env) ? prettyStream() : undefined;
  const stream = destination ?? pretty ?? batchedStdout();
  const logger = pino(options, stream);
  // JSON lines in pino's own layout: the request line can be written without pino (`requestLine`).
  if (!pretty) (logger as JsonLinesLogger)[JSON_LINES] = stream;
  return logger;
}

/** Where a logger `createLogger` made that writes JSON lines, as pino writes them, keeps its stream. */
const JSON_LINES = Symbol('svcgen.jsonLines');
type JsonLinesLogger = Logger & { [JSON_LINES]?: LineStream };

/** A request's log line, and its size in UTF-8. */
export interface RequestLine {
  line: string;
  bytes: number;
}

/**
 * The request's line as pino writes `logger.info({reqId, method, route, status, durationMs, userId},
 * 'request')` for a logger of `createLogger`: `level`, `time`, the fields (an undefined one left
 * out), then `msg`. The request id and the numbers need no escaping (an id is checked against
 * REQUEST_ID_PATTERN or generated); the other strings are encoded. Its size in bytes is counted
 * from its parts: all of it is ASCII but the method, the route and a user id that is a string,
 * whose extra bytes are known with their JSON.
 */
export function requestLine(
  reqId: string,
  method: string,
  route: string | undefined,
  status: number,
  durationMs: number,
  userId: string | number | undefined,
): RequestLine {
  const methodJson = encoded(method);
  let extra = methodJson.extra;
  let routeField = '';
  if (route !== undefined) {
    const routeJson = encoded(route);
    routeField = `,"route":${routeJson.json}`;
    extra += routeJson.extra;
  }
  let user = '';
  if (userId !== undefined) {
    const json = JSON.stringify(userId);
    user = `,"userId":${json}`;
    if (typeof userId === 'string') extra += Buffer.byteLength(json) - json.length;
  }
  const line =
    `{"level":30,"time":"${isoNow()}","reqId":"${reqId}","method":${methodJson.json}${routeField}` +
    `,"status":${status},"durationMs":${durationMs}${user},"msg":"request"}\n`;
  return { line, bytes: line.length + extra };
}

/** A string as JSON, and the bytes its UTF-8 has beyond one per UTF-16 code unit. */
interface Encoded {
  json: string;
  extra: number;
}

/**
 * The JSON of a method or a route pattern, encoded once: there are as many as the service has
 * routes (and the methods clients send); past `ENCODED_KEPT` of them, encoded each time.
 */
const encodedStrings = new Map<string, Encoded>();
const ENCODED_KEPT = 1000;
function encoded(text: string): Encoded {
  let found = encodedStrings.get(text);
  if (found === undefined) {
    const json = JSON.stringify(text);
    found = { json, extra: Buffer.byteLength(json) - json.length };
    if (encodedStrings.size < ENCODED_KEPT) encodedStrings.set(text, found);
  }
  return found;
}

/**
 * The current time as an ISO string (pino's `isoTime`). The lines of one millisecond share it; the
 * date and time to the second are formatted once per second, and the milliseconds appended:
 * `toISOString` formats through the engine's printf, several thousand instructions, which a service
 * answering a request or two per millisecond would otherwise spend on each line.
 */
let isoMs = 0;
let isoText = '';
let isoSecond = Number.NaN;
/** `toISOString` of the second `isoSecond` without its milliseconds: up to the dot. */
let isoPrefix = '';
function isoNow(): string {
  const now = Date.now();
  if (now === isoMs) return isoText;
  const second = Math.floor(now / 1000);
  if (second !== isoSecond) {
    isoSecond = second;
    const text = new Date(second * 1000).toISOString();
    isoPrefix = text.slice(0, text.length - 4);
  }
  const ms = now - second * 1000;
  isoMs = now;
  isoText = `${isoPrefix}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z`;
  return isoText;
}

/** The request's id: the client's `X-Request-Id` when it is valid, a new UUID otherwise. */
export function requestIdOf(req: Request): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : newUuid();
}

/** A random (version 4) UUID from the system's CSPRNG. */
export function newUuid(): string {
  return randomUUID();
}

/** The pattern of the route that served `req` (with the base path), or undefined when none matched. */
export type RoutePatternOf = (req: Request) => string | undefined;

export interface RequestLogOptions {
  logger: Logger;
  routeOf: RoutePatternOf;
  /** Called once per request with what was logged (metrics count requests from it). */
  onFinish?: (req: Request, res: Response, route: string | undefined, seconds: number) => void;
}

/**
 * Gives each request its id (`req.id`, the `X-Request-Id` response header) and logs one line when
 * it ends. The line is built once, from fields read off the request: no child logger, one listener.
 */
export function requestLogging({ logger, routeOf, onFinish }: RequestLogOptions): RequestHandler {
  const logs = logger.isLevelEnabled('info');
  // A logger of createLogger gets the line without pino's generic serialization; any other, through pino.
  const lines = (logger as JsonLinesLogger)[JSON_LINES];
  // Once per response, when it closes: after 'finish', or when the connection closed first. One
  // listener for every request (`this` is the response), reading what it logs off the request and the response.
  function ended(this: ServerResponse): void {
    const res = this as Response;
    const req = res.req;
    const ms = performance.now() - req.startedAt!;
    const route = routeOf(req);
    // A response cut off before its head was sent has no status a client saw.
    const status = res.headersSent ? res.statusCode : 0;
    if (logs) {
      const durationMs = Math.round(ms * 100) / 100;
      if (!lines) logger.info({ reqId: req.id!, method: req.method, route, status, durationMs, userId: req.auth?.id }, 'request');
      else {
        const { line, bytes } = requestLine(req.id!, req.method, route, status, durationMs, req.auth?.id);
        if (lines.writeLine) lines.writeLine(line, bytes);
        else lines.write(line);
      }
    }
    onFinish?.(req, res, route, ms / 1000);
  }
  return (req, res, next) => {
    req.startedAt = performance.now();
    const id = requestIdOf(req);
    req.id = id;
    res.setHeader('x-request-id', id);
    res.on('close', ended);
    next();
  };
}

/**
 * Logs an error about a request, with the request's id: its type, code, message, statement and
 * stack as `errorLogFields` gives them, never the values bound to a statement or a row of the database.
 */
export function logRequestError(logger: Logger, req: Request | undefined, err: unknown, message: string): void {
  logger.error({ reqId: req?.id, err: errorLogFields(err) }, message);
}
