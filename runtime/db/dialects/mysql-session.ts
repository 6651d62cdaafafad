/**
 * The session of every MySQL/MariaDB connection, set by mysql2's documented options and Knex's pool
 * hook (`afterCreate`), so that Knex's stock `mysql2` client gives the answers SQLite and PostgreSQL give:
 * - every connection in strict mode (an invalid value is an error, never truncated or coerced),
 *   in UTC, in utf8mb4, at READ COMMITTED as on PostgreSQL;
 * - `ESCAPE '\'` in SQL text read as PostgreSQL reads it (`formatQuery`, mysql2's `queryFormat`);
 * - every table it creates compares text byte by byte, without trailing-space padding, as PostgreSQL
 *   (C collation) and SQLite do: `utf8mb4_nopad_bin` on MariaDB, `utf8mb4_0900_bin` on MySQL
 *   (`withTableDefaults`);
 * - auto-increment keys are signed, as PostgreSQL's `serial`, so foreign keys (signed integers)
 *   can reference them (InnoDB refuses a foreign key whose type differs in sign);
 * - a datetime is kept as its ISO 8601 text in UTC, as on SQLite: the service writes and compares
 *   datetimes as `2024-05-01T12:00:00.000Z`, which MySQL's DATETIME refuses in strict mode (and
 *   would store without its zone); the text sorts as the instant does (years 1 to 9999). It is a
 *   VARCHAR, not a CHAR: MariaDB refuses a stored generated column over a CHAR column (its value
 *   would depend on PAD_CHAR_TO_FULL_LENGTH), and `deleted_at` is one (see mysql-schema.ts);
 * - TEXT is LONGTEXT, so a text field holds what it holds on PostgreSQL, not 64 KiB;
 * - on MariaDB, schema statements may run again (IF EXISTS / IF NOT EXISTS; see `rerunnable`).
 * What the first connection learns of the server (MariaDB or MySQL, its collations) is kept with the
 * pool's hook, and read by `serverOf`.
 */
import type { Knex } from 'knex';
import type * as Mysql2 from 'mysql2';

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
  return sql.replace(
    / default character set UTF8MB4_BIN( collate )?/i,
    (_, collate?: string) => ` default character set utf8mb4${collate ?? ` collate ${collation}`}`,
  );
}

/**
 * What the first connection learnt of the server, kept for the pool's `afterCreate` hook, which a
 * copy of the configuration (the readiness probe's) and transactions' clients share.
 */
interface ServerFacts {
  checked: boolean;
  /** Whether the server is MariaDB. */
  mariadb: boolean;
  /** The utf8mb4 collation that compares bytes without padding on this server. */
  binaryCollation: string;
  /**
   * The utf8mb4 collation whose `lower()` folds as PostgreSQL's does, by a recent Unicode (ẞ is ß,
   * İ is i, the Kelvin sign is k): `utf8mb4_uca1400_as_cs` on MariaDB, `utf8mb4_0900_as_cs` on MySQL.
   * The binary collations fold by an old table (ẞ stays ẞ).
   */
  foldingCollation: string;
}

const serverFacts = new WeakMap<object, ServerFacts>();

function factsOf(connection: object): ServerFacts {
  let facts = serverFacts.get(connection);
  if (!facts)
    serverFacts.set(
      connection,
      (facts = { checked: false, mariadb: false, binaryCollation: 'utf8mb4_bin', foldingCollation: 'utf8mb4_unicode_520_ci' }),
    );
  return facts;
}

/**
 * What the server of `client` (a Knex client, or a transaction's, configured with `sessionOptions`) is,
 * once a connection was made (`checked`): read from the facts its pool's `afterCreate` hook keeps.
 */
export function serverOf(client: { config: Knex.Config }): Readonly<ServerFacts> {
  return factsOf((client.config.pool?.afterCreate as object | undefined) ?? serverFacts);
}

/**
 * mysql2's connection options and Knex's pool hook that give every connection its session: strict,
 * UTC, utf8mb4 compared as bytes, READ COMMITTED, the statement timeout; and every statement its
 * SQL text as PostgreSQL's would be read (`formatQuery`).
 */
export function sessionOptions(
  connection: Knex.MySql2ConnectionConfig,
  statementTimeoutMs: number,
): { connection: Knex.MySql2ConnectionConfig; afterCreate(conn: MysqlConnection, done: (err: unknown, conn: unknown) => void): void } {
  const server: ServerFacts = {
    checked: false,
    mariadb: false,
    binaryCollation: 'utf8mb4_bin',
    foldingCollation: 'utf8mb4_unicode_520_ci',
  };
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
  const afterCreate = (conn: MysqlConnection, done: (err: unknown, conn: unknown) => void) =>
    void start(conn).then(
      () => done(null, conn),
      (err) => done(err, conn),
    );
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
