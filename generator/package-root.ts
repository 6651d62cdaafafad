/**
 * The folder of the svcgen package: the parent of `generator/` in a checkout, of `dist/generator/`
 * in the published package (compiled JavaScript). Templates and package.json are found from here.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (fs.existsSync(pkg) && (JSON.parse(fs.readFileSync(pkg, 'utf8')) as { name?: string }).name === 'svcgen') return dir;
    if (path.dirname(dir) === dir) throw new Error(`svcgen: no svcgen package.json above ${from}`);
  }
}

export const PACKAGE_ROOT = findPackageRoot(__dirname);
