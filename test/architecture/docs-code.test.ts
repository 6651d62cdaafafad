/**
 * The TypeScript of the docs compiles: every ```ts and ```typescript block of README.md and
 * docs/**\/*.md is type-checked, all of them in one program, against `@svcgen/runtime` (its
 * sources, through the `@svcgen/source` condition) and the repository's generated code. Each block
 * is a module of its own, placed at the repository's root unless a mark says where; a mark is an
 * HTML comment on the line before the block (or the lines before it), which GitHub does not show:
 *
 * - `<!-- compile in PATH -->`: the block is compiled as if it were beside PATH (so
 *   `../../generated/...` resolves as it does for the hooks module PATH).
 * - `<!-- compile in PATH, after:` or `<!-- compile after:`, then lines of TypeScript, then `-->`:
 *   those lines (imports, `declare const ctx: …;`) come before the block: what a part of a file
 *   takes from the rest of it.
 * - `<!-- excerpt: PATH -->`: the block is a part of PATH as it is, which is checked instead. In a
 *   tutorial page, PATH is in the tutorial's project (test/docs/tutorial.test.ts checks it); in
 *   any other page, in this repository (checked here).
 * - `<!-- file: PATH -->`: the block is the file PATH of the tutorial's project, which
 *   test/docs/tutorial.test.ts writes there and compiles with the project (only in the pages it runs).
 * - `<!-- fragment: WHY -->`: not compiled, on purpose, and counted.
 *
 * No block is left out otherwise. A failure lists `file:line: message`, the line the page's.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');

export interface Block {
  /** The page, relative to the repository. */
  file: string;
  /** The line of the page where the block's code starts. */
  line: number;
  code: string;
  mark:
    | { kind: 'compile'; in?: string; prelude: string[] }
    | { kind: 'excerpt'; path: string }
    | { kind: 'project'; path: string }
    | { kind: 'fragment'; why: string };
}

/** The TypeScript blocks of a page, with their marks. */
export function tsBlocks(file: string, text: string): Block[] {
  const lines = text.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = lines[i].match(/^(\s*)(`{3,}|~{3,})\s*([\w-]*)/);
    if (!fence) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !new RegExp(`^\\s*${fence[2]}\\s*$`).test(lines[i]); i++) body.push(lines[i]);
    if (fence[3] !== 'ts' && fence[3] !== 'typescript') continue;
    blocks.push({
      file,
      line: start + 2,
      code: body.map((l) => l.slice(fence[1].length)).join('\n'),
      mark: markBefore(file, lines, start),
    });
  }
  return blocks;
}

/** The mark of the block whose fence is line `fence` (0-based): the HTML comment ending on the line before, if any. */
function markBefore(file: string, lines: string[], fence: number): Block['mark'] {
  const last = (lines[fence - 1] ?? '').trim();
  if (!last.endsWith('-->')) return { kind: 'compile', prelude: [] };
  let first = fence - 1;
  while (first > 0 && !lines[first].trim().startsWith('<!--')) first--;
  // A block in a list item is indented, and so is its mark.
  const comment = lines.slice(first, fence).map((l) => l.trim());
  const head = comment[0];
  let m: RegExpMatchArray | null;
  if ((m = head.match(/^<!-- fragment: (.+) -->$/))) return { kind: 'fragment', why: m[1] };
  if ((m = head.match(/^<!-- excerpt: (\S+) -->$/))) return { kind: 'excerpt', path: m[1] };
  if ((m = head.match(/^<!-- file: (\S+) -->$/))) return { kind: 'project', path: m[1] };
  if ((m = head.match(/^<!-- compile in (\S+) -->$/))) return { kind: 'compile', in: m[1], prelude: [] };
  if ((m = head.match(/^<!-- compile(?: in (\S+),)? after:$/))) return { kind: 'compile', in: m[1], prelude: comment.slice(1, -1) };
  throw new Error(`${file}:${fence}: an HTML comment before a TypeScript block that is no mark of the docs' code check: ${head}`);
}

/** The pages test/docs/tutorial.test.ts runs, in the tutorial's project. */
const TUTORIAL_PAGES = [
  'docs/tutorial/1-new-project.md',
  'docs/tutorial/2-a-resource.md',
  'docs/tutorial/3-a-change-with-data.md',
  'docs/guides/typed-client-script.md',
];

export const COMPILER_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Bundler,
  customConditions: ['@svcgen/source'],
  lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
  types: ['node'],
  strict: true,
  noImplicitOverride: true,
  esModuleInterop: true,
  resolveJsonModule: true,
  skipLibCheck: true,
  noEmit: true,
};

/** Where a block is compiled: a file that does not exist, beside its `compile in` path or at the root. */
function virtualPath(block: Block, index: number): string {
  const where = block.mark.kind === 'compile' && block.mark.in ? path.dirname(path.join(ROOT, block.mark.in)) : ROOT;
  return path.join(where, `__docs_${index}_${block.file.replace(/\W+/g, '_')}_${block.line}.ts`);
}

/** The problems of the blocks: the compiler's messages for those compiled, and excerpts not found in their files. */
export function problemsOf(blocks: Block[]): string[] {
  const problems: string[] = [];
  const files = new Map<string, { block: Block; offset: number; text: string }>();
  blocks.forEach((block, index) => {
    if (block.mark.kind === 'excerpt') {
      if (/^docs\/tutorial\/\d-/.test(block.file)) return;
      const target = path.join(ROOT, block.mark.path);
      const text = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
      if (!text.includes(block.code)) problems.push(`${block.file}:${block.line}: not a part of ${block.mark.path}`);
      return;
    }
    if (block.mark.kind === 'project') {
      if (!TUTORIAL_PAGES.includes(block.file))
        problems.push(`${block.file}:${block.line}: a file of the tutorial's project, in a page the tutorial test does not run`);
      return;
    }
    if (block.mark.kind !== 'compile') return;
    const prelude = block.mark.prelude;
    // `export {}` makes every block a module, so that two blocks' names never clash.
    const text = [...prelude, block.code, 'export {};', ''].join('\n');
    files.set(virtualPath(block, index), { block, offset: prelude.length, text });
  });
  const host = ts.createCompilerHost(COMPILER_OPTIONS, true);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (f) => files.has(path.resolve(f)) || fileExists.call(host, f);
  host.readFile = (f) => files.get(path.resolve(f))?.text ?? readFile.call(host, f);
  host.getSourceFile = (f, language, ...rest) => {
    const own = files.get(path.resolve(f));
    return own ? ts.createSourceFile(f, own.text, language, true) : getSourceFile.call(host, f, language, ...rest);
  };
  const program = ts.createProgram([...files.keys()], COMPILER_OPTIONS, host);
  for (const [name, { block, offset }] of files) {
    const source = program.getSourceFile(name)!;
    for (const d of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
      const line = d.start === undefined ? 0 : source.getLineAndCharacterOfPosition(d.start).line;
      const at = line < offset ? `${block.line - 1} (its prelude)` : String(block.line + line - offset);
      problems.push(`${block.file}:${at}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')} (TS${d.code})`);
    }
  }
  return problems;
}

function markdownUnder(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.posix.join(dir, e.name);
    return e.isDirectory() ? markdownUnder(rel) : e.name.endsWith('.md') ? [rel] : [];
  });
}

const pages = ['README.md', ...markdownUnder('docs')];
const blocks = pages.flatMap((p) => tsBlocks(p, fs.readFileSync(path.join(ROOT, p), 'utf8')));

/** A page that is not one: a block that compiles, one that does not, one marked as a fragment. */
const PROBE = [
  '```ts',
  "import { ForbiddenError } from '@svcgen/runtime';",
  "export const e = new ForbiddenError('forbidden', 'no');",
  '```',
  '',
  '```ts',
  "import { createClient } from './generated/client';",
  "const api = createClient({ baseUrl: 'http://127.0.0.1:8000/api' });",
  'await api.listArticles({ no_such_filter: 1 });',
  '```',
  '',
  '<!-- fragment: a signature -->',
  '```ts',
  'export function f(): void { … }',
  '```',
].join('\n');

describe('the TypeScript of the docs', () => {
  const probe = tsBlocks('docs/probe.md', PROBE);
  // One program for the docs' blocks and the probe's.
  const problems = problemsOf([...blocks, ...probe]);

  it('compiles: every block not marked a fragment type-checks (here or in the tutorial), every excerpt is in its file', () => {
    const counts = { compile: 0, excerpt: 0, project: 0, fragment: 0 };
    for (const b of blocks) counts[b.mark.kind]++;
    expect(problems.filter((p) => !p.startsWith('docs/probe.md:'))).toEqual([]);
    // The docs hold this many blocks of each kind; a change here is a block added, removed or re-marked.
    expect(counts).toEqual({ compile: 25, excerpt: 1, project: 1, fragment: 2 });
  });

  it('reports a broken block at its line, and leaves a marked fragment alone (the check itself)', () => {
    expect(probe.map((b) => b.mark.kind)).toEqual(['compile', 'compile', 'fragment']);
    expect(problems.filter((p) => p.startsWith('docs/probe.md:'))).toEqual([
      expect.stringMatching(/^docs\/probe\.md:9: .*'no_such_filter' does not exist in type .*\(TS2353\)$/),
    ]);
  });
});
