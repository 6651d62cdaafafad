/**
 * Bulk routes (`bulk` in a viewset): one request creating, updating or deleting many items, each
 * through the single-item operation's code. The body is checked for its shape and size first (a
 * 422 before any item is looked at); then every item is validated by the single-item schema, and
 * applied either all in one transaction (`atomic`) or each in its own, with a result per item.
 */
import { settleFailedPrecondition } from './conditional';
import { handledError } from './exceptions';
import type { RequestContext } from './context';
import { RequestValidationError, type ValidationEntry } from '../core/errors';
import { JsonResponse, reply, type Reply } from './operation';
import { checkBodyValue, LOC } from '../validation/validate';
import { z } from '../core/zod';
import type { Knex } from 'knex';

/** The body of a bulk create or update: a list of at most `maxItems` items, each validated on its own. */
export function bulkListBody(maxItems: number) {
  return z.array(z.unknown()).max(maxItems);
}

/** The body of a bulk delete: `{"ids": [...]}`, at most `maxItems` keys, each validated on its own. */
export function bulkDeleteBody(maxItems: number) {
  return z.object({ ids: z.array(z.unknown()).max(maxItems) });
}

/** The documented body of a bulk create or update: a list of `item`. */
export function bulkListDoc<S extends z.ZodType>(item: S, maxItems: number) {
  return z.array(item).max(maxItems);
}

/** The documented body of a bulk delete: the keys, as `key` validates one. */
export function bulkDeleteDoc<S extends z.ZodType>(key: S, maxItems: number) {
  return z.object({ ids: z.array(key).max(maxItems) });
}

/**
 * One item's result in a non-atomic bulk answer: its status, with the single-item operation's body
 * under `data` on success (none for a 204), or the error body's keys beside `status` on failure
 * (`{"status": 422, "detail": [...]}`, `{"status": 409, "error": "conflict", ...}`).
 */
export type BulkItemResult = { status: number; data?: unknown } & Record<string, unknown>;

/** The documented answer of a non-atomic bulk route: one result per item, in order. */
export function bulkResultsDoc<S extends z.ZodType>(data?: S) {
  const success = z.object(data ? { status: z.int(), data } : { status: z.int() });
  const failure = z.object({ status: z.int() }).catchall(z.unknown());
  return z.array(z.union([success, failure]));
}

export interface BulkOptions<S extends z.ZodType> {
  /** The schema of one item: the single-item operation's body schema, or its key's. */
  item: S;
  /** Where the items sit in the body (`['ids']` for a delete); the body itself when omitted. */
  at?: readonly string[];
  /** One transaction for every item, or one per item. */
  atomic: boolean;
  /** The status of the single-item operation (201, 200 or 204). */
  status: number;
}

/** A reply with an error status that an override returned: it fails its item like a thrown error. */
class FailedItem extends Error {
  constructor(readonly reply: Reply) {
    super(`item answered ${reply.status}`);
  }
}

/** Runs `apply` and makes its result the item's reply; an error status from an override is thrown. */
async function applyItem<T>(
  apply: (item: T, ctx: RequestContext) => unknown,
  item: T,
  ctx: RequestContext,
  status: number,
): Promise<Reply> {
  const answer = await settleFailedPrecondition(ctx.req, async () => reply(status, await apply(item, ctx)));
  if (answer.status >= 400) throw new FailedItem(answer);
  return answer;
}

/**
 * Runs a bulk request on its (already size-checked) list of items. `apply` is the single-item
 * operation's code, given the validated item and a context whose `db` is the item's transaction.
 *
 * Atomic: every item is validated first, and any invalid one is the 422 of the request, its `loc`
 * naming the item (`["body", "data", 3, "title"]`); then the items are applied in order in one
 * transaction, and the first that fails rolls every write back and is the answer, as the
 * single-item operation would give it. On success, the list of the items' bodies (nothing for
 * deletes: the route answers 204).
 *
 * Not atomic: each item is validated and applied on its own, in its own transaction, so a failing
 * item undoes nothing of the others; the answer lists each item's `BulkItemResult` in order. An
 * unavailable database or an unhandled error still fails the request (items before it stay written).
 */
export async function runBulk<S extends z.ZodType>(
  ctx: RequestContext,
  items: readonly unknown[],
  options: BulkOptions<S>,
  apply: (item: z.output<S>, ctx: RequestContext) => unknown,
): Promise<unknown[] | BulkItemResult[] | JsonResponse | undefined> {
  const at = [...LOC.body, ...(options.at ?? [])];
  if (options.atomic) {
    const checked = items.map((item, i) => checkBodyValue(options.item, item, [...at, i]));
    const entries: ValidationEntry[] = checked.flatMap((c) => ('entries' in c ? c.entries : []));
    if (entries.length > 0) throw new RequestValidationError(entries);
    const valid = checked.map((c) => (c as { data: z.output<S> }).data);
    try {
      const bodies = await inTransaction(ctx, async (trx) => {
        const itemCtx = { ...ctx, db: trx };
        const out: unknown[] = [];
        for (const item of valid) out.push((await applyItem(apply, item, itemCtx, options.status)).body);
        return out;
      });
      return options.status === 204 ? undefined : bodies;
    } catch (err) {
      // An override's error reply is the request's answer, as it would be a single item's.
      if (err instanceof FailedItem) return new JsonResponse(err.reply.status, err.reply.body);
      throw err;
    }
  }
  const results: BulkItemResult[] = [];
  for (const [i, item] of items.entries()) {
    const checked = checkBodyValue(options.item, item, [...at, i]);
    if ('entries' in checked) {
      results.push({ status: 422, detail: checked.entries });
      continue;
    }
    try {
      const done = await inTransaction(ctx, (trx) => applyItem(apply, checked.data, { ...ctx, db: trx }, options.status));
      results.push(done.body === undefined ? { status: done.status } : { status: done.status, data: done.body });
    } catch (err) {
      results.push(await failure(ctx, err));
    }
  }
  return results;
}

/** A transaction of the request, begun through the service's gate (transactions.ts) when it has one. */
function inTransaction<T>(ctx: RequestContext, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  const gate = ctx.service?.transactions;
  return gate ? gate.run(ctx.db, ctx.req, work) : ctx.db.transaction(work);
}

/** The result of an item that failed: its error's status and body, as the single-item operation answers it. */
async function failure(ctx: RequestContext, err: unknown): Promise<BulkItemResult> {
  const answer =
    err instanceof FailedItem ? err.reply : await handledError(ctx.service.exceptionHandlers, ctx.req, err, ctx.service.conflicts);
  if (!answer) throw err;
  const { status, body } = answer;
  // `status` first, and the item's own even where an error body has a key of that name.
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return { status, detail: body };
  return Object.assign({ status }, body, { status });
}
