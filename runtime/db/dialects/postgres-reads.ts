/**
 * PostgreSQL's reads, run by Knex with a name in the driver's query config (`.options({ name })`,
 * which Knex mixes into node-postgres's query): outside transactions, by default, each SQL text is
 * prepared once per connection under a name derived from its text (node-postgres then sends only
 * Bind and Execute), so PostgreSQL neither parses nor plans it again. In a transaction, on its
 * connection, always unnamed.
 *
 * Named statements and transaction poolers: PgBouncer in transaction mode (before 1.21, or with
 * `max_prepared_statements = 0`) sends each statement to any server connection, where a statement
 * prepared on another is missing (SQLSTATE 26000) or one of the same name exists already (42P05).
 * A name is the hash of its text, so a statement found under it anywhere is this one; the first
 * 26000 or 42P05 is taken as such a pooler: the read runs again unnamed, and every later read of
 * this database is unnamed. A plan cached before the table changed (0A000, "cached plan must not
 * change result type") runs that text unnamed from then on. `SVC_PG_PREPARED_STATEMENTS=unnamed`
 * (settings.ts) names nothing from the start.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { PostgresSettings } from '../../core/settings';
import type { PooledReads } from './dialect';

type Row = Record<string, any>;

/** SQL texts whose name is kept; beyond, a new text runs unnamed. */
const TEXTS_KEPT = 2000;

/** Statements named per database at most (PostgreSQL keeps each until the connection closes); beyond, unnamed. */
const NAMED_KEPT = 1000;

/** SQLSTATEs of a transaction pooler that does not keep named statements: 26000 invalid_sql_statement_name, 42P05 duplicate_prepared_statement. */
const POOLER_CODES = new Set(['26000', '42P05']);

/** 0A000 feature_not_supported: "cached plan must not change result type" (the table changed under the plan). */
const STALE_PLAN_CODE = '0A000';

/**
 * Whether Knex binds `value` as it is, one placeholder and no SQL of its own (a raw value or a
 * subquery would change the statement's text under the same SQL, so it is never named).
 */
function plain(value: unknown): boolean {
  if (value === null || value instanceof Date || Buffer.isBuffer(value)) return true;
  if (Array.isArray(value)) return value.every(plain);
  const type = typeof value;
  return type === 'string' || type === 'number' || type === 'boolean' || type === 'bigint';
}

export class PostgresReads implements PooledReads {
  private named: boolean;
  private namedCount = 0;
  /** Per SQL text, its statement's name, or null when it runs unnamed. */
  private readonly names = new Map<string, string | null>();
  /** Per transaction, the last read sent in it, settled (see `inTurn`). */
  private readonly running = new WeakMap<Knex, Promise<undefined>>();

  constructor(settings: PostgresSettings) {
    this.named = settings.preparedStatements === 'named';
  }

  async rows(db: Knex, sql: string, bindings: readonly unknown[]): Promise<Row[]> {
    const values = bindings as Knex.RawBinding[];
    if (db.isTransaction) return this.inTurn(db, sql, values);
    const name = this.named ? this.nameOf(sql, bindings) : undefined;
    if (name === undefined) return (await db.raw(sql, values)).rows;
    try {
      return (await db.raw(sql, values).options({ name })).rows;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (typeof code !== 'string') throw err;
      if (POOLER_CODES.has(code)) this.named = false;
      else if (code === STALE_PLAN_CODE) this.names.set(sql, null);
      else throw err;
      return (await db.raw(sql, values)).rows;
    }
  }

  /** The name `sql` is prepared under, or undefined when it runs unnamed. */
  private nameOf(sql: string, bindings: readonly unknown[]): string | undefined {
    const kept = this.names.get(sql);
    if (kept !== undefined) return kept ?? undefined;
    if (!bindings.every(plain)) return undefined;
    let name: string | null = null;
    if (this.namedCount < NAMED_KEPT && this.names.size < TEXTS_KEPT) {
      name = `svc_${createHash('sha1').update(sql).digest('hex').slice(0, 24)}`;
      this.namedCount++;
    }
    if (this.names.size < TEXTS_KEPT) this.names.set(sql, name);
    return name ?? undefined;
  }

  /**
   * A read in a transaction: unnamed (a transaction pooler may have pinned a server connection
   * that lacks the statement, and the error would abort the transaction), and after the reads sent
   * before it in that transaction have answered. The reads of a transaction may be sent together
   * (a record's relations loaded at once); node-postgres would queue them, but warns that a client
   * given a query while it runs another will refuse it in its next major version.
   */
  private async inTurn(trx: Knex, sql: string, values: Knex.RawBinding[]): Promise<Row[]> {
    const before = this.running.get(trx);
    const read = async () => ((await trx.raw(sql, values)) as { rows: Row[] }).rows;
    const run = before ? before.then(read) : read();
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.running.set(trx, settled);
    try {
      return await run;
    } finally {
      if (this.running.get(trx) === settled) this.running.delete(trx);
    }
  }
}
