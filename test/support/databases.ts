/**
 * Real databases for tests: a fresh SQLite file, or a fresh PostgreSQL database on the local
 * server (PGHOST/PGPORT/PGUSER, default 127.0.0.1:5432 as postgres). No mocks.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import knex from 'knex';
import { connect, type Db } from '../../runtime';

export type Dialect = 'sqlite' | 'postgres';
/**
 * The databases the suites loop over: both, or those `SVCGEN_TEST_DATABASES` names (`sqlite` for
 * the fast inner loop, `npm run test:fast`). CI runs both.
 */
export const DIALECTS: Dialect[] = (() => {
  const named = process.env.SVCGEN_TEST_DATABASES?.split(',').map((d) => d.trim()).filter(Boolean);
  if (!named?.length) return ['sqlite', 'postgres'];
  const unknown = named.filter((d) => d !== 'sqlite' && d !== 'postgres');
  if (unknown.length) throw new Error(`SVCGEN_TEST_DATABASES: unknown database ${unknown.join(', ')} (sqlite, postgres)`);
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
  const admin = knex({ client: 'pg', connection: pgUrl('postgres'), pool: { min: 0, max: 1 } });
  await admin.raw(`create database ${name}`);
  await admin.destroy();
  const url = pgServeUrl(name);
  const db = connect(url, '');
  return {
    dialect,
    url,
    db,
    async drop() {
      await db.destroy();
      const a = knex({ client: 'pg', connection: pgUrl('postgres'), pool: { min: 0, max: 1 } });
      await a.raw(`drop database if exists ${name} with (force)`);
      await a.destroy();
    },
  };
}
