/**
 * Several instances behind a load balancer: three instances of the blog (processes, one port each)
 * behind HAProxy, which checks each on `/api/health/ready`, all on one PostgreSQL cluster of this
 * test's own and one Redis (SVC_REDIS_URL, keys under an audience of this run's own); and three
 * instances of the showcase fixture, whose beacons have a rate limit of 3 per minute per user.
 *
 * - The login throttle (5 failures per username) and a rate limit of 3 per minute hold across the
 *   three: the limit in total, not per instance.
 * - A rolling restart (each instance in turn stopped with SIGTERM and started again) under a steady
 *   load of writes: no request fails (every one is 201) and every row answered 201 is in the
 *   database, none more.
 */
import * as fs from 'node:fs';
import type { Knex } from 'knex';
import {
  Cluster,
  HaProxy,
  Instance,
  call,
  freePort,
  keyFiles,
  sleep,
  staffUser,
  statusCounts,
  tempDir,
  waitUntil,
  type Answer,
} from './support/stack';

jest.setTimeout(600_000);

const AUDIENCE = `scale-${process.pid}-${Date.now()}`;
const REDIS = process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let cluster: Cluster;
let proxy: HaProxy;
let dir: string;
let db: Knex;
const blogs: Instance[] = [];
const showcases: Instance[] = [];
let blogPort: number;
let showcasePort: number;

beforeAll(async () => {
  dir = tempDir('haproxy');
  cluster = await Cluster.create('haproxy');
  await cluster.createDatabase('blog');
  await cluster.createDatabase('showcase');
  const common = { ...keyFiles(dir), SVC_REDIS_URL: REDIS, SVC_JWT_AUDIENCE: AUDIENCE, SVC_SHUTDOWN_TIMEOUT: '10' };
  for (let i = 0; i < 3; i++) {
    blogs.push(new Instance({ ...common, DATABASE_URL: cluster.url('blog') }, await freePort()));
    showcases.push(
      new Instance({ ...common, DATABASE_URL: cluster.url('showcase') }, await freePort(), 'test/fixtures/showcase/generated/main.ts'),
    );
  }
  // One at a time: the first applies the migrations.
  for (const instance of [...blogs, ...showcases]) await instance.start();
  blogPort = await freePort();
  showcasePort = await freePort();
  proxy = await HaProxy.start([
    { name: 'blog', port: blogPort, health: '/api/health/ready', servers: blogs.map((b) => b.port) },
    { name: 'showcase', port: showcasePort, health: `${showcases[0].basePath}/health/ready`, servers: showcases.map((s) => s.port) },
  ]);
  await waitUntil('HAProxy to see every instance up', async () => {
    const all = { ...(await proxy.servers('blog')), ...(await proxy.servers('showcase')) };
    return Object.values(all).length === 6 && Object.values(all).every((s) => s === 'UP');
  });
  db = cluster.admin('blog');
});

afterAll(async () => {
  await db?.destroy();
  proxy?.stop();
  for (const instance of [...blogs, ...showcases]) instance.kill();
  cluster?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const blog = (path: string) => `http://127.0.0.1:${blogPort}/api${path}`;

it('HAProxy spreads requests over the three instances', async () => {
  const before = await Promise.all(blogs.map((b) => call(`${b.base}/health`)));
  expect(before.map((a) => a.status)).toEqual([200, 200, 200]);
  const answers = await Promise.all(Array.from({ length: 9 }, () => call(blog('/health/ready'))));
  expect(statusCounts(answers)).toEqual({ 200: 9 });
  expect(await proxy.servers('blog')).toEqual({ blog1: 'UP', blog2: 'UP', blog3: 'UP' });
});

it('the login throttle counts the failures of a username across the instances', async () => {
  const username = `nobody${process.pid}`;
  const answers: Answer[] = [];
  for (let i = 0; i < 9; i++) {
    answers.push(
      await call(blog('/auth/login/'), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username, password: `wrong password ${i}` }),
      }),
    );
  }
  console.log(`login throttle through HAProxy, 9 wrong passwords for one username: ${JSON.stringify(statusCounts(answers))}`);
  expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401, 401, 429, 429, 429, 429]);
});

it('a rate limit of 3 per minute is 3 in total across the instances', async () => {
  const user = `user${process.pid}`;
  const base = `http://127.0.0.1:${showcasePort}${showcases[0].basePath}`;
  const answers: Answer[] = [];
  for (let i = 0; i < 9; i++) answers.push(await call(`${base}/beacons/`, { headers: { 'x-user': user } }));
  console.log(`rate limit 3/minute through HAProxy, 9 requests of one user: ${JSON.stringify(statusCounts(answers))}`);
  expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429, 429, 429, 429, 429, 429]);
  expect(answers[3].body).toEqual({ detail: expect.stringMatching(/^Request was throttled\. Expected available in \d+ seconds?\.$/) });
});

it('a rolling restart under load: no request fails, no committed row is lost', async () => {
  const staff = await staffUser(db, `staff${process.pid}`, AUDIENCE);
  const writes: (Answer & { name: string })[] = [];
  let running = true;
  const writer = async (w: number) => {
    for (let i = 0; running; i++) {
      const name = `r${w}-${i}`;
      const answer = await call(blog('/categories/'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: staff.bearer },
        body: JSON.stringify({ name, description: '' }),
      });
      writes.push({ ...answer, name });
    }
  };
  const load = Array.from({ length: 8 }, (_, w) => writer(w));
  const restarts: { instance: number; exitCode: number | null; downMs: number }[] = [];
  await sleep(1000);
  for (let i = 0; i < blogs.length; i++) {
    const started = Date.now();
    const exitCode = await blogs[i].stop();
    await blogs[i].start();
    await waitUntil(`blog${i + 1} to be up again`, async () => (await proxy.servers('blog'))[`blog${i + 1}`] === 'UP');
    restarts.push({ instance: i + 1, exitCode, downMs: Date.now() - started });
    await sleep(1000);
  }
  running = false;
  await Promise.all(load);

  const rows = (await db('categories').select('name')).map((r: { name: string }) => r.name).sort();
  const answered201 = writes
    .filter((w) => w.status === 201)
    .map((w) => w.name)
    .sort();
  const failed = writes.filter((w) => w.status !== 201);
  console.log(
    `rolling restart through HAProxy: ${JSON.stringify({ writes: writes.length, statuses: statusCounts(writes), restarts, rowsInDatabase: rows.length, rowsAnswered201: answered201.length, slowestMs: Math.max(...writes.map((w) => w.ms)) })}`,
  );
  if (failed.length) console.log(`HAProxy's log of requests that did not end normally:\n${proxy.output}`);
  expect(restarts.map((r) => r.exitCode)).toEqual([0, 0, 0]);
  expect(failed.map((w) => ({ status: w.status, body: w.body }))).toEqual([]);
  expect(rows).toEqual(answered201);
});
