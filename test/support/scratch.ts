/**
 * Scratch folders for tests: below the system's temporary folder, never in the checkout (whose
 * `git status` a test run leaves as it was). Each has a `node_modules` link to the repository's, so
 * that generated code and hooks written there import `@svcgen/runtime` and the other packages as
 * they would inside the repository (the runtime from its sources, through the `@svcgen/source`
 * condition). Removing the folder removes the link, not what it points to.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/** A new empty folder (but its `node_modules` link), named `svcgen-<prefix>-XXXXXX`. */
export function scratchDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `svcgen-${prefix}-`));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

/**
 * `p` as svcgen shows a path in its messages (generator/load/load.ts): relative to the working
 * directory when inside it, else absolute (a scratch folder is outside the checkout); forward slashes.
 */
export function shownPath(p: string, cwd = ROOT): string {
  const rel = path.relative(cwd, p);
  return (rel.startsWith('..') || path.isAbsolute(rel) ? p : rel).split(path.sep).join('/');
}
