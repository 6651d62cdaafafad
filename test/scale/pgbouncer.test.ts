/**
 * The blog behind PgBouncer in transaction mode, with DATABASE_DIRECT_URL: migrations and their
 * lock go to PostgreSQL itself (PgBouncer pools none of their transactions), while the service
 * serves through PgBouncer. (The HTTP suites through PgBouncer are `jest.pgbouncer.config.js`.)
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from 'pg';
import { Cluster, Instance, PgBouncer, call, keyFiles, staffUser, tempDir } from './support/stack';
import { FROM_SOURCES } from '../support/from-sources';

jest.setTimeout(240_000);

const root = path.resolve(__dirname, '../..');

let cluster: Cluster;
let bouncer: PgBouncer;
let dir: string;

beforeAll(async () => {
  dir = tempDir('pgbouncer');
  cluster = await Cluster.create('pgbouncer');
  await cluster.createDatabase('blog');
  bouncer = await PgBouncer.start({ host: '127.0.0.1', port: cluster.port });
});

afterAll(() => {
  bouncer?.stop();
  cluster?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Transactions PgBouncer pooled for `database`. */
async function pooled(database: string): Promise<number> {
  const admin = new Client({ connectionString: bouncer.url('pgbouncer') });
  await admin.connect();
  try {
    const { rows } = await admin.query('SHOW STATS');
    return Number((rows as { database: string; total_xact_count: string }[]).find((r) => r.database === database)?.total_xact_count ?? 0);
  } finally {
    await admin.end();
  }
}

function migrate(env: Record<string, string>) {
  return spawnSync(process.execPath, [...FROM_SOURCES, path.join(root, 'generated/main.ts'), 'migrate'], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
}

it('DATABASE_DIRECT_URL must name the same kind of database', () => {
  const res = migrate({ DATABASE_URL: bouncer.url('blog'), DATABASE_DIRECT_URL: `sqlite:${path.join(dir, 'x.sqlite3')}` });
  expect({ status: res.status, stderr: res.stderr.trim() }).toEqual({
    status: 1,
    stderr: 'configuration error: DATABASE_DIRECT_URL must name the same kind of database as DATABASE_URL (postgres)',
  });
});

it('migrations go through DATABASE_DIRECT_URL, never through PgBouncer; the service serves through it', async () => {
  const res = migrate({ DATABASE_URL: bouncer.url('blog'), DATABASE_DIRECT_URL: cluster.url('blog') });
  expect({ status: res.status, stdout: res.stdout }).toEqual({
    status: 0,
    stdout:
      'applied migrations: 0001_initial, 0002_articles_is_published_created_at_and_more, 0003_alter_articles_author_id, 0004_articles_title_search_and_more\n',
  });
  expect(await pooled('blog')).toBe(0);

  const instance = new Instance({ ...keyFiles(dir), DATABASE_URL: bouncer.url('blog'), DATABASE_DIRECT_URL: cluster.url('blog') });
  await instance.start();
  try {
    expect(instance.output).toMatch(/^database is up to date\n/);
    expect(await pooled('blog')).toBe(0);
    const db = cluster.admin('blog');
    const staff = await staffUser(db);
    await db.destroy();
    const created = await call(`${instance.base}/categories/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: staff.bearer },
      body: JSON.stringify({ name: 'pooled', description: '' }),
    });
    expect(created.status).toBe(201);
    expect((await call(`${instance.base}/categories/${(created.body as { id: number }).id}/`)).status).toBe(200);
    expect(await pooled('blog')).toBeGreaterThan(0);
  } finally {
    await instance.stop();
  }
});
