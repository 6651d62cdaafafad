/**
 * The diagnostics reference (docs/reference/diagnostics.md), made from the case folders: every
 * case whose build is refused (`test/cases/<case>/expected.txt`) with the problems `svcgen validate`
 * prints for it, in the case's order. `npm run update:diagnostics` writes it; the catalogue test
 * (test/architecture/catalogues.test.ts) fails while the page is not what this makes.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');
export const DIAGNOSTICS_PAGE = path.join(ROOT, 'docs/reference/diagnostics.md');
const CASES = path.join(ROOT, 'test/cases');

/** `five-mistakes` → `Five mistakes`. */
function title(name: string): string {
  const words = name.replace(/-/g, ' ');
  return words[0].toUpperCase() + words.slice(1);
}

/** The text of the diagnostics reference, from the case folders as they are now. */
export function diagnosticsReference(): string {
  const cases = fs
    .readdirSync(CASES)
    .filter((name) => fs.existsSync(path.join(CASES, name, 'expected.txt')))
    .sort();
  const sections = cases.map((name) => {
    const problems = fs.readFileSync(path.join(CASES, name, 'expected.txt'), 'utf8').trimEnd();
    return [
      `## ${title(name)}`,
      '',
      `The specs of [\`test/cases/${name}\`](../../test/cases/${name}/specs/):`,
      '',
      '```',
      problems,
      '```',
      '',
    ].join('\n');
  });
  return [
    '# Diagnostics',
    '',
    '<!-- Made by `npm run update:diagnostics` from the case folders (test/cases/*/expected.txt): edit those, not this page. -->',
    '',
    'What `svcgen validate` (and `build`, `check` and `dev`, which validate first) prints for specs it',
    'refuses: one line per problem, `file:line:column: message`, every problem of every file at once,',
    "then exit status 1. Each section below is one of the test suite's case folders, a set of specs",
    'with mistakes in them, and exactly what is printed for it; [what `svcgen validate`',
    'checks](spec/errors-and-checks.md#what-svcgen-validate-checks) lists the checks by kind.',
    '',
    ...sections,
  ].join('\n');
}

/** The lines of `onDisk` that differ from `made` (by position), with their line numbers: what is stale. */
export function staleLines(onDisk: string, made: string): string[] {
  const a = onDisk.split('\n');
  const b = made.split('\n');
  const out: string[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++)
    if (a[i] !== b[i]) out.push(`${i + 1}: ${a[i] ?? '(missing)'} → ${b[i] ?? '(none)'}`);
  return out;
}
