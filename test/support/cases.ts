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
 * Used by test/generator/cases.test.ts and by `npm run update:cases` (update-cases.ts).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { formatDiagnostic } from '../../generator/load/diagnostics';
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
      return { name, specs: path.join(dir, 'specs'), expectedTxt: path.join(dir, 'expected.txt'), expectedDir: path.join(dir, 'expected') };
    });
}

export const isDiagnosticCase = (c: Case) => fs.existsSync(c.expectedTxt);
export const isOutputCase = (c: Case) => fs.existsSync(c.expectedDir);

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
 * Type-checks `files` in one program with the repository's compiler options (`strict`,
 * `noUnusedLocals`, ...), the imports they make (the runtime, the hooks) included. Returns the
 * compiler's messages, paths relative to the repository; none when everything checks.
 */
export function typeCheck(files: string[]): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(ROOT, 'tsconfig.json'), { noEmit: true }, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  })!;
  const program = ts.createProgram({ rootNames: files, options: config.options });
  const host: ts.FormatDiagnosticsHost = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => ROOT, getNewLine: () => '\n' };
  return ts.getPreEmitDiagnostics(program).map((d) => ts.formatDiagnostic(d, host).trimEnd());
}
