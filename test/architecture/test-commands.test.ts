/**
 * The test commands together run every test file, each once: `npm test` runs jest.config.js's three
 * projects (unit, cases, service), `npm run test:scale` jest.scale.config.js (and the HTTP suites
 * again through PgBouncer, jest.pgbouncer.config.js, on purpose). A test file in no project would
 * never run in CI; one in two would run twice. The unit project stays what its name says: no
 * database server, spawned process or listening socket.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

interface JestConfig {
  displayName?: string;
  testMatch?: string[];
  testPathIgnorePatterns?: string[];
  projects?: JestConfig[];
}

const load = (file: string): JestConfig => require(path.join(ROOT, file)) as JestConfig;
const main = load('jest.config.js');
const scale = load('jest.scale.config.js');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };

const withRoot = (p: string) => p.replace(/^<rootDir>/, ROOT);

/** A testMatch glob as jest reads it (`**` any folders, `*` within a name), as a regular expression. */
function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    if (glob.startsWith('**/', i)) {
      re += '(?:.*/)?';
      i += 2;
    } else if (glob[i] === '*') re += '[^/]*';
    else re += /[.+?^${}()|[\]\\]/.test(glob[i]) ? `\\${glob[i]}` : glob[i];
  }
  return new RegExp(`^${glob.startsWith('/') ? '' : '(?:.*/)?'}${re}$`);
}

/** Whether a configuration (or project) runs `file`, an absolute path. */
function runs(config: JestConfig, file: string): boolean {
  const matched = (config.testMatch ?? []).some((g) => globToRegExp(withRoot(g)).test(file));
  return matched && !(config.testPathIgnorePatterns ?? []).some((p) => new RegExp(withRoot(p)).test(file));
}

/** Every test file of test/, relative to the repository (test/.tmp holds scratch folders only). */
function testFiles(dir = path.join(ROOT, 'test')): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === '.tmp' || e.name === 'node_modules' ? [] : testFiles(full);
    return e.name.endsWith('.test.ts') ? [path.relative(ROOT, full)] : [];
  });
}

const commands: [string, JestConfig][] = [
  ...(main.projects ?? []).map((p): [string, JestConfig] => [`npm test (${p.displayName})`, p]),
  ['npm run test:scale', scale],
];

describe('the test commands', () => {
  const files = testFiles();

  it('run every test file of test/ exactly once', () => {
    expect(files.length).toBeGreaterThan(100);
    const runners = files.map((f) => ({ file: f, by: commands.filter(([, c]) => runs(c, path.join(ROOT, f))).map(([name]) => name) }));
    expect(runners.filter((r) => r.by.length !== 1)).toEqual([]);
  });

  it('tell a file in no project or in two apart from the rest (the check itself)', () => {
    const unit = main.projects!.find((p) => p.displayName === 'unit')!;
    const service = main.projects!.find((p) => p.displayName === 'service')!;
    const file = path.join(ROOT, 'test/runtime/password.test.ts');
    expect([runs(unit, file), runs(service, file)]).toEqual([true, false]);
    // Without its ignore patterns, the service project would run the unit files a second time.
    expect(runs({ ...service, testPathIgnorePatterns: [] }, file)).toBe(true);
    expect(runs(scale, path.join(ROOT, 'test/scale/replicas.test.ts'))).toBe(true);
    expect(runs(scale, file)).toBe(false);
    expect(commands.some(([, c]) => runs(c, path.join(ROOT, 'test/.tmp/x/a.test.ts')))).toBe(false);
  });

  it('list only files that exist in the unit and cases projects', () => {
    const listed = main
      .projects!.filter((p) => p.displayName !== 'service')
      .flatMap((p) => (p.testMatch ?? []).map((m) => path.relative(ROOT, withRoot(m))));
    expect(listed.filter((f) => !files.includes(f))).toEqual([]);
  });

  it('are the scripts of package.json; npm test runs all three projects after the spec check, the type check and the linters', () => {
    expect(pkg.scripts.test).toBe('npm run check && npm run typecheck && npm run lint && jest');
    expect(pkg.scripts['test:unit']).toBe('jest --selectProjects unit');
    expect(pkg.scripts['test:cases']).toBe('jest --selectProjects cases');
    expect(main.projects!.map((p) => p.displayName)).toEqual(['unit', 'cases', 'service']);
  });

  it('keep the unit project free of database servers, spawned processes and sockets', () => {
    const unit = main.projects!.find((p) => p.displayName === 'unit')!;
    const opening = /\bchild_process\b|from 'supertest'|\bDIALECTS\b|\.listen\(|\bstart(Blog|Showcase)\(|\bioredis\b/;
    // (This file names them, in the pattern.)
    const checked = files.filter((f) => runs(unit, path.join(ROOT, f)) && path.join(ROOT, f) !== __filename);
    expect(checked.length).toBeGreaterThan(20);
    const offenders = checked.filter((f) => opening.test(fs.readFileSync(path.join(ROOT, f), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
