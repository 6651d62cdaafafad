/**
 * The npm scripts of a project made by `svcgen init` (npm start, npm run migrate, npm run
 * createuser), without the packing and installing of package.test.ts: the project is made inside
 * this repository and its node_modules are links to this repository's. As a development install
 * (svcgen among them, as the checkout) the scripts compile, then run; as a production install (no
 * svcgen: `npm install --omit=dev`) they run the compiled dist/ as it is, and without dist/ they stop
 * saying what to do.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { initProject } from '../../generator/cli/init';
import { scratchDir } from '../support/scratch';

jest.setTimeout(5 * 60_000);

const ROOT = path.resolve(__dirname, '../..');

let app: string;
let database: string;

/** The environment without the variables `npm run`/`npx` set for jest itself. */
function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^npm_/i.test(k) && !['INIT_CWD', 'NODE_PATH', 'NODE_OPTIONS'].includes(k)) out[k] = v;
  return { ...out, DATABASE_URL: `sqlite:${database}`, ...extra };
}

function npm(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync('npm', ['run', '--silent', ...args], { cwd: app, encoding: 'utf8', env: env(), timeout: 4 * 60_000 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr.replace(/^generated a development RSA key pair.*\n/m, '') };
}

/** `npm start` until it says where it listens; then its health, and it is stopped. */
async function started(): Promise<{ health: number; out: string }> {
  const child = spawn('npm', ['start', '--silent'], { cwd: app, env: env({ PORT: '0' }), detached: true });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    for (let i = 0; i < 1200 && !/listening on (http:\/\/\S+)/.test(out) && child.exitCode === null; i++)
      await new Promise((r) => setTimeout(r, 100));
    const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
    return { health: url ? (await fetch(`${url}/health`)).status : 0, out };
  } finally {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // Gone.
    }
    await exited;
  }
}

beforeAll(async () => {
  // The compiled runtime, which the compiled service loads.
  const runtime = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', 'runtime'], { cwd: ROOT, encoding: 'utf8' });
  expect(runtime.stdout + runtime.stderr).toBe('');
  const dir = scratchDir('init-scripts');
  await initProject('app', { cwd: dir });
  app = path.join(dir, 'app');
  database = path.join(dir, 'app.sqlite3');
  // A development install: this repository's packages, and svcgen (the checkout) among them.
  fs.mkdirSync(path.join(app, 'node_modules'));
  for (const name of fs.readdirSync(path.join(ROOT, 'node_modules'))) {
    if (name !== '.bin') fs.symlinkSync(path.join(ROOT, 'node_modules', name), path.join(app, 'node_modules', name));
  }
  fs.symlinkSync(ROOT, path.join(app, 'node_modules', 'svcgen'));
});

afterAll(() => {
  if (app) fs.rmSync(path.dirname(app), { recursive: true, force: true });
});

it('compile where svcgen is installed, run the compiled service in a production install, and say what to do without it', async () => {
  expect(JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8')).scripts).toMatchObject({
    start: 'node scripts/compiled.js --build && node dist/generated/main.js',
    migrate: 'node scripts/compiled.js && node dist/generated/main.js migrate',
    createuser: 'node scripts/compiled.js && node dist/generated/main.js createuser',
  });
  // Development: npm run migrate compiles dist/ (svcgen-tsc -b), then migrates.
  expect(fs.existsSync(path.join(app, 'dist'))).toBe(false);
  expect(npm(['migrate'])).toEqual({ status: 0, stdout: 'applied migrations: 0001_initial\n', stderr: '' });
  expect(fs.existsSync(path.join(app, 'dist/generated/main.js'))).toBe(true);

  // Production: no svcgen, no compiler; the compiled service runs as it is.
  fs.rmSync(path.join(app, 'node_modules', 'svcgen'));
  fs.rmSync(path.join(app, 'node_modules', 'typescript'));
  expect(npm(['migrate'])).toEqual({ status: 0, stdout: 'database is up to date\n', stderr: '' });
  expect(npm(['createuser', '--', '--username', 'ada', '--email', 'ada@example.com', '--password', 'pw'])).toEqual({
    status: 0,
    stdout: '1\n',
    stderr: 'database is up to date\n',
  });
  const serving = await started();
  expect({ health: serving.health, listening: /^App API listening on http:\/\/127\.0\.0\.1:\d+\/api /m.test(serving.out) }).toEqual({
    health: 200,
    listening: true,
  });

  // Production without dist/: each script stops, saying why and what to run.
  fs.rmSync(path.join(app, 'dist'), { recursive: true });
  const missing =
    'dist/generated/main.js is missing, and this is a production install (npm install --omit=dev): it has no svcgen to build or compile ' +
    'the service. Compile where the dev dependencies are installed (npm install, then npm run compile) and keep dist/ ' +
    '(the Dockerfile does so), or run npm install without --omit=dev.\n';
  for (const script of [['migrate'], ['start'], ['createuser', '--', '--username', 'bob']]) {
    expect({ script, ...npm(script) }).toEqual({ script, status: 1, stdout: '', stderr: missing });
  }
});
