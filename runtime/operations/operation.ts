/**
 * Operations, free of any HTTP framework. An operation names the parts of a request it reads (path
 * parameters, query string, body), each validated by its schema when it has one, whether it runs in
 * a database transaction, the status it answers with, and `handle`: a function of the validated
 * input and the request context whose result becomes the reply. A binding (`expressHandler` in
 * routes.ts) turns an operation into one framework's request handler.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { etagOf, settleFailedPrecondition } from './conditional';
import type { RequestContext } from './context';
import type { Db } from '../db/connection';
import { parseRequest } from '../validation/validate';
import type { z } from '../core/zod';
import type { TransactionGate } from './transactions';
import { idempotencyKeyOf, runIdempotent } from './idempotency';
import type { Request } from 'express';
import type { Knex } from 'knex';

/** The query string as received, before validation: strings, lists of strings, nested records. */
export interface QueryValues {
  [key: string]: undefined | string | QueryValues | (string | QueryValues)[];
}

/** The parts of a request as received, before validation. */
export interface RawRequest {
  params: Record<string, string>;
  query: QueryValues;
  body: unknown;
  /** The request's headers, for an operation whose `optionalBody` depends on them. */
  headers?: IncomingHttpHeaders;
}

/** A request part: what its schema outputs when the operation has one, else the part as received. */
type Part<S, Raw> = S extends z.ZodType ? z.output<S> : Raw;

/** What `handle` receives: each part of the request, validated where the operation has a schema for it. */
export interface OperationInput<P, Q, B> {
  params: Part<P, RawRequest['params']>;
  query: Part<Q, RawRequest['query']>;
  body: Part<B, RawRequest['body']>;
}

/** The schema of a request part, or undefined: the part reaches `handle` as received. */
export type PartSchema = z.ZodType | undefined;

export interface Operation<P extends PartSchema = undefined, Q extends PartSchema = undefined, B extends PartSchema = undefined> {
  /** The operation id: named in the OpenAPI document and given to the handler as its name. */
  operationId: string;
  /** Schema of the path parameters. */
  params?: P;
  /** Schema of the query string. */
  query?: Q;
  /** Schema of the body. */
  body?: B;
  /**
   * Reads a request without a body as `{}`: a PATCH without one changes nothing. A function decides
   * per request: a refresh or logout without a body takes the refresh token from its cookie.
   */
  optionalBody?: boolean | ((request: RawRequest) => boolean);
  /**
   * Given the body as received (any JSON value), before the body schema sees it; returns the body
   * to validate, or undefined to validate the one it was given (changed in place). The spec's
   * `normalize_input` hook: an ISBN sent with dashes loses them before `max_length` counts them.
   */
  normalize?(body: unknown): unknown;
  /** Runs `handle` in a database transaction; the context's `db` is that transaction. */
  transaction?: boolean;
  /** The status of the reply; see `reply` for how a result refines it. */
  status: number;
  /** The ETag of its successful replies (conditional.ts): none without it. */
  etag?: ETagSource<P, Q, B>;
  handle(input: OperationInput<P, Q, B>, ctx: RequestContext): unknown;
}

/**
 * Where an operation's ETag comes from: `'body'`, the hash of the body it sends (reads; a GET whose
 * `If-None-Match` names it is answered 304), or the state of the row it wrote: `key` finds the row's
 * key in the input or the result (undefined: no ETag), `state` hashes the row's detail
 * representation, read in the operation's transaction after its work.
 */
export type ETagSource<P extends PartSchema = PartSchema, Q extends PartSchema = PartSchema, B extends PartSchema = PartSchema> =
  | 'body'
  | {
      state(ctx: RequestContext, key: unknown): Promise<string | undefined>;
      key(input: OperationInput<P, Q, B>, result: unknown): unknown;
      /**
       * The answer is the row's detail representation, read after the write in its transaction (a
       * create or update answering with it, with no override): its hash is the state's ETag, and the
       * row is not read again.
       */
      answerIsState?: boolean;
    };

/** A handler result with its own status (for custom endpoints, actions and overrides). */
export class JsonResponse {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

/** What an operation answers: a status and a JSON body; a 204 has no body. */
export interface Reply {
  status: number;
  body: unknown;
  /** The ETag of the written row's state, when the operation tags its replies so. */
  etag?: string;
  /** The stored answer of an earlier request with the same Idempotency-Key (idempotency.ts). */
  replayed?: boolean;
}

/**
 * The reply to a result of an operation answering with `status`: a JsonResponse with its own status;
 * `undefined` as 204 No Content when `status` is 204, else as `null`; anything else as the body
 * with `status`, except that a body returned where 204 was expected is sent with 200.
 */
export function reply(status: number, result: unknown): Reply {
  if (result instanceof JsonResponse) return { status: result.status, body: result.body };
  if (result === undefined && status === 204) return { status: 204, body: undefined };
  return { status: status === 204 ? 200 : status, body: result ?? null };
}

/**
 * Validates the request's parts: path parameters, then query string, then body; the first invalid
 * part is the 422 (a RequestValidationError). Nothing else runs before it: no decorator, hook or query.
 */
export function parseInput<P extends PartSchema, Q extends PartSchema, B extends PartSchema>(
  operation: Operation<P, Q, B>,
  request: RawRequest,
): OperationInput<P, Q, B> {
  const { params, query, body } = operation;
  return {
    params: params ? parseRequest(params, request.params, 'path') : request.params,
    query: query ? parseRequest(query, request.query, 'query') : request.query,
    body: body
      ? parseRequest(
          body,
          normalized(operation, request.body === undefined && bodyOptional(operation, request) ? {} : request.body),
          'body',
        )
      : request.body,
  } as OperationInput<P, Q, B>;
}

/** Whether a request without a body is read as `{}`. */
function bodyOptional(operation: { optionalBody?: Operation['optionalBody'] }, request: RawRequest): boolean {
  const { optionalBody } = operation;
  return typeof optionalBody === 'function' ? optionalBody(request) : optionalBody === true;
}

/** The body an operation's `normalize` makes of the one received. */
function normalized(operation: { normalize?(body: unknown): unknown }, body: unknown): unknown {
  if (!operation.normalize) return body;
  const out = operation.normalize(body);
  return out === undefined ? body : out;
}

/**
 * Runs `handle` on input `parseInput` validated (in a transaction when the operation asks for one,
 * begun through the service's `gate` for the request `req` when given: see transactions.ts) with
 * the context `contextFor` builds around the database it runs on, and returns the reply.
 */
export function runParsed<P extends PartSchema, Q extends PartSchema, B extends PartSchema>(
  operation: Operation<P, Q, B>,
  input: OperationInput<P, Q, B>,
  db: Db,
  contextFor: (db: Db) => RequestContext,
  gate?: { transactions: TransactionGate; req: object },
): Promise<Reply> {
  const { etag } = operation;
  const work = async (on: Db): Promise<Reply> => {
    const ctx = contextFor(on);
    const answer = await settleFailedPrecondition(ctx.req, async () => reply(operation.status, await operation.handle(input, ctx)));
    // The state's ETag is read in the same transaction as the write, before it commits.
    if (etag && etag !== 'body' && answer.status < 300 && answer.body !== undefined) {
      if (etag.answerIsState) answer.etag = etagOf(answer.body);
      else {
        const key = etag.key(input, answer.body);
        if (key !== undefined && key !== null) answer.etag = await etag.state(ctx, key);
      }
    }
    return answer;
  };
  // A POST with an Idempotency-Key runs in a transaction that records the key with its answer
  // (idempotency.ts), also where the operation begins its own (a bulk route's, nested in it).
  const key = idempotencyKeyOf(gate?.req as Request | undefined);
  if (key !== undefined) {
    const transaction = <T>(run: (trx: Knex.Transaction) => Promise<T>) =>
      gate ? gate.transactions.run(db, gate.req, run) : db.transaction(run);
    return runIdempotent(gate!.req as Request, key, transaction, work);
  }
  if (!operation.transaction) return work(db);
  return gate ? gate.transactions.run(db, gate.req, work) : db.transaction(work);
}
