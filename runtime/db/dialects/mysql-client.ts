/**
 * MySQL's and MariaDB's Knex client (mysql2), made to give the answers SQLite and PostgreSQL give:
 * - every connection in strict mode (an invalid value is an error, never truncated or coerced),
 *   in UTC, in utf8mb4, at READ COMMITTED as on PostgreSQL;
 * - `ESCAPE '\'` in SQL text read as PostgreSQL reads it (`formatQuery`);
 * - every table it creates compares text byte by byte, without trailing-space padding, as PostgreSQL
 *   (C collation) and SQLite do: `utf8mb4_nopad_bin` on MariaDB, `utf8mb4_0900_bin` on MySQL
 *   (`withTableDefaults`);
 * - auto-increment keys are signed, as PostgreSQL's `serial`, so foreign keys (signed integers)
 *   can reference them (InnoDB refuses a foreign key whose type differs in sign);
 * - a datetime is kept as its ISO 8601 text in UTC, as on SQLite: the service writes and compares
 *   datetimes as `2024-05-01T12:00:00.000Z`, which MySQL's DATETIME refuses in strict mode (and
 *   would store without its zone); the text sorts as the instant does (years 1 to 9999). It is a
 *   VARCHAR, not a CHAR: MariaDB refuses a stored generated column over a CHAR column (its value
 *   would depend on PAD_CHAR_TO_FULL_LENGTH), and `deleted_at` is one (see the unique indexes below);
 * - TEXT is LONGTEXT, so a text field holds what it holds on PostgreSQL, not 64 KiB, and its default
 *   is written as an expression (`default ('')`), the form MySQL takes on a text column;
 * - an insert with `returning` returns the rows it inserted: on MariaDB by `INSERT … RETURNING`;
 *   MySQL has no RETURNING, so there from the result header: none when an `INSERT IGNORE` inserted
 *   nothing, else the key given or the auto-increment id (a column that is neither cannot be returned);
 * - a unique index over the live rows of a soft-deleted table (a partial index elsewhere, which
 *   MySQL lacks) is a unique index over its columns and an invisible generated column that is 1
 *   where the predicate holds and NULL elsewhere: NULLs never clash, so deleted rows hold no value.
 *   Dropping the index drops that column;
 * - on MariaDB, schema statements may run again (IF EXISTS / IF NOT EXISTS; see `rerunnable`);
 * - dropping an index a foreign key needs (InnoDB looks its rows up with one, and refuses) first
 *   gives the foreign key an index of its own.
 */
import * as crypto from 'node:crypto';
import type { Knex } from 'knex';
import type * as Mysql2 from 'mysql2';
import {
  Mysql2Client,
  MysqlColumnCompiler,
  MysqlQueryCompiler,
  MysqlTableCompiler,
  type MysqlClientQuery,
  type MysqlRunner,
} from '../knex-internals';

/**
 * The session every connection starts: strict (errors, never truncation or coercion), no zero
 * dates, no engine silently substituted, UTC.
 */
const SQL_MODE = 'STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ZERO_IN_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION';

/** A connection as mysql2 makes it, with what this client uses. */
interface MysqlConnection {
  query(sql: string, callback: (err: unknown, rows: unknown) => void): void;
}

function query(conn: MysqlConnection, sql: string): Promise<any> {
  return new Promise((resolve, reject) => conn.query(sql, (err, rows) => (err ? reject(err) : resolve(rows))));
}

/** The name of the invisible generated column behind a unique index over live rows. */
export function liveColumnOf(indexName: string): string {
  return `svc_live_${crypto.createHash('sha256').update(indexName).digest('hex').slice(0, 16)}`;
}

/** The rows an insert with `returning` inserted, from mysql2's result header. */
function returnedRows(header: { affectedRows?: number; insertId?: number } | undefined, returning: NonNullable<MysqlClientQuery['returning']>) {
  const inserted = header?.affectedRows ?? 0;
  if (inserted === 0) return [];
  const { column, values } = returning;
  if (values.length === 1 && values[0][column] !== undefined) return [{ [column]: values[0][column] }];
  // Several rows: their auto-increment ids follow the first (a multi-row insert takes them at once).
  return Array.from({ length: inserted }, (_, i) => ({ [column]: values[i]?.[column] ?? (header?.insertId ?? 0) + i }));
}

class ReturningQueryCompiler extends MysqlQueryCompiler {
  // RETURNING is written (MariaDB) or answered from the result header (`returnedRows`), not warned about.
  override _returningCheck(): void {}

  override insert(): any {
    const compiled = super.insert();
    const sql = typeof compiled === 'string' ? compiled : compiled.sql;
    const { returning, insert } = this.single;
    if (!sql || returning === undefined) return compiled;
    const base = typeof compiled === 'string' ? { sql } : compiled;
    // MariaDB has INSERT … RETURNING (none of a row INSERT IGNORE skipped).
    if ((this.client as MysqlClient).mariadb) {
      const columns = (this as unknown as { formatter: { columnize(c: unknown): string } }).formatter.columnize(returning);
      return { ...base, sql: `${sql} returning ${columns}`, returningRows: true };
    }
    const column = Array.isArray(returning) ? returning[0] : returning;
    if (typeof column !== 'string') return compiled;
    const values = (Array.isArray(insert) ? insert : [insert]) as Record<string, unknown>[];
    return { ...base, returning: { column, values } };
  }
}

class PortableColumnCompiler extends MysqlColumnCompiler {
  /** A default on a text column (which Knex leaves out on MySQL) as an expression, which MySQL 8 and MariaDB take. */
  override defaultTo(value: unknown, ...rest: unknown[]): string | undefined {
    const own = (MysqlColumnCompiler.prototype as any).defaultTo.call(this, value, ...rest) as string | undefined;
    if (own !== '' || value === null || value === undefined) return own;
    const plain = (Object.getPrototypeOf(MysqlColumnCompiler.prototype) as any).defaultTo.call(this, value, ...rest) as string;
    return plain.replace(/^default (.*)$/, 'default ($1)');
  }
}

/**
 * A schema statement of Knex's written so that running it again after it ran changes nothing
 * (MariaDB's IF EXISTS / IF NOT EXISTS): MySQL commits every schema statement by itself, so a
 * migration that fails halfway keeps the statements before the failure, and running it again,
 * once what made it fail is fixed, must complete it rather than fail on what it already did.
 */
function rerunnable(sql: string): string {
  if (!/^alter table /i.test(sql)) return sql;
  return sql
    .replace(/^(alter table \S+ drop (?:index|foreign key) )(?!if exists )/i, '$1if exists ')
    .replace(/^(alter table \S+ add unique )(?!if not exists )/i, '$1if not exists ')
    .replace(/^(alter table \S+ add(?: \w+)? index )(?!if not exists )/i, '$1if not exists ')
    .replace(/^(alter table \S+ add constraint \S+ foreign key )(?!if not exists )/i, '$1if not exists ')
    .replace(/(^alter table \S+ |, )add (?:column )?(?=`)/gi, '$1add column if not exists ')
    .replace(/(^alter table \S+ |, )drop (?:column )?(?=`)/gi, '$1drop column if exists ');
}

/**
 * The column types of a CREATE or ALTER TABLE of Knex's as the service needs them: an auto-increment
 * key signed (Knex writes `int unsigned`), a timestamp as its ISO 8601 text, a text as LONGTEXT.
 */
function portableColumns(sql: string): string {
  if (!/^(?:create|alter) table /i.test(sql)) return sql;
  return sql
    .replace(/\b(int|bigint) unsigned not null auto_increment\b/gi, '$1 not null auto_increment')
    .replace(/(`(?:[^`]|``)+` )timestamp(?:\(\d\))?(?=[ ,)]|$)/gi, '$1varchar(24) character set ascii collate ascii_bin')
    .replace(/(`(?:[^`]|``)+` )text(?=[ ,)]|$)/gi, '$1longtext');
}

/**
 * A CREATE TABLE of Knex's with the table's defaults: utf8mb4 compared as bytes (`collation`). Knex
 * names the connection's charset (mysql2's `UTF8MB4_BIN`, a collation) as the table's; a charset
 * or collation the statement names itself is kept.
 */
function withTableDefaults(sql: string, collation: string): string {
  if (!/^create table /i.test(sql)) return sql;
  return sql.replace(/ default character set UTF8MB4_BIN( collate )?/i, (_, collate?: string) => ` default character set utf8mb4${collate ?? ` collate ${collation}`}`);
}

class LiveUniqueTableCompiler extends MysqlTableCompiler {
  override unique(columns: string[], options?: unknown): void {
    const { indexName, predicate } = (typeof options === 'object' && options !== null ? options : {}) as { indexName?: string; predicate?: Knex.QueryBuilder };
    if (!predicate || !indexName) return super.unique(columns, options);
    const client = this.client as MysqlClient;
    const where = (client.queryCompiler(predicate, undefined) as { where(): string }).where().replace(/^where /i, '');
    const live = this.formatter.wrap(liveColumnOf(indexName));
    this.pushQuery(`alter table ${this.tableName()} add ${live} tinyint as (case when ${where} then 1 end) stored invisible`);
    this.pushQuery(`alter table ${this.tableName()} add unique ${this.formatter.wrap(indexName)}(${this.formatter.columnize([...columns, liveColumnOf(indexName)])})`);
  }

  override dropIndex(columns: string[], indexName?: string): void {
    const name = indexName ?? this.defaultIndexName('index', columns);
    this.keepForeignKeyIndexes(name);
    super.dropIndex(columns, indexName);
    const wrappedTable = this.tableName();
    const live = liveColumnOf(name);
    const wrap = (n: string) => this.formatter.wrap(n);
    this.pushQuery({
      sql: 'select count(*) as n from information_schema.columns where table_schema = database() and table_name = ? and column_name = ?',
      bindings: [this.tableNameRaw, live],
      async output(this: MysqlRunner, response: unknown) {
        const rows = response as { n: number }[];
        if (Number(rows[0]?.n) > 0) await this.query({ sql: `alter table ${wrappedTable} drop column ${wrap(live)}` });
      },
    });
  }

  dropUnique(columns: string[], indexName?: string): void {
    this.keepForeignKeyIndexes(indexName ?? this.defaultIndexName('unique', columns));
    (MysqlTableCompiler.prototype as any).dropUnique.call(this, columns, indexName);
  }

  /** Knex's name of an unnamed index (`_indexCommand`, unquoted). */
  private defaultIndexName(type: string, columns: string[] | string): string {
    const list = Array.isArray(columns) ? columns : [columns];
    return `${this.tableNameRaw.replace(/\.|-/g, '_')}_${list.join('_')}_${type}`.toLowerCase();
  }

  /**
   * Before `indexName` is dropped: InnoDB refuses to drop the index a foreign key looks its rows up
   * with, where PostgreSQL and SQLite need none. So each foreign key of the table whose columns
   * lead this index, and lead no other, gets an index of its own first, named after the constraint
   * (as InnoDB names the one it makes for a foreign key created without an index).
   */
  private keepForeignKeyIndexes(indexName: string): void {
    const table = this.tableNameRaw;
    const wrappedTable = this.tableName();
    const wrap = (n: string) => this.formatter.wrap(n);
    const columnize = (c: string[]) => this.formatter.columnize(c);
    this.pushQuery({
      sql: `select 'fk' as kind, constraint_name as name, column_name as col, ordinal_position as pos
              from information_schema.key_column_usage
             where table_schema = database() and table_name = ? and referenced_table_name is not null
            union all
            select 'index', index_name, column_name, seq_in_index
              from information_schema.statistics
             where table_schema = database() and table_name = ?
             order by kind, name, pos`,
      bindings: [table, table],
      async output(this: MysqlRunner, response: unknown) {
        const rows = response as { kind: string; name: string; col: string }[];
        const group = (kind: string) => {
          const out = new Map<string, string[]>();
          for (const r of rows) if (r.kind === kind) out.set(r.name, [...(out.get(r.name) ?? []), r.col]);
          return out;
        };
        const indexes = group('index');
        const dropped = indexes.get(indexName);
        if (!dropped) return;
        const leads = (index: string[], fk: string[]) => fk.every((c, i) => index[i] === c);
        for (const [fk, cols] of group('fk')) {
          if (!leads(dropped, cols)) continue;
          if ([...indexes].some(([name, index]) => name !== indexName && leads(index, cols))) continue;
          await this.query({ sql: `alter table ${wrappedTable} add index ${wrap(fk)}(${columnize(cols)})` });
          indexes.set(fk, cols);
        }
      },
    });
  }
}

/**
 * What the first connection learnt of the server, kept for the pool's `afterCreate` hook, which a
 * copy of the configuration (the readiness probe's) and transactions' clients share.
 */
interface ServerFacts {
  checked: boolean;
  mariadb: boolean;
  binaryCollation: string;
  foldingCollation: string;
}

const serverFacts = new WeakMap<object, ServerFacts>();

function factsOf(connection: object): ServerFacts {
  let facts = serverFacts.get(connection);
  if (!facts) serverFacts.set(connection, (facts = { checked: false, mariadb: false, binaryCollation: 'utf8mb4_bin', foldingCollation: 'utf8mb4_unicode_520_ci' }));
  return facts;
}

/** What the server of `client` (a Knex client opened by `sessionOptions`) is, once a connection was made. */
export function serverOf(client: { config: Knex.Config }): Readonly<ServerFacts> {
  return factsOf((client.config.pool?.afterCreate as object | undefined) ?? serverFacts);
}

/**
 * mysql2's connection options and Knex's pool hook that give every connection its session: strict,
 * UTC, utf8mb4 compared as bytes, READ COMMITTED, the statement timeout; and every statement its
 * SQL text as PostgreSQL's would be read (`formatQuery`).
 */
export function sessionOptions(connection: Knex.MySql2ConnectionConfig, statementTimeoutMs: number): { connection: Knex.MySql2ConnectionConfig; afterCreate(conn: MysqlConnection, done: (err: unknown, conn: unknown) => void): void } {
  const server: ServerFacts = { checked: false, mariadb: false, binaryCollation: 'utf8mb4_bin', foldingCollation: 'utf8mb4_unicode_520_ci' };
  const options = { ...connection, queryFormat: formatQuery(server) } as Knex.MySql2ConnectionConfig;
  async function start(conn: MysqlConnection): Promise<void> {
    if (!server.checked) {
      const [{ version }] = await query(conn, 'select version() as version');
      server.mariadb = /mariadb/i.test(String(version));
      server.binaryCollation = server.mariadb ? 'utf8mb4_nopad_bin' : 'utf8mb4_0900_bin';
      server.foldingCollation = server.mariadb ? 'utf8mb4_uca1400_as_cs' : 'utf8mb4_0900_as_cs';
      server.checked = true;
    }
    await query(conn, `set names utf8mb4 collate ${server.binaryCollation}, sql_mode = '${SQL_MODE}', time_zone = '+00:00'`);
    // PostgreSQL's isolation: each statement sees what committed before it (InnoDB's default,
    // REPEATABLE READ, would keep a transaction's first snapshot: a check made again after a
    // concurrent insert's duplicate key would not see that insert).
    await query(conn, 'set session transaction isolation level read committed');
    // SVC_DB_STATEMENT_TIMEOUT for every statement of the session: MariaDB's max_statement_time
    // (seconds) ends any statement past it (errno 1969); MySQL's max_execution_time (milliseconds)
    // bounds SELECTs only (errno 3024). Both are answered 503, as PostgreSQL's statement_timeout is.
    if (statementTimeoutMs > 0) {
      if (server.mariadb) await query(conn, `set session max_statement_time = ${statementTimeoutMs / 1000}`);
      else await query(conn, `set session max_execution_time = ${statementTimeoutMs}`);
    }
  }
  const afterCreate = (conn: MysqlConnection, done: (err: unknown, conn: unknown) => void) => void start(conn).then(() => done(null, conn), (err) => done(err, conn));
  serverFacts.set(afterCreate, server);
  return { connection: options, afterCreate };
}

/**
 * mysql2's `queryFormat`: a statement's text with its values written in, as mysql2 writes them,
 * but with `ESCAPE '\'` (PostgreSQL's and SQLite's text for a backslash as the LIKE escape, which a
 * hook may write) as MySQL reads it, `ESCAPE '\\'`: MySQL's string literals escape with
 * backslashes, so the first would never end. Only SQL text is rewritten, before the values are
 * written in: a bound value is never touched. A list (a `list` field's value) is bound as its JSON
 * text, the form its JSON column holds (mysql2 would write an array as a list of values).
 */
function formatQuery(server: ServerFacts) {
  return function format(this: { config: { stringifyObjects?: boolean } }, sql: string, values: unknown, timezone: string): string {
    let text = /ESCAPE '\\'/i.test(sql) ? sql.replace(/ESCAPE '\\'(?!')/gi, "ESCAPE '\\\\'") : sql;
    text = portableColumns(withTableDefaults(text, server.binaryCollation));
    if (server.mariadb) text = rerunnable(text);
    const bound = Array.isArray(values) ? values.map((v) => (Array.isArray(v) ? JSON.stringify(v) : v)) : values;
    // Loaded here, not imported: the driver is an optional peer (connection.ts names it when it is missing).
    const { format } = require('mysql2') as typeof Mysql2;
    return format(text, bound as any[], this.config.stringifyObjects, timezone);
  };
}

export class MysqlClient extends Mysql2Client {
  /**
   * The utf8mb4 collation whose `lower()` folds as PostgreSQL's does, by a recent Unicode (ẞ is ß,
   * İ is i, the Kelvin sign is k): `utf8mb4_uca1400_as_cs` on MariaDB, `utf8mb4_0900_as_cs` on MySQL.
   * The binary collations fold by an old table (ẞ stays ẞ).
   */
  get foldingCollation(): string {
    return serverOf(this).foldingCollation;
  }

  /** The utf8mb4 collation that compares bytes without padding on this server. */
  get binaryCollation(): string {
    return serverOf(this).binaryCollation;
  }

  /** Whether the server is MariaDB. */
  get mariadb(): boolean {
    return serverOf(this).mariadb;
  }

  override queryCompiler(builder: unknown, formatter: unknown): unknown {
    return new ReturningQueryCompiler(this, builder, formatter);
  }

  override tableCompiler(tableBuilder: unknown): unknown {
    return new LiveUniqueTableCompiler(this, tableBuilder);
  }

  override columnCompiler(tableBuilder: unknown, columnBuilder: unknown): unknown {
    return new PortableColumnCompiler(this, tableBuilder, columnBuilder);
  }

  override processResponse(obj: MysqlClientQuery, runner: unknown): unknown {
    if (obj?.method === 'insert' && obj.returningRows && !obj.output) return obj.response?.[0];
    if (obj?.method === 'insert' && obj.returning && !obj.output) return returnedRows(obj.response?.[0] as any, obj.returning);
    return super.processResponse(obj, runner);
  }
}

/**
 * The rows a raw insert returned, where the insert `write` compiles to (its public `toSQL()`) is one
 * this client's compiler answered with `returning` (MySQL: the rows come from the result header).
 */
export function insertedRows(result: unknown, write: Knex.QueryBuilder): Record<string, unknown>[] {
  const compiled = write.toSQL() as { method?: string; returning?: unknown };
  const returning = compiled.returning as MysqlClientQuery['returning'] | undefined;
  if (compiled.method !== 'insert' || typeof returning?.column !== 'string') return [];
  const [header] = result as [{ affectedRows?: number; insertId?: number }];
  return returnedRows(header, returning);
}
