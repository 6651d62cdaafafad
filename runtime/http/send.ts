/**
 * JSON answers hand-written on `res.end` rather than Express's `res.json`, which hashes every body for
 * an ETag. The one way the service answers with JSON: the body serialized once, sent with its
 * `Content-Type` and `Content-Length` and nothing else. Express's `res.json` would also look up the
 * media type, hash the body for an `ETag` and compare it with the request's `If-None-Match` on every
 * response. ETags are the operations' own (operations/conditional.ts): a read's is the hash of its
 * body, a write's the hash of the row's state, and only those responses carry one.
 */
import type { ServerResponse } from 'node:http';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** Sends `body` as JSON with `status` (a HEAD request gets the headers alone, as Node sends them). */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendJsonText(res, status, JSON.stringify(body) ?? 'null');
}

/** Sends JSON text serialized beforehand (a document that never changes, serialized once). */
export function sendJsonText(res: ServerResponse, status: number, json: string): void {
  res.statusCode = status;
  const length = Buffer.byteLength(json);
  res.setHeader('content-type', JSON_CONTENT_TYPE);
  res.setHeader('content-length', length);
  res.end(json);
}
