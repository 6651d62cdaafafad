/**
 * `svcgen init` makes a project that works in two commands: init into a temp folder outside this
 * repository, `npm install` there for real, `npm test` (output check, type check, smoke test),
 * `npm start` and GET its health URL. Then the project evolves the way its README says: a new field,
 * `npm run build` writes migration 0002, the tests still pass, and a restart migrates the data file
 * the first start created, keeping its row.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

// npm install links svcgen (a file: dependency) and may fetch nothing, but allow for a slow registry.
jest.setTimeout(15 * 60_000);

const ROOT = path.resolve(__dirname, '../..');

/** The environment without the variables `npm run`/`npx` set for jest itself (they would steer the project's npm). */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) && k !== 'INIT_CWD' && k !== 'DATABASE_URL') env[k] = v;
  return { ...env, ...extra };
}

function run(cmd: string, args: string[], cwd: string, timeout = 10 * 60_000): { status: number | null; out: string } {
  const r = spawnSync(cmd, args, { cwd, env: cleanEnv(), encoding: 'utf8', timeout });
  if (r.error) throw r.error;
  return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Started {
  child: ChildProcess;
  log: () => string;
  stop(): Promise<void>;
}

/** `npm start` in its own process group (npm, sh and node), so that stopping it stops all three. */
function npmStart(cwd: string, port: number): Started {
  let output = '';
  const child = spawn('npm', ['start'], { cwd, env: cleanEnv({ PORT: String(port), HOST: '127.0.0.1' }), detached: true });
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    log: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid!, 'SIGTERM');
        } catch {
          // Already gone.
        }
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 10_000)))]);
        clearTimeout(timer);
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // Stopped.
        }
      }
      child.stdout!.destroy();
      child.stderr!.destroy();
      child.unref();
    },
  };
}

/** Polls `url` until it answers, the process exits, or a minute passes. */
async function waitFor(url: string, started: Started): Promise<Response> {
  const until = Date.now() + 120_000;
  for (;;) {
    if (started.child.exitCode !== null) throw new Error(`npm start exited with ${started.child.exitCode}:\n${started.log()}`);
    try {
      return await fetch(url);
    } catch {
      if (Date.now() > until) throw new Error(`no answer from ${url}:\n${started.log()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

describe('svcgen init', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-init-'));
  const dir = path.join(tmp, 'field-notes');
  const running: Started[] = [];
  afterAll(async () => {
    for (const s of running) await s.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('scaffolds a project that installs, passes its own tests, starts, and takes a migration', async () => {
    const init = run(process.execPath, [path.join(ROOT, 'bin/svcgen'), 'init', dir], ROOT);
    expect(init.status).toBe(0);
    for (const f of ['package.json', 'README.md', '.gitignore', 'tsconfig.json', 'specs/service.yaml', 'specs/resources/notes.yaml', 'specs/hooks/notes.ts', 'test/smoke.test.js', 'Dockerfile', 'compose.yaml', '.dockerignore']) {
      expect({ f, exists: fs.existsSync(path.join(dir, f)) }).toEqual({ f, exists: true });
    }
    // The image and compose file take svcgen from where the project's dependency points.
    const relative = path.relative(dir, ROOT).split(path.sep).join('/');
    expect(fs.readFileSync(path.join(dir, 'Dockerfile'), 'utf8')).toContain(`docker build --build-context svcgen=${relative} -t field-notes .`);
    expect(fs.readFileSync(path.join(dir, 'compose.yaml'), 'utf8')).toContain(`        svcgen: ${relative}\n`);
    expect(fs.readFileSync(path.join(dir, 'compose.yaml'), 'utf8')).toContain('DATABASE_URL: postgres://field_notes:field_notes@db:5432/field_notes');
    expect(fs.existsSync(path.join(dir, 'generated/migrations/0001_initial.ts'))).toBe(true);
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    expect(pkg.name).toBe('field-notes');
    expect(pkg.dependencies.svcgen).toBe(`file:${path.relative(dir, ROOT).split(path.sep).join('/')}`);
    expect(pkg.scripts.start).toContain('svcgen build specs');
    // Outside this repository, the generated code imports the runtime by package name.
    expect(fs.readFileSync(path.join(dir, 'generated/app.ts'), 'utf8')).toMatch(/from 'svcgen\/runtime';/);
    expect(fs.readFileSync(path.join(dir, 'generated/migrations/index.ts'), 'utf8')).toContain(`from 'svcgen/runtime';`);

    const install = run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], dir);
    expect({ status: install.status, out: install.status ? install.out : '' }).toEqual({ status: 0, out: '' });
    expect(fs.realpathSync(path.join(dir, 'node_modules/svcgen'))).toBe(fs.realpathSync(ROOT));

    const test = run('npm', ['test'], dir);
    expect({ status: test.status, out: test.status ? test.out : '' }).toEqual({ status: 0, out: '' });
    expect(test.out).toContain('svcgen check: generated is up to date with specs');
    expect(test.out).toMatch(/# pass 1\b/);
    expect(test.out).toMatch(/# fail 0\b/);

    // npm start: builds (nothing to write), migrates the SQLite file in data/, serves.
    const port = await freePort();
    const first = npmStart(dir, port);
    running.push(first);
    const health = await waitFor(`http://127.0.0.1:${port}/api/health`, first);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const created = await fetch(`http://127.0.0.1:${port}/api/notes/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: ' Kept across the migration ' }),
    });
    expect(created.status).toBe(201);
    const note = (await created.json()) as { id: number; title: string };
    expect(note.title).toBe('Kept across the migration');
    await first.stop();
    expect(first.log()).toContain('applied migrations: 0001_initial');

    // The project evolves: a new field with a default, as the README says.
    const spec = path.join(dir, 'specs/resources/notes.yaml');
    const text = fs.readFileSync(spec, 'utf8');
    expect(text).toContain('  done: {type: boolean, default: false}\n');
    fs.writeFileSync(spec, text.replace('  done: {type: boolean, default: false}\n', '  done: {type: boolean, default: false}\n  priority: {type: integer, default: 0}\n'));
    const stale = run('npm', ['test'], dir);
    expect(stale.status).not.toBe(0);
    expect(stale.out).toContain('missing migration: generated/migrations/0002_notes_priority.ts');
    const rebuilt = run('npm', ['run', 'build'], dir);
    expect({ status: rebuilt.status, out: rebuilt.status ? rebuilt.out : '' }).toEqual({ status: 0, out: '' });
    expect(rebuilt.out).toContain('  migration  generated/migrations/0002_notes_priority.ts:');
    const retest = run('npm', ['test'], dir);
    expect({ status: retest.status, out: retest.status ? retest.out : '' }).toEqual({ status: 0, out: '' });

    const second = npmStart(dir, port);
    running.push(second);
    const listed = await waitFor(`http://127.0.0.1:${port}/api/notes/${note.id}/`, second);
    expect(listed.status).toBe(200);
    expect(await listed.json()).toMatchObject({ id: note.id, title: 'Kept across the migration', priority: 0 });
    await second.stop();
    expect(second.log()).toContain('applied migrations: 0002_notes_priority');
  });
});
