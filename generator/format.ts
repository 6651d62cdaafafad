/**
 * Stage 5: format generated TypeScript with the TypeScript formatter (through ts-morph), so the
 * output has one layout whatever the templates' whitespace. Deterministic: same text in, same out.
 */
import { IndentationText, NewLineKind, Project, QuoteKind } from 'ts-morph';

let project: Project | undefined;

function formatter(): Project {
  project ??= new Project({
    useInMemoryFileSystem: true,
    manipulationSettings: {
      indentationText: IndentationText.TwoSpaces,
      newLineKind: NewLineKind.LineFeed,
      quoteKind: QuoteKind.Single,
    },
  });
  return project;
}

export function formatTypeScript(fileName: string, text: string): string {
  const p = formatter();
  const file = p.createSourceFile(`/format/${fileName}`, text, { overwrite: true });
  file.formatText({ indentSize: 2, tabSize: 2, convertTabsToSpaces: true, semicolons: 'insert' as never });
  const out = file.getFullText();
  p.removeSourceFile(file);
  return normalize(out);
}

/** LF endings, no trailing spaces, no runs of blank lines, one final newline. */
export function normalize(text: string): string {
  return `${text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim()}\n`;
}
