/**
 * A blackholed database: the blog serves writes from a PostgreSQL cluster of this test's own; the
 * cluster's processes are stopped (SIGSTOP), so that connections to it open at the TCP level and
 * nothing ever answers, for 8 s, then continued. Under a steady load of writes and readiness checks:
 *
 * - every request is answered 201, or 503 `{"detail": "Service Unavailable"}` with Retry-After, each
 *   within the bound the timeouts set (connect 1 s, acquire 2 s, statement 1.5 s: at most 2 + 1.5 +
 *   1 s), never hanging for as long as the partition lasts;
 * - readiness answers 503 within the connect timeout while the database is silent, 200 after;
 * - the service serves again by itself when the database answers;
 * - every row answered 201 is in the database (0 lost). A write whose COMMIT was under way when the
 *   database went silent is answered 503 and may or may not have committed: rows beyond the 201s
 *   may only be such writes.
 */
import { Cluster, Instance, call, keyFiles, sleep, staffUser, statusCounts, tempDir, type Answer } from './support/stack';
import * as fs from 'node:fs';

jest.setTimeout(240_000);

const BOUND_MS = 5000;
const FROZEN_MS = 8000;

let cluster: Cluster;
let instance: Instance;
let dir: string;

beforeAll(async () => {
  dir = tempDir('blackhole');
  cluster = await Cluster.create('blackhole');
  await cluster.createDatabase('blog');
  instance = new Instance({
    ...keyFiles(dir),
    DATABASE_URL: cluster.url('blog'),
    SVC_DB_CONNECT_TIMEOUT: '1',
    SVC_DB_ACQUIRE_TIMEOUT: '2',
    SVC_DB_STATEMENT_TIMEOUT: '1.5',
  });
  await instance.start();
});

afterAll(async () => {
  instance?.kill();
  cluster?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Write extends Answer {
  name: string;
  startedAt: number;
}

it('answers 503 within the bound while the database is silent, recovers by itself, and loses no row', async () => {
  const db = cluster.admin('blog');
  const staff = await staffUser(db);
  const writes: Write[] = [];
  const checks: (Answer & { startedAt: number })[] = [];
  let running = true;

  const writer = async (w: number) => {
    for (let i = 0; running; i++) {
      const name = `w${w}-${i}`;
      const startedAt = Date.now();
      const answer = await call(`${instance.base}/categories/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: staff.bearer },
        body: JSON.stringify({ name, description: '' }),
      });
      writes.push({ ...answer, name, startedAt });
    }
  };
  const checker = async () => {
    while (running) {
      const startedAt = Date.now();
      checks.push({ ...(await call(`${instance.base}/health/ready`)), startedAt });
      await sleep(250);
    }
  };

  const load = [...Array.from({ length: 8 }, (_, w) => writer(w)), checker()];
  await sleep(2000);
  // Taken once every process is stopped: a write begun while `freeze` lists and stops them may
  // still be answered by the database.
  const pids = cluster.freeze();
  const frozenAt = Date.now();
  await sleep(FROZEN_MS);
  const thawedAt = Date.now();
  cluster.thaw(pids);
  // Until a write started after the thaw is answered 201, and 2 s more.
  let recovered = 0;
  const deadline = Date.now() + 60_000;
  while (!recovered && Date.now() < deadline) {
    await sleep(100);
    recovered = writes.find((w) => w.startedAt >= thawedAt && w.status === 201)?.startedAt ?? 0;
  }
  await sleep(2000);
  running = false;
  await Promise.all(load);

  const rows = new Set((await db('categories').select('name')).map((r: { name: string }) => r.name));
  await db.destroy();

  const during = writes.filter((w) => w.startedAt >= frozenAt && w.startedAt + w.ms <= thawedAt);
  const readyDuring = checks.filter((c) => c.startedAt >= frozenAt && c.startedAt + c.ms <= thawedAt);
  const answered201 = writes.filter((w) => w.status === 201);
  const answered503 = writes.filter((w) => w.status === 503);
  const figures = {
    writes: writes.length,
    statuses: statusCounts(writes),
    slowestMs: Math.max(...writes.map((w) => w.ms)),
    slowest503Ms: Math.max(0, ...answered503.map((w) => w.ms)),
    duringPartition: {
      writes: during.length,
      statuses: statusCounts(during),
      readiness: statusCounts(readyDuring),
      slowestReadinessMs: Math.max(0, ...readyDuring.map((c) => c.ms)),
    },
    firstWrite201AfterThawMs: recovered - thawedAt,
    rowsInDatabase: rows.size,
    rowsAnswered201: answered201.length,
  };
  console.log(`blackhole figures: ${JSON.stringify(figures)}`);

  // Only 201s and 503s, each 503 the seed's, with Retry-After.
  expect(Object.keys(statusCounts(writes)).sort()).toEqual(['201', '503']);
  for (const w of answered503)
    expect({ body: w.body, retryAfter: w.headers.get('retry-after') }).toEqual({
      body: { detail: 'Service Unavailable' },
      retryAfter: '5',
    });
  // Every answer within the bound; nothing waits for the partition to end.
  expect(figures.slowestMs).toBeLessThan(BOUND_MS);
  // While the database was silent, every write and every readiness check was a 503.
  expect(during.length).toBeGreaterThan(0);
  expect(statusCounts(during)).toEqual({ 503: during.length });
  expect(readyDuring.length).toBeGreaterThan(0);
  expect(statusCounts(readyDuring)).toEqual({ 503: readyDuring.length });
  expect(figures.duringPartition.slowestReadinessMs).toBeLessThan(BOUND_MS);
  // It recovered by itself, and readiness says so.
  expect(recovered).toBeGreaterThan(0);
  expect(checks[checks.length - 1].status).toBe(200);
  // 0 rows lost: every 201 is in the database; a row beyond them was a write answered 503.
  for (const w of answered201) expect(rows.has(w.name)).toBe(true);
  const answered = new Set(answered201.map((w) => w.name));
  const ambiguous = new Set(answered503.map((w) => w.name));
  for (const name of rows) if (!answered.has(name)) expect(ambiguous.has(name)).toBe(true);
});
