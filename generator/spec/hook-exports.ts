/**
 * Every hook a spec names must be exported by its hooks module, and a hook that generated code calls
 * must accept the arguments of that call. Checked with ts-morph (the TypeScript compiler's view of the
 * module, re-exports included) and reported at the spec position that names the hook, before the
 * generated code would fail to compile.
 */
import * as path from 'node:path';
import { Project, type ExportedDeclarations, type Signature, type SourceFile } from 'ts-morph';
import type { DescribedSpecs } from './check-model';
import type { Diagnostic } from '../load/diagnostics';
import { BUILTINS_BY_ROLE, HOOK_CALLS, type HookRef } from './hook-refs';
import { diagnosticAt, type SpecFile } from '../load/load';
import { didYouMean } from './suggest';

interface HooksModule {
  source: SourceFile;
  exports: ReadonlyMap<string, ExportedDeclarations[]>;
}

/**
 * Diagnostics for hook names their module does not export and for hooks that cannot take the call
 * generated code makes. Files whose hooks module is missing are skipped here (validation already
 * reports the missing module).
 */
export function checkHookExports(described: DescribedSpecs): Diagnostic[] {
  // Only the hooks modules themselves are read: resolving their imports (runtime, knex, ...) would cost seconds.
  const project = new Project({
    skipAddingFilesFromTsConfig: true,
    skipFileDependencyResolution: true,
    compilerOptions: { noEmit: true, noResolve: true, types: [] },
  });
  const modules = new Map<string, HooksModule | undefined>();
  const moduleAt = (module: string): HooksModule | undefined => {
    const file = path.resolve(described.dir, module);
    if (!modules.has(file)) {
      const source = project.addSourceFileAtPathIfExists(file);
      modules.set(file, source ? { source, exports: source.getExportedDeclarations() } : undefined);
    }
    return modules.get(file);
  };
  const out: Diagnostic[] = [];
  const serviceModule = described.service?.data.hooks;
  const check = (spec: SpecFile, ownModule: string | undefined, refs: readonly HookRef[]) => {
    for (const ref of refs) {
      // Paginators and authenticators the service file shares are exports of the service's module.
      const module = ref.module === 'service' ? serviceModule : ownModule;
      if (module === undefined) continue;
      const hooks = moduleAt(module);
      if (!hooks) continue;
      const declarations = hooks.exports.get(ref.name);
      const problem = declarations ? callProblem(ref, module, declarations) : notExported(ref, module, hooks);
      if (problem) out.push(diagnosticAt(spec, ref.source.path, problem, ref.key));
    }
  };
  if (described.service) check(described.service.spec, serviceModule, described.service.hooks);
  for (const res of described.resources) check(res.spec, res.data.hooks, res.hooks);
  return out;
}

function notExported(ref: HookRef, module: string, hooks: HooksModule): string {
  const candidates = [...hooks.exports.keys(), ...(BUILTINS_BY_ROLE[ref.role]?.names ?? [])];
  return `hook "${ref.name}" is not exported by ${module}${didYouMean(ref.name, candidates)}: export it from that module or fix the name`;
}

/**
 * Why the export cannot take the call generated code makes, if it cannot. Only exports whose type
 * TypeScript knows without resolving imports are judged: a function declaration, an arrow function or
 * function expression, a constant with a written function type.
 */
function callProblem(ref: HookRef, module: string, declarations: ExportedDeclarations[]): string | undefined {
  const call = HOOK_CALLS[ref.role];
  if (!call) return undefined;
  const signatures = declarations.flatMap((d) => d.getType().getCallSignatures());
  const accepts = ([min, max]: [number, number]) => min <= call.args && (call.passed === 'value' || call.args <= max);
  if (!signatures.length || signatures.some((s) => accepts(arity(s)))) return undefined;
  const [min, max] = arity(signatures[0]);
  const takes = min > call.args ? `requires ${count(min, 'parameter')}` : max === 0 ? 'takes no parameter' : `takes ${count(max, 'parameter')}`;
  const given = call.passed === 'call' ? 'it is called with' : 'it receives';
  return `hook "${ref.name}" of hooks module ${module} ${takes}; ${given} ${count(call.args, 'argument')} (${call.what})`;
}

const count = (n: number, noun: string) => (n === 1 ? `one ${noun}` : `${n} ${noun}s`);

/** Fewest and most arguments a signature accepts (Infinity with a rest parameter). */
function arity(signature: Signature): [number, number] {
  let min = 0;
  let max = 0;
  for (const param of signature.getParameters()) {
    const decl = param.getValueDeclaration();
    const node = decl && 'isRestParameter' in decl ? (decl as unknown as { isRestParameter(): boolean; isOptional(): boolean; hasInitializer(): boolean }) : undefined;
    if (node?.isRestParameter()) return [min, Infinity];
    max++;
    if (!(node?.isOptional() || node?.hasInitializer())) min = max;
  }
  return [min, max];
}
