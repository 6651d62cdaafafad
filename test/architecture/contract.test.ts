/**
 * The runtime's contract (`runtime/index.ts`): an explicit list of names, and every name the
 * generator can emit into generated code is on it (the built-in names specs may use are checked in
 * test/runtime/catalogue.test.ts). Anything else in the runtime is internal.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as runtime from '../../runtime';

const ROOT = path.resolve(__dirname, '../..');

function sourcesOf(dir: string, pattern = /\.ts$/): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? sourcesOf(full, pattern) : pattern.test(e.name) ? [full] : [];
  });
}

/** The runtime names the generator's sources emit by name: `imports.runtime('x')`, `runtimeType('x')`, and its named constants. */
function emittedNames(): { values: Set<string>; types: Set<string> } {
  const values = new Set<string>();
  const types = new Set<string>();
  for (const file of sourcesOf(path.join(ROOT, 'generator'))) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\bruntime(Type)?\(\s*'([A-Za-z_$][\w$]*)'\s*\)/g)) (m[1] ? types : values).add(m[2]);
  }
  // A migration's rename of a foreign key, and its search indexes, call these functions by constants of their own.
  values.add('renameForeignKey');
  values.add('createSearchIndex');
  values.add('dropSearchIndex');
  values.add('renameSearchIndex');
  values.add('createFoldedUnique');
  values.add('dropFoldedUnique');
  return { values, types };
}

/**
 * The names that code written against the runtime imports from it, file by file: the templates of
 * `svcgen init`, the blog's hooks, the fixtures' and cases' hooks, and the docs' examples.
 */
function importedNames(): Map<string, string> {
  const files = [
    ...sourcesOf(path.join(ROOT, 'templates'), /\.(hbs|js|ts)$/),
    ...sourcesOf(path.join(ROOT, 'specs')),
    ...sourcesOf(path.join(ROOT, 'test/fixtures')).filter((f) => f.includes(`${path.sep}hooks${path.sep}`)),
    // The hooks of every case but the one written against 0.1.0's runtime, which imports names it no longer has on purpose.
    ...sourcesOf(path.join(ROOT, 'test/cases')).filter(
      (f) => f.includes(`${path.sep}hooks${path.sep}`) && !f.includes(`${path.sep}hooks-old-runtime${path.sep}`),
    ),
    path.join(ROOT, 'README.md'),
    // Every page of the docs: the spec language reference (docs/reference/spec/), the guides, the tutorial.
    ...sourcesOf(path.join(ROOT, 'docs'), /\.md$/),
  ];
  const names = new Map<string, string>();
  const pattern = /(?:import\s+(?:type\s+)?\{([^}]*)\}\s+from|(?:const|let|var)\s+\{([^}]*)\}\s*=\s*require\()\s*['"]@svcgen\/runtime['"]/g;
  for (const file of files) {
    for (const m of fs.readFileSync(file, 'utf8').matchAll(pattern)) {
      for (const part of (m[1] ?? m[2]).split(',')) {
        const name = part
          .trim()
          .replace(/^type\s+/, '')
          .split(/\s+as\s+|\s*:\s*/)[0]
          .trim();
        if (name && !names.has(name)) names.set(name, path.relative(ROOT, file));
      }
    }
  }
  return names;
}

/** The names `index.ts` exports, values and types, read from its text. */
function contractNames(): Set<string> {
  const text = fs.readFileSync(path.join(ROOT, 'runtime/index.ts'), 'utf8');
  const names = new Set<string>();
  for (const m of text.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const part of m[1].split(',')) {
      const name = part
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop()!
        .trim();
      if (name) names.add(name);
    }
  }
  return names;
}

describe('the runtime contract', () => {
  it('lists its names: no `export *`', () => {
    expect(fs.readFileSync(path.join(ROOT, 'runtime/index.ts'), 'utf8')).not.toMatch(/export\s+\*/);
  });

  it('holds every value the generator emits', () => {
    expect(emittedNames().values.size).toBeGreaterThan(40);
    const missing = [...emittedNames().values].filter((name) => !(name in runtime));
    expect(missing).toEqual([]);
  });

  it('holds every type the generator emits', () => {
    const contract = contractNames();
    expect([...emittedNames().types].filter((name) => !contract.has(name))).toEqual([]);
  });

  it('holds every name the init templates, the hooks and the docs import', () => {
    const contract = contractNames();
    const imported = importedNames();
    expect(imported.size).toBeGreaterThan(20);
    expect([...imported].filter(([name]) => !contract.has(name)).map(([name, file]) => `${name} (${file})`)).toEqual([]);
  });
});
