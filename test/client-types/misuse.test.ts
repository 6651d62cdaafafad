/**
 * The generated client's types refuse wrong calls: `misuse.ts` compiles as it is under the
 * repository's strict options, and without its `// @ts-expect-error TSxxxx` lines it fails with
 * exactly the errors those lines name, each on the line below its directive, and no other.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { diagnostics, ROOT } from './compile';

const FILE = path.join(__dirname, 'misuse.ts');
const DIRECTIVE = /^\s*\/\/ @ts-expect-error (TS\d+) (.+)$/;

describe('misuse of the generated client', () => {
  const text = fs.readFileSync(FILE, 'utf8');
  const lines = text.split('\n');
  const expected = lines.flatMap((line, i) => {
    const m = DIRECTIVE.exec(line);
    return m ? [{ line: i + 2, code: m[1], why: m[2] }] : [];
  });

  it('names misuses of each kind: unknown and misspelt fields, wrong types, missing fields, missing members', () => {
    expect(new Set(expected.map((e) => e.code))).toEqual(new Set(['TS2353', 'TS2561', 'TS2322', 'TS2345', 'TS2339', 'TS2349']));
  });

  it('compiles as it is: every directive is used, and the right calls are right', () => {
    expect(diagnostics(FILE, text)).toEqual([]);
  });

  it('without the directives, fails with exactly the errors they name', () => {
    const stripped = lines.map((line) => (DIRECTIVE.test(line) ? '' : line)).join('\n');
    const file = path.relative(ROOT, FILE);
    const found = diagnostics(FILE, stripped).map((d) => d.replace(/^([^ ]+ TS\d+) .*$/, '$1'));
    expect(found).toEqual(expected.map((e) => `${file}:${e.line}: ${e.code}`));
  });
});
