/**
 * `Idempotency-Key` on POST (the IETF draft "The Idempotency-Key HTTP Header Field"): a client that
 * retries a create, an action or a bulk request after an answer it did not get (a 503 at COMMIT, a
 * cut connection) sends the same key again, and the write is made once.
 *
 * The key is kept in `svc_idempotency_keys` (a runtime table, db/migrations.ts) under a hash of the
 * caller and the key, with a fingerprint of the request (method, path and query, body, caller) and,
 * once the write's work is done, its answer (status, body, ETag): all in the write's own
 * transaction, so the key is recorded exactly when the write commits.
 *
 * - The first request with a key inserts its row, does its work and stores its answer.
 * - A request whose key has a row with the same fingerprint is answered the stored answer, with
 *   `Idempotent-Replayed: true`, and does nothing else.
 * - The same key with another request is a 422 (the draft's answer to a reused key); a key whose
 *   request is still being served, in the rare case its row cannot be waited for, the catalogue's 409.
 * - Two requests with one key at once: the second's insert waits for the first's transaction (a
 *   unique key's lock on PostgreSQL and MariaDB, the one writing connection on SQLite), then finds its
 *   row and replays its answer; if the first rolled back (an error, which wrote nothing), the second
 *   does the work itself.
 * - A key is kept `IDEMPOTENCY_KEY_LIFETIME_SECONDS` (24 hours) after its first use; after that the
 *   same key is a new request. Expired rows are deleted at most once a minute per process.
 *
 * Only POST reads the header: PUT, PATCH and DELETE are idempotent already, or conditional.
 */
import * as crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { Request } from 'express';
import { ApiException, IntegrityError, RequestValidationError } from '../core/errors';
import type { Db } from '../db/connection';
import { IDEMPOTENCY_KEYS_TABLE } from '../db/migrations';

/** How long a key is kept after its first use: a retry within it is a replay. */
export const IDEMPOTENCY_KEY_LIFETIME_SECONDS = 24 * 60 * 60;

/** The response header that marks a replayed answer. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/** What a key may be: 1 to 255 visible ASCII characters (a client's UUID, typically). */
const VALID_KEY = /^[\x21-\x7e]{1,255}$/;

/** The answer an operation gave, as it is stored and replayed. */
export interface IdempotentReply {
  status: number;
  body: unknown;
  etag?: string;
  /** Set on a replay: the answer is the stored one. */
  replayed?: boolean;
}

/** The 422 of a key sent again with another request (the draft's "Idempotency-Key is already used"). */
export class IdempotencyKeyReusedError extends ApiException {
  static override status_code = 422;
  constructor() {
    super('idempotency_key_reused', 422, 'This Idempotency-Key was sent before with another request: a key names one request.');
  }
}

/**
 * The 409 of a key whose request is still being served (the draft's answer to a key in use): the
 * catalogue's conflict, a unique value (the key) another transaction holds.
 */
class IdempotencyKeyInUseError extends IntegrityError {
  constructor() {
    super(new Error('the Idempotency-Key is held by a request still being served'));
  }
}

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

/** The caller a key belongs to: the authenticated user, else the client address. */
function callerOf(req: Request): string {
  return req.auth ? `user:${String(req.auth.id)}` : `address:${req.ip ?? ''}`;
}

/**
 * The request's `Idempotency-Key` when it is a POST that sends one, or undefined; a key that is not
 * 1 to 255 visible ASCII characters (or sent twice) is a 422 at `["header", "Idempotency-Key"]`.
 */
export function idempotencyKeyOf(req: Request | undefined): string | undefined {
  if (!req || req.method !== 'POST') return undefined;
  const key = req.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !VALID_KEY.test(key)) {
    throw new RequestValidationError([
      { type: 'value_error', loc: ['header', 'Idempotency-Key'], msg: 'Idempotency-Key should be 1 to 255 visible ASCII characters' },
    ]);
  }
  return key;
}

/** The requests whose answer is not kept under their key (`answerNotKept`). */
const notKept = new WeakSet<object>();

/**
 * Keeps nothing of `req` under its Idempotency-Key: its key's row is deleted with the write instead
 * of storing the answer, so a retry runs again. For the account endpoints, whose requests hold a
 * password or a token and whose answers hold tokens: neither is written to the table.
 */
export function answerNotKept(req: object | undefined): void {
  if (req) notKept.add(req);
}

let nextPurgeAt = 0;
const PURGE_INTERVAL_MS = 60_000;

/**
 * Runs `work` in `transaction` (which begins one and runs its callback in it) under the key `key`
 * of `req`: the stored answer when the key has one for this request, else `work`'s, stored with the
 * key before the transaction commits.
 */
export async function runIdempotent(
  req: Request,
  key: string,
  transaction: <T>(work: (trx: Knex.Transaction) => Promise<T>) => Promise<T>,
  work: (trx: Knex.Transaction) => Promise<IdempotentReply>,
): Promise<IdempotentReply> {
  const caller = callerOf(req);
  const id = sha256(JSON.stringify([caller, key]));
  const fingerprint = sha256(JSON.stringify([req.method, req.originalUrl, caller, req.body ?? null]));
  const claim = crypto.randomBytes(16).toString('hex');
  return transaction(async (trx) => {
    const now = Math.floor(Date.now() / 1000);
    if (Date.now() >= nextPurgeAt) {
      nextPurgeAt = Date.now() + PURGE_INTERVAL_MS;
      await trx(IDEMPOTENCY_KEYS_TABLE).where('expires_at', '<', now).delete();
    }
    // Waits for a transaction holding the same key; inserts nothing once it committed.
    await trx(IDEMPOTENCY_KEYS_TABLE)
      .insert({ id, claim, fingerprint, status: null, body: null, etag: null, expires_at: now + IDEMPOTENCY_KEY_LIFETIME_SECONDS })
      .onConflict('id')
      .ignore();
    const row = await stored(trx, id);
    // Neither inserted nor found: another request holds the key in a way this one cannot see.
    if (!row) throw new IdempotencyKeyInUseError();
    if (row.claim !== claim) {
      if (Number(row.expires_at) >= now && row.status !== null) {
        if (row.fingerprint !== fingerprint) throw new IdempotencyKeyReusedError();
        return {
          status: Number(row.status),
          body: row.body === null ? undefined : JSON.parse(row.body),
          ...(row.etag ? { etag: row.etag } : {}),
          replayed: true,
        };
      }
      // Expired (not yet purged): the key is this request's now, unless another request took it
      // meanwhile (its transaction, then, is still going on: 409, as the draft answers a key in use).
      const taken = await trx(IDEMPOTENCY_KEYS_TABLE)
        .where({ id, claim: row.claim })
        .update({ claim, fingerprint, status: null, body: null, etag: null, expires_at: now + IDEMPOTENCY_KEY_LIFETIME_SECONDS });
      if (Number(taken) !== 1) throw new IdempotencyKeyInUseError();
    }
    const answer = await work(trx);
    if (notKept.has(req)) {
      await trx(IDEMPOTENCY_KEYS_TABLE).where({ id, claim }).delete();
      return answer;
    }
    await trx(IDEMPOTENCY_KEYS_TABLE)
      .where('id', id)
      .update({ status: answer.status, body: answer.body === undefined ? null : JSON.stringify(answer.body), etag: answer.etag ?? null });
    return answer;
  });
}

interface StoredRow {
  claim: string;
  fingerprint: string;
  status: number | string | null;
  body: string | null;
  etag: string | null;
  expires_at: number | string;
}

/**
 * The key's row, or undefined. A plain read, the transaction's first: it sees the row of a
 * transaction the insert waited for (PostgreSQL reads what committed before each statement, and
 * MariaDB takes its snapshot at a transaction's first read). A locking read would deadlock on
 * MariaDB, where each waiting insert holds a shared lock on the key.
 */
async function stored(trx: Db, id: string): Promise<StoredRow | undefined> {
  return (await trx(IDEMPOTENCY_KEYS_TABLE)
    .select('claim', 'fingerprint', 'status', 'body', 'etag', 'expires_at')
    .where('id', id)
    .first()) as StoredRow | undefined;
}
