/**
 * `SVC_WORKERS=2`: the blog's entry point (generated/main.ts, transpiled on load) migrates in the
 * primary, forks two workers on one port, sums their metrics at `/metrics`, replaces a worker that
 * dies, and on SIGTERM stops the workers and exits 0.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigurationError } from '../../runtime';
import { workerCount } from '../../runtime/http/cluster';
import { testKeys } from '../support/keys';
import { FROM_SOURCES } from '../support/from-sources';

const root = path.resolve(__dirname, '../..');

jest.setTimeout(180_000);

let dir: string;
let child: ChildProcess | undefined;
let out = '';

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-workers-'));
  const keys = testKeys();
  fs.writeFileSync(path.join(dir, 'private.pem'), keys.privateKey);
  fs.writeFileSync(path.join(dir, 'public.pem'), keys.publicKey);
});

afterAll(() => {
  if (child && child.exitCode === null) {
    for (const pid of workerPids(child.pid!)) process.kill(pid, 'SIGKILL');
    child.kill('SIGKILL');
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

function workerPids(primary: number): number[] {
  try {
    // Node processes only: run from sources, the primary also has tsx's esbuild service as a child.
    const node = path.basename(process.execPath).slice(0, 15);
    return execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(primary)], { encoding: 'utf8' })
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter(([, command]) => command === node)
      .map(([pid]) => Number(pid))
      .filter((n) => n > 0);
  } catch {
    return [];
  }
}

/** Resolves once the output matches `pattern` `times` times. */
async function waitFor(pattern: RegExp, times = 1, ms = 120_000): Promise<RegExpMatchArray[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = [...out.matchAll(new RegExp(pattern.source, 'g'))];
    if (found.length >= times) return found;
    if (Date.now() > deadline || child?.exitCode !== null) throw new Error(`no ${times} × ${pattern}: ${out}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function get(port: number, urlPath: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    // A new connection per request, so that requests reach different workers.
    http
      .get({ host: '127.0.0.1', port, path: urlPath, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      })
      .on('error', reject);
  });
}

describe('SVC_WORKERS', () => {
  it('is 1 by default, a positive integer, or auto for one per CPU', () => {
    expect(workerCount({})).toBe(1);
    expect(workerCount({ SVC_WORKERS: '4' })).toBe(4);
    expect(workerCount({ SVC_WORKERS: 'auto' })).toBe(os.availableParallelism());
    for (const bad of ['0', '-2', 'two', '1.5']) {
      expect(() => workerCount({ SVC_WORKERS: bad })).toThrow(
        new ConfigurationError(`SVC_WORKERS must be a positive integer or "auto", got "${bad}"`),
      );
    }
  });
});

it('serves from two workers, sums their metrics, replaces a dead worker and stops on SIGTERM', async () => {
  child = spawn(process.execPath, [...FROM_SOURCES, path.join(root, 'generated/main.ts')], {
    cwd: dir,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: '0',
      SVC_WORKERS: '2',
      SVC_METRICS: 'true',
      DATABASE_URL: `sqlite:${path.join(dir, 'blog.sqlite3')}`,
      SVC_JWT_PRIVATE_KEY_FILE: path.join(dir, 'private.pem'),
      SVC_JWT_PUBLIC_KEY_FILE: path.join(dir, 'public.pem'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child!.on('exit', (code, signal) => resolve({ code, signal })),
  );

  const listening = await waitFor(/Blog API listening on http:\/\/127\.0\.0\.1:(\d+)\/api/, 2);
  expect(out).toMatch(
    /^applied migrations: 0001_initial, 0002_articles_is_published_created_at_and_more, 0003_alter_articles_author_id, 0004_articles_title_search_and_more\nBlog API: starting 2 workers on http:\/\/127\.0\.0\.1:0\/api\n/,
  );
  const port = Number(listening[0][1]);
  expect(Number(listening[1][1])).toBe(port);
  const workers = workerPids(child.pid!);
  expect(workers).toHaveLength(2);

  for (let i = 0; i < 6; i++) expect((await get(port, '/api/health')).status).toBe(200);
  const metrics = await get(port, '/metrics');
  expect(metrics.status).toBe(200);
  expect(metrics.body).toContain('http_requests_total{method="GET",route="/api/health",status="200"} 6\n');

  process.kill(workers[0], 'SIGKILL');
  await waitFor(new RegExp(`worker ${workers[0]} died \\(signal SIGKILL\\); starting another`));
  await waitFor(/Blog API listening on/, 3);
  const replaced = workerPids(child.pid!);
  expect(replaced).toHaveLength(2);
  expect(replaced).not.toContain(workers[0]);
  expect((await get(port, '/api/health')).status).toBe(200);

  child.kill('SIGTERM');
  expect(await exited).toEqual({ code: 0, signal: null });
  expect(out).toContain('SIGTERM: stopping 2 workers');
  for (const pid of replaced) expect(() => process.kill(pid, 0)).toThrow();
});
