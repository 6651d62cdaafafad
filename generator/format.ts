/**
 * Stage 5: format. Generated TypeScript goes through Prettier with the pinned configuration of
 * `prettier-config.ts`; other files (JSON) get LF endings and one final newline. Deterministic: same
 * text in, same bytes out. Prettier's standalone build is used: it reads no configuration file and
 * loads as CommonJS, so the command and the tests run it the same way.
 */
import * as prettier from 'prettier/standalone';
import * as babel from 'prettier/plugins/babel';
import * as estree from 'prettier/plugins/estree';
import { PRETTIER_CONFIG } from './prettier-config';

const OPTIONS = { ...PRETTIER_CONFIG, plugins: [babel, estree] };

/** One generated TypeScript file in Prettier's layout; `name` only names the file in an error. */
export async function formatTypeScript(name: string, text: string): Promise<string> {
  try {
    return await prettier.format(normalize(text), OPTIONS);
  } catch (err) {
    // A template produced code that does not parse: say which file, the parser says where.
    throw new Error(`svcgen could not format the generated ${name}: ${(err as Error).message}`);
  }
}

/** Formats every file of a build, in the map's order (keys are output paths). */
export async function formatFiles(files: ReadonlyMap<string, string>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [name, text] of files) out.set(name, name.endsWith('.ts') ? await formatTypeScript(name, text) : normalize(text));
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
