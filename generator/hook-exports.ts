/**
 * Every hook a spec names must be exported by its hooks module. Checked with ts-morph (the
 * TypeScript compiler's view of the module, re-exports included) and reported at the spec position
 * that names the hook.
 */
import * as path from 'node:path';
import { Project } from 'ts-morph';
import type { DescribedSpecs } from './check-model';
import type { Diagnostic } from './diagnostics';
import type { HookRef } from './hook-refs';
import { diagnosticAt, type SpecFile } from './load';

/**
 * Diagnostics for hook names their module does not export. Files whose hooks module is missing are
 * skipped here (validation already reports the missing module).
 */
export function checkHookExports(described: DescribedSpecs): Diagnostic[] {
  // Only the hooks modules themselves are read: resolving their imports (runtime, knex, ...) would cost seconds.
  const project = new Project({
    skipAddingFilesFromTsConfig: true,
    skipFileDependencyResolution: true,
    compilerOptions: { noEmit: true, noResolve: true, types: [] },
  });
  const exportsCache = new Map<string, Set<string> | undefined>();
  const exportsOf = (module: string): Set<string> | undefined => {
    const file = path.resolve(described.dir, module);
    if (!exportsCache.has(file)) {
      const source = project.addSourceFileAtPathIfExists(file);
      exportsCache.set(file, source ? new Set(source.getExportedDeclarations().keys()) : undefined);
    }
    return exportsCache.get(file);
  };
  const out: Diagnostic[] = [];
  const serviceModule = described.service?.data.hooks;
  const check = (spec: SpecFile, ownModule: string | undefined, refs: readonly HookRef[]) => {
    for (const ref of refs) {
      // Paginators and authenticators the service file shares are exports of the service's module.
      const module = ref.module === 'service' ? serviceModule : ownModule;
      if (module === undefined) continue;
      const names = exportsOf(module);
      if (names && !names.has(ref.name)) {
        out.push(diagnosticAt(spec, ref.source.path, `hook "${ref.name}" is not exported by ${module}: export it from that module or fix the name`, ref.key));
      }
    }
  };
  if (described.service) check(described.service.spec, serviceModule, described.service.hooks);
  for (const res of described.resources) check(res.spec, res.data.hooks, res.hooks);
  return out;
}
