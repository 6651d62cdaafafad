/**
 * A service's transactions in flight, for a shutdown that cuts no request whose write committed.
 *
 * Every transaction an operation runs (`transaction: true`, a bulk route's) begins through the
 * service's `TransactionGate`, which knows, per request, whether it holds a transaction (`open`)
 * or has passed the point of committing (`committing`: its COMMIT is on its way, or done and the
 * answer not yet sent), until its response is closed. A shutdown (server.ts) asks it:
 * - `refuse()`, once the drain timeout is over: a transaction that begins from then on is rolled
 *   back at once and answered 503 `{"detail": "Service Unavailable"}`; nothing of it is written.
 *   The server then closes the connections of the requests that hold none, and waits for the others;
 * - `abort()`, once that wait is over too: a transaction whose work ends from then on rolls back
 *   (503) instead of committing, so the connections the server closes then have committed nothing.
 *   A request already `committing` is never cut: its answer follows its COMMIT.
 *
 * Each transaction also has a time limit (SVC_DB_TRANSACTION_TIMEOUT, 30 s by default): from then
 * on the statements the runtime's reads and writes would run in it are refused before they reach
 * the database (connection.ts), and its COMMIT is not sent, so it rolls back and is answered 503.
 * A statement already running when the limit passes ends under SVC_DB_STATEMENT_TIMEOUT.
 */
import type { EventEmitter } from 'node:events';
import type { Knex } from 'knex';
import { ServiceUnavailableError } from '../core/errors';
import { limitTransaction, type Db } from '../db/connection';
import { databaseOf } from '../db/database';

/**
 * A transaction that ran past SVC_DB_TRANSACTION_TIMEOUT: the runtime's next statement in it was
 * refused (or its COMMIT not sent), so it rolled back; answered 503 `{"detail": "Service Unavailable"}` with
 * `Retry-After`, as a statement past SVC_DB_STATEMENT_TIMEOUT is.
 */
export class TransactionTimeoutError extends ServiceUnavailableError {
  override readonly message: string;
  constructor(limitMs: number) {
    super();
    this.message = `the transaction ran past SVC_DB_TRANSACTION_TIMEOUT (${limitMs / 1000} s) and was rolled back`;
  }
}

/** Where a request stands with its transaction: one in flight, or past the point of committing. */
export type TransactionHold = 'open' | 'committing';

export class TransactionGate {
  private state: 'open' | 'refusing' | 'aborting' = 'open';
  /** The requests holding a transaction, until their response closes. */
  private readonly held = new Map<object, TransactionHold>();

  /**
   * Runs `work` in a transaction of `db` for `req` (the request, whose response's close releases
   * it); refused (503) once `refuse()` was called, rolled back (503) when its work ends after `abort()`.
   */
  async run<T>(db: Db, req: object | undefined, work: (trx: Knex.Transaction) => T | Promise<T>): Promise<T> {
    const key = req ?? {};
    let release = false;
    try {
      return await db.transaction(async (trx) => {
        // Checked once the transaction has begun (a request waiting for a connection holds nothing).
        if (this.state !== 'open') throw new ServiceUnavailableError();
        if (!this.held.has(key)) release = !this.holdUntilAnswered(key);
        this.held.set(key, 'open');
        const limitMs = databaseOf(db).settings.transactionTimeoutMs;
        const at = Date.now() + limitMs;
        const unlimit = limitMs > 0 ? limitTransaction(trx, at, () => new TransactionTimeoutError(limitMs)) : undefined;
        let result: T;
        try {
          result = await work(trx);
        } finally {
          unlimit?.();
        }
        // Past the time limit, the work's last statement ended after it: no COMMIT either.
        if (limitMs > 0 && Date.now() >= at) throw new TransactionTimeoutError(limitMs);
        if (this.aborting()) throw new ServiceUnavailableError();
        // Set in the same turn as the check above: a shutdown cannot cut the request from here on.
        this.held.set(key, 'committing');
        return result;
      });
    } finally {
      if (release) this.held.delete(key);
    }
  }

  /** Keeps `req` held until its response closes; false when it has none still open (released when its transaction ends). */
  private holdUntilAnswered(req: object): boolean {
    const res = (req as { res?: EventEmitter & { closed?: boolean } }).res;
    if (!res || res.closed) return false;
    res.once('close', () => this.held.delete(req));
    return true;
  }

  /** Whether `abort()` was called (a method: read anew after the work, where a field would stay narrowed). */
  private aborting(): boolean {
    return this.state === 'aborting';
  }

  /** Whether `req` holds a transaction (`open`), has passed the point of committing (`committing`), or neither. */
  holding(req: object): TransactionHold | undefined {
    return this.held.get(req);
  }

  /** From now on, a transaction that begins is rolled back at once and answered 503. */
  refuse(): void {
    if (this.state === 'open') this.state = 'refusing';
  }

  /** From now on, a transaction whose work ends rolls back and is answered 503, unless already committing. */
  abort(): void {
    this.state = 'aborting';
  }
}
