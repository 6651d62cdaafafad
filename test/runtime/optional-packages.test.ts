/**
 * The packages a service installs only when it uses them (a database driver, ioredis, the MCP SDK)
 * are optional peers of the runtime: one that is missing stops the service with a one-line error
 * naming it and the command installing it. Shown on real resolutions: names that are not installed,
 * and the runtime run from a node_modules that holds every package of this checkout but one.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { requireOptional, resolveOptional } from '../../runtime/core/optional-packages';
import { ConfigurationError } from '../../runtime/core/settings';
import { FROM_SOURCES } from '../support/from-sources';

const ROOT = path.resolve(__dirname, '../..');

describe('requireOptional', () => {
  it('names a package that is not installed and the command installing it, in one line', () => {
    const error = (() => {
      try {
        requireOptional('svcgen-no-such-driver', 'DATABASE_URL is a PostgreSQL URL');
      } catch (e) {
        return e as Error;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error?.message).toBe(
      'DATABASE_URL is a PostgreSQL URL: the package svcgen-no-such-driver is not installed; npm install svcgen-no-such-driver',
    );
  });

  it('names the package, not the subpath, of a scoped package that is not installed', () => {
    expect(() => requireOptional('@svcgen-absent/sdk/server/mcp.js', 'SVC_MCP is on, the MCP endpoint')).toThrow(
      new ConfigurationError(
        'SVC_MCP is on, the MCP endpoint: the package @svcgen-absent/sdk is not installed; npm install @svcgen-absent/sdk',
      ),
    );
    expect(() => resolveOptional('svcgen-no-such-driver', 'why')).toThrow(ConfigurationError);
  });

  it('loads and resolves an installed package', () => {
    expect(requireOptional<{ types: unknown }>('pg', 'why').types).toBeDefined();
    expect(resolveOptional('better-sqlite3', 'why')).toContain('better-sqlite3');
  });

  it('passes on the error of an installed package whose file is missing: that is no missing install', () => {
    let error: unknown;
    try {
      requireOptional('pg/svcgen-no-such-file', 'why');
    } catch (e) {
      error = e;
    }
    expect(error).not.toBeInstanceOf(ConfigurationError);
    expect((error as { code?: string }).code).toBe('MODULE_NOT_FOUND');
  });
});

describe('the runtime without one of its optional packages', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-optional-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /**
   * Runs `script` (given `runtime`, the runtime's folder) with the runtime and every package of this
   * checkout's node_modules but `absent`, linked into a fresh node_modules; symlinks are kept as
   * paths, so that every resolution looks there. Answers the first line of what the script throws.
   */
  function without(absent: string, script: string): string {
    const modules = path.join(dir, absent.replace(/\W/g, '_'), 'node_modules');
    fs.mkdirSync(modules, { recursive: true });
    const installed = path.join(ROOT, 'node_modules');
    for (const entry of fs.readdirSync(installed)) {
      if (entry.startsWith('.') || entry === absent) continue;
      if (entry.startsWith('@')) {
        fs.mkdirSync(path.join(modules, entry), { recursive: true });
        for (const scoped of fs.readdirSync(path.join(installed, entry))) {
          const name = `${entry}/${scoped}`;
          if (name === absent) continue;
          const target = name === '@svcgen/runtime' ? path.join(ROOT, 'runtime') : path.join(installed, name);
          fs.symlinkSync(target, path.join(modules, name));
        }
      } else {
        fs.symlinkSync(path.join(installed, entry), path.join(modules, entry));
      }
    }
    const runtime = path.join(modules, '@svcgen', 'runtime');
    const run = spawnSync(
      process.execPath,
      [
        '--preserve-symlinks',
        ...FROM_SOURCES,
        '-e',
        `const runtime = ${JSON.stringify(runtime)};\nPromise.resolve().then(async () => { ${script} }).then(() => console.log('no error'), (e) => console.log(e.name + ': ' + e.message));`,
      ],
      { cwd: path.dirname(modules), encoding: 'utf8', timeout: 60_000 },
    );
    expect(run.stderr).toBe('');
    return run.stdout;
  }

  it('on PostgreSQL without pg', () => {
    const out = without('pg', "require(runtime + '/db/connection.ts').connect('postgres://u@127.0.0.1:1/x', '');");
    expect(out).toBe('ConfigurationError: DATABASE_URL is a PostgreSQL URL: the package pg is not installed; npm install pg\n');
  });

  it('on MySQL without mysql2', () => {
    const out = without('mysql2', "require(runtime + '/db/connection.ts').connect('mysql://u@127.0.0.1:1/x', '');");
    expect(out).toBe('ConfigurationError: DATABASE_URL is a MySQL/MariaDB URL: the package mysql2 is not installed; npm install mysql2\n');
  });

  it('on SQLite without better-sqlite3', () => {
    const out = without('better-sqlite3', "require(runtime + '/db/connection.ts').connect(undefined, ':memory:');");
    expect(out).toBe(
      'ConfigurationError: DATABASE_URL is unset or a sqlite: URL, a SQLite database: the package better-sqlite3 is not installed; npm install better-sqlite3\n',
    );
  });

  it('with SVC_REDIS_URL without ioredis', () => {
    const out = without('ioredis', "new (require(runtime + '/auth/throttle.ts').RedisThrottleStore)({ url: 'redis://127.0.0.1:1' });");
    expect(out).toBe(
      'ConfigurationError: SVC_REDIS_URL is set, the counters in Redis: the package ioredis is not installed; npm install ioredis\n',
    );
  });
});
