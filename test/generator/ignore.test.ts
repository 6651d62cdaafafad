/** The patterns of `.svcgenignore`: the subset of `.gitignore` its header documents. */
import { patternRegExp } from '../../generator/output/ignore';

const matches = (pattern: string, names: string[]) => names.filter((n) => patternRegExp(pattern).test(n));
const NAMES = [
  'extra.ts',
  'lib/extra.ts',
  'lib/deep/extra.ts',
  'lib/other.ts',
  'notes/README.md',
  'notes.md',
  'x.test.ts',
  'lib/x.test.ts',
];

describe('.svcgenignore patterns', () => {
  it.each([
    ['extra.ts', ['extra.ts', 'lib/extra.ts', 'lib/deep/extra.ts']],
    ['/extra.ts', ['extra.ts']],
    ['lib/extra.ts', ['lib/extra.ts']],
    ['lib/', ['lib/extra.ts', 'lib/deep/extra.ts', 'lib/other.ts', 'lib/x.test.ts']],
    ['lib/*.ts', ['lib/extra.ts', 'lib/other.ts', 'lib/x.test.ts']],
    ['lib/**/extra.ts', ['lib/extra.ts', 'lib/deep/extra.ts']],
    ['*.test.ts', ['x.test.ts', 'lib/x.test.ts']],
    ['notes', ['notes/README.md']],
    ['notes.?d', ['notes.md']],
  ])('%s', (pattern, expected) => {
    expect(matches(pattern, NAMES)).toEqual(expected);
  });
});
