/**
 * The generator pipeline: determinism of `generate`, incremental `writeOutput`, `drift`, and the
 * golden outputs (the committed generated folders equal what the specs render to).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { drift, unifiedDiff } from '../../generator/output/drift';
import { GENERATOR_VERSION, MANIFEST } from '../../generator/output/manifest';
import { generate } from '../../generator/pipeline';
import { writeOutput } from '../../generator/output/write';

const ROOT = path.resolve(__dirname, '../..');
const SHOWCASE = 'test/fixtures/showcase';
const PACKAGE_VERSION: string = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** A fresh temp folder holding a copy of the showcase specs in `specs/`; builds go to `out/`. */
function workspace(): { root: string; specs: string; out: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-pipeline-'));
  dirs.push(root);
  const specs = path.join(root, 'specs');
  fs.cpSync(path.join(ROOT, SHOWCASE, 'specs'), specs, { recursive: true });
  return { root, specs, out: path.join(root, 'out') };
}

// These tests are about what build writes and removes; dropping tables is allowed here (the
// migration safety rules have their own tests in test/migrations).
// Resources come and go between these builds: dropping tables and operations is accepted, as by
// `svcgen build --allow-destructive --allow-breaking`.
const gen = async (ws: { specs: string; out: string }) =>
  (await generate({ specsDir: ws.specs, outDir: ws.out, allowDestructive: true, allowBreaking: true })).files;

/** Replaces `from` by `to` in a spec file; `from` must occur exactly once. */
function edit(file: string, from: string, to: string): void {
  const text = fs.readFileSync(file, 'utf8');
  expect(text.split(from)).toHaveLength(2);
  fs.writeFileSync(file, text.replace(from, to));
}

/** Every file below `dir`, relative with forward slashes, sorted. */
function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(path.relative(dir, p).split(path.sep).join('/'));
    }
  };
  walk(dir);
  return out.sort();
}

const sorted = (list: Iterable<string>) => [...list].sort();

/** Names of the files whose content differs between two renders (or exists in only one). */
function differing(a: Map<string, string>, b: Map<string, string>): string[] {
  return sorted(new Set([...a.keys(), ...b.keys()])).filter((k) => a.get(k) !== b.get(k));
}

describe('generate: determinism', () => {
  it('returns the same files byte for byte on every call', async () => {
    const opts = { specsDir: `${SHOWCASE}/specs`, outDir: `${SHOWCASE}/generated`, cwd: ROOT };
    const a = (await generate(opts)).files;
    const b = (await generate(opts)).files;
    expect([...b.keys()]).toEqual([...a.keys()]);
    for (const [name, text] of a) expect(Buffer.from(b.get(name)!).equals(Buffer.from(text))).toBe(true);
    // The map is in a stable (sorted) order, with the manifest last.
    expect([...a.keys()].slice(0, -1)).toEqual(sorted([...a.keys()].slice(0, -1)));
    expect([...a.keys()].at(-1)).toBe(MANIFEST);
  });

  it('writes the same bytes into two different folders with the same relative layout', async () => {
    const a = workspace();
    const b = workspace();
    const fa = await gen(a);
    const fb = await gen(b);
    expect(Object.fromEntries(fb)).toEqual(Object.fromEntries(fa));
    writeOutput(a.out, fa);
    writeOutput(b.out, fb);
    const files = listFiles(a.out);
    expect(listFiles(b.out)).toEqual(files);
    expect(files).toEqual(sorted(fa.keys()));
    for (const f of files) expect(fs.readFileSync(path.join(b.out, f)).equals(fs.readFileSync(path.join(a.out, f)))).toBe(true);
  });

  describe('file contents', () => {
    let ws: ReturnType<typeof workspace>;
    let files: Map<string, string>;
    let entries: [string, string][];
    beforeAll(async () => {
      ws = workspace();
      files = await gen(ws);
      entries = [...files.entries()];
    });

    it('has no absolute paths', async () => {
      const forbidden = [ROOT, ws.root, fs.realpathSync(ws.root), os.tmpdir(), os.homedir()].filter((p) => p.length > 1);
      for (const [name, text] of entries) {
        // (A relative import such as ../../../work/main/runtime contains the path, but not as an absolute one.)
        for (const p of forbidden) {
          const absolute = new RegExp(`(?<![.\\w])${p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
          expect({ name, contains: absolute.test(text) ? p : null }).toEqual({ name, contains: null });
        }
        // Every import is relative or a package name.
        for (const m of text.matchAll(/\bfrom '([^']*)'|\brequire\('([^']*)'\)|\bimport\('([^']*)'\)/g)) {
          const spec = m[1] ?? m[2] ?? m[3];
          expect({ name, spec, absolute: path.isAbsolute(spec) || /^[A-Za-z]:/.test(spec) }).toEqual({ name, spec, absolute: false });
        }
      }
    });

    it('has no timestamps', async () => {
      const today = new Date().toISOString().slice(0, 10);
      for (const [name, text] of entries) {
        expect({ name, iso: text.match(/\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/)?.[0] ?? null }).toEqual({ name, iso: null });
        expect({ name, today: text.includes(today) }).toEqual({ name, today: false });
        // Unix times in seconds or milliseconds (2001 to 2286).
        expect({ name, epoch: text.match(/\b1\d{9}(\d{3})?\b/)?.[0] ?? null }).toEqual({ name, epoch: null });
      }
    });

    it('uses LF line endings only and ends every file with exactly one newline', async () => {
      for (const [name, text] of entries) {
        expect({ name, cr: text.includes('\r') }).toEqual({ name, cr: false });
        expect({ name, end: text.endsWith('\n') && !text.endsWith('\n\n') }).toEqual({ name, end: true });
      }
    });

    it('starts every .ts file with a header naming the spec it comes from', async () => {
      const model = (await generate({ specsDir: ws.specs, outDir: ws.out })).model;
      const specOf = (name: string) => {
        const m = /^resources\/([^/]+)\//.exec(name);
        if (m) return `specs/${model.resources.find((r) => r.moduleName === m[1])!.specFile}`;
        // Migrations come from every spec: they name the specs folder.
        if (name.startsWith('migrations/')) return 'specs/';
        return 'specs/service.yaml';
      };
      const ts = entries.filter(([name]) => name.endsWith('.ts'));
      expect(ts.length).toBeGreaterThan(0);
      for (const [name, text] of ts) {
        expect({ name, first: text.split('\n')[0] }).toEqual({
          name,
          first: `// Code generated by svcgen from ${specOf(name)}. DO NOT EDIT.`,
        });
      }
      expect(files.get('resources/widgets/routes.ts')!.split('\n')[0]).toBe(
        '// Code generated by svcgen from specs/resources/widgets.yaml. DO NOT EDIT.',
      );
      expect(files.get('resources/shiny_gadgets/schemas.ts')!.split('\n')[0]).toBe(
        '// Code generated by svcgen from specs/resources/gadgets.yaml. DO NOT EDIT.',
      );
      expect(files.get('app.ts')!.split('\n')[0]).toBe('// Code generated by svcgen from specs/service.yaml. DO NOT EDIT.');
    });

    it('records the generator version in manifest.json only', async () => {
      expect(PACKAGE_VERSION).toBe('0.1.0');
      expect(GENERATOR_VERSION).toBe(PACKAGE_VERSION);
      const version = new RegExp(`(?<![\\w.])${PACKAGE_VERSION.replace(/\./g, '\\.')}(?![\\w.])`);
      const manifest = JSON.parse(files.get(MANIFEST)!);
      expect(manifest).toMatchObject({ generator: 'svcgen', version: PACKAGE_VERSION });
      // It lists every other file it owns.
      expect(manifest.files).toEqual(sorted(files.keys()).filter((f) => f !== MANIFEST));
      for (const [name, text] of entries) {
        if (name !== MANIFEST) expect({ name, version: version.test(text) }).toEqual({ name, version: false });
      }
      // The API's own version (2.1.0 in the showcase) is a different thing and does appear.
      expect(entries.some(([name, text]) => name !== MANIFEST && text.includes('2.1.0'))).toBe(true);
    });
  });
});

describe('writeOutput', () => {
  it('writes every file on the first build, and none on the second (mtimes untouched)', async () => {
    const ws = workspace();
    const files = await gen(ws);
    const first = writeOutput(ws.out, files);
    expect(first).toEqual({ written: [...files.keys()], unchanged: [], removed: [] });
    for (const [name, text] of files) expect(fs.readFileSync(path.join(ws.out, name), 'utf8')).toBe(text);

    const old = new Date('2001-02-03T04:05:06Z');
    for (const name of files.keys()) fs.utimesSync(path.join(ws.out, name), old, old);
    const second = writeOutput(ws.out, await gen(ws));
    expect(second).toEqual({ written: [], unchanged: [...files.keys()], removed: [] });
    for (const name of files.keys())
      expect({ name, mtime: fs.statSync(path.join(ws.out, name)).mtime.getTime() }).toEqual({ name, mtime: old.getTime() });
  });

  it('rewrites only the files a spec change affects', async () => {
    const ws = workspace();
    const before = await gen(ws);
    writeOutput(ws.out, before);
    edit(path.join(ws.specs, 'resources/parts.yaml'), 'max_length: 30', 'max_length: 31');
    const after = await gen(ws);
    const changed = differing(before, after);
    expect(changed).toContain('resources/parts/schemas.ts');
    // api.json, the API surface, holds the fields of every schema.
    for (const f of changed) expect(f).toMatch(/^(resources\/parts\/|migrations\/|manifest\.json$|api\.json$)/);

    const result = writeOutput(ws.out, after);
    expect(sorted(result.written)).toEqual(changed);
    expect(sorted(result.unchanged)).toEqual(sorted([...after.keys()].filter((k) => !changed.includes(k))));
    expect(result.removed).toEqual([]);
    for (const [name, text] of after) expect(fs.readFileSync(path.join(ws.out, name), 'utf8')).toBe(text);
  });

  it('removes the files of a removed resource and their empty folders, but never files it did not write', async () => {
    const ws = workspace();
    writeOutput(ws.out, await gen(ws));
    // User files: one at the top, one inside a resource folder, one that looks generated but is not in the manifest.
    const userFiles = ['README.md', 'resources/notes/custom.ts', 'resources/extra/queries.ts'];
    for (const f of userFiles) {
      fs.mkdirSync(path.dirname(path.join(ws.out, f)), { recursive: true });
      fs.writeFileSync(path.join(ws.out, f), `// ${f}: mine\n`);
    }
    fs.rmSync(path.join(ws.specs, 'resources/gadgets.yaml'));
    fs.rmSync(path.join(ws.specs, 'resources/notes.yaml'));
    const files = await gen(ws);
    const result = writeOutput(ws.out, files);

    expect(sorted(result.removed)).toEqual([
      'resources/notes/queries.ts',
      'resources/notes/routes.ts',
      'resources/notes/schemas.ts',
      'resources/shiny_gadgets/queries.ts',
      'resources/shiny_gadgets/routes.ts',
      'resources/shiny_gadgets/schemas.ts',
    ]);
    expect(result.written).toContain(MANIFEST);
    expect(fs.existsSync(path.join(ws.out, 'resources/shiny_gadgets'))).toBe(false);
    expect(fs.existsSync(path.join(ws.out, 'resources'))).toBe(true);
    for (const f of userFiles) expect(fs.readFileSync(path.join(ws.out, f), 'utf8')).toBe(`// ${f}: mine\n`);
    expect(listFiles(ws.out)).toEqual(sorted([...files.keys(), ...userFiles]));
    expect(JSON.parse(fs.readFileSync(path.join(ws.out, MANIFEST), 'utf8')).files).toEqual(
      sorted(files.keys()).filter((f) => f !== MANIFEST),
    );

    // The next build removes nothing more.
    expect(writeOutput(ws.out, files)).toEqual({ written: [], unchanged: [...files.keys()], removed: [] });
  });

  it.each([
    ['with a trailing slash', (out: string) => `${out}${path.sep}`],
    ['relative, written ./out', (out: string) => `.${path.sep}${path.relative(process.cwd(), out)}`],
    ['not normalized', (out: string) => path.join(out, '..') + `${path.sep}.${path.sep}${path.basename(out)}`],
  ])('removes empty folders whatever the spelling of the output folder (%s)', async (_, spell) => {
    const ws = workspace();
    const outDir = spell(ws.out);
    writeOutput(outDir, await gen(ws));
    fs.rmSync(path.join(ws.specs, 'resources/gadgets.yaml'));
    const result = writeOutput(outDir, await gen(ws));
    expect(result.removed).toHaveLength(3);
    expect(fs.existsSync(path.join(ws.out, 'resources/shiny_gadgets'))).toBe(false);
    expect(fs.existsSync(path.join(ws.out, 'resources/widgets/routes.ts'))).toBe(true);
  });

  it('does not remove anything without a previous manifest', async () => {
    const ws = workspace();
    fs.mkdirSync(path.join(ws.out, 'resources/old'), { recursive: true });
    fs.writeFileSync(path.join(ws.out, 'resources/old/queries.ts'), 'mine\n');
    const result = writeOutput(ws.out, await gen(ws));
    expect(result.removed).toEqual([]);
    expect(fs.readFileSync(path.join(ws.out, 'resources/old/queries.ts'), 'utf8')).toBe('mine\n');
  });

  it('never follows a manifest entry out of the output folder', async () => {
    const ws = workspace();
    const files = await gen(ws);
    writeOutput(ws.out, files);
    const outside = path.join(ws.root, 'precious.txt');
    fs.writeFileSync(outside, 'keep\n');
    const manifest = JSON.parse(fs.readFileSync(path.join(ws.out, MANIFEST), 'utf8'));
    manifest.files.push('../precious.txt');
    fs.writeFileSync(path.join(ws.out, MANIFEST), JSON.stringify(manifest));
    const result = writeOutput(ws.out, files);
    expect(result.removed).toEqual([]);
    expect(result.written).toEqual([MANIFEST]);
    expect(fs.readFileSync(outside, 'utf8')).toBe('keep\n');
  });
});

describe('drift', () => {
  const none = { changed: [], missing: [], extra: [], stray: [], others: [] };

  it('is empty right after a build', async () => {
    const ws = workspace();
    const files = await gen(ws);
    writeOutput(ws.out, files);
    expect(drift(ws.out, files)).toEqual(none);
  });

  it('reports a changed file with a readable diff after a spec edit', async () => {
    const ws = workspace();
    const before = await gen(ws);
    writeOutput(ws.out, before);
    edit(path.join(ws.specs, 'resources/parts.yaml'), 'max_length: 30', 'max_length: 31');
    const after = await gen(ws);
    const d = drift(ws.out, after);
    expect(d.missing).toEqual([]);
    expect(d.extra).toEqual([]);
    // The new migration is reported on its own (a migration check must name it), not as a changed file.
    expect(d.newMigrations).toEqual(['migrations/0002_alter_parts_name.ts']);
    expect(sorted(d.changed.map((c) => c.file))).toEqual(differing(before, after).filter((f) => !d.newMigrations!.includes(f)));

    const diff = d.changed.find((c) => c.file === 'resources/parts/schemas.ts')!.diff;
    const lines = diff.split('\n');
    expect(lines[0]).toBe('--- resources/parts/schemas.ts (committed)');
    expect(lines[1]).toBe('+++ resources/parts/schemas.ts (generated from the specs)');
    const removed = lines.filter((l) => l.startsWith('-') && !l.startsWith('---'));
    const added = lines.filter((l) => l.startsWith('+') && !l.startsWith('+++'));
    expect(removed.length).toBeGreaterThan(0);
    expect(removed.every((l) => l.includes('30'))).toBe(true);
    expect(added.every((l) => l.includes('31'))).toBe(true);
    expect(removed.map((l) => l.slice(1).replace(/30/g, '31'))).toEqual(added.map((l) => l.slice(1)));
    // The old line comes before the new one, as in any unified diff.
    expect(lines.indexOf(removed[0])).toBeLessThan(lines.indexOf(added[0]));
    // With context, but not the whole file.
    expect(lines.some((l) => l.startsWith(' '))).toBe(true);
    expect(lines.length).toBeLessThan(after.get('resources/parts/schemas.ts')!.split('\n').length);
  });

  it('reports a deleted generated file as missing', async () => {
    const ws = workspace();
    const files = await gen(ws);
    writeOutput(ws.out, files);
    fs.rmSync(path.join(ws.out, 'resources/widgets/queries.ts'));
    expect(drift(ws.out, files)).toEqual({ ...none, missing: ['resources/widgets/queries.ts'] });
  });

  it('reports the files of a removed resource as extra (and not user files)', async () => {
    const ws = workspace();
    writeOutput(ws.out, await gen(ws));
    fs.writeFileSync(path.join(ws.out, 'NOTES.md'), 'mine\n');
    fs.rmSync(path.join(ws.specs, 'resources/gadgets.yaml'));
    const d = drift(ws.out, await gen(ws));
    expect(sorted(d.extra)).toEqual([
      'resources/shiny_gadgets/queries.ts',
      'resources/shiny_gadgets/routes.ts',
      'resources/shiny_gadgets/schemas.ts',
    ]);
    expect(d.missing).toEqual([]);
    expect(d.changed.map((c) => c.file)).toContain(MANIFEST);
  });

  it('reports everything as missing for an empty output folder', async () => {
    const ws = workspace();
    const files = await gen(ws);
    expect(drift(ws.out, files)).toEqual({ ...none, missing: [...files.keys()] });
  });
});

describe('unifiedDiff', () => {
  const lines = (...l: string[]) => l.join('\n');

  it('shows removed then added lines, two lines of context, and @@ between distant hunks', async () => {
    const a = lines('1', '2', '3', '4', '5', '6', '7', '8', '9', '10');
    const b = lines('1', 'two', '3', '4', '5', '6', '7', '8', 'nine', '10');
    expect(unifiedDiff('f.ts', a, b)).toBe(
      lines(
        '--- f.ts (committed)',
        '+++ f.ts (generated from the specs)',
        ' 1',
        '-2',
        '+two',
        ' 3',
        ' 4',
        '@@',
        ' 7',
        ' 8',
        '-9',
        '+nine',
        ' 10',
      ),
    );
  });

  it('shows pure insertions and deletions', async () => {
    expect(unifiedDiff('f', lines('a', 'b'), lines('a', 'x', 'b'))).toBe(
      lines('--- f (committed)', '+++ f (generated from the specs)', ' a', '+x', ' b'),
    );
    expect(unifiedDiff('f', lines('a', 'x', 'b'), lines('a', 'b'))).toBe(
      lines('--- f (committed)', '+++ f (generated from the specs)', ' a', '-x', ' b'),
    );
  });
});

describe('golden outputs', () => {
  /** The committed folder must be exactly what the specs render to: no changed, missing, extra or stray files. */
  async function expectGolden(specsDir: string, outDir: string): Promise<void> {
    const files = (await generate({ specsDir, outDir, cwd: ROOT })).files;
    const d = drift(path.join(ROOT, outDir), files);
    expect({ changed: d.changed.map((c) => c.diff), missing: d.missing, extra: d.extra, newMigrations: d.newMigrations ?? [] }).toEqual({
      changed: [],
      missing: [],
      extra: [],
      newMigrations: [],
    });
    expect(listFiles(path.join(ROOT, outDir))).toEqual(sorted(files.keys()));
  }

  it('test/fixtures/showcase/specs renders to the committed test/fixtures/showcase/generated', async () => {
    await expectGolden(`${SHOWCASE}/specs`, `${SHOWCASE}/generated`);
  });

  it('specs/ renders to the committed generated/', async () => {
    await expectGolden('specs/', 'generated');
  });

  it('test/fixtures/querying/specs renders to the committed test/fixtures/querying/generated', async () => {
    await expectGolden('test/fixtures/querying/specs', 'test/fixtures/querying/generated');
  });
});
