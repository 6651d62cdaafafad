/**
 * Stage 5: format generated TypeScript with the TypeScript formatter, so the output has one layout
 * whatever the templates' whitespace. One language service formats every file of a build.
 * Deterministic: same text in, same text out.
 */
import { ts } from 'ts-morph';

const FORMAT: ts.FormatCodeSettings = {
  ...ts.getDefaultFormatCodeSettings('\n'),
  indentSize: 2,
  tabSize: 2,
  convertTabsToSpaces: true,
  newLineCharacter: '\n',
  semicolons: ts.SemicolonPreference.Insert,
  insertSpaceAfterOpeningAndBeforeClosingNonemptyBraces: true,
};

/** Formats several files with one language service; keys are file names, values their text. */
export function formatTypeScriptFiles(files: ReadonlyMap<string, string>): Map<string, string> {
  const texts = new Map([...files].map(([name, text]) => [`/format/${name}`, text]));
  const host: ts.LanguageServiceHost = {
    getCompilationSettings: () => ({ noResolve: true, noLib: true }),
    getScriptFileNames: () => [...texts.keys()],
    getScriptVersion: () => '1',
    getScriptSnapshot: (f) => (texts.has(f) ? ts.ScriptSnapshot.fromString(texts.get(f)!) : undefined),
    getCurrentDirectory: () => '/',
    getDefaultLibFileName: () => 'lib.d.ts',
    fileExists: (f) => texts.has(f),
    readFile: (f) => texts.get(f),
  };
  const service = ts.createLanguageService(host, ts.createDocumentRegistry());
  const out = new Map<string, string>();
  for (const [name] of files) {
    const key = `/format/${name}`;
    let text = texts.get(key)!;
    // Apply edits from the end so earlier offsets stay valid.
    const edits = [...service.getFormattingEditsForDocument(key, FORMAT)].sort((a, b) => b.span.start - a.span.start);
    for (const e of edits) text = text.slice(0, e.span.start) + e.newText + text.slice(e.span.start + e.span.length);
    out.set(name, normalize(text));
  }
  service.dispose();
  return out;
}

/** LF endings, no trailing spaces, no runs of blank lines, one final newline. */
export function normalize(text: string): string {
  return `${text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;
}
