/**
 * Hand-written around `express.json()`, which reads the bodies: what it leaves to the application
 * (a 415 for a body that is not JSON, a refusal of bytes that are not UTF-8, its errors as the
 * catalogue's answers). Request bodies: JSON only, and every way a body can fail to be read is a 4xx
 * in the error catalogue's `{"detail": ...}` shape, never a 500.
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
 * `undefined` when `err` is not one: body-parser's errors are 4xx and carry a documented `type`.
 */
export function bodyParserError(err: unknown): RequestBodyError | undefined {
  if (err instanceof RequestBodyError) return err;
  if (!err || typeof err !== 'object') return undefined;
  const { type, status } = err as { type?: unknown; status?: unknown };
  if (typeof type !== 'string' || typeof status !== 'number' || status < 400 || status >= 500) return undefined;
  switch (type) {
    case 'encoding.unsupported':
      return new RequestBodyError(415, reason(415), { 'Accept-Encoding': BODY_ENCODINGS.join(', ') });
    case 'charset.unsupported':
      return new RequestBodyError(415, reason(415));
    case 'entity.too.large':
      return new RequestBodyError(413, reason(413));
    // The body cannot be read: not JSON, not UTF-8 (`strictUtf8`), cut short, or of another length than announced.
    case 'entity.parse.failed':
    case 'entity.verify.failed':
    case 'request.aborted':
    case 'request.size.invalid':
      return new RequestBodyError(400, CANNOT_PARSE);
    default:
      return new RequestBodyError(status, status === 400 ? CANNOT_PARSE : reason(status));
  }
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

/**
 * The body parser of the API: JSON bodies up to `limit` bytes, read by `express.json()`. Any other
 * media type on POST, PUT or PATCH is a 415; on other methods a body that is not JSON is ignored.
 */
export function jsonBody(options: { limit: number }): RequestHandler {
  // Not `strict`: any JSON value parses (`null`, `"text"`, `42`), and a body of the wrong type is
  // the 422 of its schema, not a body that cannot be parsed.
  const parse = express.json({ limit: options.limit, type: JSON_MEDIA_TYPES, verify: strictUtf8, strict: false });
  const parsed = (next: (err?: unknown) => void) => (err?: unknown) => next(err === undefined ? undefined : readError(err));
  return (req, res, next) => {
    if (!hasContent(req)) {
      next();
      return;
    }
    if (BODY_METHODS.has(req.method) && !req.is(JSON_MEDIA_TYPES)) {
      next(new RequestBodyError(415, reason(415)));
      return;
    }
    try {
      parse(req, res, parsed(next));
    } catch {
      // A Content-Type the parser cannot read at all.
      next(new RequestBodyError(415, reason(415)));
    }
  };
}
