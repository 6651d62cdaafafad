/**
 * Stage 5: format. Generated TypeScript goes through Prettier with the pinned configuration of
 * `prettier-config.ts`; other files (JSON) get LF endings and one final newline. Deterministic: same
 * text in, same bytes out. Prettier's standalone build is used: it reads no configuration file and
 * loads as CommonJS, so the command and the tests run it the same way.
 *
 * Formatting is most of a build's time, and most builds render files that did not change since the
 * last one: Prettier's output is kept in a cache keyed by a hash of its exact input, the Prettier
 * version and the configuration (`node_modules/.cache/svcgen-format`), so a file is formatted once
 * per content. Prettier is loaded only when some file is not in the cache.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PACKAGE_ROOT } from '../package-root';
import { PRETTIER_CONFIG } from './prettier-config';

const CACHE_DIR = path.join(PACKAGE_ROOT, 'node_modules', '.cache', 'svcgen-format');

type Format = (text: string) => Promise<string>;
let prettierFormat: Format | undefined;

/** Prettier with the pinned configuration, loaded on first use. */
function prettier(): Format {
  if (!prettierFormat) {
    const standalone: typeof import('prettier/standalone') = require('prettier/standalone');
    const options = { ...PRETTIER_CONFIG, plugins: [require('prettier/plugins/babel'), require('prettier/plugins/estree')] };
    prettierFormat = (text) => standalone.format(text, options);
  }
  return prettierFormat;
}

let cacheKeyPrefix: string | undefined;

/** What the output depends on besides the text: the Prettier version and the configuration. */
function cacheKey(text: string): string {
  cacheKeyPrefix ??= `${JSON.parse(fs.readFileSync(require.resolve('prettier/package.json'), 'utf8')).version}\0${JSON.stringify(PRETTIER_CONFIG)}\0`;
  return crypto.createHash('sha256').update(cacheKeyPrefix).update(text).digest('hex');
}

function readCache(key: string): string | undefined {
  try {
    return fs.readFileSync(path.join(CACHE_DIR, `${key}.out`), 'utf8');
  } catch {
    return undefined;
  }
}

function writeCache(key: string, text: string): void {
  try {
    fs.mkdirSync(CACHE_DIR, { recursive: true });
    // Written aside, then renamed: a concurrent build never reads half a file.
    const temp = path.join(CACHE_DIR, `${key}.${process.pid}.tmp`);
    fs.writeFileSync(temp, text);
    fs.renameSync(temp, path.join(CACHE_DIR, `${key}.out`));
  } catch {
    // A read-only install still formats, only slower.
  }
}

/** One generated TypeScript file in Prettier's layout; `name` only names the file in an error. */
export async function formatTypeScript(name: string, text: string): Promise<string> {
  const input = normalize(text);
  const key = cacheKey(input);
  const cached = readCache(key);
  if (cached !== undefined) return cached;
  let output: string;
  try {
    output = await prettier()(input);
  } catch (err) {
    // A template produced code that does not parse: say which file, the parser says where.
    throw new Error(`svcgen could not format the generated ${name}: ${(err as Error).message}`);
  }
  writeCache(key, output);
  return output;
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
