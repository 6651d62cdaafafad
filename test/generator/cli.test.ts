/**
 * The `svcgen` command, run as a child process the way a user runs it: exit codes, usage text,
 * diagnostics, build summaries and check diffs.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

// Every run transpiles the generator on load, which takes a few seconds.
jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, '../..');
const BIN = path.join(ROOT, 'bin', 'svcgen');
const FIVE_MISTAKES = 'test/cases/five-mistakes/specs';
const PACKAGE_VERSION: string = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/svcgen ...args` in `cwd` (the repository root unless given). */
function svcgen(args: string[], cwd = ROOT): Run {
  const r = spawnSync(process.execPath, [cwd === ROOT ? 'bin/svcgen' : BIN, ...args], { cwd, encoding: 'utf8' });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const linesOf = (text: string) => text.split('\n').filter(Boolean);

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** A temp folder with a copy of the showcase specs in `specs/`; builds go to `out/`. */
function workspace(): { root: string; specs: string; out: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-cli-'));
  dirs.push(root);
  const specs = path.join(root, 'specs');
  fs.cpSync(path.join(ROOT, 'test/fixtures/showcase/specs'), specs, { recursive: true });
  return { root, specs, out: path.join(root, 'out') };
}

const expectedFiveMistakes = () => linesOf(fs.readFileSync(path.join(ROOT, FIVE_MISTAKES, '..', 'expected.txt'), 'utf8'));

describe('svcgen: usage', () => {
  it('prints the usage for --help and exits 0', () => {
    const r = svcgen(['--help']);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('usage: svcgen <command> [options]');
    for (const cmd of ['validate SPECS', 'build SPECS [--out DIR]', 'check SPECS [--out DIR]']) expect(r.stdout).toContain(cmd);
    expect(r.stdout).toContain('svcgen <command> --help');
  });

  it.each([
    ['validate', 'usage: svcgen validate SPECS', []],
    ['build', 'usage: svcgen build SPECS [--out DIR]', ['--out DIR', 'manifest.json']],
    ['check', 'usage: svcgen check SPECS [--out DIR] [--base REF]', ['--out DIR', 'diff']],
  ])('prints the usage of %s for --help and exits 0', (command, first, mentions) => {
    const r = svcgen([command, '--help']);
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n')[0]).toBe(first);
    for (const m of mentions) expect(r.stdout).toContain(m);
  });

  it.each(['--version', '-v'])('prints the version of package.json with %s', (flag) => {
    const r = svcgen([flag]);
    expect(r).toEqual({ status: 0, stdout: `${PACKAGE_VERSION}\n`, stderr: '' });
  });

  it('exits 2 with the usage on stderr without a command', () => {
    const r = svcgen([]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('usage: svcgen <command> [options]');
  });

  it('exits 2 for an unknown command', () => {
    const r = svcgen(['frobnicate', 'specs']);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n')[0]).toBe('svcgen: unknown command "frobnicate"');
    expect(r.stderr).toContain('usage: svcgen <command> [options]');
  });

  it('exits 2 for an unknown option, naming it, and writes nothing', () => {
    // --out points into a temp folder, so even a broken parser could not touch generated/.
    const ws = workspace();
    const r = svcgen(['build', 'specs', '--frobnicate', '--out', ws.out]);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n')[0]).toBe('svcgen: unknown option "--frobnicate" for svcgen build');
    expect(r.stderr).toContain('usage: svcgen build SPECS [--out DIR]');
    expect(fs.existsSync(ws.out)).toBe(false);
  });

  it('exits 2 for an option the command does not take', () => {
    const r = svcgen(['validate', 'specs', '--out', 'x']);
    expect(r.status).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe('svcgen: unknown option "--out" for svcgen validate');
  });

  it.each([
    [['build'], 'svcgen: svcgen build needs a SPECS folder'],
    [['check', '--out', 'x'], 'svcgen: svcgen check needs a SPECS folder'],
    [['validate', 'a', 'b'], 'svcgen: svcgen validate takes one SPECS folder'],
    [['check', 'specs', '--out'], 'svcgen: --out needs a value'],
    [['check', 'specs', '--out='], 'svcgen: --out needs a value'],
  ])('exits 2 for %j', (args, message) => {
    const r = svcgen(args);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n')[0]).toBe(message);
  });
});

describe('svcgen validate', () => {
  it('exits 0 on the blog specs', () => {
    const r = svcgen(['validate', 'specs/']);
    expect(r).toEqual({ status: 0, stdout: 'specs/: no problems found\n', stderr: '' });
  });

  it('exits 1 with one file:line:column: message line per problem and a count', () => {
    const r = svcgen(['validate', '.'], path.join(ROOT, FIVE_MISTAKES));
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(linesOf(r.stderr)).toEqual([...expectedFiveMistakes(), '5 problems found']);
    for (const line of linesOf(r.stderr).slice(0, -1)) expect(line).toMatch(/^[^:]+:\d+:\d+: \S/);
  });

  it('names the files relative to the working directory', () => {
    const r = svcgen(['validate', FIVE_MISTAKES]);
    expect(r.status).toBe(1);
    expect(linesOf(r.stderr)).toEqual([...expectedFiveMistakes().map((l) => `${FIVE_MISTAKES}/${l}`), '5 problems found']);
  });
});

describe('svcgen build', () => {
  const SUMMARY = /^svcgen build: (\d+) resources?, (\d+) endpoints?; (\d+) written, (\d+) unchanged, (\d+) removed$/;
  const summary = (stdout: string) => {
    const last = linesOf(stdout).at(-1) ?? '';
    const m = SUMMARY.exec(last);
    if (!m) throw new Error(`no summary line in:\n${stdout}`);
    const [resources, endpoints, written, unchanged, removed] = m.slice(1).map(Number);
    return { resources, endpoints, written, unchanged, removed };
  };
  const countFiles = (dir: string): number =>
    fs.readdirSync(dir, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? countFiles(path.join(dir, e.name)) : 1), 0);

  it('writes everything once, nothing the second time, and removes the files of a removed resource', () => {
    const ws = workspace();
    const first = svcgen(['build', ws.specs, '--out', ws.out]);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    const total = countFiles(ws.out);
    expect(summary(first.stdout)).toMatchObject({ resources: 16, written: total, unchanged: 0, removed: 0 });
    // Every route: CRUD, bulk, restore, actions, relations and custom endpoints, as the manifest lists them.
    const listed: string[] = JSON.parse(fs.readFileSync(path.join(ws.out, 'manifest.json'), 'utf8')).endpoints;
    expect(listed.some((e) => e.endsWith('/bulk/')) && listed.some((e) => e.endsWith('/restore/'))).toBe(true);
    expect(summary(first.stdout).endpoints).toBe(listed.length);
    expect(linesOf(first.stdout).filter((l) => l.startsWith('  wrote '))).toHaveLength(total);
    expect(first.stdout).toContain(`  wrote      ${ws.out}/resources/widgets/routes.ts\n`);

    const second = svcgen(['build', ws.specs, `--out=${ws.out}`]);
    expect(second.status).toBe(0);
    expect(second.stderr).toBe('');
    expect(linesOf(second.stdout)).toHaveLength(1);
    expect(summary(second.stdout)).toMatchObject({ resources: 16, written: 0, unchanged: total, removed: 0 });

    fs.rmSync(path.join(ws.specs, 'resources/gadgets.yaml'));
    // Its table and its operations go: a destructive migration and a breaking change.
    const third = svcgen(['build', ws.specs, '--out', ws.out, '--allow-destructive', '--allow-breaking']);
    expect(third.status).toBe(0);
    const s3 = summary(third.stdout);
    expect(s3).toMatchObject({ resources: 15, removed: 3 });
    // The manifest and the files that list every resource (app, migrations) change; the rest is untouched.
    expect(s3.written).toBeGreaterThanOrEqual(1);
    // Three files of the resource go; one migration (dropping its table) comes.
    expect(s3.written + s3.unchanged).toBe(total - 3 + 1);
    expect(linesOf(third.stdout).filter((l) => l.startsWith('  wrote '))).toHaveLength(s3.written);
    expect(third.stdout).toContain(`  wrote      ${ws.out}/manifest.json\n`);
    expect(linesOf(third.stdout).filter((l) => l.startsWith('  removed '))).toEqual(
      ['queries', 'routes', 'schemas'].map((f) => `  removed    ${ws.out}/resources/shiny_gadgets/${f}.ts`),
    );
    expect(fs.existsSync(path.join(ws.out, 'resources/shiny_gadgets'))).toBe(false);
  });

  it('counts in the singular: "1 resource"', () => {
    const ws = workspace();
    const r = svcgen(['build', 'test/cases/minimal-resource/specs', '--out', ws.out]);
    expect(r.status).toBe(0);
    expect(linesOf(r.stdout).at(-1)).toMatch(/^svcgen build: 1 resource, 5 endpoints; \d+ written, 0 unchanged, 0 removed$/);
  });

  it('removes a generated file no build recorded (a copy, a leftover), names the files of others and leaves them', () => {
    const ws = workspace();
    expect(svcgen(['build', ws.specs, '--out', ws.out]).status).toBe(0);
    const routes = fs.readFileSync(path.join(ws.out, 'resources/widgets/routes.ts'), 'utf8');
    fs.writeFileSync(path.join(ws.out, 'resources/widgets/routes copy.ts'), routes);
    fs.writeFileSync(path.join(ws.out, 'extra.ts'), 'export const x = 1;\n');
    fs.writeFileSync(path.join(ws.out, '.gitkeep'), '');
    const check = svcgen(['check', ws.specs, '--out', ws.out]);
    expect(check.status).toBe(1);
    expect(linesOf(check.stderr).slice(0, 2)).toEqual([
      `not generated by svcgen: ${ws.out}/extra.ts (build leaves it alone; list it in ${ws.out}/.svcgenignore to keep it there)`,
      `not generated from these specs: ${ws.out}/resources/widgets/routes copy.ts`,
    ]);
    expect(linesOf(check.stderr).at(-1)).toMatch(/is stale \(0 changed, 0 missing, 1 extra, 1 not svcgen's\)/);
    const build = svcgen(['build', ws.specs, '--out', ws.out]);
    expect(build.status).toBe(0);
    expect(linesOf(build.stdout)[0]).toBe(`  removed    ${ws.out}/resources/widgets/routes copy.ts`);
    expect(fs.existsSync(path.join(ws.out, 'extra.ts'))).toBe(true);
    expect(fs.existsSync(path.join(ws.out, '.gitkeep'))).toBe(true);
    // What build wrote is up to date, but a file it did not write is there: check does not say "up to date".
    expect(svcgen(['check', ws.specs, '--out', ws.out])).toEqual({
      status: 1,
      stdout: '',
      stderr:
        `not generated by svcgen: ${ws.out}/extra.ts (build leaves it alone; list it in ${ws.out}/.svcgenignore to keep it there)\n` +
        `svcgen check: ${ws.out} holds 1 file no build wrote; remove it or list it in ${ws.out}/.svcgenignore\n`,
    });
    // Declared, it is the user's to keep; a file the list does not match still fails.
    fs.writeFileSync(path.join(ws.out, '.svcgenignore'), '# hand-written modules beside the generated ones\nextra.ts\nnotes/\n');
    fs.mkdirSync(path.join(ws.out, 'notes'));
    fs.writeFileSync(path.join(ws.out, 'notes', 'README.md'), '# Notes\n');
    expect(svcgen(['check', ws.specs, '--out', ws.out])).toEqual({
      status: 0,
      stdout: `svcgen check: ${ws.out} is up to date with ${ws.specs}\n`,
      stderr: '',
    });
    fs.writeFileSync(path.join(ws.out, 'resources', 'extra.ts'), 'export const y = 2;\n');
    fs.writeFileSync(path.join(ws.out, 'other.ts'), 'export const z = 3;\n');
    expect(svcgen(['check', ws.specs, '--out', ws.out])).toMatchObject({
      status: 1,
      stderr: expect.stringContaining(`not generated by svcgen: ${ws.out}/other.ts`),
    });
    expect(svcgen(['check', ws.specs, '--out', ws.out]).stderr).not.toContain('resources/extra.ts');
  });

  it('exits 1 with the diagnostics and writes nothing when the specs have errors', () => {
    const ws = workspace();
    const r = svcgen(['build', '.', '--out', ws.out], path.join(ROOT, FIVE_MISTAKES));
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(linesOf(r.stderr)).toEqual([...expectedFiveMistakes(), '5 problems found']);
    expect(fs.existsSync(ws.out)).toBe(false);
  });
});

describe('svcgen check', () => {
  it('exits 0 on a fresh build, and 1 with a diff and a hint after a spec edit', () => {
    const ws = workspace();
    expect(svcgen(['build', ws.specs, '--out', ws.out]).status).toBe(0);

    const clean = svcgen(['check', ws.specs, '--out', ws.out]);
    expect(clean).toEqual({ status: 0, stdout: `svcgen check: ${ws.out} is up to date with ${ws.specs}\n`, stderr: '' });

    const parts = path.join(ws.specs, 'resources/parts.yaml');
    fs.writeFileSync(parts, fs.readFileSync(parts, 'utf8').replace('max_length: 30', 'max_length: 31'));
    fs.rmSync(path.join(ws.out, 'resources/widgets/queries.ts'));
    const stale = svcgen(['check', ws.specs, '--out', ws.out]);
    expect(stale.status).toBe(1);
    expect(stale.stdout).toBe('');
    const lines = stale.stderr.split('\n');
    expect(lines).toContain('--- resources/parts/schemas.ts (committed)');
    expect(lines).toContain('+++ resources/parts/schemas.ts (generated from the specs)');
    expect(lines.some((l) => /^-.*\b30\b/.test(l) && !l.startsWith('---'))).toBe(true);
    expect(lines.some((l) => /^\+.*\b31\b/.test(l) && !l.startsWith('+++'))).toBe(true);
    expect(lines).toContain(`missing: ${ws.out}/resources/widgets/queries.ts`);
    const last = linesOf(stale.stderr).at(-1);
    expect(last).toMatch(new RegExp(`^svcgen check: ${ws.out} is stale \\(\\d+ changed, 1 missing, 0 extra\\); `));
    expect(last).toContain(`run "svcgen build ${ws.specs} --out ${ws.out}" and commit the result`);
    // check never writes.
    expect(fs.existsSync(path.join(ws.out, 'resources/widgets/queries.ts'))).toBe(false);
  });

  it('fails check when a resource was removed: dropping its table needs a build with --allow-destructive', () => {
    const ws = workspace();
    expect(svcgen(['build', ws.specs, '--out', ws.out]).status).toBe(0);
    fs.rmSync(path.join(ws.specs, 'resources/gadgets.yaml'));
    const r = svcgen(['check', ws.specs, '--out', ws.out]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      'removing the resource of table shiny_gadgets drops the table and its rows; run svcgen build with --allow-destructive',
    );
  });

  it('exits 1 with the diagnostics when the specs have errors', () => {
    const ws = workspace();
    const r = svcgen(['check', '.', '--out', ws.out], path.join(ROOT, FIVE_MISTAKES));
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(linesOf(r.stderr)).toEqual([...expectedFiveMistakes(), '5 problems found']);
  });

  it('is clean on the committed blog output', () => {
    const r = svcgen(['check', 'specs/']);
    expect(r).toEqual({ status: 0, stdout: 'svcgen check: generated is up to date with specs/\n', stderr: '' });
  });
});

describe('svcgen: the access gate', () => {
  /** The blog's specs in a temp folder, built into `out/`. */
  function blog(): { specs: string; out: string } {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-access-'));
    dirs.push(root);
    const specs = path.join(root, 'specs');
    fs.cpSync(path.join(ROOT, 'specs'), specs, { recursive: true });
    const out = path.join(root, 'out');
    expect(svcgen(['build', specs, '--out', out]).status).toBe(0);
    return { specs, out };
  }

  it('refuses a build that opens category writes to any user, at the rule, until --allow-widen records it', () => {
    const { specs, out } = blog();
    const file = path.join(specs, 'resources/categories.yaml');
    const before = fs.readFileSync(file, 'utf8');
    expect(before).toContain('auth: [AdminAuth]');
    fs.writeFileSync(file, before.replace('auth: [AdminAuth]', 'auth: [JWTAuth]'));
    const line = before.split('\n').findIndex((l) => l.includes('auth: [AdminAuth]')) + 1;

    const refused = svcgen(['build', specs, '--out', out]);
    expect(refused.status).toBe(1);
    const lines = linesOf(refused.stderr);
    expect(lines.at(-1)).toBe('3 problems found');
    for (const op of [
      'create_category (POST /api/categories/)',
      'update_category (PATCH /api/categories/{pk}/)',
      'delete_category (DELETE /api/categories/{pk}/)',
    ]) {
      expect(lines).toContain(
        `${specs}/resources/categories.yaml:${line}:3: access widened: ${op} for authenticated: 403 → 2xx; if intended, build with --allow-widen (recorded in access.md)`,
      );
    }
    // check refuses it the same way, and nothing was written.
    expect(svcgen(['check', specs, '--out', out]).status).toBe(1);
    expect(fs.readFileSync(path.join(out, 'access.md'), 'utf8')).toContain(
      '| `create_category` | `POST /api/categories/` | 401 | 403 | 2xx | 2xx |  |',
    );

    const allowed = svcgen(['build', specs, '--out', out, '--allow-widen']);
    expect(allowed.status).toBe(0);
    const md = fs.readFileSync(path.join(out, 'access.md'), 'utf8');
    expect(md).toContain('| `create_category` | `POST /api/categories/` | 401 | 2xx | 2xx | 2xx |  |');
    expect(md).toContain('- `create_category` (`POST /api/categories/`) for authenticated: 403 → 2xx');
    expect(JSON.parse(fs.readFileSync(path.join(out, 'access.json'), 'utf8')).acknowledged).toHaveLength(3);
    // The acknowledgement stays: the output is current, and the next build changes nothing.
    expect(svcgen(['check', specs, '--out', out]).status).toBe(0);

    // Narrowing back passes without the flag.
    fs.writeFileSync(file, before);
    expect(svcgen(['build', specs, '--out', out]).status).toBe(0);
  });

  it('explain-access says which rules decide a cell', () => {
    const r = svcgen(['explain-access', 'authenticated', 'create_category']);
    expect(r).toEqual({
      status: 0,
      stdout:
        'create_category (POST /api/categories/) for authenticated: 403\n' +
        '  - viewset.post_auth (or viewset.auth) [AdminAuth]: AdminAuth refuses a user who is not staff: 403\n',
      stderr: '',
    });
    const anonymous = svcgen(['explain-access', 'anonymous', 'PATCH /api/articles/{pk}/', 'specs']);
    expect(anonymous.stdout).toBe(
      'update_article (PATCH /api/articles/{pk}/) for anonymous: 401\n' +
        '  - viewset.patch_auth (or viewset.auth) [JWTAuth, CookieAuth] needs credentials, and the caller sends none: 401\n',
    );
    expect(svcgen(['explain-access', 'nobody', 'create_category'])).toEqual({
      status: 1,
      stdout: '',
      stderr: 'svcgen: unknown caller "nobody": one of anonymous, authenticated, staff, superuser\n',
    });
  });
});

describe('svcgen check --base: access widened since a revision', () => {
  it('lists the widenings since the base, those build --allow-widen acknowledged as such, any other as a failure at its rule', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-widen-'));
    dirs.push(root);
    const git = (...args: string[]) => {
      const r = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: root, encoding: 'utf8' });
      expect(r.status).toBe(0);
      return r.stdout;
    };
    const specs = path.join(root, 'specs');
    // The base: notes behind JWTAuth everywhere.
    fs.cpSync(path.join(ROOT, 'test/cases/access-narrowed/specs'), specs, { recursive: true });
    expect(svcgen(['build', 'specs', '--out', 'out'], root).status).toBe(0);
    git('init', '-q');
    git('add', '.');
    git('commit', '-qm', 'base');

    // Since: public note reads, and a new resource open to anyone.
    fs.cpSync(path.join(ROOT, 'test/cases/access-widened/specs/resources/notes.yaml'), path.join(specs, 'resources/notes.yaml'));
    fs.cpSync(path.join(ROOT, 'test/cases/access-new-resource/specs/resources/comments.yaml'), path.join(specs, 'resources/comments.yaml'));
    expect(svcgen(['build', 'specs', '--out', 'out'], root).status).toBe(1);
    expect(svcgen(['build', 'specs', '--out', 'out', '--allow-widen'], root).status).toBe(0);
    const widened = [
      'create_comment (POST /comments/) for anonymous: a new operation → 2xx',
      'delete_comment (DELETE /comments/{pk}/) for anonymous: a new operation → 2xx',
      'list_comments (GET /comments/) for anonymous: a new operation → 2xx',
      'list_notes (GET /notes/) for anonymous: 401 → 2xx',
      'retrieve_comment (GET /comments/{pk}/) for anonymous: a new operation → 2xx',
      'retrieve_note (GET /notes/{pk}/) for anonymous: 401 → 2xx',
      'update_comment (PATCH /comments/{pk}/) for anonymous: a new operation → 2xx',
    ];
    const since = svcgen(['check', 'specs', '--out', 'out', '--base', 'HEAD'], root);
    expect({ status: since.status, stderr: since.stderr }).toEqual({ status: 0, stderr: '' });
    const stdout = linesOf(since.stdout);
    expect(stdout.filter((l) => l.startsWith('acknowledged access')).sort()).toEqual(
      widened.map((w) => `acknowledged access widened since HEAD: ${w}`),
    );
    expect(stdout.filter((l) => !l.startsWith('acknowledged access'))).toEqual([
      'svcgen check: 0 breaking changes since HEAD, 0 not acknowledged',
      'svcgen check: 7 access widenings since HEAD, 0 not acknowledged',
      'svcgen check: out is up to date with specs',
    ]);

    // With the base's access.json (no acknowledgement since) and the output otherwise current, each fails check --base at its rule.
    git('checkout', '-q', '--', 'out/access.json', 'out/access.md');
    const open = svcgen(['check', 'specs', '--out', 'out', '--base', 'HEAD'], root);
    expect(open.status).toBe(1);
    const notAcknowledged = (at: string, w: string) => `specs/resources/${at}: access widened: ${w}; not acknowledged since HEAD`;
    expect(linesOf(open.stderr).filter((l) => l.includes('not acknowledged since'))).toEqual([
      notAcknowledged('comments.yaml:8:1', widened[0]),
      notAcknowledged('comments.yaml:8:1', widened[1]),
      notAcknowledged('comments.yaml:8:1', widened[6]),
      notAcknowledged('comments.yaml:9:3', widened[2]),
      notAcknowledged('comments.yaml:9:3', widened[4]),
      notAcknowledged('notes.yaml:8:3', widened[3]),
      notAcknowledged('notes.yaml:8:3', widened[5]),
    ]);
    expect(linesOf(open.stdout)).toContain('svcgen check: 7 access widenings since HEAD, 7 not acknowledged');
  });
});

describe('svcgen: the breaking-change gate', () => {
  it('refuses a removed response field at the field until --allow-breaking records it; check --base lists the breaks since a revision', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-api-'));
    dirs.push(root);
    const git = (...args: string[]) => {
      const r = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: root, encoding: 'utf8' });
      expect(r.status).toBe(0);
      return r.stdout;
    };
    const specs = path.join(root, 'specs');
    fs.cpSync(path.join(ROOT, 'test/cases/api-removed-response-field/specs'), specs, { recursive: true });
    const notes = path.join(specs, 'resources/notes.yaml');
    const after = fs.readFileSync(notes, 'utf8');
    fs.writeFileSync(notes, after.replace('      # rank is no longer answered.\n', '      rank: int\n'));
    expect(svcgen(['build', 'specs', '--out', 'out'], root).status).toBe(0);
    git('init', '-q');
    git('add', '.');
    git('commit', '-qm', 'base');

    fs.writeFileSync(notes, after);
    const refused = svcgen(['build', 'specs', '--out', 'out'], root);
    expect(refused.status).toBe(1);
    expect(linesOf(refused.stderr)).toEqual([
      ...linesOf(fs.readFileSync(path.join(ROOT, 'test/cases/api-removed-response-field/gate.txt'), 'utf8')).map((l) => `specs/${l}`),
      '4 problems found',
    ]);

    expect(svcgen(['build', 'specs', '--out', 'out', '--allow-breaking'], root).status).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(root, 'out/api.json'), 'utf8')).acknowledged).toHaveLength(4);
    const since = svcgen(['check', 'specs', '--out', 'out', '--base', 'HEAD'], root);
    expect(since.status).toBe(0);
    expect(linesOf(since.stdout)).toEqual([
      'acknowledged breaking change since HEAD: operation create_note (POST /notes/): response 201 field "rank" removed',
      'acknowledged breaking change since HEAD: operation list_notes (GET /notes/): response 200 field "rank" removed',
      'acknowledged breaking change since HEAD: operation retrieve_note (GET /notes/{pk}/): response 200 field "rank" removed',
      'acknowledged breaking change since HEAD: operation update_note (PATCH /notes/{pk}/): response 200 field "rank" removed',
      'svcgen check: 4 breaking changes since HEAD, 0 not acknowledged',
      'svcgen check: 0 access widenings since HEAD, 0 not acknowledged',
      'svcgen check: out is up to date with specs',
    ]);

    // Rebuilt at the base without the acknowledgements, the same breaks fail check --base.
    git('checkout', '-q', '--', 'out/api.json');
    const open = svcgen(['check', 'specs', '--out', 'out', '--base', 'HEAD'], root);
    expect(open.status).toBe(1);
    expect(open.stderr).toContain(
      'specs/resources/notes.yaml:8:3: breaking change: operation create_note (POST /notes/): response 201 field "rank" removed; not acknowledged since HEAD',
    );
  });
});
