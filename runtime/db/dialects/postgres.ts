/**
 * PostgreSQL's adapter (node-postgres): a `postgres://` or `postgresql://` URL; values parsed as the
 * runtime reads them on every database; errors told apart by SQLSTATE; rows locked with
 * `FOR UPDATE`; migrations locked by an advisory lock.
 */
import { types as pgTypes } from 'pg';
import type { Dialect } from './dialect';

// Type parsers, set once: int8 and counts as numbers (inputs are limited to safe integers), DATE as
// its text (no time-zone shift), JSON as text like SQLite's so one converter serves both.
pgTypes.setTypeParser(20, (v) => Number(v));
pgTypes.setTypeParser(1082, (v) => v);
pgTypes.setTypeParser(114, (v) => v);
pgTypes.setTypeParser(3802, (v) => v);

/**
 * SQLSTATEs of a database that cannot be reached: class 08 (connection exception), 53300
 * too_many_connections, 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now,
 * 57P05 idle_session_timeout.
 */
const UNREACHABLE_CODES = /^(08[0-9A-Z]{3}|53300|57P0[1235])$/;

/**
 * What node-postgres says, without a code, when a connection ends under it or never opens; at the
 * start of the message, or after the statement Knex puts before it (`ROLLBACK - Client has
 * encountered…`: the rollback of a transaction whose connection was terminated under it).
 */
const UNREACHABLE_MESSAGES = /(?:^| - )(Connection terminated|timeout expired|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)/;

/** The advisory lock key of migrating, the same for every service (they wait in turn). */
const MIGRATION_LOCK_KEY = 'svc_migrations';

export const postgres: Dialect = {
  name: 'postgres',
  urlPrefix: 'postgres://',
  limitAsText: false,

  accepts: (url) => /^postgres(ql)?:\/\//.test(url),

  open(url) {
    if (url === undefined) throw new Error('PostgreSQL needs a DATABASE_URL');
    return {
      description: url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@'),
      // `client: 'pg'` by name: migrations written before the adapters tell PostgreSQL by it.
      knex: { client: 'pg', connection: url, pool: { min: 0, max: 10 } },
    };
  },

  // Class 23: integrity constraint violation.
  isConstraintViolation: ({ code }) => typeof code === 'string' && /^23\d{3}$/.test(code),
  isConnectionFailure: ({ code, message }) =>
    (typeof code === 'string' && UNREACHABLE_CODES.test(code)) || (typeof message === 'string' && UNREACHABLE_MESSAGES.test(message)),

  whereLower(query, text, column, comparison, value) {
    const escape = comparison === 'LIKE' ? ` ESCAPE '\\'` : '';
    query.whereRaw(`lower(${text}) ${comparison} lower(?)${escape}`, [column, value]);
  },

  lockForUpdate(query) {
    query.forUpdate();
  },

  /** An advisory lock held by a transaction open for the whole run, released when it ends or its process dies. */
  withMigrationLock(db, run) {
    return db.transaction(async (trx) => {
      await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [MIGRATION_LOCK_KEY]);
      return run();
    });
  },

  runMigrations: (_db, config, run) => run(config),

  async renameForeignKey(knex, table, from, to) {
    await knex.raw('alter table ?? rename constraint ?? to ??', [table, from, to]);
  },

  async listTables(knex) {
    const result = await knex.raw(
      "select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name",
    );
    return (result.rows as { name: string }[]).map((r) => r.name);
  },

  // A serial or identity column's sequence does not see keys given explicitly; a key without one (a UUID) has none.
  async describeKeys(knex, table) {
    const keys = await knex.raw(
      `select c.contype as kind, c.conname as name, c.confdeltype as on_delete, rt.relname as ref_table,
              (select array_agg(a.attname::text order by k.ord) from unnest(c.conkey) with ordinality k(num, ord)
                 join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.num) as columns,
              (select array_agg(a.attname::text order by k.ord) from unnest(c.confkey) with ordinality k(num, ord)
                 join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.num) as ref_columns
         from pg_constraint c join pg_class t on t.oid = c.conrelid left join pg_class rt on rt.oid = c.confrelid
        where t.relname = ? and t.relnamespace = current_schema()::regnamespace and c.contype in ('p', 'f')`,
      [table],
    );
    const indexes = await knex.raw(
      `select i.relname as name, x.indisunique as unique,
              (select array_agg(a.attname::text order by k.ord) from unnest(x.indkey) with ordinality k(num, ord)
                 join pg_attribute a on a.attrelid = x.indrelid and a.attnum = k.num) as columns
         from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
        where t.relname = ? and t.relnamespace = current_schema()::regnamespace and not x.indisprimary
        order by i.relname`,
      [table],
    );
    const ON_DELETE: Record<string, string> = { c: 'cascade', n: 'set null', r: 'restrict', a: 'no action', d: 'set default' };
    const rows = keys.rows as { kind: string; on_delete: string; ref_table: string; columns: string[]; ref_columns: string[] }[];
    return {
      primaryKey: rows.find((r) => r.kind === 'p')?.columns ?? [],
      foreignKeys: rows
        .filter((r) => r.kind === 'f' && r.columns.length === 1)
        .map((r) => ({ column: r.columns[0], table: r.ref_table, refColumn: r.ref_columns[0], onDelete: ON_DELETE[r.on_delete] ?? 'no action' }))
        .sort((a, b) => (a.column < b.column ? -1 : 1)),
      indexes: (indexes.rows as { name: string; unique: boolean; columns: string[] }[]).map((i) => ({ name: i.name, columns: i.columns, unique: i.unique })),
    };
  },

  async syncKeySequence(knex, table, pk) {
    await knex.raw('select setval(pg_get_serial_sequence(?, ?), greatest(coalesce((select max(??) from ??), 0), 1))', [table, pk, pk, table]);
  },
};
