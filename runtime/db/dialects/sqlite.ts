/**
 * SQLite's adapter (better-sqlite3): a file named by `sqlite:PATH`, or the service's default file
 * when DATABASE_URL is unset; each connection tuned by pragmas; PostgreSQL's case folding and LIKE
 * reproduced; migrations locked by a file beside the database and run with foreign keys deferred.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Knex } from 'knex';
import type { DatabaseSettings, SqliteSettings } from '../../core/settings';
import { databaseOf } from '../database';
import { SqliteReads, type SqliteSetup } from './sqlite-client';
import type { ConstraintViolation, Dialect, DriverError } from './dialect';

const URL_PREFIX = 'sqlite:';

/** What every connection needs, the pool's and the read connection alike (`all`), and the writer's own. */
function connectionSetup(sqlite: SqliteSettings, database: DatabaseSettings): SqliteSetup {
  return {
    all(conn) {
      conn.pragma(`busy_timeout = ${database.acquireTimeoutMs}`);
      conn.pragma(`cache_size = ${-sqlite.cacheSizeMib * 1024}`);
      conn.pragma(`mmap_size = ${sqlite.mmapSizeMib * 1024 * 1024}`);
      // LIKE as on PostgreSQL: case-sensitive (the i-variants compare lowercased sides, `whereLower`)...
      conn.pragma('case_sensitive_like = ON');
      // ...and beside SQLite's own lower(), which folds A-Z only, one folding every letter as PostgreSQL's does.
      conn.function('unicode_lower', { deterministic: true }, (v: unknown) => (typeof v === 'string' ? unicodeLower(v) : v));
    },
    writer(conn) {
      conn.pragma('foreign_keys = ON');
      conn.pragma('journal_mode = WAL');
      conn.pragma(`synchronous = ${sqlite.synchronous}`);
    },
  };
}

/**
 * Text in lowercase as PostgreSQL's `lower()` makes it: one letter for one letter (İ is i, Σ is σ
 * wherever it stands), where JavaScript's `toLowerCase` makes İ two characters and a final Σ ς.
 */
export function unicodeLower(text: string): string {
  return text.replace(/[İΣ]/g, (c) => (c === 'İ' ? 'i' : 'σ')).toLowerCase();
}

const KELVIN_SIGN = '\u212a';
const CAPITAL_I_WITH_DOT = '\u0130';

/** The column's SQL with K (Kelvin sign) and İ replaced by k and i, where the value has that letter (any case). */
function asciiFoldable(text: string, value: string): string {
  const lowered = value.toLowerCase();
  if (lowered.includes('k')) text = `replace(${text}, '${KELVIN_SIGN}', 'k')`;
  if (lowered.includes('i')) text = `replace(${text}, '${CAPITAL_I_WITH_DOT}', 'i')`;
  return text;
}

/** SQLite: the file is locked beyond the busy timeout, cannot be opened, or cannot be read or written. */
const UNREACHABLE_CODES = /^SQLITE_(BUSY|CANTOPEN|IOERR|PROTOCOL)(_|$)/;

/** How long an instance waits for another's migration before giving up. */
const MIGRATION_LOCK_WAIT_MS = 120_000;

/**
 * The migration lock: an exclusive transaction on a small database beside the service's
 * (`<file>.migrate-lock`), held by its own connection. It is tried without waiting and tried again
 * every 50 ms: waiting inside SQLite would block the event loop, and with it a run of this same
 * process holding the lock.
 */
async function withFileLock<T>(file: string, run: () => Promise<T>): Promise<T> {
  const Database = require('better-sqlite3') as new (
    file: string,
    options: { timeout: number },
  ) => { exec(sql: string): void; close(): void };
  const lock = new Database(`${file}.migrate-lock`, { timeout: 0 });
  try {
    const deadline = Date.now() + MIGRATION_LOCK_WAIT_MS;
    for (;;) {
      try {
        lock.exec('BEGIN EXCLUSIVE');
        break;
      } catch (err) {
        if ((err as DriverError).code !== 'SQLITE_BUSY') throw err;
        if (Date.now() > deadline)
          throw new Error(`migrations: another process has been migrating ${file} for ${MIGRATION_LOCK_WAIT_MS / 1000} s`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    try {
      return await run();
    } finally {
      lock.exec('COMMIT');
    }
  } finally {
    lock.close();
  }
}

export const sqlite: Dialect = {
  name: 'sqlite',
  urlPrefix: URL_PREFIX,
  // Bound, as Knex's SQLite client binds them: SQLite plans a statement again for each new bound LIMIT.
  limitAsText: false,
  booleansAsText: false,
  transactionalSchemaChanges: true,
  insertReturnsRows: true,
  joinsManyToMany: false,

  accepts: (url) => url.startsWith(URL_PREFIX),

  open(url, { defaultSqliteFile, sqlite: settings, database }) {
    const file = !url ? defaultSqliteFile : url.slice(URL_PREFIX.length).replace(/^\/\/(?=\/)/, '');
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const reads = new SqliteReads(file, connectionSetup(settings, database));
    return {
      description: file,
      reads,
      knex: {
        client: 'better-sqlite3',
        connection: reads.connectionSettings(),
        // One connection, the one that writes: SQLite lets one transaction write at a time.
        pool: { min: 1, max: 1, afterCreate: reads.afterCreate },
        useNullAsDefault: true,
      },
    };
  },

  isConstraintViolation: ({ code }) => typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT'),
  constraintOf,
  isConnectionFailure: ({ code }) => typeof code === 'string' && UNREACHABLE_CODES.test(code),

  /**
   * SQLite's own `lower()` folds A-Z only; `unicode_lower()` (registered on every connection) folds
   * every letter, but calls JavaScript once per row. A value of ASCII characters only is compared
   * natively, with the same result: every non-ASCII character lowercases to a non-ASCII one, which
   * no ASCII character of the value can match under either lower(), except the Kelvin sign (U+212A)
   * and İ, which PostgreSQL folds to k and i, so SQLite replaces those two first when the value has
   * a k or an i. A LIKE pattern has no `_` wildcard here (escaped), so a character is never matched
   * by position alone.
   */
  whereLower(query, text, column, comparison, value) {
    const escape = comparison === 'LIKE' ? ` ESCAPE '\\'` : '';
    // eslint-disable-next-line no-control-regex -- ASCII is every code point from U+0000 to U+007F
    if (/^[\x00-\x7f]*$/.test(value))
      query.whereRaw(`lower(${asciiFoldable(text, value)}) ${comparison} ?${escape}`, [column, value.toLowerCase()]);
    else query.whereRaw(`unicode_lower(${text}) ${comparison} ?${escape}`, [column, unicodeLower(value)]);
  },

  whereLike(query, text, column, pattern) {
    query.whereRaw(`${text} LIKE ? ESCAPE '\\'`, [column, pattern]);
  },

  asText: (text) => `CAST(${text} AS TEXT)`,

  // The JSON text's items, one row each (`json_each`): a string item is TEXT, compared byte for
  // byte; a number INTEGER or REAL; true and false 1 and 0, as booleans are bound. The items are
  // read once per row and matched against the values in one `IN` (an index SQLite builds once per
  // statement): `overlap` asks for one, `contains` counts the distinct values found. (An EXISTS per
  // value would read the list once per value, and 940 of them make an expression tree deeper than
  // SQLite's limit of 1000.)
  whereList(query, column, _items, op, values) {
    const matching = `FROM json_each(??) WHERE value ${values.length === 1 ? '= ?' : `IN (${Array(values.length).fill('?').join(', ')})`}`;
    const sql =
      op === 'overlap' || values.length === 1
        ? `EXISTS (SELECT 1 ${matching})`
        : `(SELECT count(DISTINCT value) ${matching}) = ${values.length}`;
    query.whereRaw(sql, [column, ...values] as Knex.Value[]);
  },

  listColumnType: () => 'json',

  listLiteral: (_items, values) => JSON.stringify(values),

  // A statement that returns no rows answers the driver's run information (`changes`): no rows.
  rowsOf: (result) => (Array.isArray(result) ? result : []),

  // Knex's compiler writes the insert's RETURNING.
  returning: (query, _rows, columns) => query.returning(columns as string[]),

  async writtenRows(db, sql, bindings) {
    const result = await db.raw(sql, bindings as Knex.RawBinding[]);
    return Array.isArray(result) ? result : [];
  },

  // No lock needed: the service has one connection that writes, so transactions run one at a time.
  lockForUpdate() {},

  withMigrationLock(db, run) {
    const { file } = databaseOf(db).reads as SqliteReads;
    return file === '' || file === ':memory:' ? run() : withFileLock(file, run);
  },

  /**
   * SQLite alters most columns by rebuilding the table (create, copy, drop, rename). With foreign keys
   * enforced, dropping the old table would run its ON DELETE actions and empty the tables that
   * reference it, and the pragma cannot change inside a transaction. So the migrations run with the
   * pragma off (SQLite connections are one per pool, so the transaction uses this connection), every
   * foreign key is checked before the transaction commits, and the pragma is restored afterwards.
   */
  async runMigrations(db, config, run) {
    const [{ foreign_keys: enabled }] = (await db.raw('PRAGMA foreign_keys')) as { foreign_keys: number }[];
    if (!enabled) return run(config);
    await db.raw('PRAGMA foreign_keys = OFF');
    try {
      return await run({
        ...config,
        beforeAll: async (trx) => {
          const [{ foreign_keys: still }] = (await trx.raw('PRAGMA foreign_keys')) as { foreign_keys: number }[];
          if (still)
            throw new Error('migrations: could not turn SQLite foreign keys off for the migration (use one connection per SQLite pool)');
        },
        afterAll: async (trx) => {
          const violations = (await trx.raw('PRAGMA foreign_key_check')) as { table: string; rowid: number; parent: string }[];
          if (violations.length) {
            const shown = violations.slice(0, 5).map((v) => `${v.table} row ${v.rowid} → ${v.parent}`);
            throw new Error(`migrations: ${violations.length} rows break a foreign key (${shown.join(', ')}); nothing was applied`);
          }
        },
      });
    } finally {
      await db.raw('PRAGMA foreign_keys = ON');
    }
  },

  // SQLite's foreign keys are unnamed: they follow their column by themselves.
  async renameForeignKey() {},

  // SQLite's lower() folds the ASCII letters only (without the ICU extension, which the service does not load).
  foldedColumnSql: 'lower(??)',

  async createFoldedUnique(knex, table, column, name, whereNull) {
    const where = whereNull ? ' where ?? is null' : '';
    await knex.raw(`create unique index ?? on ?? (lower(??))${where}`, [name, table, column, ...(whereNull ? [whereNull] : [])]);
  },

  async dropFoldedUnique(knex, _table, name) {
    await knex.raw('drop index if exists ??', [name]);
  },

  async listTables(knex) {
    const rows = (await knex.raw(
      "select name from sqlite_master where type = 'table' and name not like 'sqlite\\_%' escape '\\' order by name",
    )) as { name: string }[];
    return rows.map((r) => r.name);
  },

  // An INTEGER PRIMARY KEY continues after the largest key by itself.
  async syncKeySequence() {},

  async describeKeys(knex, table) {
    const columns = (await knex.raw('select * from pragma_table_info(?)', [table])) as { name: string; pk: number }[];
    const fks = (await knex.raw('select * from pragma_foreign_key_list(?)', [table])) as {
      from: string;
      table: string;
      to: string;
      on_delete: string;
    }[];
    const list = (await knex.raw('select * from pragma_index_list(?)', [table])) as { name: string; unique: number; origin: string }[];
    const indexes = [];
    for (const index of list.filter((i) => i.origin !== 'pk')) {
      const cols = (await knex.raw('select * from pragma_index_info(?) order by seqno', [index.name])) as { name: string }[];
      indexes.push({ name: index.name, columns: cols.map((c) => c.name), unique: index.unique === 1 });
    }
    return {
      primaryKey: columns
        .filter((c) => c.pk > 0)
        .sort((a, b) => a.pk - b.pk)
        .map((c) => c.name),
      foreignKeys: fks.map((f) => ({ column: f.from, table: f.table, refColumn: f.to, onDelete: f.on_delete.toLowerCase() })),
      indexes: indexes.sort((a, b) => (a.name < b.name ? -1 : 1)),
    };
  },
};

/**
 * What SQLite says of a constraint it refused: a unique constraint or index by its table and columns
 * (`UNIQUE constraint failed: votes.article_id, votes.user_id`, after the statement Knex puts
 * before the message), an index on expressions by its name (`index 'name'`); a foreign key by its
 * kind alone (`FOREIGN KEY constraint failed`), and whether a row still referred to was being
 * deleted (a RESTRICT's failure, with the code of a trigger's).
 */
function constraintOf({ code, message }: DriverError): ConstraintViolation | undefined {
  if (typeof code !== 'string' || !code.startsWith('SQLITE_CONSTRAINT')) return undefined;
  // A RESTRICT refusing a delete or a key change is reported as a trigger's failure, with the foreign key's message.
  if (code === 'SQLITE_CONSTRAINT_TRIGGER' && typeof message === 'string' && /FOREIGN KEY constraint failed$/.test(message)) {
    return { kind: 'foreign_key', stillReferenced: true };
  }
  if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return { kind: 'foreign_key' };
  if (code !== 'SQLITE_CONSTRAINT_UNIQUE' && code !== 'SQLITE_CONSTRAINT_PRIMARYKEY') return { kind: 'other' };
  const failed = typeof message === 'string' ? /(?:^|: |- )UNIQUE constraint failed: (.+)$/.exec(message) : null;
  if (!failed) return { kind: 'unique' };
  const index = /^index '(.+)'$/.exec(failed[1]);
  if (index) return { kind: 'unique', constraint: index[1] };
  const columns = failed[1].split(', ').map((c) => /^(.+)\.([^.]+)$/.exec(c));
  if (columns.some((c) => !c) || new Set(columns.map((c) => c![1])).size !== 1) return { kind: 'unique' };
  return { kind: 'unique', table: columns[0]![1], columns: columns.map((c) => c![2]) };
}
