/**
 * How the generated files import the runtime and the hook modules, from where the output lives:
 * relative paths inside this repository (so `generated/` and the test goldens run in place), the
 * package name `svcgen/runtime` elsewhere (a project made by `svcgen init` depends on svcgen).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RenderContext } from './render/context';

export const REPO_ROOT = path.resolve(__dirname, '..');
export const RUNTIME_DIR = path.join(REPO_ROOT, 'runtime');
/** How output outside this repository imports the runtime: through the package (a `file:` dependency on svcgen). */
export const RUNTIME_PACKAGE = 'svcgen/runtime';

/** The import specifiers of an output folder (absolute) and a specs folder (absolute). */
export function outputImports(outDir: string, specsDir: string, runtimeImport?: string): RenderContext {
  return {
    runtimeFromRoot: runtimeImport ?? (inThisRepository(outDir) ? importPath(outDir, RUNTIME_DIR) : RUNTIME_PACKAGE),
    specsFromRoot: importPath(outDir, specsDir),
    specsName: path.basename(specsDir),
  };
}

function importPath(fromDir: string, target: string): string {
  const rel = path.relative(fromDir, target).split(path.sep).join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

/**
 * Whether `dir` belongs to this repository: the nearest package.json above it is svcgen's own. Output
 * elsewhere (a project made by `svcgen init`, even one inside this folder) has svcgen as a dependency
 * and imports the runtime by package name.
 */
function inThisRepository(dir: string): boolean {
  const real = (p: string) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return p;
    }
  };
  for (let d = dir; ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, 'package.json'))) return real(d) === real(REPO_ROOT);
    if (path.dirname(d) === d) return false;
  }
}
