/**
 * PostgreSQL's adapter (node-postgres): a `postgres://` or `postgresql://` URL; values parsed as the
 * runtime reads them on every database; errors told apart by SQLSTATE; rows locked with
 * `FOR UPDATE`; migrations locked by an advisory lock.
 */
import * as net from 'node:net';
import type { types as PgTypes } from 'pg';
import type { Knex } from 'knex';
import type { ListItemType } from '../../core/catalogue';
import { loadPostgresSettings } from '../../core/settings';
import { connectionBroke } from '../broken-connections';
import { DatabaseTimeoutError, type ConstraintViolation, type Dialect, type DriverError } from './dialect';
import { PostgresReads } from './postgres-reads';

// Type parsers, set once: int8 and counts as numbers (inputs are limited to safe integers), DATE as
// its text (no time-zone shift), JSON as text like SQLite's so one converter serves both.
// Set when the first PostgreSQL database opens: pg is an optional peer, loaded only then.
let typeParsersSet = false;
function setTypeParsers(): void {
  if (typeParsersSet) return;
  typeParsersSet = true;
  const pgTypes = (require('pg') as { types: typeof PgTypes }).types;
  pgTypes.setTypeParser(20, (v) => Number(v));
  pgTypes.setTypeParser(1082, (v) => v);
  pgTypes.setTypeParser(114, (v) => v);
  pgTypes.setTypeParser(3802, (v) => v);
  // Arrays (list fields): of int8 as numbers, of DATE as text, as their items are read.
  // (Array type ids are not among the typed built-ins.)
  const arrayParser = pgTypes.getTypeParser as unknown as (oid: number) => (v: string) => string[];
  const setArrayParser = pgTypes.setTypeParser as unknown as (oid: number, parse: (v: string) => unknown) => void;
  const parseTextArray = arrayParser(1009);
  setArrayParser(1016, (v) => parseTextArray(v).map(Number));
  setArrayParser(1182, (v) => parseTextArray(v));
}

/** The catalogue's names of the item types whose SQL name differs (an array of `integer` is `_int4`). */
const UDT_NAMES: Record<string, string> = { integer: 'int4', bigint: 'int8', 'double precision': 'float8', boolean: 'bool' };

/** The PostgreSQL type of a list field's items (its column is an array of them). */
const ARRAY_ITEM_TYPES: Record<ListItemType, string> = {
  string: 'text',
  integer: 'integer',
  big_integer: 'bigint',
  float: 'double precision',
  boolean: 'boolean',
  uuid: 'uuid',
  date: 'date',
};

/**
 * SQLSTATEs of a database that cannot be reached or cannot answer in time: class 08 (connection
 * exception), 53300 too_many_connections, 57014 query_canceled (the statement timeout), 57P01
 * admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 57P05 idle_session_timeout.
 * What node-postgres throws without a code when a connection ends under it, or never opens, is
 * marked where it happens instead (a connection's `error` and `end` below, with
 * broken-connections.ts, and the pool's failed acquisitions in connection.ts): its message may
 * follow the statement Knex puts before it.
 */
const UNREACHABLE_CODES = /^(08[0-9A-Z]{3}|53300|57014|57P0[1235])$/;

/** Seconds more than the statement timeout a connection may stay silent before it is given up. */
const READ_GRACE_MS = 1000;

/** Node's socket methods, which `AnsweredSocket`'s own call. */
const SOCKET = net.Socket.prototype;

/**
 * The socket of a connection (node-postgres's `stream` option: the socket it connects and speaks
 * through), which closes with `silence()` when the server has sent nothing for `readTimeoutMs`
 * since the client last wrote to it: a statement the server never answers (a network path gone
 * silent) fails with that error, its connection closed, where node-postgres's own `query_timeout`
 * leaves the connection open and waiting. A statement the server is running answers within the
 * statement timeout, which is shorter. An idle connection wrote nothing and is never timed out.
 * Over TLS, node-postgres speaks through a TLS socket wrapped around this one, whose reads and
 * writes bypass it: such a connection is only bounded by its keep-alive. Hand-written: neither
 * node-postgres nor Knex closes a connection whose server stopped answering.
 */
class AnsweredSocket extends net.Socket {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly readTimeoutMs: number,
    private readonly silence: () => Error,
  ) {
    super();
    this.on('data', () => this.answered());
    this.once('close', () => this.answered());
  }

  // Writable's own hooks (net.Socket resets an instance's `write` once it connects).
  override _write(chunk: unknown, encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.sent();
    SOCKET._write.call(this, chunk, encoding, callback);
  }

  override _writev(chunks: { chunk: unknown; encoding: BufferEncoding }[], callback: (error?: Error | null) => void): void {
    this.sent();
    SOCKET._writev!.call(this, chunks, callback);
  }

  private sent(): void {
    if (this.timer !== undefined || this.destroyed) return;
    this.timer = setTimeout(() => this.destroy(this.silence()), this.readTimeoutMs);
    this.timer.unref();
  }

  private answered(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** A WAL LSN as PostgreSQL writes it: two hexadecimal numbers of at most 32 bits. */
const LSN = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i;

function lsnValue(text: string): bigint {
  const [, high, low] = LSN.exec(text) ?? ['', '0', '0'];
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

/** What the pool's `afterCreate` uses of a node-postgres Client: its documented `error` and `end` events. */
interface PgEvents {
  on(event: 'error' | 'end', listener: () => void): unknown;
}

/** The advisory lock key of migrating, the same for every service (they wait in turn). */
const MIGRATION_LOCK_KEY = 'svc_migrations';

export const postgres: Dialect = {
  name: 'postgres',
  urlPrefix: 'postgres://',
  limitAsText: false,
  booleansAsText: false,
  transactionalSchemaChanges: true,
  insertReturnsRows: true,
  joinsManyToMany: true,

  accepts: (url) => /^postgres(ql)?:\/\//.test(url),

  /**
   * The timeouts are the driver's, per connection, never a session `SET` (which a transaction-mode
   * pooler such as PgBouncer would not keep): `statement_timeout` is sent with each connection's
   * start-up, opening a connection is given up after the connect timeout (the pool's
   * `createTimeoutMillis`; the driver's own, a second later, closes the socket), and a statement
   * the server does not answer at all within the statement timeout and a second more closes its
   * connection (`AnsweredSocket`). Knex's pool waits at most the acquire timeout for a connection.
   * A connection node-postgres reports broken (its `error` or `end` event, before it fails the
   * queries pending on it) is recorded by the id Knex gave it, so that what its queries then meet
   * is a connection failure (connection.ts).
   */
  open(url, { database }) {
    if (url === undefined) throw new Error('PostgreSQL needs a DATABASE_URL');
    setTypeParsers();
    const { connectTimeoutMs, acquireTimeoutMs, statementTimeoutMs, poolMax } = database;
    const readTimeoutMs = statementTimeoutMs > 0 ? statementTimeoutMs + READ_GRACE_MS : 0;
    const timeout = () => new DatabaseTimeoutError(`the database did not answer within ${readTimeoutMs} ms`);
    return {
      description: url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@'),
      knex: {
        // `client: 'pg'` by name: migrations written before the adapters tell PostgreSQL by it.
        client: 'pg',
        connection: {
          connectionString: url,
          connectionTimeoutMillis: connectTimeoutMs + READ_GRACE_MS,
          keepAlive: true,
          ...(readTimeoutMs > 0 ? { stream: () => new AnsweredSocket(readTimeoutMs, timeout) } : {}),
          ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs } : {}),
        },
        acquireConnectionTimeout: acquireTimeoutMs,
        pool: {
          min: 0,
          max: poolMax,
          createTimeoutMillis: connectTimeoutMs,
          afterCreate(client: PgEvents, done: (err: unknown, client: unknown) => void) {
            // Knex names the connection (`__knexUid`, as its query events carry it) before this hook.
            const uid = (client as { __knexUid?: unknown }).__knexUid;
            client.on('error', () => connectionBroke(uid));
            client.on('end', () => connectionBroke(uid));
            done(null, client);
          },
        },
      },
      pooled: new PostgresReads(loadPostgresSettings()),
    };
  },

  // Class 23: integrity constraint violation.
  isConstraintViolation: ({ code }) => typeof code === 'string' && /^23\d{3}$/.test(code),
  constraintOf,
  isConnectionFailure: ({ code }) => typeof code === 'string' && UNREACHABLE_CODES.test(code),

  whereLower(query, text, column, comparison, value) {
    const escape = comparison === 'LIKE' ? ` ESCAPE '\\'` : '';
    query.whereRaw(`lower(${text}) ${comparison} lower(?)${escape}`, [column, value]);
  },

  whereLike(query, text, column, pattern) {
    query.whereRaw(`${text} LIKE ? ESCAPE '\\'`, [column, pattern]);
  },

  asText: (text) => `CAST(${text} AS TEXT)`,

  // `@>` (holds every value) and `&&` (shares one) compare the array's items as their type does.
  whereList(query, column, items, op, values) {
    const type = ARRAY_ITEM_TYPES[items];
    query.whereRaw(`?? ${op === 'contains' ? '@>' : '&&'} ARRAY[${values.map(() => `?::${type}`).join(', ')}]`, [
      column,
      ...values,
    ] as Knex.Value[]);
  },

  listColumnType: (items) => `${ARRAY_ITEM_TYPES[items]}[]`,

  // An array literal: every item double-quoted, with `"` and `\` escaped.
  listLiteral: (_items, values) => `{${values.map((v) => `"${String(v).replace(/["\\]/g, (c) => `\\${c}`)}"`).join(',')}}`,

  rowsOf: (result) => (result as { rows: Record<string, any>[] }).rows,

  // Knex's compiler writes the insert's RETURNING.
  returning: (query, _rows, columns) => query.returning(columns as string[]),

  async writtenRows(db, sql, bindings) {
    const result = await db.raw(sql, bindings as Knex.RawBinding[]);
    return (result as { rows: Record<string, any>[] }).rows;
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

  /**
   * A GIN index of the trigrams of `lower(column)` (the pg_trgm extension, trusted since
   * PostgreSQL 13: a database owner may create it): it serves `lower(column) LIKE lower(?)`, the
   * shape `whereLower` writes, and `lower(column) = lower(?)`, whatever the pattern's position in
   * the text, so a substring search reads the rows holding its trigrams instead of every row.
   * Results are the same as without it (the index only chooses the rows the condition then checks).
   */
  async createSearchIndex(knex, table, column, name) {
    await knex.raw('create extension if not exists pg_trgm');
    await knex.raw('create index ?? on ?? using gin (lower(??) gin_trgm_ops)', [name, table, column]);
  },

  async dropSearchIndex(knex, _table, name) {
    await knex.raw('drop index if exists ??', [name]);
  },

  async renameSearchIndex(knex, _table, from, to) {
    await knex.raw('alter index ?? rename to ??', [from, to]);
  },

  // Under the C collation lower() folds the ASCII letters only, whatever the database's locale.
  foldedColumnSql: 'lower(?? collate "C")',

  async createFoldedUnique(knex, table, column, name, whereNull) {
    const where = whereNull ? ' where ?? is null' : '';
    await knex.raw(`create unique index ?? on ?? (lower(?? collate "C"))${where}`, [
      name,
      table,
      column,
      ...(whereNull ? [whereNull] : []),
    ]);
  },

  async dropFoldedUnique(knex, _table, name) {
    await knex.raw('drop index if exists ??', [name]);
  },

  // Positions are WAL LSNs: the primary's insert position (with asynchronous commit the write
  // position may still be before a commit record just made), a standby's last replayed one.
  positions: {
    currentSql: 'select pg_current_wal_insert_lsn()::text as position',
    replayedSql: 'select pg_last_wal_replay_lsn()::text as position',
    valid: (text) => LSN.test(text),
    reached: (replayed, wanted) => lsnValue(replayed) >= lsnValue(wanted),
  },

  async listTables(knex) {
    const result = await knex.raw(
      "select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name",
    );
    return (result.rows as { name: string }[]).map((r) => r.name);
  },

  // Indexes of expressions (a search index of lower(column)) are left out: specs derive those.
  async listColumns(knex, table) {
    const { rows } = await knex.raw(
      `select column_name as name, udt_name as udt from information_schema.columns
        where table_schema = current_schema() and table_name = ? and data_type = 'ARRAY' order by ordinal_position`,
      [table],
    );
    const items = Object.fromEntries(
      Object.entries(ARRAY_ITEM_TYPES).map(([item, type]) => [`_${UDT_NAMES[type] ?? type}`, item as ListItemType]),
    );
    return Object.fromEntries((rows as { name: string; udt: string }[]).filter((r) => items[r.udt]).map((r) => [r.name, items[r.udt]]));
  },

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
          and x.indexprs is null
        order by i.relname`,
      [table],
    );
    const ON_DELETE: Record<string, string> = { c: 'cascade', n: 'set null', r: 'restrict', a: 'no action', d: 'set default' };
    const rows = keys.rows as { kind: string; on_delete: string; ref_table: string; columns: string[]; ref_columns: string[] }[];
    return {
      primaryKey: rows.find((r) => r.kind === 'p')?.columns ?? [],
      foreignKeys: rows
        .filter((r) => r.kind === 'f' && r.columns.length === 1)
        .map((r) => ({
          column: r.columns[0],
          table: r.ref_table,
          refColumn: r.ref_columns[0],
          onDelete: ON_DELETE[r.on_delete] ?? 'no action',
        }))
        .sort((a, b) => (a.column < b.column ? -1 : 1)),
      indexes: (indexes.rows as { name: string; unique: boolean; columns: string[] }[]).map((i) => ({
        name: i.name,
        columns: i.columns,
        unique: i.unique,
      })),
    };
  },

  // A serial or identity column's sequence does not see keys given explicitly; a key without one (a UUID) has none.
  async syncKeySequence(knex, table, pk) {
    await knex.raw('select setval(pg_get_serial_sequence(?, ?), greatest(coalesce((select max(??) from ??), 0), 1))', [
      table,
      pk,
      pk,
      table,
    ]);
  },
};

/**
 * What PostgreSQL says of a constraint it refused: its name and table (node-postgres's `constraint`
 * and `table`), and in the detail the key's columns (`Key (article_id, user_id)=(1, 2) already
 * exists.`) or, for a foreign key, whether the row is still referenced (`Key (id)=(1) is still
 * referenced from table "articles".`) or refers to a missing one (`… is not present in table …`).
 */
function constraintOf({ code, constraint, table, detail }: DriverError): ConstraintViolation | undefined {
  if (typeof code !== 'string' || !/^23\d{3}$/.test(code)) return undefined;
  const named = {
    ...(typeof constraint === 'string' ? { constraint } : {}),
    ...(typeof table === 'string' ? { table } : {}),
  };
  const text = typeof detail === 'string' ? detail : '';
  if (code === '23505') {
    const key = /^Key \((.+?)\)=\(/.exec(text);
    const columns = key?.[1].split(', ').map((c) => c.replace(/^"(.*)"$/, '$1'));
    return { kind: 'unique', ...named, ...(columns && columns.every((c) => /^[\w$]+$/.test(c)) ? { columns } : {}) };
  }
  if (code === '23503') {
    return {
      kind: 'foreign_key',
      ...named,
      ...(/ is still referenced from table /.test(text)
        ? { stillReferenced: true }
        : / is not present in table /.test(text)
          ? { stillReferenced: false }
          : {}),
    };
  }
  return { kind: 'other', ...named };
}
