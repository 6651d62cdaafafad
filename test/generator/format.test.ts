/**
 * The format stage: Prettier with the pinned configuration, its cache, and the error a template
 * bug gives.
 */
import * as prettier from 'prettier/standalone';
import * as babel from 'prettier/plugins/babel';
import * as estree from 'prettier/plugins/estree';
import { formatFiles, formatTypeScript, normalize } from '../../generator/output/format';
import { PRETTIER_CONFIG } from '../../generator/output/prettier-config';

/** Source no earlier run has formatted, so the first call misses the cache. */
const fresh = (tag: string) =>
  `// ${tag} ${process.pid} ${process.hrtime.bigint()}\r\nexport const items = [ 'alpha', "beta", 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa', 'lambda', 'mu' ]\n\n\n\nexport function f(a: number,b: number) { return a+b }   \n`;

describe('formatTypeScript', () => {
  it('prints what Prettier prints with the pinned configuration, from the cache the same bytes', async () => {
    const text = fresh('cache');
    const direct = await prettier.format(normalize(text), { ...PRETTIER_CONFIG, plugins: [babel, estree] });
    const first = await formatTypeScript('a.ts', text);
    const second = await formatTypeScript('a.ts', text);
    expect(first).toBe(direct);
    expect(second).toBe(first);
    expect(first).toContain("export const items = [\n  'alpha',\n  'beta',");
    expect(first).toContain('export function f(a: number, b: number) {\n  return a + b;\n}\n');
    expect(first).not.toMatch(/\r|[ \t]$|\n\n\n/m);
  });

  it('names the generated file when a template produced code that does not parse', async () => {
    await expect(formatTypeScript('resources/x/routes.ts', `${fresh('broken')}export const = ;\n`)).rejects.toThrow(
      /^svcgen could not format the generated resources\/x\/routes\.ts: /,
    );
  });
});

describe('formatFiles', () => {
  it('formats TypeScript with Prettier, normalizes other files, and keeps the order of the map', async () => {
    const files = new Map([
      ['b.ts', fresh('b')],
      ['a.json', '{\r\n  "x": 1   \r\n}\r\n\r\n\r\n'],
    ]);
    const out = await formatFiles(files);
    expect([...out.keys()]).toEqual(['b.ts', 'a.json']);
    expect(out.get('b.ts')).toBe(await formatTypeScript('b.ts', files.get('b.ts')!));
    expect(out.get('a.json')).toBe('{\n  "x": 1\n}\n');
  });
});
