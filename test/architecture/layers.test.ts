/**
 * The runtime's layers, and the one direction its imports go: http → operations → auth → query →
 * validation → db → core, never back. A module imports its own layer and the layers below it; the
 * contract (`runtime/index.ts`) sits above them all. A failure names the file, the import and the
 * two layers, so that an upward import is seen where it is written.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

const RUNTIME = path.resolve(__dirname, '../../runtime');

/** Each layer with the layers it may import (its own is always allowed). */
const LAYERS: Record<string, readonly string[]> = {
  core: [],
  db: ['core'],
  validation: ['core'],
  query: ['core', 'db', 'validation'],
  auth: ['core', 'db', 'validation'],
  operations: ['core', 'db', 'validation', 'query', 'auth'],
  http: ['core', 'db', 'validation', 'query', 'auth', 'operations'],
};

/** Folders of the runtime package that hold no sources: its compiled output and installed packages. */
const NOT_SOURCES = new Set(['dist', 'node_modules']);

function sourcesOf(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return NOT_SOURCES.has(e.name) ? [] : sourcesOf(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

/** A file's text, from the disk unless given. */
type Read = (file: string) => string;
const fromDisk: Read = (file) => fs.readFileSync(file, 'utf8');

/** The relative imports of a file (static imports and re-exports, dynamic imports, requires). */
function relativeImports(file: string, read: Read = fromDisk): string[] {
  const text = read(file);
  const found = text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|^import\s+)(['"])(\.{1,2}\/[^'"]+)\1/gm);
  return [...found].map((m) => m[2]);
}

const layerOf = (file: string): string => path.relative(RUNTIME, file).split(path.sep)[0];

/** Every import of `files` that leaves the runtime, reaches the contract from inside, or goes up a layer. */
function wrongImports(files: readonly string[], read: Read = fromDisk): string[] {
  const wrong: string[] = [];
  for (const file of files) {
    const from = layerOf(file);
    if (!(from in LAYERS)) continue;
    for (const spec of relativeImports(file, read)) {
      const rel = path.relative(RUNTIME, path.resolve(path.dirname(file), spec));
      const to = rel.split(path.sep)[0];
      const where = `${path.relative(RUNTIME, file)} imports ${spec}`;
      if (rel.startsWith('..')) wrong.push(`${where}: outside the runtime`);
      else if (to === 'index' || to === 'index.ts') wrong.push(`${where}: the contract, from inside`);
      else if (to !== from && !LAYERS[from].includes(to)) wrong.push(`${where}: ${from} → ${to}`);
    }
  }
  return wrong;
}

describe('runtime layers', () => {
  const files = sourcesOf(RUNTIME);

  it('every runtime module lives in a layer folder (index.ts, the contract, excepted)', () => {
    const loose = files.filter((f) => path.relative(RUNTIME, f) !== 'index.ts' && !(layerOf(f) in LAYERS));
    expect(loose.map((f) => path.relative(RUNTIME, f))).toEqual([]);
  });

  it('imports go down the layers, never up', () => {
    expect(wrongImports(files)).toEqual([]);
  });

  it('an upward import, an import of the contract and one out of the runtime are each named', () => {
    // A module of the db layer, one folder down, read from memory: nothing is written into the runtime.
    const probe = path.join(RUNTIME, 'db', '.layers-probe', 'probe.ts');
    const text = [
      "import { createApi } from '../../http/app';",
      "export { AppError } from '../../core/errors';",
      "const index = require('../../index');",
      "import('../../../generator/pipeline');",
    ].join('\n');
    const read: Read = (file) => (file === probe ? text : fromDisk(file));
    const name = path.relative(RUNTIME, probe);
    expect(wrongImports([probe], read)).toEqual([
      `${name} imports ../../http/app: db → http`,
      `${name} imports ../../index: the contract, from inside`,
      `${name} imports ../../../generator/pipeline: outside the runtime`,
    ]);
  });
});

describe('the two packages', () => {
  const GENERATOR = path.resolve(__dirname, '../../generator');

  it('the generator reaches the runtime through its package name only (a relative path breaks the published command)', () => {
    const reaching = sourcesOf(GENERATOR).flatMap((file) =>
      relativeImports(file)
        .filter((spec) => !path.relative(RUNTIME, path.resolve(path.dirname(file), spec)).startsWith('..'))
        .map((spec) => `${path.relative(GENERATOR, file)} imports ${spec}`),
    );
    expect(reaching).toEqual([]);
  });
});
