/**
 * MySQL's and MariaDB's adapter (Knex's `mysql2` client, its sessions set up by mysql-session.ts): a
 * `mysql://` or `mariadb://` URL; strict sessions in UTC; errors told apart by SQLSTATE and the driver's codes;
 * case-insensitive matching on the bytes of PostgreSQL-style lowercased text whatever the column's
 * collation; rows locked with `FOR UPDATE`; migrations locked with `GET_LOCK`; a foreign key renamed
 * by dropping it and adding it again under its new name; an insert's rows returned by MariaDB's
 * `INSERT … RETURNING`, or on MySQL, which has none, from the result header; migrations' schema
 * statements as PostgreSQL's (mysql-schema.ts).
 */
import type { Knex } from 'knex';
import type { ConstraintViolation, Dialect, DriverError } from './dialect';
import { migrationKnex } from './mysql-schema';
import { serverOf, sessionOptions } from './mysql-session';
import { unicodeLower } from './sqlite';

type Row = Record<string, unknown>;

/**
 * `??` with the ASCII letters folded to lower case, byte for byte as PostgreSQL's `lower(… collate
 * "C")` and SQLite's `lower()` fold them: MySQL's LOWER() also folds every other letter of utf8mb4.
 */
const FOLDED_COLUMN_SQL = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZ'].reduce((sql, c) => `replace(${sql}, '${c}', '${c.toLowerCase()}')`, '??');

/**
 * mysql2's codes of a server that cannot be reached or dropped the connection: connection lost
 * or refused by the server (too many connections, shutting down, killed), or a handshake that
 * never finished.
 */
const UNREACHABLE_CODES = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  'PROTOCOL_ENQUEUE_AFTER_QUIT',
  'ER_CON_COUNT_ERROR',
  'ER_TOO_MANY_USER_CONNECTIONS',
  'ER_SERVER_SHUTDOWN',
  'ER_CONNECTION_KILLED',
  'ER_NORMAL_SHUTDOWN',
  'ER_HOST_IS_BLOCKED',
  'ER_HOST_NOT_PRIVILEGED',
  'ER_CLIENT_INTERACTION_TIMEOUT',
]);

/**
 * Server errors by number: 1040 too many connections, 1053 shutdown in progress, 1927 connection
 * killed, 2002/2003/2006/2013 client errors of a lost server; 1969 MariaDB's max_statement_time and
 * 3024 MySQL's max_execution_time exceeded (SVC_DB_STATEMENT_TIMEOUT, as PostgreSQL's 57014).
 */
const UNREACHABLE_ERRNOS = new Set([1040, 1053, 1077, 1152, 1927, 1969, 2002, 2003, 2006, 2013, 3024, 4031]);

/** What mysql2 says, without a code, of a query sent on a connection that already closed. */
const UNREACHABLE_MESSAGES =
  /(?:^| - )(Can't add new command when connection is in closed state|Connection lost: The server closed the connection)/;

/** The named lock of migrating, the same for every service on a server (they wait in turn). */
const MIGRATION_LOCK = 'svc_migrations';
/** Seconds an instance waits for another's migration before giving up. */
const MIGRATION_LOCK_WAIT_S = 120;

/** The columns each insert made by `returning` answers, and the rows it inserts (MySQL reads its keys from them). */
const returningOf = new WeakMap<Knex.QueryBuilder, { columns: readonly string[]; rows: readonly Row[] }>();

/** `name` quoted as an identifier. */
const quoted = (name: string) => `\`${name.replace(/`/g, '``')}\``;

/**
 * The rows an insert answering `column` inserted, from mysql2's result header (MySQL has no
 * RETURNING): none when an `INSERT IGNORE` inserted nothing (or an insert's guard refused it), else
 * the value given, or the auto-increment id. A column that is neither cannot be returned.
 */
function returnedRows(header: { affectedRows?: number; insertId?: number } | undefined, column: string, values: readonly Row[]): Row[] {
  const inserted = header?.affectedRows ?? 0;
  if (inserted === 0) return [];
  if (values.length === 1 && values[0][column] !== undefined) return [{ [column]: values[0][column] }];
  // Several rows: their auto-increment ids follow the first (a multi-row insert takes them at once).
  return Array.from({ length: inserted }, (_, i) => ({ [column]: values[i]?.[column] ?? (header?.insertId ?? 0) + i }));
}

export const mysql: Dialect = {
  name: 'mysql',
  urlPrefix: 'mysql://',
  limitAsText: false,
  booleansAsText: false,
  transactionalSchemaChanges: false,
  insertReturnsRows: false,
  joinsManyToMany: true,

  accepts: (url) => /^(mysql|mariadb):\/\//.test(url),

  open(url, { database }) {
    if (url === undefined) throw new Error('MySQL needs a DATABASE_URL');
    // The timeouts of settings.ts: opening a connection, waiting for one of the pool; a statement's
    // own time limit is a session variable each connection sets (mysql-session.ts).
    const { connectTimeoutMs, acquireTimeoutMs, statementTimeoutMs, poolMax } = database;
    const { connection, afterCreate } = sessionOptions(
      {
        uri: url.replace(/^mariadb:/, 'mysql:'),
        charset: 'UTF8MB4_BIN',
        // DATE as its text (no time-zone shift), as on PostgreSQL; datetimes are text already (mysql-session.ts).
        dateStrings: true,
        timezone: 'Z',
        // JSON as text, as on the other databases (MySQL's JSON type would be parsed by mysql2).
        jsonStrings: true,
        connectTimeout: connectTimeoutMs,
      } as Knex.MySql2ConnectionConfig,
      statementTimeoutMs,
    );
    return {
      description: url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@'),
      knex: {
        client: 'mysql2',
        connection,
        acquireConnectionTimeout: acquireTimeoutMs,
        pool: { min: 0, max: poolMax, createTimeoutMillis: connectTimeoutMs, afterCreate },
      },
    };
  },

  // SQLSTATE class 23: integrity constraint violation (duplicate key, foreign key, NOT NULL, CHECK).
  isConstraintViolation: ({ sqlState }) => typeof sqlState === 'string' && sqlState.startsWith('23'),
  constraintOf,
  isConnectionFailure: ({ code, errno, message, fatal }) =>
    (typeof code === 'string' && UNREACHABLE_CODES.has(code)) ||
    (typeof errno === 'number' && UNREACHABLE_ERRNOS.has(errno)) ||
    (fatal === true && typeof code === 'string' && !code.startsWith('ER_')) ||
    (typeof message === 'string' && UNREACHABLE_MESSAGES.test(message)),

  /**
   * MySQL quotes the value in its messages with single quotes: a duplicate key's (`Duplicate entry
   * '…' for key 'name'`) and a data exception's (SQLSTATE class 22: `Incorrect integer value: '…'
   * for column …`). Those are replaced by `'?'`.
   */
  messageWithoutValues({ code, sqlState }, message) {
    if (code === 'ER_DUP_ENTRY') return message.replace(/(Duplicate entry )'(?:[^'\\]|\\.|'')*'/, "$1'?'");
    if (typeof sqlState === 'string' && sqlState.startsWith('22')) return message.replace(/'(?:[^'\\]|\\.|'')*'/g, "'?'");
    return message;
  },

  /**
   * The column lowercased by the server's lower() under a collation that folds by a recent Unicode
   * (`foldingCollation`, mysql-session.ts), the value as PostgreSQL lowercases it (`unicodeLower`),
   * compared as bytes (`binary`): the column's collation (case- or accent-insensitive, padded) has
   * no say, so the matches are PostgreSQL's. A LIKE pattern has no `_` wildcard here (escaped), so a byte is never matched by
   * position alone; `%` matches whole characters of UTF-8 text on either side.
   */
  whereLower(query, text, column, comparison, value) {
    const escape = comparison === 'LIKE' ? ` ESCAPE '\\\\'` : '';
    const folding = serverOf(query.client).foldingCollation;
    query.whereRaw(`cast(lower(convert(${text} using utf8mb4) collate ${folding}) as binary) ${comparison} ?${escape}`, [
      column,
      unicodeLower(value),
    ]);
  },

  whereLike(query, text, column, pattern) {
    query.whereRaw(`cast(${text} as binary) LIKE cast(? as binary) ESCAPE '\\\\'`, [column, pattern]);
  },

  asText: (text) => `CAST(${text} AS CHAR)`,

  // The list's items as rows (JSON_TABLE, MySQL 8 and MariaDB 10.6), each typed as its item type
  // (text compared as bytes), read once per row and matched against the values in one `IN`:
  // `contains` counts the distinct values found, `overlap` asks for one. (JSON_CONTAINS once per
  // value would read the whole list once per value: 930 values over 140,000 items took 22 s.)
  // Booleans, which have two values, keep JSON_CONTAINS.
  whereList(query, column, items, op, values) {
    if (items === 'boolean') {
      const each = values.map(() => 'JSON_CONTAINS(??, ?)').join(op === 'contains' ? ' AND ' : ' OR ');
      query.whereRaw(
        `(${each})`,
        values.flatMap((v) => [column, JSON.stringify(v)]),
      );
      return;
    }
    const type =
      items === 'integer' || items === 'big_integer'
        ? 'bigint'
        : items === 'float'
          ? 'double'
          : `text character set utf8mb4 collate ${serverOf(query.client).binaryCollation}`;
    const rows = `json_table(??, '$[*]' columns (item ${type} path '$')) as list_items where item in (${values.map(() => '?').join(', ')})`;
    const sql = op === 'contains' ? `(select count(distinct item) from ${rows}) = ${values.length}` : `exists (select 1 from ${rows})`;
    query.whereRaw(sql, [column, ...values] as Knex.Value[]);
  },

  listColumnType: () => 'json',

  listLiteral: (_items, values) => JSON.stringify(values),

  rowsOf(result) {
    const [rows] = result as [unknown];
    return Array.isArray(rows) ? rows : [];
  },

  // Knex's MySQL compiler has no `returning` (it warns and leaves it out): the insert is kept as it
  // is, and `writtenRows` answers the columns.
  returning(query, rows, columns) {
    returningOf.set(query, { columns, rows: Array.isArray(rows) ? rows : [rows] });
    return query;
  },

  /**
   * An insert `returning` made: on MariaDB its text with `returning …` (none of a row INSERT IGNORE
   * skipped or a guard refused), on MySQL the rows of its result header (`returnedRows`). Whether
   * the server is MariaDB is known once a connection was made: before, one is.
   */
  async writtenRows(db, sql, bindings, query) {
    const wanted = returningOf.get(query);
    if (!wanted) return mysql.rowsOf(await db.raw(sql, bindings as Knex.RawBinding[]));
    if (!serverOf(db.client).checked) await db.raw('select 1');
    if (serverOf(db.client).mariadb) {
      const [rows] = (await db.raw(`${sql} returning ${wanted.columns.map(quoted).join(', ')}`, bindings as Knex.RawBinding[])) as [Row[]];
      return rows;
    }
    const [header] = (await db.raw(sql, bindings as Knex.RawBinding[])) as [{ affectedRows?: number; insertId?: number }];
    return returnedRows(header, wanted.columns[0], wanted.rows);
  },

  migrationKnex,

  lockForUpdate(query) {
    query.forUpdate();
  },

  /**
   * A named lock (`GET_LOCK`), held by a transaction's connection for the whole run and released
   * with it, or when its connection or process dies.
   */
  withMigrationLock(db, run) {
    return db.transaction(async (trx) => {
      const [[{ locked }]] = (await trx.raw('select get_lock(?, ?) as locked', [MIGRATION_LOCK, MIGRATION_LOCK_WAIT_S])) as [
        { locked: number | null }[],
      ];
      if (locked !== 1) throw new Error(`migrations: another process has been migrating for ${MIGRATION_LOCK_WAIT_S} s`);
      try {
        return await run();
      } finally {
        await trx.raw('select release_lock(?)', [MIGRATION_LOCK]);
      }
    });
  },

  runMigrations: (_db, config, run) => run(config),

  /**
   * MySQL cannot rename a constraint: the foreign key is dropped and added again, as it was, under
   * its new name, and the index named after it is renamed with it.
   */
  async renameForeignKey(knex, table, from, to) {
    const [rows] = (await knex.raw(
      `select k.column_name as col, k.referenced_table_name as ref_table, k.referenced_column_name as ref_col, r.delete_rule as on_delete, r.update_rule as on_update
         from information_schema.key_column_usage k
         join information_schema.referential_constraints r
           on r.constraint_schema = k.constraint_schema and r.constraint_name = k.constraint_name and r.table_name = k.table_name
        where k.table_schema = database() and k.table_name = ? and k.constraint_name = ?
        order by k.ordinal_position`,
      [table, from],
    )) as [{ col: string; ref_table: string; ref_col: string; on_delete: string; on_update: string }[]];
    if (!rows.length) return;
    const [{ ref_table, on_delete, on_update }] = rows;
    const cols = rows.map((r) => r.col);
    const refs = rows.map((r) => r.ref_col);
    const list = (names: string[]) => names.map(() => '??').join(', ');
    await knex.raw(`alter table ?? drop foreign key ??`, [table, from]);
    // The index InnoDB made for the key (or the adapter, see mysql-schema.ts) follows its name.
    const [[{ n }]] = (await knex.raw(
      'select count(*) as n from information_schema.statistics where table_schema = database() and table_name = ? and index_name = ?',
      [table, from],
    )) as [{ n: number }[]];
    if (Number(n) > 0) await knex.raw('alter table ?? rename index ?? to ??', [table, from, to]);
    await knex.raw(
      `alter table ?? add constraint ?? foreign key (${list(cols)}) references ?? (${list(refs)}) on delete ${on_delete} on update ${on_update}`,
      [table, to, ...cols, ref_table, ...refs],
    );
  },
  foldedColumnSql: FOLDED_COLUMN_SQL,

  /**
   * MySQL has no expression index in MariaDB: the folded value is an invisible generated column,
   * named as the index, as long as its column, and NULL for a deleted row, which never clashes.
   */
  async createFoldedUnique(knex, table, column, name, whereNull) {
    const [[info]] = (await knex.raw(
      'select character_maximum_length as length from information_schema.columns where table_schema = database() and table_name = ? and column_name = ?',
      [table, column],
    )) as [{ length: number | null }[]];
    const length = Number(info?.length);
    if (!Number.isSafeInteger(length) || length < 1 || length > 16_383)
      throw new Error(`${table}.${column}: a case-insensitive unique column needs a length (max_length)`);
    const value = whereNull ? `(case when ?? is null then ${FOLDED_COLUMN_SQL} end)` : FOLDED_COLUMN_SQL;
    await knex.raw(`alter table ?? add column ?? varchar(${length}) as (${value}) virtual invisible, add unique index ?? (??)`, [
      table,
      name,
      ...(whereNull ? [whereNull] : []),
      column,
      name,
      name,
    ]);
  },

  async dropFoldedUnique(knex, table, name) {
    await knex.raw('alter table ?? drop index ??, drop column ??', [table, name, name]);
  },

  async listTables(knex) {
    const [rows] = (await knex.raw(
      "select table_name as name from information_schema.tables where table_schema = database() and table_type = 'BASE TABLE' order by table_name",
    )) as [{ name: string }[]];
    return rows.map((r) => r.name);
  },

  // AUTO_INCREMENT moves past every key inserted, explicit ones too: nothing to move.
  async syncKeySequence() {},

  async describeKeys(knex, table) {
    const [keys] = (await knex.raw(
      `select k.constraint_name as name, k.column_name as col, k.referenced_table_name as ref_table,
              k.referenced_column_name as ref_col, r.delete_rule as on_delete
         from information_schema.key_column_usage k
         left join information_schema.referential_constraints r
           on r.constraint_schema = k.constraint_schema and r.constraint_name = k.constraint_name and r.table_name = k.table_name
        where k.table_schema = database() and k.table_name = ?
        order by k.constraint_name, k.ordinal_position`,
      [table],
    )) as [{ name: string; col: string; ref_table: string | null; ref_col: string | null; on_delete: string | null }[]];
    const [indexRows] = (await knex.raw(
      `select index_name as name, non_unique as non_unique, column_name as col from information_schema.statistics
        where table_schema = database() and table_name = ? and index_name <> 'PRIMARY' and column_name is not null
        order by index_name, seq_in_index`,
      [table],
    )) as [{ name: string; non_unique: number | string; col: string }[]];
    const foreignKeyNames = new Set(keys.filter((k) => k.ref_table !== null).map((k) => k.name));
    const indexes = new Map<string, { name: string; columns: string[]; unique: boolean }>();
    for (const r of indexRows) {
      // InnoDB's own index for a foreign key carries the constraint's name: the key's, not the spec's.
      if (foreignKeyNames.has(r.name)) continue;
      const index = indexes.get(r.name) ?? { name: r.name, columns: [], unique: Number(r.non_unique) === 0 };
      index.columns.push(r.col);
      indexes.set(r.name, index);
    }
    const byName = new Map<string, typeof keys>();
    for (const k of keys.filter((k) => k.ref_table !== null)) byName.set(k.name, [...(byName.get(k.name) ?? []), k]);
    return {
      primaryKey: keys.filter((k) => k.name === 'PRIMARY').map((k) => k.col),
      foreignKeys: [...byName.values()]
        .filter((cols) => cols.length === 1)
        .map(([k]) => ({
          column: k.col,
          table: k.ref_table as string,
          refColumn: k.ref_col as string,
          onDelete: (k.on_delete ?? 'NO ACTION').toLowerCase(),
        }))
        .sort((a, b) => (a.column < b.column ? -1 : 1)),
      indexes: [...indexes.values()].sort((a, b) => (a.name < b.name ? -1 : 1)),
    };
  },
};

/**
 * What MySQL says of a constraint it refused. mysql2 gives no constraint fields, so the kind comes
 * from the error number and the names from the message's fixed parts: a duplicate key's index
 * (`… for key 'categories_name_unique'`; MySQL 8 writes `'table.index'`, MariaDB the index alone;
 * the primary key is `PRIMARY`, named `<table>_pkey` as on PostgreSQL after the table of the statement
 * that failed, mysql2's `sql`), and a foreign key's
 * table and constraint (`… a foreign key constraint fails (`db`.`articles`, CONSTRAINT
 * `articles_author_id_foreign` FOREIGN KEY …`), whether it refused a delete of a row still referred
 * to (1451) or a row referring to a missing one (1452).
 */
function constraintOf({ sqlState, errno, message, sql }: DriverError): ConstraintViolation | undefined {
  if (typeof sqlState !== 'string' || !sqlState.startsWith('23')) return undefined;
  const text = typeof message === 'string' ? message : '';
  if (errno === 1062 || errno === 1586) {
    const key = / for key '([^']+)'$/.exec(text)?.[1];
    const index = key?.includes('.') ? key.slice(key.lastIndexOf('.') + 1) : key;
    if (index !== 'PRIMARY') return index ? { kind: 'unique', constraint: index } : { kind: 'unique' };
    // The primary key: named as PostgreSQL names it, after the table the statement wrote.
    const table = typeof sql === 'string' ? /^\s*(?:insert(?:\s+ignore)?\s+into|update)\s+`((?:[^`]|``)+)`/i.exec(sql)?.[1] : undefined;
    return table
      ? { kind: 'unique', table: table.replace(/``/g, '`'), constraint: `${table.replace(/``/g, '`')}_pkey` }
      : { kind: 'unique' };
  }
  if (errno === 1451 || errno === 1452 || errno === 1216 || errno === 1217) {
    const fk = /a foreign key constraint fails \(`(?:[^`]|``)*`\.`((?:[^`]|``)+)`, CONSTRAINT `((?:[^`]|``)+)`/.exec(text);
    return {
      kind: 'foreign_key',
      stillReferenced: errno === 1451 || errno === 1217,
      ...(fk ? { table: fk[1].replace(/``/g, '`'), constraint: fk[2].replace(/``/g, '`') } : {}),
    };
  }
  return { kind: 'other' };
}
