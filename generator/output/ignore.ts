/**
 * `.svcgenignore` in the output folder: the files of someone else's that may live there (a README, a
 * hand-written module) without `svcgen check` failing. One pattern a line, as in `.gitignore` (a
 * subset): `#` starts a comment; `*` matches within a name, `**` across folders, `?` one character;
 * a pattern ending in `/` matches a folder and everything below it; a pattern with no other `/`
 * matches at any depth, one with a `/` from the output folder (a leading `/` is optional).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export const IGNORE_FILE = '.svcgenignore';

/** Whether `.svcgenignore` in `outDir` lists `name` (relative, forward slashes); no file lists nothing. */
export function ignoreList(outDir: string): (name: string) => boolean {
  let text: string;
  try {
    text = fs.readFileSync(path.join(outDir, IGNORE_FILE), 'utf8');
  } catch {
    return () => false;
  }
  const patterns = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map(patternRegExp);
  return (name) => patterns.some((p) => p.test(name));
}

/** A pattern as a regular expression over a path relative to the output folder. */
export function patternRegExp(pattern: string): RegExp {
  const folder = pattern.endsWith('/');
  const body = pattern.replace(/\/+$/, '');
  const anchored = body.includes('/');
  let out = '';
  const text = body.replace(/^\//, '');
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '*' && text[i + 1] === '*') {
      // `**/` is any number of folders, a final `**` anything.
      if (text[i + 2] === '/') {
        out += '(?:.*/)?';
        i += 2;
      } else {
        out += '.*';
        i += 1;
      }
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${anchored ? '' : '(?:.*/)?'}${out}${folder ? '/.*' : '(?:/.*)?'}$`);
}
