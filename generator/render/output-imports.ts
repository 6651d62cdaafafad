/**
 * How the generated files import the runtime and the hook modules: the runtime by package name,
 * `@svcgen/runtime`, everywhere (a project depends on the runtime package; in this repository the
 * npm workspace links the name to runtime/), the hook modules by relative path.
 */
import * as path from 'node:path';
import type { RenderContext } from './context';

/** How generated code imports the runtime: through the package's `exports`. */
export const RUNTIME_PACKAGE = '@svcgen/runtime';

/** The import specifiers of an output folder (absolute) and a specs folder (absolute). */
export function outputImports(outDir: string, specsDir: string, runtimeImport = RUNTIME_PACKAGE): RenderContext {
  return {
    runtimeFromRoot: runtimeImport,
    specsFromRoot: importPath(outDir, specsDir),
    specsName: path.basename(specsDir),
  };
}

function importPath(fromDir: string, target: string): string {
  const rel = path.relative(fromDir, target).split(path.sep).join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
}
