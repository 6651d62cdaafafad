/**
 * The previous release on a database the next one migrated: the compiled blog (version N) starts
 * on a database where a version N+1 (the blog's migrations and one more, `0005_secrets`) applied
 * its migrations. By default it refuses, exit 1 with one line saying what to do; with
 * SVC_UNKNOWN_MIGRATIONS=serve it serves beside them; when its own migrations are pending beside
 * them (the histories diverged) it refuses either way. Never Knex's "migration directory is
 * corrupt". Real SQLite, PostgreSQL and MySQL/MariaDB.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import type { Knex } from 'knex';
import { migrateLatest, type Migration } from '../../runtime';
import { migrationStatus, rollbackMigrations } from '../../runtime/db/migrations';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';

const root = path.resolve(__dirname, '../..');
const main = path.join(root, 'dist/generated/main.js');

jest.setTimeout(180_000);

const SECRETS: Migration = {
  name: '0005_secrets',
  up: (k: Knex) =>
    k.schema.createTable('secrets', (t) => {
      t.increments('id');
      t.string('value', 50);
    }),
  down: (k: Knex) => k.schema.dropTable('secrets'),
};

/** The development key pair's one-time notice, left out of the output compared. */
const withoutKeyNotice = (text: string) => text.replace(/^generated a development RSA key pair.*\n/m, '');

function run(env: Record<string, string>) {
  const res = spawnSync(process.execPath, [main, 'serve'], {
    cwd: root,
    env: { ...process.env, PORT: '0', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { ...res, stderr: withoutKeyNotice(res.stderr) };
}

/** Starts the compiled service, waits for its listening line, asks its health, stops it: its stdout lines and the health status. */
function serveOnce(env: Record<string, string>): Promise<{ lines: string[]; health: number; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [main, 'serve'], { cwd: root, env: { ...process.env, PORT: '0', ...env } });
    let out = '';
    let err = '';
    let health = 0;
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.stderr.on('data', (d) => (err += d));
    child.stdout.on('data', async (d) => {
      out += d;
      const listening = /listening on (http:\/\/\S+)/.exec(out);
      if (listening && !health) {
        health = -1;
        health = (await fetch(`${listening[1]}/health`)).status;
        child.kill('SIGTERM');
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (err.includes('Error')) reject(new Error(err));
      resolve({
        lines: out
          .split('\n')
          .filter(Boolean)
          .map((l) => l.replace(/:\d+\//g, ':PORT/')),
        health,
        code,
      });
    });
  });
}

let blog: Migration[];

beforeAll(() => {
  const build = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', 'tsconfig.build.json'], {
    cwd: root,
    encoding: 'utf8',
  });
  expect(build.stdout + build.stderr).toBe('');
  blog = require(path.join(root, 'dist/generated/migrations')).migrations;
});

describe.each(DIALECTS)('the previous version on a database the next one migrated (%s)', (dialect) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createDatabase(dialect);
  });
  afterAll(() => database.drop());

  it('refuses by default saying what to do, serves beside them with SVC_UNKNOWN_MIGRATIONS=serve, refuses diverged histories', async () => {
    const db = database.db;
    const next = [...blog, SECRETS];
    expect(await migrateLatest(db, next)).toEqual(next.map((m) => m.name));
    const env = { DATABASE_URL: database.url };

    const refused = run(env);
    expect({ status: refused.status, stdout: refused.stdout, stderr: refused.stderr }).toEqual({
      status: 1,
      stdout: '',
      stderr:
        'cannot open the database: the database has migrations this version of the service does not know (0005_secrets), applied by another version (a newer release, another branch): ' +
        'revert them with the version that applied them (its `migrate rollback 1`) before starting this one, or, if this version can run beside them ' +
        '(they only added tables, or columns that are nullable or have a default), set SVC_UNKNOWN_MIGRATIONS=serve\n',
    });

    expect(await serveOnce({ ...env, SVC_UNKNOWN_MIGRATIONS: 'serve' })).toEqual({
      lines: [
        'database has migrations this version does not know (0005_secrets); serving beside them (SVC_UNKNOWN_MIGRATIONS=serve)',
        'Blog API listening on http://127.0.0.1:PORT/api (docs: http://127.0.0.1:PORT/api/docs)',
        'SIGTERM: shutting down',
      ],
      health: 200,
      code: 0,
    });

    const bad = run({ ...env, SVC_UNKNOWN_MIGRATIONS: 'yes' });
    expect([bad.status, bad.stderr]).toEqual([1, 'configuration error: SVC_UNKNOWN_MIGRATIONS must be refuse or serve, got "yes"\n']);

    // The next version reverts 0005 and 0004, and a branch without 0004 applies its 0005: each lacks the other's.
    expect(await rollbackMigrations(db, next, 2, { allowDataLoss: true })).toEqual(['0005_secrets', blog[3].name]);
    const branch = [...blog.slice(0, 3), SECRETS];
    expect(await migrateLatest(db, branch)).toEqual(['0005_secrets']);
    const diverged = run({ ...env, SVC_UNKNOWN_MIGRATIONS: 'serve' });
    expect([diverged.status, diverged.stdout, diverged.stderr]).toEqual([
      1,
      '',
      `cannot open the database: the database has migrations this version of the service does not know (0005_secrets) and lacks some of its own (${blog[3].name}): ` +
        "the two versions' migrations diverged; revert them with the version that applied them (its `migrate rollback 1`), then start this version\n",
    ]);
    // Nothing was applied by either refusal.
    expect(await migrationStatus(db, branch)).toEqual({
      applied: branch.map((m) => ({ name: m.name, batch: m === SECRETS ? 2 : 1 })),
      pending: [],
      unknown: [],
    });
  });
});
