/**
 * The access matrix test of a project made by `svcgen init`, without the packing and installing of
 * package.test.ts: the project is made inside this repository, its node_modules are this
 * repository's, its code is compiled (type-checked) by this repository's TypeScript with the
 * runtime's sources for types, and its test/access.test.js runs with Node's test runner, the
 * runtime loaded from its sources (tsx and the `@svcgen/source` condition). As generated, every checked cell agrees with
 * generated/access.md. Then the notes' API-key authenticator is edited to let any PATCH through:
 * the anonymous update answers 200 where the matrix says 401, and the test fails, naming the
 * operation and the caller.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { initProject } from '../../generator/cli/init';
import { FROM_SOURCES } from '../support/from-sources';
import { scratchDir } from '../support/scratch';

jest.setTimeout(5 * 60_000);

const ROOT = path.resolve(__dirname, '../..');
const TSC = path.join(ROOT, 'node_modules/typescript/bin/tsc');

let app: string;

function node(args: string[]): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, args, {
    cwd: app,
    encoding: 'utf8',
    timeout: 4 * 60_000,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  if (r.error) throw r.error;
  return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
}

/** Compiles the project into dist/; `check: false` only transpiles (a hook edited after a checked compile). */
function compile(check = true): void {
  const r = node([TSC, '-p', 'tsconfig.source.json', ...(check ? [] : ['--noCheck'])]);
  expect({ status: r.status, out: r.status ? r.out : '' }).toEqual({ status: 0, out: '' });
}

const accessTest = () => node([...FROM_SOURCES, '--test', 'test/access.test.js']);

beforeAll(async () => {
  const dir = scratchDir('init-access');
  await initProject('app', { cwd: dir });
  app = path.join(dir, 'app');
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(app, 'node_modules'), 'dir');
  // The project's compiler options, with the runtime's types read from its sources (its dist/ may not be built).
  fs.writeFileSync(
    path.join(app, 'tsconfig.source.json'),
    JSON.stringify({ extends: './tsconfig.json', compilerOptions: { customConditions: ['@svcgen/source'] } }),
  );
  compile();
});

afterAll(() => {
  if (app) fs.rmSync(path.dirname(app), { recursive: true, force: true });
});

describe('the access matrix test of an init project', () => {
  it('is generated beside the matrix and run by npm test', () => {
    expect(fs.existsSync(path.join(app, 'generated/access-test.ts'))).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8')).scripts.test).toBe(
      'svcgen check specs && svcgen-tsc -b && node --test test/',
    );
    const md = fs.readFileSync(path.join(app, 'generated/access.md'), 'utf8');
    expect(md).toContain('| `update_note` | `PATCH /api/notes/{pk}/` | 401 | 2xx | 2xx | 2xx |  |');
  });

  it('passes as generated', () => {
    const r = accessTest();
    expect({ status: r.status, fail: /^# fail (\d+)/m.exec(r.out)?.[1] }).toEqual({ status: 0, fail: '0' });
    expect(r.out).toMatch(/^ok \d+ - access matrix: update_note \(PATCH \/api\/notes\/\{pk\}\/\)$/m);
    // One test per operation (7 account endpoints, 5 of notes, 4 of users), its callers as subtests.
    expect(r.out).toMatch(/^# tests 80$/m);
  });

  it('fails when a hook lets an anonymous caller update, naming the operation and the caller', () => {
    const hooks = path.join(app, 'specs/hooks/notes.ts');
    const text = fs.readFileSync(hooks, 'utf8');
    const guard = "    if (!key || typeof sent !== 'string' || !sameText(sent, key)) return null;\n";
    expect(text).toContain(guard);
    // A "temporary" shortcut: any PATCH is authenticated as the key's user, credentials or not.
    fs.writeFileSync(
      hooks,
      text.replace(guard, guard.replace('if (', "if (req.method !== 'PATCH' && (").replace(') return null;', ')) return null;')),
    );
    compile(false);

    const r = accessTest();
    expect(r.status).not.toBe(0);
    expect(r.out).toContain('update_note as anonymous (PATCH /api/notes/{pk}/): access.md says 401, the service answered 200');
    // Only that cell (and its operation) fails: deleting still takes credentials.
    const failed = r.out
      .split('\n')
      .filter((line) => /^\s*not ok /.test(line))
      .map((line) => line.trim().replace(/^not ok \d+ - /, ''));
    expect(failed).toEqual(['update_note as anonymous: 401', 'access matrix: update_note (PATCH /api/notes/{pk}/)']);
  });
});
