/**
 * `npm run bench`: throughput and latency of the generated blog on seeded data, on a temporary
 * SQLite file, or with `DATABASE_URL=postgres://user@host:port/db` on a fresh PostgreSQL database
 * created on that server (the URL's database is only used to create and drop it). Loopback only;
 * every scenario is bounded in requests and in time.
 *
 *   BENCH_SECONDS (default 3) · BENCH_CONCURRENCY (default 16) · BENCH_ROWS (default 2000)
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import knex from 'knex';
import { connect, generateKeyPair, loadSettings, migrateLatest, type Db } from '@svcgen/runtime';
import { createService } from '../generated/app';
import { migrations } from '../generated/migrations';
import { DEFAULT_SETTINGS } from '../generated/settings';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
// One log line per request would flood the output this command prints its table to; a run that
// should include the logging's cost sets SVC_LOG_LEVEL=info and redirects the output.
process.env.SVC_LOG_LEVEL ??= 'warn';
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ROWS = Number(process.env.BENCH_ROWS ?? 2000);
const MAX_REQUESTS = 200_000;

async function seed(db: Db): Promise<void> {
  const [user] = await db('users')
    .insert({ username: 'bench', email: 'bench@example.com', password: 'x', date_joined: new Date().toISOString() })
    .returning('id');
  const tags = await db('tags')
    .insert(Array.from({ length: 20 }, (_, i) => ({ name: `tag-${i}` })))
    .returning('id');
  const categories = await db('categories')
    .insert(Array.from({ length: 10 }, (_, i) => ({ name: `category-${i}` })))
    .returning('id');
  for (let i = 0; i < ROWS; i += 200) {
    const batch = Array.from({ length: Math.min(200, ROWS - i) }, (_, j) => ({
      title: `Article ${i + j}`,
      content: 'Lorem ipsum dolor sit amet. '.repeat(20),
      summary: `Summary ${i + j}`,
      author_id: user.id,
      category_id: categories[(i + j) % categories.length].id,
      is_published: true,
      created_at: new Date(Date.UTC(2026, 0, 1) + (i + j) * 60_000).toISOString(),
      views: (i + j) % 250,
    }));
    const ids = await db('articles').insert(batch).returning('id');
    const links = ids.flatMap((a: { id: number }, k: number) =>
      [0, 1, 2].map((t) => ({ article_id: a.id, tag_id: tags[(k + t * 7) % tags.length].id })),
    );
    for (let k = 0; k < links.length; k += 150) await db('articles_tags').insert(links.slice(k, k + 150));
  }
}

interface Result {
  name: string;
  requests: number;
  seconds: number;
  p50: number;
  p99: number;
  errors: number;
}

async function scenario(name: string, base: string, paths: () => string): Promise<Result> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const latencies: number[] = [];
  let errors = 0;
  const deadline = Date.now() + SECONDS * 1000;
  const started = Date.now();
  const worker = async () => {
    while (Date.now() < deadline && latencies.length < MAX_REQUESTS) {
      const t0 = process.hrtime.bigint();
      const status = await new Promise<number>((resolve) => {
        http
          .get(base + paths(), { agent }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          })
          .on('error', () => resolve(0));
      });
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (status !== 200) errors++;
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { name, requests: latencies.length, seconds: (Date.now() - started) / 1000, p50: at(0.5), p99: at(0.99), errors };
}

/** The database the bench runs on, and how to remove it afterwards. */
interface BenchDatabase {
  label: string;
  db: Db;
  drop(): Promise<void>;
}

async function sqliteDatabase(): Promise<BenchDatabase> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-bench-'));
  const db = connect(`sqlite:${path.join(dir, 'bench.sqlite3')}`, '');
  return {
    label: 'SQLite',
    db,
    async drop() {
      await db.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A new database `svcgen_bench_<pid>` on the server of `url`, dropped (with its connections) afterwards. */
async function postgresDatabase(url: string): Promise<BenchDatabase> {
  const server = new URL(url);
  const name = `svcgen_bench_${process.pid}`;
  const admin = () => knex({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
  const a = admin();
  try {
    await a.raw('create database ??', [name]);
  } finally {
    await a.destroy();
  }
  server.pathname = `/${name}`;
  const db = connect(server.toString(), '');
  return {
    label: `PostgreSQL ${server.host}`,
    db,
    async drop() {
      await db.destroy();
      const b = admin();
      try {
        await b.raw('drop database if exists ?? with (force)', [name]);
      } finally {
        await b.destroy();
      }
    },
  };
}

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  const bench = url && /^postgres(ql)?:/.test(url) ? await postgresDatabase(url) : await sqliteDatabase();
  const db = bench.db;
  try {
    await migrateLatest(db, migrations);
    await seed(db);
    const { app } = createService({ db, keys: generateKeyPair(), settings: loadSettings(DEFAULT_SETTINGS, {}), logError: () => {} });
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
    let n = 0;
    const scenarios: [string, () => string][] = [
      ['list articles (page of 20)', () => `/articles/?page=${(n++ % 50) + 1}&page_size=20`],
      // Three relations expanded: three more queries per page, whatever its size.
      [
        'list articles, ?expand=author,category,tags (20)',
        () => `/articles/?page=${(n++ % 50) + 1}&page_size=20&expand=author,category,tags`,
      ],
      ['list articles, filtered and ordered', () => `/articles/?title=1&tag=tag-3&ordering=-views,title&page_size=20`],
      ['retrieve article (nested author, category, tags)', () => `/articles/${(n++ % ROWS) + 1}/`],
      ['list tags of an article (m2m)', () => `/articles/${(n++ % ROWS) + 1}/tags/`],
      ['health', () => '/health'],
    ];
    console.log(`svcgen bench: ${ROWS} articles, ${CONCURRENCY} concurrent connections, ${SECONDS}s per scenario (${bench.label})\n`);
    console.log('scenario                                              req/s    p50 ms   p99 ms  errors');
    for (const [name, next] of scenarios) {
      const r = await scenario(name, base, next);
      console.log(
        `${r.name.padEnd(50)} ${(r.requests / r.seconds).toFixed(0).padStart(8)} ${r.p50.toFixed(2).padStart(9)} ${r.p99.toFixed(2).padStart(8)} ${String(r.errors).padStart(7)}`,
      );
    }
    await new Promise((resolve) => server.close(resolve));
  } finally {
    await bench.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
