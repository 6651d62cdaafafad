/**
 * The generated client's interfaces are the server's types: for every output this repository
 * commits (the blog, the showcase, the querying fixture), each request body a client method sends
 * is exactly what the server's Zod schema of that name accepts (`z.input`), and each response it
 * resolves to exactly what the schema describes (`z.output`). Checked by the TypeScript compiler.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { diagnostics, ROOT } from './compile';

/** A file that exists only in memory, beside this test. */
const CHECK = path.join(__dirname, 'same-types.check.ts');

const OUTPUTS = ['generated', 'test/fixtures/showcase/generated', 'test/fixtures/querying/generated'];

/** The schema names a client sends as bodies and receives as responses (items of pages and lists included). */
function clientSchemas(client: string): { input: Set<string>; output: Set<string> } {
  const input = new Set([...client.matchAll(/\bbody: (\w+)[,)]/g)].map((m) => m[1]));
  // A read generic in its ?expand= resolves to `Expanded<Item, …, E>`: without any expansion, Item.
  const output = new Set([...client.matchAll(/: Promise<(?:Page<|ResultsPage<)?(?:Expanded<)?(\w+)(?:\[\])?[>,]/g)].map((m) => m[1]));
  for (const helper of ['unknown', 'void', 'M2MSchemaOut']) output.delete(helper);
  return { input, output };
}

/** The modules of an output that export Zod schemas: its endpoints and each resource's schemas. */
function schemaModules(out: string): string[] {
  const resources = path.join(ROOT, out, 'resources');
  return [
    path.join(ROOT, out, 'endpoints.ts'),
    ...fs
      .readdirSync(resources)
      .sort()
      .map((d) => path.join(resources, d, 'schemas.ts')),
  ];
}

interface Check {
  output: string;
  name: string;
  role: 'input' | 'output';
}

function checks(): { text: string; list: Check[] } {
  const imports: string[] = [`import type { z } from '../../runtime';`];
  const lines: string[] = [];
  const list: Check[] = [];
  OUTPUTS.forEach((out, o) => {
    const client = fs.readFileSync(path.join(ROOT, out, 'client.ts'), 'utf8');
    imports.push(`import type * as c${o} from '../../${out}/client';`);
    const { input, output } = clientSchemas(client);
    schemaModules(out).forEach((file, m) => {
      const text = fs.readFileSync(file, 'utf8');
      const alias = `s${o}_${m}`;
      let used = false;
      for (const [role, names] of [
        ['input', input],
        ['output', output],
      ] as const) {
        for (const name of names) {
          if (!new RegExp(`^export const ${name} = `, 'm').test(text)) continue;
          used = true;
          list.push({ output: out, name, role });
          lines.push(`  same<c${o}.${name}, z.${role}<typeof ${alias}.${name}>>(); // ${out} ${name}`);
        }
      }
      if (used)
        imports.push(`import type * as ${alias} from '${path.relative(__dirname, file).replace(/\.ts$/, '').split(path.sep).join('/')}';`);
    });
  });
  const text = [
    ...imports,
    '',
    'type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;',
    'function same<A, B>(..._proof: Same<A, B> extends true ? [] : [never]): void {}',
    '',
    'export function check(): void {',
    ...lines,
    '}',
    '',
  ].join('\n');
  return { text, list };
}

describe("the generated client's types", () => {
  const { text, list } = checks();

  it('cover the request and response schemas of every committed output', () => {
    const names = (out: string, role: string) => list.filter((c) => c.output === out && c.role === role).map((c) => c.name);
    expect(names('generated', 'input')).toEqual(
      expect.arrayContaining(['RegisterSchema', 'LoginSchema', 'ArticleIn', 'ArticleUpdate', 'UserIn', 'UserUpdate']),
    );
    expect(names('generated', 'output')).toEqual(
      expect.arrayContaining(['TokenResponse', 'UserResponse', 'ArticleOut', 'ArticleDetail', 'PublishResponse', 'TagOut']),
    );
    expect(names('test/fixtures/showcase/generated', 'input')).toEqual(
      expect.arrayContaining(['WidgetIn', 'WidgetUpdate', 'MakerIn', 'EchoRequest']),
    );
    expect(names('test/fixtures/showcase/generated', 'output')).toEqual(
      expect.arrayContaining(['WidgetOut', 'WidgetDetail', 'MakerDetail', 'NumberItem', 'NoteLabelsItem']),
    );
    expect(list.length).toBeGreaterThan(40);
  });

  it("are exactly the server's Zod input and output types", () => {
    expect(diagnostics(CHECK, text)).toEqual([]);
  });
});
