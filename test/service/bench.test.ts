/**
 * `npm run bench` as it runs (compiled, then dist/bench/run.js), briefly: it seeds its own
 * database, serves the blog and prints one line per scenario, every request answered 200. Its
 * figures are not checked (no timing in tests); that it runs at all is, on SQLite and on PostgreSQL.
 */
import { execFile, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { DIALECTS, pgUrl } from '../support/databases';

const root = path.resolve(__dirname, '../..');

jest.setTimeout(120_000);

const SCENARIOS = [
  'list articles (page of 20)',
  'list articles, ?expand=author,category,tags (20)',
  'list articles, filtered and ordered',
  'retrieve article (nested author, category, tags)',
  'list tags of an article (m2m)',
  'health',
];

beforeAll(() => {
  const build = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', 'tsconfig.build.json'], {
    cwd: root,
    encoding: 'utf8',
  });
  expect(build.stdout + build.stderr).toBe('');
});

async function bench(env: Record<string, string>): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(root, 'dist/bench/run.js')], {
    cwd: root,
    env: { ...process.env, BENCH_SECONDS: '0.3', BENCH_ROWS: '60', BENCH_CONCURRENCY: '2', ...env },
  });
  return stdout;
}

/** Each scenario's line: its name, then req/s, p50, p99 and the count of answers other than 200. */
function expectEveryScenarioAnswered(stdout: string, label: RegExp): void {
  expect(stdout.split('\n')[0]).toMatch(label);
  for (const name of SCENARIOS) {
    const line = stdout.split('\n').find((l) => l.startsWith(name));
    expect(line).toMatch(/ [1-9]\d* +\d+\.\d\d +\d+\.\d\d +0$/);
  }
}

const SERVERS = DIALECTS.filter((d) => d !== 'mysql');

describe.each(SERVERS)('npm run bench on %s', (dialect) => {
  it('prints every scenario, each request answered 200', async () => {
    if (dialect === 'sqlite') {
      expectEveryScenarioAnswered(
        await bench({ DATABASE_URL: '' }),
        /^svcgen bench: 60 articles, 2 concurrent connections, 0\.3s per scenario \(SQLite\)$/,
      );
    } else {
      expectEveryScenarioAnswered(
        await bench({ DATABASE_URL: pgUrl('postgres') }),
        /^svcgen bench: 60 articles, 2 concurrent connections, 0\.3s per scenario \(PostgreSQL [^)]+\)$/,
      );
    }
  });
});
