/**
 * The case folders of test/cases, as in sqlc's end-to-end testdata. Each case is a folder with a
 * `specs/` folder (service.yaml, resources/*.yaml, optional hooks/*.ts) and one of:
 *
 * - `expected.txt`: the diagnostics `svcgen validate` prints for the specs, one
 *   `file:line:column: message` per line, paths relative to the specs folder;
 * - `expected/`: the tree `svcgen build` writes into an empty output folder. The case's output folder
 *   is that `expected/` folder itself, so the generated imports of the runtime and of the hooks
 *   resolve in place and the tree type-checks where it is.
 *
 * - `committed/` and `gate.txt`: a gate case. `committed/` is an output folder as an earlier build
 *   left it (the files the gates compare with: `access.json`, `api.json`); `gate.txt` is what
 *   `svcgen build` answers for the specs into that folder: the problems that stop it, one
 *   `file:line:column: message` per line, or, when it builds, one line per file the gates write:
 *   `unchanged`, `changes` or `adds`, then the file's name.
 *
 * An output case may also hold `misspelt-column.json`: columns misspelt in its expected files, one
 * at a time, each with the messages the compiler must answer (the proof that generated code reads
 * and writes rows under their row types).
 *
 * Used by test/generator/cases.test.ts and by `npm run update:cases` (update-cases.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { formatDiagnostic, SpecError } from '../../generator/load/diagnostics';
import { generate, validate } from '../../generator/pipeline';

export const ROOT = path.resolve(__dirname, '../..');
export const CASES_DIR = path.join(ROOT, 'test', 'cases');

export interface Case {
  name: string;
  specs: string;
  /** The expected diagnostics, for a diagnostic case. */
  expectedTxt: string;
  /** The expected output tree, for an output case. */
  expectedDir: string;
  /** The misspelt columns of an output case and the compiler's messages about them, when it has some. */
  misspellings: string;
  /** A gate case's earlier output folder, and what build answers against it. */
  committedDir: string;
  gateTxt: string;
}

/** One column misspelt in one file of a case's expected tree, and what the compiler says about it. */
export interface Misspelling {
  /** The file, relative to `expected/`. */
  file: string;
  /** Code of the file (its first occurrence) and the same code with the column misspelt. */
  find: string;
  replace: string;
  /** The compiler's messages on the tree with that one change, as `typeCheck` prints them. */
  diagnostics: string[];
}

/** Every folder of test/cases that holds a `specs/` folder, sorted by name. */
export function listCases(): Case[] {
  return fs
    .readdirSync(CASES_DIR, { withFileTypes: true })
    .filter((e) => e.isDirectory() && fs.existsSync(path.join(CASES_DIR, e.name, 'specs')))
    .map((e) => e.name)
    .sort()
    .map((name) => {
      const dir = path.join(CASES_DIR, name);
      return {
        name,
        specs: path.join(dir, 'specs'),
        expectedTxt: path.join(dir, 'expected.txt'),
        expectedDir: path.join(dir, 'expected'),
        misspellings: path.join(dir, 'misspelt-column.json'),
        committedDir: path.join(dir, 'committed'),
        gateTxt: path.join(dir, 'gate.txt'),
      };
    });
}

export const isDiagnosticCase = (c: Case) => fs.existsSync(c.expectedTxt);
export const isOutputCase = (c: Case) => fs.existsSync(c.expectedDir);
export const hasMisspellings = (c: Case) => fs.existsSync(c.misspellings);
export const isGateCase = (c: Case) => fs.existsSync(c.committedDir);

/** The files the gates write and compare: the access matrix and the API surface. */
export const GATE_FILES = ['access.json', 'access.md', 'api.json'];

/**
 * What `svcgen build` answers for a gate case's specs into its `committed/` folder (without writing
 * anything): the problems that stop it, or for each gate file whether it is unchanged, changed or added.
 */
export async function gateOutcome(c: Case): Promise<string[]> {
  try {
    const { files } = await generate({ specsDir: c.specs, outDir: c.committedDir, cwd: c.specs });
    const committed = readTree(c.committedDir);
    return GATE_FILES.filter((f) => files.has(f)).map(
      (f) => `${!committed.has(f) ? 'adds' : committed.get(f) === files.get(f) ? 'unchanged' : 'changes'} ${f}`,
    );
  } catch (err) {
    if (!(err instanceof SpecError)) throw err;
    return err.diagnostics.map(formatDiagnostic);
  }
}

/** The lines of gate.txt. */
export function expectedGate(c: Case): string[] {
  return fs.readFileSync(c.gateTxt, 'utf8').split('\n').filter(Boolean);
}

/** The misspellings of a case's misspelt-column.json. */
export function readMisspellings(c: Case): Misspelling[] {
  return JSON.parse(fs.readFileSync(c.misspellings, 'utf8')) as Misspelling[];
}

/**
 * What the compiler says about the case's expected tree (hooks included) with `m`'s column
 * misspelt: the file is changed in memory only. Throws when the file no longer holds `m.find`.
 */
export function misspeltDiagnostics(c: Case, m: Misspelling): string[] {
  return typeCheckAll([misspeltCheck(c, m)])[0];
}

/**
 * The check of one misspelling for `typeCheckAll`: the case's folder mirrored, in memory, beside it
 * (its relative imports resolve the same), with `m`'s file changed. Throws when the file no longer
 * holds `m.find`.
 */
export function misspeltCheck(c: Case, m: Misspelling): Check {
  const file = path.join(c.expectedDir, m.file);
  const text = fs.readFileSync(file, 'utf8');
  if (!text.includes(m.find)) throw new Error(`${c.name}: ${m.file} no longer holds ${JSON.stringify(m.find)}`);
  return { files: outputCaseSources([c]), changed: { file, text: text.replace(m.find, m.replace) }, mirror: path.dirname(c.expectedDir) };
}

/** What `svcgen validate` prints for the case's specs, run in the specs folder. */
export function diagnosticsOf(c: Case): string[] {
  return validate(c.specs, c.specs).map(formatDiagnostic);
}

/** The lines of expected.txt. */
export function expectedDiagnostics(c: Case): string[] {
  return fs.readFileSync(c.expectedTxt, 'utf8').split('\n').filter(Boolean);
}

/** What `svcgen build` writes for the case's specs into an empty `expected/` folder. */
export async function renderCase(c: Case): Promise<Map<string, string>> {
  return (await generate({ specsDir: c.specs, outDir: c.expectedDir, cwd: c.specs, firstBuild: true })).files;
}

/** Every file below `dir` (relative, forward slashes) → its text, sorted by path. */
export function readTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.set(path.relative(dir, p).split(path.sep).join('/'), fs.readFileSync(p, 'utf8'));
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return new Map([...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The TypeScript of the output cases: every file of their expected trees and of their hooks folders. */
export function outputCaseSources(cases: Case[]): string[] {
  const sources = (dir: string) => [...readTree(dir).keys()].filter((f) => f.endsWith('.ts')).map((f) => path.join(dir, f));
  return cases.flatMap((c) => [...sources(c.expectedDir), ...sources(path.join(c.specs, 'hooks'))]);
}

/**
 * One set of files to type-check: `changed`, when given, is one file read with other text than it
 * holds; `mirror`, when given, is a folder (holding every file of the check) that the check sees as
 * a copy beside it, so the same files can be checked with and without a change in one program.
 */
export interface Check {
  files: string[];
  changed?: { file: string; text: string };
  mirror?: string;
}

/**
 * Type-checks `files` in one program with the repository's compiler options (`strict`,
 * `noUnusedLocals`, ...), the imports they make (the runtime, the hooks) included; `changed`, when
 * given, is one file read with other text than it holds. Returns the compiler's messages, paths
 * relative to the repository; none when everything checks.
 */
export function typeCheck(files: string[], changed?: { file: string; text: string }): string[] {
  return typeCheckAll([{ files, changed }])[0];
}

/**
 * Every check in ONE program (the runtime and the libraries are parsed and checked once, not once a
 * check): a check with a `mirror` is compiled from an in-memory copy of that folder (named
 * `<folder>~<n>`, beside it); nothing is written. Returns each check's messages, as `typeCheck`
 * does, the copy's paths given back as the originals. A message of a file no mirror holds (the
 * runtime, the libraries, the options) is reported to every check without a mirror (or to every
 * check, when all have one), a message of a file an unmirrored check lists only to the checks that list it.
 */
export function typeCheckAll(checks: Check[]): string[][] {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(ROOT, 'tsconfig.json'),
    { noEmit: true },
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  )!;
  const mirrors = checks.map((check, i) =>
    check.mirror ? { real: path.resolve(check.mirror), copy: `${path.resolve(check.mirror)}~${i + 1}` } : undefined,
  );
  const inside = (dir: string, name: string) => name === dir || name.startsWith(dir + path.sep);
  /** The real path of a name in a mirror's copy, and the check whose copy it is. */
  const original = (name: string): { name: string; check?: number } => {
    const resolved = path.resolve(name);
    const i = mirrors.findIndex((m) => m && inside(m.copy, resolved));
    return i < 0 ? { name: resolved } : { name: mirrors[i]!.real + resolved.slice(mirrors[i]!.copy.length), check: i };
  };
  // A changed file without a mirror is read changed everywhere (as `typeCheck` always did).
  const changedEverywhere = new Map(
    checks.flatMap((c, i) => (c.changed && !mirrors[i] ? [[path.resolve(c.changed.file), c.changed.text] as const] : [])),
  );
  const compilerHost = ts.createCompilerHost(config.options);
  const { readFile, fileExists, directoryExists } = compilerHost;
  compilerHost.readFile = (name) => {
    const o = original(name);
    const changed = o.check !== undefined ? checks[o.check].changed : undefined;
    if (changed && path.resolve(changed.file) === o.name) return changed.text;
    return changedEverywhere.get(o.name) ?? readFile(o.name);
  };
  compilerHost.fileExists = (name) => changedEverywhere.has(path.resolve(name)) || fileExists(original(name).name);
  compilerHost.directoryExists = (name) => directoryExists?.(original(name).name) ?? true;
  const rootNames = checks.flatMap((c, i) =>
    c.files.map((f) => (mirrors[i] ? mirrors[i]!.copy + path.resolve(f).slice(mirrors[i]!.real.length) : f)),
  );
  for (const [i, m] of mirrors.entries()) {
    const outside = m && checks[i].files.find((f) => !inside(m.real, path.resolve(f)));
    if (outside) throw new Error(`${outside} is not in ${m!.real}, the folder the check mirrors`);
  }
  const program = ts.createProgram({ rootNames, options: config.options, host: compilerHost });
  const host: ts.FormatDiagnosticsHost = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => ROOT, getNewLine: () => '\n' };
  const results: string[][] = checks.map(() => []);
  const unmirrored = checks.map((_, i) => i).filter((i) => !mirrors[i]);
  const listedBy = (name: string) => unmirrored.filter((i) => checks[i].files.some((f) => path.resolve(f) === name));
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const o = d.file ? original(d.file.fileName) : { name: '', check: undefined };
    let message = ts.formatDiagnostic(d, host).trimEnd();
    if (o.check !== undefined) {
      const m = mirrors[o.check]!;
      message = message.split(path.relative(ROOT, m.copy)).join(path.relative(ROOT, m.real)).split(m.copy).join(m.real);
      results[o.check].push(message);
      continue;
    }
    // A file some unmirrored checks list is theirs; any other file is everyone's.
    const owners = listedBy(o.name);
    for (const i of owners.length ? owners : unmirrored.length ? unmirrored : checks.map((_, j) => j)) results[i].push(message);
  }
  return results;
}
