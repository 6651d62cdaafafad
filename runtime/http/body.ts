/**
 * Request bodies: JSON only, and every way a body can fail to be read is a 4xx in the seed's
 * `{"detail": ...}` shape, never a 500.
 *
 * - a body whose media type is not JSON on POST, PUT or PATCH: 415 `{"detail": "Unsupported Media Type"}`
 * - a `Content-Encoding` other than identity, gzip, deflate or br (or zstd where Node has it), or a
 *   charset JSON cannot be in: 415, the same body (with `Accept-Encoding` naming the codings read)
 * - a body that is not valid JSON, whose UTF-8 is not valid (a byte that starts no character, an
 *   overlong form, an encoded surrogate), or that fails to decompress: 400 `{"detail": "Cannot parse request body"}`
 * - a body over the size limit: 413 `{"detail": "Payload Too Large"}`
 *
 * A request without a body (no `Content-Length`, or `Content-Length: 0`, and no `Transfer-Encoding`)
 * is passed on untouched, whatever its `Content-Type`.
 */
import { isUtf8 } from 'node:buffer';
import { STATUS_CODES } from 'node:http';
import * as zlib from 'node:zlib';
import express, { type Request, type RequestHandler } from 'express';

/** The media types read as JSON: `application/json` and the `+json` suffix types. */
export const JSON_MEDIA_TYPES = ['application/json', 'application/*+json'];

/** The content codings the body parser decompresses. */
export const BODY_ENCODINGS = ['gzip', 'deflate', 'br', ...('createZstdDecompress' in zlib ? ['zstd'] : [])];

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** A request body that cannot be read: rendered by the error middleware as `{"detail": <detail>}`, before any exception handler. */
export class RequestBodyError extends Error {
  override name = 'RequestBodyError';
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail);
  }
}

const CANNOT_PARSE = 'Cannot parse request body';

function reason(status: number): string {
  return STATUS_CODES[status] ?? 'Bad Request';
}

/** Whether the request carries body bytes (a chunked body may still turn out empty). */
function hasContent(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && Number(length) !== 0;
}

/**
 * The response for an error of a body parser (Express's own or one a `views()` hook adds), or
 * `undefined` when `err` is not one: body-parser's errors are 4xx and carry a `type`.
 */
export function bodyParserError(err: unknown): RequestBodyError | undefined {
  if (err instanceof RequestBodyError) return err;
  if (!err || typeof err !== 'object') return undefined;
  const { type, status } = err as { type?: unknown; status?: unknown };
  if (typeof type !== 'string' || typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  if (type === 'encoding.unsupported') return new RequestBodyError(415, reason(415), { 'Accept-Encoding': BODY_ENCODINGS.join(', ') });
  if (type === 'charset.unsupported') return new RequestBodyError(415, reason(415));
  // entity.parse.failed, request.aborted, request.size.invalid (400): the body cannot be read; entity.too.large (413).
  return new RequestBodyError(status, status === 400 ? CANNOT_PARSE : reason(status));
}

/**
 * An error of the API's own body parser. Those without a `type` are decompression failures (the
 * error of zlib or brotli, given status 400): the body cannot be read either.
 */
function readError(err: unknown): unknown {
  const known = bodyParserError(err);
  if (known) return known;
  const status = (err as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500 ? new RequestBodyError(400, CANNOT_PARSE) : err;
}

/**
 * Refuses a UTF-8 body whose bytes are not valid UTF-8, which the parser would otherwise decode
 * with U+FFFD in place of each bad sequence and pass on as text. Bodies in another `utf-*` charset
 * are decoded as before.
 */
function strictUtf8(_req: unknown, _res: unknown, buffer: Buffer, encoding: string | null): void {
  if ((encoding === null || /^utf-?8$/i.test(encoding)) && !isUtf8(buffer)) throw new RequestBodyError(400, CANNOT_PARSE);
}

/** The `Content-Type` values of the bodies `readPlainJson` reads: JSON in UTF-8, as clients mostly send it. */
const PLAIN_JSON_TYPES = new Set(['application/json', 'application/json; charset=utf-8', 'application/json;charset=utf-8']);

/** A request as the body parser marks one whose body it has read. */
type BodiedRequest = Request & { _body?: boolean };

/**
 * The length of the body of a request the parser would read as plain UTF-8 JSON, or undefined for
 * any other: a `Content-Type` of PLAIN_JSON_TYPES (any case), no `Content-Encoding` but `identity`,
 * a `Content-Length` within `limit` (so no `Transfer-Encoding`: Node refuses a request with both).
 */
function plainJsonLength(req: Request, limit: number): number | undefined {
  const type = req.headers['content-type'];
  if (type === undefined || !PLAIN_JSON_TYPES.has(type.length <= 31 ? type.toLowerCase() : '')) return undefined;
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return undefined;
  const header = req.headers['content-length'];
  if (header === undefined || !/^\d{1,10}$/.test(header)) return undefined;
  const length = Number(header);
  return length > 0 && length <= limit ? length : undefined;
}

/**
 * Reads a plain JSON body (`plainJsonLength`) as the parser reads it, without its stream, decoder
 * and options: the same `req.body` (a leading byte order mark skipped, any JSON value) and the same
 * errors: not valid UTF-8 or not JSON, 400; the client gone before the end of it, 400 (as the
 * parser's `request.aborted`, though no one reads the answer). Node never gives more than the
 * `Content-Length` of a request's body, nor ends it short but when the client went; once no
 * listener is left, it emits no error for the request (so none goes uncaught).
 */
function readPlainJson(req: Request, length: number, next: (err?: unknown) => void): void {
  const chunks: Buffer[] = [];
  let received = 0;
  const cleanup = () => {
    req.removeListener('data', onData);
    req.removeListener('end', onEnd);
    req.removeListener('aborted', onAborted);
    req.removeListener('close', onAborted);
    req.removeListener('error', onError);
  };
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    received += chunk.length;
  };
  const onEnd = () => {
    cleanup();
    if (received !== length) return next(new RequestBodyError(400, CANNOT_PARSE));
    const buffer = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received);
    if (!isUtf8(buffer)) return next(new RequestBodyError(400, CANNOT_PARSE));
    let text = buffer.toString('utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    try {
      req.body = JSON.parse(text);
    } catch {
      return next(new RequestBodyError(400, CANNOT_PARSE));
    }
    (req as BodiedRequest)._body = true;
    next();
  };
  const onAborted = () => {
    cleanup();
    next(new RequestBodyError(400, CANNOT_PARSE));
  };
  const onError = (err: unknown) => {
    cleanup();
    next(readError(Object.assign(err instanceof Error ? err : new Error(String(err)), { status: 400 })));
  };
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('aborted', onAborted);
  req.on('close', onAborted);
  req.on('error', onError);
}

/**
 * The body parser of the API: JSON bodies up to `limit` bytes. Any other media type on POST, PUT or
 * PATCH is a 415; on other methods a body that is not JSON is ignored, as before. A plain JSON body
 * (most of them: `readPlainJson`) is read without the parser's stream and decoder, with the same answers.
 */
export function jsonBody(options: { limit: number }): RequestHandler {
  // Not `strict`: any JSON value parses (`null`, `"text"`, `42`), and a body of the wrong type is
  // the 422 of its schema, not a body that cannot be parsed.
  const parse = express.json({ limit: options.limit, type: JSON_MEDIA_TYPES, verify: strictUtf8, strict: false });
  const limit = options.limit;
  return (req, res, next) => {
    if (!hasContent(req)) {
      next();
      return;
    }
    const length = (req as BodiedRequest)._body ? undefined : plainJsonLength(req, limit);
    if (length !== undefined) {
      readPlainJson(req, length, next);
      return;
    }
    if (BODY_METHODS.has(req.method) && !req.is(JSON_MEDIA_TYPES)) {
      next(new RequestBodyError(415, reason(415)));
      return;
    }
    try {
      parse(req, res, (err?: unknown) => next(err === undefined ? undefined : readError(err)));
    } catch {
      // A Content-Type the parser cannot read at all.
      next(new RequestBodyError(415, reason(415)));
    }
  };
}
