/**
 * svcgen as users get it: `npm pack` and `npm pack -w runtime` make the tarballs of the command and
 * of the runtime, which are installed into an empty folder outside this repository; `npx svcgen
 * init app` makes a project there that depends on both (the runtime as a dependency, svcgen as a
 * devDependency). In `app/`: `npm install`, `npm test` (output check, compile, smoke test), `npm
 * start` and HTTP requests. Nothing in the project points back into this repository. Then the
 * project evolves the way its README says (a new field, `npm run build` writes migration 0002, a
 * restart migrates the data file and keeps its row), and `svcgen dev` rebuilds and restarts on a
 * spec change, prints a problem in a spec or a hook without exiting, and recovers when it is fixed.
 * Last, a production install (`npm install --omit=dev`) holds none of the build tools and the
 * compiled service starts from it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort } from '../support/ports';

// Three real installs from a slow registry; better-sqlite3 and bcrypt may compile from source.
jest.setTimeout(25 * 60_000);

const ROOT = path.resolve(__dirname, '../..');
const VERSION: string = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;

/** The environment without the variables `npm run`/`npx` set for jest itself (they would steer the project's npm). */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^npm_/i.test(k) && !['INIT_CWD', 'DATABASE_URL', 'NODE_PATH'].includes(k)) env[k] = v;
  }
  return { ...env, ...extra };
}

function run(cmd: string, args: string[], cwd: string, timeout = 12 * 60_000): { status: number | null; out: string } {
  const r = spawnSync(cmd, args, { cwd, env: cleanEnv(), encoding: 'utf8', timeout });
  if (r.error) throw r.error;
  return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
}

/** `run` that must succeed: its output on failure, so that a failing step says why. */
function ok(cmd: string, args: string[], cwd: string): string {
  const r = run(cmd, args, cwd);
  expect({ cmd: `${cmd} ${args.join(' ')}`, status: r.status, out: r.status ? r.out : '' }).toEqual({
    cmd: `${cmd} ${args.join(' ')}`,
    status: 0,
    out: '',
  });
  return r.out;
}

interface Started {
  child: ChildProcess;
  log: () => string;
  stop(): Promise<void>;
}

/** A command in its own process group (npm, sh, node and the service), so that stopping it stops them all. */
function start(cmd: string, args: string[], cwd: string, port: number): Started {
  let output = '';
  const child = spawn(cmd, args, { cwd, env: cleanEnv({ PORT: String(port), HOST: '127.0.0.1' }), detached: true });
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

/** Polls `url` until it answers, the process exits, or two minutes pass. */
async function waitFor(url: string, started: Started): Promise<Response> {
  const until = Date.now() + 120_000;
  for (;;) {
    if (started.child.exitCode !== null) throw new Error(`exited with ${started.child.exitCode}:\n${started.log()}`);
    try {
      return await fetch(url);
    } catch {
      if (Date.now() > until) throw new Error(`no answer from ${url}:\n${started.log()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** Waits until the output holds `count` matches of `pattern` (the process must stay up meanwhile). */
async function waitForOutput(started: Started, pattern: RegExp, count = 1): Promise<void> {
  const global = new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`);
  const until = Date.now() + 180_000;
  while ((started.log().match(global) ?? []).length < count) {
    if (started.child.exitCode !== null) throw new Error(`exited with ${started.child.exitCode}:\n${started.log()}`);
    if (Date.now() > until) throw new Error(`no ${count} × ${pattern} in:\n${started.log()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Every file of a folder (relative paths), without node_modules. */
function filesOf(dir: string, base = dir): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : filesOf(full, base);
    return [path.relative(base, full)];
  });
}

/** The version of a package this repository installed. */
function installedVersion(name: string): string {
  return JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;
}

/** The installed packages (scoped ones included) that list `name` among their dependencies. */
function dependentsOf(name: string, modules: string): string[] {
  const packages = fs
    .readdirSync(modules)
    .flatMap((e) => (e.startsWith('@') ? fs.readdirSync(path.join(modules, e)).map((s) => `${e}/${s}`) : e.startsWith('.') ? [] : [e]));
  return packages.filter((p) => {
    const pkg = JSON.parse(fs.readFileSync(path.join(modules, p, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    return pkg.dependencies?.[name] !== undefined;
  });
}

describe('the svcgen packages', () => {
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-package-')));
  const work = path.join(tmp, 'work');
  const app = path.join(work, 'app');
  const running: Started[] = [];
  afterAll(async () => {
    for (const s of running) await s.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('packs, installs outside the repository, and makes a project that installs, tests, starts and migrates', async () => {
    // npm pack compiles the runtime and the generator (prepack) and packs the generator with the
    // templates; npm pack -w runtime packs the compiled runtime.
    ok('npm', ['pack', '--pack-destination', tmp], ROOT);
    ok('npm', ['pack', '-w', 'runtime', '--pack-destination', tmp], ROOT);
    const tarball = path.join(tmp, `svcgen-${VERSION}.tgz`);
    const runtimeTarball = path.join(tmp, `svcgen-runtime-${VERSION}.tgz`);
    const listing = run('tar', ['-tzf', tarball], tmp).out.split('\n');
    for (const f of [
      'bin/svcgen',
      'bin/svcgen-tsc',
      'dist/generator/cli/cli.js',
      'templates/main.ts.hbs',
      'templates/init/package.json.hbs',
      'package.json',
      'README.md',
    ]) {
      expect({ f, packed: listing.includes(`package/${f}`) }).toEqual({ f, packed: true });
    }
    const runtimeListing = run('tar', ['-tzf', runtimeTarball], tmp).out.split('\n');
    for (const f of [
      'dist/index.js',
      'dist/index.d.ts',
      'dist/core/catalogue.js',
      'dist/operations/soft-delete.js',
      'package.json',
      'README.md',
    ]) {
      expect({ f, packed: runtimeListing.includes(`package/${f}`) }).toEqual({ f, packed: true });
    }
    // Compiled JavaScript only (the templates aside): no TypeScript sources, tests, the blog, or
    // the runtime inside the command's package.
    for (const files of [listing, runtimeListing]) {
      expect(files.filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts') && !f.startsWith('package/templates/'))).toEqual([]);
    }
    expect(listing.filter((f) => /^package\/(test|generated|specs|generator|runtime|dist\/runtime)\//.test(f))).toEqual([]);
    // The command pins its runtime exactly (generated code matches its runtime); the runtime takes
    // caret ranges of the packages it depends on, floored at the versions this checkout runs on,
    // and leaves the drivers, ioredis and the MCP SDK to the project, as optional peers.
    const packed = (file: string) =>
      JSON.parse(run('tar', ['-xzOf', file, 'package/package.json'], tmp).out.trim()) as {
        dependencies: Record<string, string>;
        peerDependencies: Record<string, string>;
        peerDependenciesMeta: Record<string, { optional?: boolean }>;
      };
    expect(packed(tarball).dependencies['@svcgen/runtime']).toBe(VERSION);
    const runtimePackage = packed(runtimeTarball);
    const ranges = runtimePackage.dependencies;
    expect({ knex: ranges.knex, express: ranges.express, jose: ranges.jose, router: ranges.router }).toEqual({
      knex: `^${installedVersion('knex')}`,
      express: `^${installedVersion('express')}`,
      jose: `^${installedVersion('jose')}`,
      router: undefined,
    });
    const optional = ['@modelcontextprotocol/sdk', 'better-sqlite3', 'ioredis', 'mysql2', 'pg'];
    expect(Object.keys(ranges).filter((name) => optional.includes(name))).toEqual([]);
    expect(Object.keys(runtimePackage.peerDependencies).sort()).toEqual(optional);
    for (const name of optional) {
      expect({ name, range: runtimePackage.peerDependencies[name], optional: runtimePackage.peerDependenciesMeta[name]?.optional }).toEqual(
        {
          name,
          range: `^${installedVersion(name)}`,
          optional: true,
        },
      );
    }

    // As a user does: an empty folder, the two packages, the command. The command needs no native
    // module, so this first install skips their builds; the project's own install below builds them.
    fs.mkdirSync(work);
    ok('npm', ['install', tarball, runtimeTarball, '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], work);
    expect(ok('npx', ['svcgen', '--version'], work).split('\n')[0]).toBe(VERSION);
    ok('npx', ['svcgen', 'init', 'app'], work);

    const pkg = JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8'));
    expect(pkg.name).toBe('app');
    // The project depends on the tarballs svcgen was installed from, not on this repository: the
    // runtime for the service, svcgen for building it.
    // Beside it, at the runtime's ranges, the driver of the default database (SQLite) and ioredis
    // for compose.yaml's Redis.
    expect(pkg.dependencies).toEqual({
      '@svcgen/runtime': `file:${path.resolve(app, '../..', `svcgen-runtime-${VERSION}.tgz`)}`,
      'better-sqlite3': `^${installedVersion('better-sqlite3')}`,
      ioredis: `^${installedVersion('ioredis')}`,
    });
    expect(pkg.devDependencies).toEqual({ svcgen: `file:${path.resolve(app, '../..', `svcgen-${VERSION}.tgz`)}` });
    expect(pkg.allowScripts).toEqual({ 'better-sqlite3': true, bcrypt: true, '@scarf/scarf': false });
    expect(pkg.scripts.start).toBe('node scripts/compiled.js --build && node dist/generated/main.js');
    expect(fs.readFileSync(path.join(app, 'generated/app.ts'), 'utf8')).toMatch(/from '@svcgen\/runtime';/);
    // The deployment files: an image installing svcgen from package.json, and compose.
    for (const f of ['Dockerfile', 'compose.yaml', '.dockerignore'])
      expect({ f, exists: fs.existsSync(path.join(app, f)) }).toEqual({ f, exists: true });
    expect(fs.readFileSync(path.join(app, 'Dockerfile'), 'utf8')).toContain('CMD ["node", "dist/generated/main.js"]');
    // compose.yaml on the default database, SQLite: its file in a volume (init --db chooses another).
    expect(fs.readFileSync(path.join(app, 'compose.yaml'), 'utf8')).toContain('      - db-data:/app/data\n');
    expect(fs.readFileSync(path.join(app, 'compose.yaml'), 'utf8')).not.toContain('DATABASE_URL');

    const install = ok('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], app);
    // Every dependency with install scripts is reviewed in package.json's allowScripts.
    expect(install).not.toContain('allow-scripts');
    const test = ok('npm', ['test'], app);
    expect(test).toContain('svcgen check: generated is up to date with specs');
    // The smoke test's two (health and OpenAPI; the example resource), the account endpoints' test,
    // and the access matrix test: 15 operations, each with its 4 callers, of which the anonymous
    // callers of the public register, login, refresh and logout are left to their hooks (skipped).
    expect(test).toMatch(/# pass 79\b/);
    expect(test).toMatch(/# skipped 4\b/);
    expect(test).toMatch(/# fail 0\b/);

    // Nothing in the project resolves into this repository: the installed packages are the
    // tarballs' copies, the runtime loads from its own, which the command shares, and no file names
    // the repository's path.
    const installed = fs.realpathSync(path.join(app, 'node_modules/svcgen'));
    expect(installed).toBe(path.join(app, 'node_modules/svcgen'));
    expect(fs.existsSync(path.join(installed, 'generator'))).toBe(false);
    const runtime = ok(process.execPath, ['-p', "require.resolve('@svcgen/runtime')"], app).split('\n')[0];
    expect(runtime).toBe(path.join(app, 'node_modules/@svcgen/runtime/dist/index.js'));
    expect(fs.existsSync(path.join(installed, 'node_modules/@svcgen/runtime'))).toBe(false);
    const naming = filesOf(app).filter((f) => fs.readFileSync(path.join(app, f), 'utf8').includes(ROOT));
    expect(naming).toEqual([]);
    expect(fs.existsSync(path.join(app, 'dist/generated/main.js'))).toBe(true);

    // npm start: builds (nothing to write), compiles (up to date), migrates the SQLite file in data/, serves.
    const port = await freePort();
    const first = start('npm', ['start'], app, port);
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
    const note = (await created.json()) as { id: number; title: string; done: boolean };
    expect(note).toMatchObject({ title: 'Kept across the migration', done: false });
    // The account endpoints init declares: register, refresh once (the second use refused), me.
    const post = (p: string, body: unknown) =>
      fetch(`http://127.0.0.1:${port}/api${p}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const registered = await post('/auth/register/', { username: 'ada', email: 'ada@example.com', password: 'correct horse' });
    expect(registered.status).toBe(201);
    const tokens = (await registered.json()) as { access_token: string; refresh_token: string };
    expect((await post('/auth/refresh/', { refresh_token: tokens.refresh_token })).status).toBe(200);
    const reused = await post('/auth/refresh/', { refresh_token: tokens.refresh_token });
    expect({ status: reused.status, body: await reused.json() }).toEqual({ status: 401, body: { detail: 'Invalid refresh token' } });
    const me = await fetch(`http://127.0.0.1:${port}/api/auth/me/`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect({ status: me.status, body: await me.json() }).toEqual({
      status: 200,
      body: { id: 1, username: 'ada', email: 'ada@example.com', first_name: '', last_name: '' },
    });
    await first.stop();
    expect(first.log()).toContain('applied migrations: 0001_initial');

    // The project evolves: a new field with a default, as the README says.
    const spec = path.join(app, 'specs/resources/notes.yaml');
    const text = fs.readFileSync(spec, 'utf8');
    expect(text).toContain('  done: {type: boolean, default: false}\n');
    fs.writeFileSync(
      spec,
      text.replace(
        '  done: {type: boolean, default: false}\n',
        '  done: {type: boolean, default: false}\n  priority: {type: integer, default: 0}\n',
      ),
    );
    const stale = run('npm', ['test'], app);
    expect(stale.status).not.toBe(0);
    expect(stale.out).toContain('missing migration: generated/migrations/0002_notes_priority.ts');
    expect(ok('npm', ['run', 'build'], app)).toContain('  migration  generated/migrations/0002_notes_priority.ts:');
    ok('npm', ['test'], app);
    // migrate runs the compiled service, compiled again only because the sources changed.
    expect(ok('npm', ['run', 'migrate'], app)).toContain('applied migrations: 0002_notes_priority');
    expect(ok('npm', ['run', 'migrate'], app)).toContain('database is up to date');

    const second = start('npm', ['start'], app, port);
    running.push(second);
    const listed = await waitFor(`http://127.0.0.1:${port}/api/notes/${note.id}/`, second);
    expect(listed.status).toBe(200);
    expect(await listed.json()).toMatchObject({ id: note.id, title: 'Kept across the migration', priority: 0 });
    await second.stop();

    // svcgen dev: serves, then rebuilds and restarts on every change; problems do not stop it.
    const dev = start('npx', ['svcgen', 'dev'], app, port);
    running.push(dev);
    const restarted = /service restarted/;
    await waitForOutput(dev, restarted, 1);
    expect((await waitFor(`http://127.0.0.1:${port}/api/notes/${note.id}/`, dev)).status).toBe(200);

    const withPriority = fs.readFileSync(spec, 'utf8');
    fs.writeFileSync(
      spec,
      withPriority.replace(
        '  priority: {type: integer, default: 0}\n',
        '  priority: {type: integer, default: 0}\n  pinned: {type: boolean, default: false}\n',
      ),
    );
    await waitForOutput(dev, restarted, 2);
    expect(dev.log()).toContain('  wrote      generated/migrations/0003_notes_pinned.ts');
    const pinned = await waitFor(`http://127.0.0.1:${port}/api/notes/${note.id}/`, dev);
    expect(await pinned.json()).toMatchObject({ id: note.id, priority: 0, pinned: false });

    // A mistake in a spec: its file:line:column line, the command still running, the last service still serving.
    fs.writeFileSync(
      spec,
      withPriority.replace(
        '  priority: {type: integer, default: 0}\n',
        '  priority: {type: integer, default: 0}\n  pinned: {type: boolen, default: false}\n',
      ),
    );
    await waitForOutput(dev, /problems? in the specs; waiting for changes/);
    expect(dev.log()).toMatch(/^specs\/resources\/notes\.yaml:\d+:\d+: .*boolen/m);
    expect(dev.child.exitCode).toBeNull();
    expect((await fetch(`http://127.0.0.1:${port}/api/notes/${note.id}/`)).status).toBe(200);

    // A type error in the hooks module: the compiler's line, and still running.
    const hooks = path.join(app, 'specs/hooks/notes.ts');
    const hooksText = fs.readFileSync(hooks, 'utf8');
    fs.writeFileSync(
      spec,
      withPriority.replace(
        '  priority: {type: integer, default: 0}\n',
        '  priority: {type: integer, default: 0}\n  pinned: {type: boolean, default: false}\n',
      ),
    );
    fs.writeFileSync(hooks, `${hooksText}\nexport const broken: number = 'not a number';\n`);
    await waitForOutput(dev, /problems? in the TypeScript; waiting for changes/);
    expect(dev.log()).toMatch(/^specs\/hooks\/notes\.ts:\d+:\d+: Type 'string' is not assignable to type 'number'\. \(TS2322\)$/m);
    expect(dev.child.exitCode).toBeNull();

    // Fixed: built, compiled and restarted again.
    const restarts = (dev.log().match(/service restarted/g) ?? []).length;
    fs.writeFileSync(hooks, hooksText);
    await waitForOutput(dev, restarted, restarts + 1);
    const recovered = await waitFor(`http://127.0.0.1:${port}/api/notes/${note.id}/`, dev);
    expect(await recovered.json()).toMatchObject({ id: note.id, pinned: false });
    await dev.stop();

    // A production install: the runtime and what it runs, none of the build tools (nor yaml, which
    // only the generator reads), nor the drivers of the other databases, nor the MCP SDK, which
    // the service does not serve.
    // Compiled first, as the README and the Dockerfile do before pruning: the production install has no compiler.
    ok('npm', ['run', 'compile'], app);
    fs.rmSync(path.join(app, 'node_modules'), { recursive: true, force: true });
    ok('npm', ['install', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund'], app);
    const productionModules = path.join(app, 'node_modules');
    for (const name of [
      'svcgen',
      'typescript',
      'prettier',
      'ts-morph',
      'handlebars',
      'yaml',
      'pg',
      'mysql2',
      '@modelcontextprotocol/sdk',
    ]) {
      expect({ name, installed: fs.existsSync(path.join(productionModules, name)) }).toEqual({ name, installed: false });
    }
    expect(dependentsOf('yaml', productionModules)).toEqual([]);
    expect(fs.existsSync(path.join(productionModules, '@svcgen/runtime/dist/index.js'))).toBe(true);

    // The compiled service starts from it: migrations up to date, health answered.
    // npm start as well: in a production install it runs the compiled service as it is (scripts/compiled.js).
    const production = start('npm', ['start'], app, port);
    running.push(production);
    const productionHealth = await waitFor(`http://127.0.0.1:${port}/api/health`, production);
    expect(productionHealth.status).toBe(200);
    expect(await productionHealth.json()).toEqual({ status: 'ok' });
    const kept = await fetch(`http://127.0.0.1:${port}/api/notes/${note.id}/`);
    expect(await kept.json()).toMatchObject({ id: note.id, title: 'Kept across the migration', pinned: false });
    await production.stop();
  });
});
