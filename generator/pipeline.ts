/**
 * The generator pipeline: load → validate → model → render → format. `generate` is pure up to
 * reading the specs; `build` and `check` share it and differ only in what they do with the bytes.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildModel } from './build-model';
import { checkModel, describeSpecs, type DescribedSpecs } from './check-model';
import { dbSchemaOf } from './db-schema';
import { SpecError, sortDiagnostics, type Diagnostic } from './diagnostics';
import { formatTypeScriptFiles, normalize } from './format';
import { checkHookExports } from './hook-exports';
import { diagnosticAt, loadSpecs, type LoadedSpecs } from './load';
import { planMigrations, readMigrationHistory, SNAPSHOT_FILE, type NewMigration } from './migrations';
import type { ServiceModel, SourceRef } from './model';
import { renderService } from './render';
import { changesSince, endpointsOf, type BuildChanges } from './summary';
import { validateSpecs } from './validate';

export const GENERATOR_VERSION: string = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', 'package.json'), 'utf8')).version;
export const MANIFEST = 'manifest.json';
export const RUNTIME_DIR = path.resolve(__dirname, '..', 'runtime');
export const REPO_ROOT = path.resolve(__dirname, '..');
/** How output outside this repository imports the runtime: through the package (a `file:` dependency on svcgen). */
export const RUNTIME_PACKAGE = 'svcgen/runtime';

export interface GenerateOptions {
  specsDir: string;
  outDir: string;
  cwd?: string;
  /** Write migration steps that lose data (drop a table or column, narrow a type). */
  allowDestructive?: boolean;
  /** One-off values for existing rows of new NOT NULL columns: `table.field` → value as typed. */
  defaults?: Record<string, string>;
  /**
   * Import specifier of the runtime from the output root. Default: a relative path when the output is
   * inside this repository, else the package name `svcgen/runtime`.
   */
  runtimeImport?: string;
}

export interface Generated {
  model: ServiceModel;
  /** Output path (relative to outDir, forward slashes) → exact bytes to write. */
  files: Map<string, string>;
  /** The migration this build adds (undefined when the schema did not change). */
  migration?: NewMigration;
  /** Resources and endpoints added or removed since the previous build's manifest. */
  changes: BuildChanges;
}

/** Every spec problem at once, or none. */
export function validate(specsDir: string, cwd = process.cwd()): Diagnostic[] {
  return checkSpecs(loadSpecs(specsDir, cwd)).diagnostics;
}

/**
 * Every problem: YAML, the meta-schema and the meaning of each file, then the model's names and
 * hook references across files, then (when all those pass) the hooks modules' exports. Returns the
 * described specs too: the model is built from them, so names are derived once.
 */
export function checkSpecs(loaded: LoadedSpecs): { diagnostics: Diagnostic[]; described: DescribedSpecs } {
  const validation = validateSpecs(loaded);
  const described = describeSpecs(loaded, validation.documents);
  const diagnostics = [...loaded.diagnostics, ...validation.diagnostics, ...checkModel(described)];
  if (!diagnostics.length) diagnostics.push(...checkHookExports(described));
  return { diagnostics: sortDiagnostics(diagnostics), described };
}

function importPath(fromDir: string, target: string): string {
  const rel = path.relative(fromDir, target).split(path.sep).join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

export function generate(options: GenerateOptions): Generated {
  const cwd = options.cwd ?? process.cwd();
  const loaded = loadSpecs(options.specsDir, cwd);
  const { diagnostics, described } = checkSpecs(loaded);
  if (diagnostics.length) throw new SpecError(diagnostics);
  const model = buildModel(described);
  const outDir = path.resolve(cwd, options.outDir);
  // The next migration: the committed snapshot in the output folder against the model's schema.
  const specs = [loaded.service, ...loaded.resources].filter((s) => s !== undefined);
  const at = (source: SourceRef, message: string): Diagnostic => {
    const spec = specs.find((s) => s.file === source.file);
    return spec ? diagnosticAt(spec, source.path, message, true) : { file: source.file, line: 1, column: 1, message };
  };
  const plan = planMigrations(model, dbSchemaOf(model), readMigrationHistory(outDir, cwd), {
    allowDestructive: options.allowDestructive,
    defaults: options.defaults,
    at,
  });
  const rendered = renderService(
    model,
    {
      runtimeFromRoot: options.runtimeImport ?? (inThisRepository(outDir) ? importPath(outDir, RUNTIME_DIR) : RUNTIME_PACKAGE),
      specsFromRoot: importPath(outDir, loaded.dir),
      specsName: path.basename(loaded.dir),
    },
    plan,
  );
  const sorted = [...rendered.files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const formatted = formatTypeScriptFiles(new Map(sorted.filter(([name]) => name.endsWith('.ts'))));
  const files = new Map<string, string>();
  for (const [name, text] of sorted) files.set(name, formatted.get(name) ?? normalize(text));
  // Committed migrations go back byte for byte, in order among the rest.
  for (const [name, text] of rendered.verbatim) files.set(name, text);
  const all = new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const endpoints = endpointsOf(model);
  all.set(MANIFEST, manifest(all, endpoints));
  return { model, files: all, migration: plan.next, changes: changesSince(previousManifest(outDir), [...all.keys()], endpoints) };
}

/**
 * Whether `dir` belongs to this repository: the nearest package.json above it is svcgen's own. Output
 * elsewhere (a project made by `svcgen init`, even one inside this folder) has svcgen as a dependency
 * and imports the runtime by package name.
 */
function inThisRepository(dir: string): boolean {
  const real = (p: string) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return p;
    }
  };
  for (let d = dir; ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, 'package.json'))) return real(d) === real(REPO_ROOT);
    if (path.dirname(d) === d) return false;
  }
}

/** The one place that records the generator version, the list of files it owns, and the endpoints it serves. */
function manifest(files: Map<string, string>, endpoints: string[]): string {
  return `${JSON.stringify(
    {
      generator: 'svcgen',
      version: GENERATOR_VERSION,
      note: 'Files listed here are generated by svcgen build; do not edit them by hand.',
      files: [...files.keys()].sort(),
      endpoints,
    },
    null,
    2,
  )}\n`;
}

function previousManifest(outDir: string): { files: string[]; endpoints?: string[] } | undefined {
  try {
    const data = JSON.parse(fs.readFileSync(path.join(outDir, MANIFEST), 'utf8')) as { files?: unknown; endpoints?: unknown };
    if (!Array.isArray(data.files)) return undefined;
    return { files: data.files.map(String), endpoints: Array.isArray(data.endpoints) ? data.endpoints.map(String) : undefined };
  } catch {
    return undefined;
  }
}

/** Files the previous build wrote, from its manifest. */
export function previousFiles(outDir: string): string[] {
  try {
    const data = JSON.parse(fs.readFileSync(path.join(outDir, MANIFEST), 'utf8')) as { files?: unknown };
    return Array.isArray(data.files) ? data.files.filter((f): f is string => typeof f === 'string' && !f.includes('..')) : [];
  } catch {
    return [];
  }
}

export interface BuildResult {
  written: string[];
  unchanged: string[];
  removed: string[];
}

/** Writes only files whose bytes changed, and removes files a previous build rendered that no longer belong. */
export function writeOutput(outDir: string, files: Map<string, string>): BuildResult {
  const result: BuildResult = { written: [], unchanged: [], removed: [] };
  // Absolute and normalized, so that `./out`, `out/` and `out` all stop at the same folder.
  const root = path.resolve(outDir);
  for (const stale of previousFiles(outDir)) {
    if (files.has(stale)) continue;
    const p = path.join(root, stale);
    if (fs.existsSync(p)) {
      fs.rmSync(p);
      result.removed.push(stale);
      removeEmptyDirs(path.dirname(p), root);
    }
  }
  for (const [name, text] of files) {
    const p = path.join(outDir, name);
    if (fs.existsSync(p) && fs.readFileSync(p, 'utf8') === text) {
      result.unchanged.push(name);
      continue;
    }
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
    result.written.push(name);
  }
  return result;
}

/** Removes `dir` and its parents while they are empty, up to (not including) `stop`; both absolute and normalized. */
function removeEmptyDirs(dir: string, stop: string): void {
  for (let d = dir; d.startsWith(stop + path.sep); d = path.dirname(d)) {
    if (fs.readdirSync(d).length) return;
    fs.rmdirSync(d);
  }
}

export interface Drift {
  changed: { file: string; diff: string }[];
  missing: string[];
  extra: string[];
  /**
   * Migrations the specs call for that were never generated (the specs changed the schema after the
   * committed snapshot); set only when there are some, and not counted in `missing`.
   */
  newMigrations?: string[];
}

const MIGRATION_FILE = /^migrations\/\d{4}_[a-z0-9_]+\.ts$/;

/** What `build` would change in `outDir`; empty when the committed output is current. */
export function drift(outDir: string, files: Map<string, string>): Drift {
  const out: Drift = { changed: [], missing: [], extra: [] };
  const hasSnapshot = fs.existsSync(path.join(outDir, SNAPSHOT_FILE));
  for (const [name, text] of files) {
    const p = path.join(outDir, name);
    if (!fs.existsSync(p) && hasSnapshot && MIGRATION_FILE.test(name)) (out.newMigrations ??= []).push(name);
    else if (!fs.existsSync(p)) out.missing.push(name);
    else {
      const current = fs.readFileSync(p, 'utf8');
      if (current !== text) out.changed.push({ file: name, diff: unifiedDiff(name, current, text) });
    }
  }
  for (const stale of previousFiles(outDir)) if (!files.has(stale) && fs.existsSync(path.join(outDir, stale))) out.extra.push(stale);
  return out;
}

/** A compact line diff (committed → expected) with a few lines of context. */
export function unifiedDiff(name: string, a: string, b: string, context = 2): string {
  const x = a.split('\n');
  const y = b.split('\n');
  // Longest common subsequence on lines; generated files are small enough for the quadratic table.
  const n = x.length;
  const m = y.length;
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const ops: { t: ' ' | '-' | '+'; line: string; i: number }[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) ops.push({ t: ' ', line: x[i++], i: j++ });
    // Removed lines before added ones, as in any unified diff.
    else if (i < n && (j >= m || lcs[i + 1][j] >= lcs[i][j + 1])) ops.push({ t: '-', line: x[i++], i: j });
    else ops.push({ t: '+', line: y[j], i: j++ });
  }
  const keep = new Set<number>();
  ops.forEach((op, k) => {
    if (op.t !== ' ') for (let d = -context; d <= context; d++) keep.add(k + d);
  });
  const lines = [`--- ${name} (committed)`, `+++ ${name} (generated from the specs)`];
  let last = -1;
  ops.forEach((op, k) => {
    if (!keep.has(k)) return;
    if (last >= 0 && k !== last + 1) lines.push('@@');
    lines.push(`${op.t}${op.line}`);
    last = k;
  });
  return lines.join('\n');
}

export { SpecError };
