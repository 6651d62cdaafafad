/**
 * Real databases for tests: a fresh SQLite file, a fresh PostgreSQL database on the local server
 * (PGHOST/PGPORT/PGUSER, default 127.0.0.1:5432 as postgres), or a fresh MySQL/MariaDB database on
 * the local server (MYSQL_HOST/MYSQL_PORT/MYSQL_USER, default 127.0.0.1:3306 as root). No mocks.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import knex, { type Knex } from 'knex';
import { connect, type Db } from '../../runtime';

export type Dialect = 'sqlite' | 'postgres' | 'mysql';

const KNOWN: readonly Dialect[] = ['sqlite', 'postgres', 'mysql'];

/**
 * The databases the suites loop over: all three, or those `SVCGEN_TEST_DATABASES` names (`sqlite`
 * for the fast inner loop, `npm run test:fast`). CI runs all three.
 */
export const DIALECTS: Dialect[] = (() => {
  const named = process.env.SVCGEN_TEST_DATABASES?.split(',')
    .map((d) => d.trim())
    .filter(Boolean);
  if (!named?.length) return [...KNOWN];
  const unknown = named.filter((d) => !KNOWN.includes(d as Dialect));
  if (unknown.length) throw new Error(`SVCGEN_TEST_DATABASES: unknown database ${unknown.join(', ')} (${KNOWN.join(', ')})`);
  return named as Dialect[];
})();

export interface TestDatabase {
  dialect: Dialect;
  url: string;
  db: Db;
  drop(): Promise<void>;
}

const PG = {
  host: process.env.PGHOST ?? '127.0.0.1',
  port: Number(process.env.PGPORT ?? 5432),
  user: process.env.PGUSER ?? 'postgres',
};

export function pgUrl(database: string): string {
  return `postgres://${PG.user}@${PG.host}:${PG.port}/${database}`;
}

const MYSQL = {
  host: process.env.MYSQL_HOST ?? '127.0.0.1',
  port: Number(process.env.MYSQL_PORT ?? 3306),
  user: process.env.MYSQL_USER ?? 'root',
};

export function mysqlUrl(database: string): string {
  return `mysql://${MYSQL.user}@${MYSQL.host}:${MYSQL.port}/${database}`;
}

/** A connection to the MySQL server without a database, for creating and dropping them. */
function mysqlAdmin() {
  return knex({ client: 'mysql2', connection: { host: MYSQL.host, port: MYSQL.port, user: MYSQL.user }, pool: { min: 0, max: 1 } });
}

/**
 * The indexes of a MySQL table, but its primary key and those InnoDB made for a foreign key by
 * itself (named after the constraint): name, uniqueness, columns in order.
 */
export async function mysqlIndexes(db: Db, table: string): Promise<{ name: string; unique: boolean; columns: string[] }[]> {
  const [rows] = (await db.raw(
    `select s.index_name as name, s.non_unique as non_unique, s.column_name as col from information_schema.statistics s
      where s.table_schema = database() and s.table_name = ? and s.index_name <> 'PRIMARY'
        and s.index_name not in (select constraint_name from information_schema.table_constraints c
                                  where c.table_schema = s.table_schema and c.table_name = s.table_name and c.constraint_type = 'FOREIGN KEY')
      order by s.index_name, s.seq_in_index`,
    [table],
  )) as [{ name: string; non_unique: number | string; col: string }[]];
  const out = new Map<string, { name: string; unique: boolean; columns: string[] }>();
  for (const r of rows) {
    const i = out.get(r.name) ?? { name: r.name, unique: Number(r.non_unique) === 0, columns: [] };
    i.columns.push(r.col);
    out.set(r.name, i);
  }
  return [...out.values()];
}

/**
 * Where the services of the suites reach a test database: the server itself, or the port that
 * `SVCGEN_TEST_PG_SERVE_PORT` names on PGHOST (`npm run test:scale` runs the HTTP suites through
 * PgBouncer in transaction mode there). Databases are created and dropped on the server itself.
 */
function pgServeUrl(database: string): string {
  const port = process.env.SVCGEN_TEST_PG_SERVE_PORT;
  return port ? `postgres://${PG.user}@${PG.host}:${port}/${database}` : pgUrl(database);
}

export async function createDatabase(dialect: Dialect): Promise<TestDatabase> {
  const name = `svcgen_test_${process.pid}_${crypto.randomBytes(4).toString('hex')}`;
  if (dialect === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-'));
    const url = `sqlite:${path.join(dir, `${name}.sqlite3`)}`;
    const db = connect(url, '');
    return {
      dialect,
      url,
      db,
      async drop() {
        await db.destroy();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  // MySQL: the server's default collation on purpose: the service must answer the same whatever it is.
  if (dialect === 'mysql') return onServer(dialect, name, mysqlAdmin, mysqlUrl(name), `drop database if exists ${name}`);
  const pgAdmin = () => knex({ client: 'pg', connection: pgUrl('postgres'), pool: { min: 0, max: 1 } });
  return onServer(dialect, name, pgAdmin, pgServeUrl(name), `drop database if exists ${name} with (force)`);
}

/** A database created on a server through `admin` (a connection without it), served at `url`. */
async function onServer(dialect: Dialect, name: string, admin: () => Knex, url: string, dropSql: string): Promise<TestDatabase> {
  const creating = admin();
  await creating.raw(`create database ${name}`);
  await creating.destroy();
  const db = connect(url, '');
  return {
    dialect,
    url,
    db,
    async drop() {
      await db.destroy();
      const dropping = admin();
      await dropping.raw(dropSql);
      await dropping.destroy();
    },
  };
}

/** A new database of `dialect` with a table `items` (an id, a name, and `rank` if asked) holding `rows`. */
export async function itemsDatabase(dialect: Dialect, rows: Record<string, unknown>[] = [], rank = false): Promise<TestDatabase> {
  const database = await createDatabase(dialect);
  await database.db.schema.createTable('items', (t) => {
    t.increments('id');
    t.string('name').notNullable();
    if (rank) t.integer('rank');
  });
  if (rows.length) await database.db('items').insert(rows);
  return database;
}
