/**
 * Database connections: SQLite (better-sqlite3) by default, PostgreSQL from a `postgres://` URL.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import knex, { type Knex } from 'knex';
import { types as pgTypes } from 'pg';

// PostgreSQL type parsers, set once: int8 and counts as numbers (inputs are limited to safe integers),
// DATE as its text (no time-zone shift), JSON as text like SQLite's so one converter serves both.
pgTypes.setTypeParser(20, (v) => Number(v));
pgTypes.setTypeParser(1082, (v) => v);
pgTypes.setTypeParser(114, (v) => v);
pgTypes.setTypeParser(3802, (v) => v);

export type Db = Knex;
export type Dialect = 'sqlite' | 'postgres';

/** What the SQLite pool setup uses of a better-sqlite3 connection. */
interface SqliteConnection {
  pragma(source: string): unknown;
  function(name: string, options: { deterministic: boolean }, fn: (value: unknown) => unknown): unknown;
}

/**
 * Knex's own log: its warnings go to the console, except the connection errors it warns about on
 * every failed acquire, with a stack trace. The API logs a database outage once (see outage.ts).
 */
const KNEX_LOG = {
  warn(message: unknown) {
    if (typeof message === 'string' && /^(Acquire connection error|Connection Error): /.test(message)) return;
    console.warn(message);
  },
};

export interface DatabaseConfig {
  dialect: Dialect;
  knex: Knex.Config;
  /** Shown in logs: the SQLite file or the PostgreSQL URL without its password. */
  description: string;
}

/**
 * `DATABASE_URL` unset → the SQLite file `defaultSqliteFile`; `sqlite:PATH` → that SQLite file;
 * `postgres://…` or `postgresql://…` → PostgreSQL.
 */
export function databaseConfig(url: string | undefined, defaultSqliteFile: string): DatabaseConfig {
  if (url && /^postgres(ql)?:\/\//.test(url)) {
    const shown = url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
    return { dialect: 'postgres', description: shown, knex: { client: 'pg', connection: url, pool: { min: 0, max: 10 }, log: KNEX_LOG } };
  }
  let file = defaultSqliteFile;
  if (url) {
    if (!url.startsWith('sqlite:')) throw new Error(`DATABASE_URL must start with sqlite: or postgres://, got "${url}"`);
    file = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
  }
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  return {
    dialect: 'sqlite',
    description: file,
    knex: {
      client: 'better-sqlite3',
      connection: { filename: file },
      useNullAsDefault: true,
      log: KNEX_LOG,
      pool: {
        afterCreate(conn: SqliteConnection, done: (err: Error | null, conn: unknown) => void) {
          conn.pragma('foreign_keys = ON');
          conn.pragma('journal_mode = WAL');
          conn.pragma('busy_timeout = 5000');
          // LIKE as on PostgreSQL: case-sensitive (filters' i-variants compare lower() of both sides)...
          conn.pragma('case_sensitive_like = ON');
          // ...and lower() folding every letter as PostgreSQL's does, not only A-Z.
          conn.function('lower', { deterministic: true }, (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v));
          done(null, conn);
        },
      },
    },
  };
}

export function connect(url: string | undefined, defaultSqliteFile: string): Db {
  return knex(databaseConfig(url, defaultSqliteFile).knex);
}

export function dialectOf(db: Db): Dialect {
  return db.client.config.client === 'pg' ? 'postgres' : 'sqlite';
}

/** `count(*)` is a string on PostgreSQL and a number on SQLite. */
export function countOf(row: Record<string, unknown> | undefined): number {
  return row ? Number(Object.values(row)[0]) : 0;
}
