/**
 * Diagnostics: every problem found in the specs, with its position in the YAML source.
 * Stages collect them instead of stopping at the first, so one run reports all.
 */

export interface Position {
  /** 1-based line. */
  line: number;
  /** 1-based column. */
  column: number;
}

export interface Diagnostic extends Position {
  /** Path of the spec file as given to the CLI (relative to the working directory). */
  file: string;
  message: string;
}

export function formatDiagnostic(d: Diagnostic): string {
  return `${d.file}:${d.line}:${d.column}: ${d.message}`;
}

/**
 * Sorted by file, line and column, so that output is stable whatever order checks ran in; the files
 * in `first` (those whose problems may cause the others') before the rest.
 */
export function sortDiagnostics(list: Diagnostic[], first: ReadonlySet<string> = new Set()): Diagnostic[] {
  return [...list].sort(
    (a, b) =>
      Number(!first.has(a.file)) - Number(!first.has(b.file)) ||
      (a.file < b.file ? -1 : a.file > b.file ? 1 : 0) ||
      a.line - b.line ||
      a.column - b.column ||
      (a.message < b.message ? -1 : a.message > b.message ? 1 : 0),
  );
}

/** Thrown by a stage that cannot go on; carries every diagnostic found so far. */
export class SpecError extends Error {
  constructor(readonly diagnostics: Diagnostic[]) {
    super(diagnostics.map(formatDiagnostic).join('\n'));
    this.name = 'SpecError';
  }
}
