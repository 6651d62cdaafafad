/**
 * Read replicas with read-your-writes: the blog's primary is a cluster of this test's own, its
 * replica a streaming standby made with pg_basebackup whose replay is delayed 3 s
 * (`recovery_min_apply_delay`), and the blog (a process) has DATABASE_REPLICA_URLS naming it.
 *
 * - A write's answer carries `X-Commit-Position`; the typed client presents it with its next
 *   requests, and reads its own write every time, although the replica does not have it yet.
 * - Without the position, a read right after the write is served by the lagging replica: stale (404).
 * - Once the replica has replayed the position, reads presenting it are served by the replica,
 *   counted in the replica's own statement log.
 * - A replica that stops is skipped (the primary serves, no request fails), and used again by
 *   itself once it is back.
 */
import * as fs from 'node:fs';
import type { Knex } from 'knex';
import { ApiError, createClient } from '../../generated/client';
import { REPLICA_RETRY_MS } from '../../runtime/db/replicas';
import { Cluster, Instance, PG_VERSION, call, keyFiles, sleep, staffUser, tempDir, waitUntil } from './support/stack';

jest.setTimeout(240_000);

const DELAY = '3s';

let primary: Cluster;
let replica: Cluster;
let instance: Instance;
let dir: string;
let db: Knex;
let staff: { id: number; bearer: string };

beforeAll(async () => {
  dir = tempDir('replicas');
  primary = await Cluster.create('primary');
  await primary.createDatabase('blog');
  replica = await Cluster.replicaOf(primary, {
    recovery_min_apply_delay: `'${DELAY}'`,
    log_statement: "'all'",
    hot_standby_feedback: 'on',
  });
  instance = new Instance({
    ...keyFiles(dir),
    DATABASE_URL: primary.url('blog'),
    DATABASE_REPLICA_URLS: replica.url('blog'),
  });
  await instance.start();
  db = primary.admin('blog');
  staff = await staffUser(db);
  await caughtUp(await currentPosition());
});

afterAll(async () => {
  await db?.destroy();
  instance?.kill();
  replica?.drop();
  primary?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function currentPosition(): Promise<string> {
  const { rows } = await db.raw('select pg_current_wal_insert_lsn()::text as lsn');
  return rows[0].lsn;
}

/** Until the replica has replayed `position`. */
async function caughtUp(position: string): Promise<void> {
  const standby = replica.admin('blog');
  try {
    await waitUntil(`the replica to replay ${position}`, async () => {
      const { rows } = await standby.raw('select pg_last_wal_replay_lsn() >= ?::pg_lsn as done', [position]);
      return rows[0].done === true;
    });
  } finally {
    await standby.destroy();
  }
}

/** The statements the replica ran that read the categories table, from its own log. */
function replicaCategoryReads(): number {
  const log = fs.readFileSync(`/var/log/postgresql/postgresql-${PG_VERSION}-${replica.name}.log`, 'utf8');
  return log.split('\n').filter((line) => /(statement|execute [^:]*): select .* from "categories"/.test(line)).length;
}

function client() {
  return createClient({ baseUrl: instance.base, token: staff.bearer.slice('Bearer '.length) });
}

it('a write answers its commit position; a read presenting it is served by the primary while the replica lags', async () => {
  const res = await call(`${instance.base}/categories/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: staff.bearer },
    body: JSON.stringify({ name: 'positioned', description: '' }),
  });
  expect(res.status).toBe(201);
  const position = res.headers.get('x-commit-position');
  expect(position).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
  const id = (res.body as { id: number }).id;
  const read = await call(`${instance.base}/categories/${id}/`, {
    headers: { authorization: staff.bearer, 'x-commit-position': position! },
  });
  expect({ status: read.status, name: (read.body as { name?: string }).name }).toEqual({ status: 200, name: 'positioned' });
});

it('the typed client reads its own write every time', async () => {
  const api = client();
  const before = replicaCategoryReads();
  for (let i = 0; i < 20; i++) {
    const created = await api.createCategory({ name: `own-${i}`, description: '' });
    expect(await api.retrieveCategory(created.id)).toEqual(created);
  }
  // None of these reads could be the replica's: it had none of the writes yet.
  expect(replicaCategoryReads() - before).toBe(0);
});

it("a user who registers is found by the next request (its token's user read with the position)", async () => {
  let token: string | undefined;
  const api = createClient({ baseUrl: instance.base, token: () => token });
  for (let i = 0; i < 5; i++) {
    const username = `reader${process.pid}x${i}`;
    token = (await api.register({ username, email: `${username}@example.com`, password: 'correct horse' })).access_token;
    expect((await api.me()).username).toBe(username);
  }
});

it('without the position, a read right after the write may be stale: the lagging replica answers it', async () => {
  let stale = 0;
  for (let i = 0; i < 5; i++) {
    const res = await call(`${instance.base}/categories/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: staff.bearer },
      body: JSON.stringify({ name: `blind-${i}`, description: '' }),
    });
    expect(res.status).toBe(201);
    const read = await call(`${instance.base}/categories/${(res.body as { id: number }).id}/`, {
      headers: { authorization: staff.bearer },
    });
    expect([200, 404]).toContain(read.status);
    if (read.status === 404) stale += 1;
  }
  console.log(`reads without the position right after their write: ${stale} of 5 stale (404)`);
  expect(stale).toBeGreaterThan(0);
});

it('once the replica has replayed the position, reads presenting it are served by the replica', async () => {
  const api = client();
  const created = await api.createCategory({ name: 'replayed', description: '' });
  await caughtUp(await currentPosition());
  const before = replicaCategoryReads();
  for (let i = 0; i < 10; i++) expect(await api.retrieveCategory(created.id)).toEqual(created);
  expect((await api.listCategories({ page_size: 100 })).items.map((c) => c.name)).toContain('replayed');
  const served = replicaCategoryReads() - before;
  console.log(`statements of 11 reads (10 retrieves, a list and its count) run by the caught-up replica, counted in its log: ${served}`);
  expect(served).toBeGreaterThanOrEqual(11);
});

it('a replica that stops is skipped, no request fails, and it serves again by itself once back', async () => {
  const api = client();
  const created = await api.createCategory({ name: 'through-a-stop', description: '' });
  await caughtUp(await currentPosition());
  replica.stop();
  try {
    for (let i = 0; i < 10; i++) expect(await api.retrieveCategory(created.id)).toEqual(created);
  } finally {
    replica.start();
  }
  const before = replicaCategoryReads();
  await sleep(REPLICA_RETRY_MS + 500);
  await waitUntil('the replica to serve reads again', async () => {
    expect(await api.retrieveCategory(created.id)).toEqual(created);
    return replicaCategoryReads() > before;
  });
});

it('a row that exists nowhere is a 404, as without replicas', async () => {
  const err = await client()
    .retrieveCategory(999_999)
    .catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).status).toBe(404);
});
