/**
 * Hand-written, as neither Knex nor the drivers tell a query's error from its connection's end:
 * the connections the driver reported broken, by the id Knex gives each connection of its pool and
 * puts in its query events (`__knexUid`, named in Knex's docs of the `query`, `query-error` and
 * `query-response` events). An error a query of such a connection meets is a connection failure,
 * whatever the driver's message (node-postgres gives the queries of a closed connection errors
 * without a code).
 */

/** The ids of the connections reported broken, the oldest first; at most BROKEN_KEPT. */
const broken = new Set<unknown>();

/** Enough for every connection of a few pools broken at once (a connection's id is never reused). */
const BROKEN_KEPT = 1000;

/** Records that the connection Knex calls `uid` broke (its driver's `error` or `end`). */
export function connectionBroke(uid: unknown): void {
  if (uid === undefined) return;
  if (broken.size >= BROKEN_KEPT) broken.delete(broken.values().next().value);
  broken.add(uid);
}

/** Whether the query of a Knex query event (`__knexUid`) ran on a connection reported broken. */
export function ranOnBrokenConnection(query: unknown): boolean {
  const uid = (query as { __knexUid?: unknown } | undefined)?.__knexUid;
  return uid !== undefined && broken.has(uid);
}
