/**
 * Conditional requests (RFC 9110 §13): ETags, `If-None-Match` on reads, `If-Match` on writes.
 *
 * An ETag is a hash of a representation: the SHA-256 of its JSON text, in base64url, cut to 128
 * bits, quoted (a strong validator). A read (a retrieve, a list) is tagged with the hash of the body
 * it sends; a write is tagged with the hash of the written row's *state*: the detail representation
 * the generated retrieve would send for it, so that the ETag of a retrieve can be sent back in the
 * `If-Match` of the next write, and the ETag of that write's answer in the one after.
 *
 * A write to an existing row (an update, a delete, a detail action, a relation change, each item of
 * a bulk route) checks `If-Match` once it holds the row (`rowLookup`'s lock, context.ts): on
 * PostgreSQL `SELECT … FOR UPDATE`, on SQLite the one writing connection. The check reads the row's
 * state in the write's transaction, so of N writes sent with the same ETag one wins and the others,
 * run after it, see its ETag changed: 412. `If-Match` may list several ETags (a bulk request lists
 * one per item); `*` matches any row that exists. `If-None-Match` naming the row's state (or `*`)
 * fails such a write too. A failure is answered only once the write's work is done, so the checks
 * of permissions, hooks and overrides answer first (`checkPreconditions`).
 */
import * as crypto from 'node:crypto';
import { PreconditionFailedError, PreconditionRequiredError, type ApiException } from '../core/errors';

/**
 * The SHA-256 of a text in base64url: one call where the Node has `crypto.hash` (20.12 and later),
 * which makes no Hash object (about 1 µs less per ETag of a 1.5 KB body).
 */
const sha256Base64url: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'base64url')
    : (text) => crypto.createHash('sha256').update(text).digest('base64url');

/** The strong ETag of a representation given as its JSON text. */
export function etagOfJson(json: string): string {
  return `"${sha256Base64url(json).slice(0, 22)}"`;
}

/** The strong ETag of a value, serialized as a response body is. */
export function etagOf(value: unknown): string {
  return etagOfJson(JSON.stringify(value) ?? 'null');
}

/** The entity tags of an `If-Match` or `If-None-Match` header, `*` as itself; weak tags keep their `W/`. */
export function entityTags(header: string): string[] {
  return header.match(/\*|(?:W\/)?"[^"]*"/g) ?? [];
}

/** `If-None-Match` (weak comparison): whether it names `etag`, or is `*`. */
export function noneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return entityTags(header).some((tag) => tag === '*' || tag.replace(/^W\//, '') === etag);
}

/** `If-Match` (strong comparison): whether it names `etag` (a weak tag never matches), or is `*` and the row exists. */
export function ifMatchHolds(header: string, etag: string | undefined): boolean {
  if (etag === undefined) return false;
  return entityTags(header).some((tag) => tag === '*' || tag === etag);
}

/** The 412 details of a write whose `If-None-Match` names the record's current version, or is `*`. */
export const NONE_MATCH_FAILED =
  'The object exists in a version If-None-Match names: a write with If-None-Match is made only where none of its versions exists.';

/** The failed precondition of each request in a write, until the write's work is done (`settleFailedPrecondition`). */
const failedPreconditions = new WeakMap<object, ApiException>();

/**
 * The preconditions of a write holding the existing row it changes (RFC 9110 §13.2.2): `If-Match`
 * (without it, a 428 when `required`; with it, a 412 unless it names the row's current state,
 * computed by `state`, undefined when the row has no representation left), then,
 * when it holds or is absent, `If-None-Match`, which on a state-changing method fails (412) when it
 * names the row's current state (weak comparison) or is `*` (the row exists).
 *
 * The state is read now, in the write's transaction with the row locked, so of writes sent with one
 * ETag exactly one holds; but a failure is only recorded for `req` and thrown once the write's work
 * is done (`settleFailedPrecondition`, before the commit, which it then prevents): the checks that
 * would fail the request otherwise, authentication and the permissions hooks and overrides check,
 * answer first (RFC 9110 §13.2.1). `deferred` false (the write runs outside a transaction) throws at once.
 */
export async function checkPreconditions(
  req: { headers?: Record<string, string | string[] | undefined> } | undefined,
  required: boolean,
  state: () => Promise<string | undefined>,
  deferred: boolean,
): Promise<void> {
  const ifMatch = req?.headers?.['if-match'] as string | undefined;
  const ifNoneMatch = req?.headers?.['if-none-match'] as string | undefined;
  let etag: Promise<string | undefined> | undefined;
  const current = () => (etag ??= state());
  let failure: ApiException | undefined;
  if (ifMatch === undefined) {
    if (required) failure = new PreconditionRequiredError();
  } else if (!ifMatchHolds(ifMatch, await current())) failure = new PreconditionFailedError();
  if (!failure && ifNoneMatch !== undefined) {
    const tag = await current();
    if (tag !== undefined && noneMatchHits(ifNoneMatch, tag)) failure = new PreconditionFailedError(NONE_MATCH_FAILED);
  }
  if (!failure) return;
  if (!deferred || !req) throw failure;
  if (!failedPreconditions.has(req)) failedPreconditions.set(req, failure);
}

/**
 * Runs a write's `work` and settles the precondition `checkPreconditions` found failed for `req`
 * meanwhile: when `work` fails, or answers an error status of its own (an override's reply), that
 * answer stands and the failure is forgotten; when it succeeds, the failure is thrown (412 or 428),
 * so the transaction it ran in rolls back.
 */
export async function settleFailedPrecondition<T extends { status: number }>(req: object | undefined, work: () => Promise<T>): Promise<T> {
  let answer: T;
  try {
    answer = await work();
  } catch (err) {
    if (req) failedPreconditions.delete(req);
    throw err;
  }
  const failure = req && failedPreconditions.get(req);
  if (!failure) return answer;
  failedPreconditions.delete(req);
  if (answer.status >= 400) return answer;
  throw failure;
}

/** The key of the row an item route writes: its path's `pk` (an ETag's `key`, see operation.ts). */
export function keyFromPath(input: { params: unknown }): unknown {
  return (input.params as { pk?: unknown } | undefined)?.pk;
}

/** The key of the row a create wrote, from its answer's `field` (an ETag's `key`); none when the answer lacks it. */
export function keyFromResult(field: string): (input: unknown, result: unknown) => unknown {
  return (_input, result) => (result !== null && typeof result === 'object' ? (result as Record<string, unknown>)[field] : undefined);
}
