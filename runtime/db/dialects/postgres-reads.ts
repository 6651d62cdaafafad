/**
 * PostgreSQL's reads, run past Knex's runner: each SQL text's driver text (`$1`, `$2`… for its
 * placeholders) is made once. Outside transactions, on a connection of Knex's pool, by default the
 * statement is prepared once per connection under a name derived from its text (node-postgres then
 * sends only Bind and Execute), so PostgreSQL neither parses nor plans it again, and the server skips
 * Knex's per-query work. In a transaction, on its connection, always unnamed: the server still skips
 * Knex's work. Writes run through Knex.
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
import { acquireConnection, inTransaction, nativeQuery, releaseConnection } from '../knex-internals';
import type { PooledReads, PooledStatement } from './dialect';

type Row = Record<string, any>;

/** What the runtime calls on a node-postgres client of Knex's pool. */
interface PgConnection {
  query(config: { text: string; values: unknown[]; name?: string }): Promise<{ rows: Row[] }>;
}

interface Statement extends PooledStatement {
  /** Its name on every connection, or undefined when it runs unnamed. */
  name: string | undefined;
}

/** SQL texts whose driver text is kept; beyond, a new text is converted on every read. */
const TEXTS_KEPT = 2000;

/** Statements named per connection at most (PostgreSQL keeps each until the connection closes); beyond, unnamed. */
const NAMED_KEPT = 1000;

/** SQLSTATEs of a transaction pooler that does not keep named statements: 26000 invalid_sql_statement_name, 42P05 duplicate_prepared_statement. */
const POOLER_CODES = new Set(['26000', '42P05']);

/** 0A000 feature_not_supported: "cached plan must not change result type" (the table changed under the plan). */
const STALE_PLAN_CODE = '0A000';

export class PostgresReads implements PooledReads {
  private named: boolean;
  private namedCount = 0;
  private readonly texts = new Map<string, Statement | null>();
  /** Per transaction's connection, the last read sent on it, settled (see `inTurn`). */
  private readonly running = new WeakMap<PgConnection, Promise<undefined>>();

  constructor(settings: PostgresSettings) {
    this.named = settings.preparedStatements === 'named';
  }

  statement(client: Knex.Client, sql: string, bindings: readonly unknown[]): Statement | undefined {
    const kept = this.texts.get(sql);
    if (kept !== undefined) return kept ?? undefined;
    const made = this.make(client, sql, bindings);
    if (this.texts.size < TEXTS_KEPT) this.texts.set(sql, made);
    return made ?? undefined;
  }

  /** The driver text of `sql`, or null when Knex changes its bindings (then Knex runs it). */
  private make(client: Knex.Client, sql: string, bindings: readonly unknown[]): Statement | null {
    const native = nativeQuery(client, sql, bindings);
    if (native.bindings.length !== bindings.length || native.bindings.some((b, i) => b !== bindings[i])) return null;
    let name: string | undefined;
    if (this.named && this.namedCount < NAMED_KEPT && this.texts.size < TEXTS_KEPT) {
      name = `svc_${createHash('sha1').update(native.sql).digest('hex').slice(0, 24)}`;
      this.namedCount++;
    }
    return { text: native.sql, name };
  }

  async rows(client: Knex.Client, statement: PooledStatement, bindings: readonly unknown[]): Promise<Row[]> {
    const s = statement as Statement;
    const values = bindings as unknown[];
    const connection = (await acquireConnection(client)) as PgConnection;
    if (inTransaction(client)) return this.inTurn(connection, s.text, values);
    try {
      const name = this.named ? s.name : undefined;
      if (name === undefined) return (await connection.query({ text: s.text, values })).rows;
      try {
        return (await connection.query({ text: s.text, values, name })).rows;
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        if (typeof code !== 'string') throw err;
        if (POOLER_CODES.has(code)) this.named = false;
        else if (code === STALE_PLAN_CODE) s.name = undefined;
        else throw err;
        return (await connection.query({ text: s.text, values })).rows;
      }
    } finally {
      await releaseConnection(client, connection);
    }
  }

  /**
   * A read on a transaction's connection: unnamed (a transaction pooler may have pinned a server
   * connection that lacks the statement, and the error would abort the transaction), and after the
   * reads sent before it on that connection have answered. The reads of a transaction may be sent
   * together (a record's relations loaded at once); node-postgres would queue them, but warns that
   * a client given a query while it runs another will refuse it in its next major version.
   */
  private async inTurn(connection: PgConnection, text: string, values: unknown[]): Promise<Row[]> {
    const before = this.running.get(connection);
    const run = before ? before.then(() => connection.query({ text, values })) : connection.query({ text, values });
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.running.set(connection, settled);
    try {
      return (await run).rows;
    } finally {
      if (this.running.get(connection) === settled) this.running.delete(connection);
    }
  }
}
