/**
 * Every hook a spec names must be exported by its hooks module, and a hook that generated code calls
 * must accept the arguments of that call. Checked with ts-morph (the TypeScript compiler's view of the
 * module, re-exports included) and reported at the spec position that names the hook, before the
 * generated code would fail to compile.
 *
 * Loading the compiler takes most of a validate, so what each hook reference gets is cached by the
 * contents of every TypeScript file under the specs folder (`node_modules/.cache/svcgen-hooks`):
 * while the hooks modules do not change, the compiler is not loaded at all.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ExportedDeclarations, Project as TsProject, Signature, SourceFile } from 'ts-morph';
import { PACKAGE_ROOT } from '../package-root';
import type { Diagnostic } from '../load/diagnostics';
import { BUILTINS_BY_ROLE, HOOK_CALLS, type HookedSpecs, type HookRef } from './hook-refs';
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
export function checkHookExports(described: HookedSpecs): Diagnostic[] {
  let project: TsProject | undefined;
  const modules = new Map<string, HooksModule | undefined>();
  const moduleAt = (module: string): HooksModule | undefined => {
    const file = path.resolve(described.dir, module);
    if (!modules.has(file)) {
      // Only the hooks modules themselves are read: resolving their imports (runtime, knex, ...) would cost seconds.
      project ??= new (require('ts-morph') as typeof import('ts-morph')).Project({
        skipAddingFilesFromTsConfig: true,
        skipFileDependencyResolution: true,
        compilerOptions: { noEmit: true, noResolve: true, types: [] },
      });
      const source = project.addSourceFileAtPathIfExists(file);
      modules.set(file, source ? { source, exports: source.getExportedDeclarations() } : undefined);
    }
    return modules.get(file);
  };
  const moduleFiles = [described.service?.data.hooks, ...described.resources.map((r) => r.data.hooks)]
    .filter((m): m is string => typeof m === 'string')
    .map((m) => path.resolve(described.dir, m));
  const cache = new ProblemCache(described.dir, moduleFiles);
  const out: Diagnostic[] = [];
  const serviceModule = described.service?.data.hooks;
  const check = (spec: SpecFile, ownModule: string | undefined, refs: readonly HookRef[]) => {
    for (const ref of refs) {
      // Paginators and authenticators the service file shares are exports of the service's module.
      const module = ref.module === 'service' ? serviceModule : ownModule;
      if (module === undefined) continue;
      const problem = cache.get(module, ref, () => {
        const hooks = moduleAt(module);
        if (!hooks) return null;
        const declarations = hooks.exports.get(ref.name);
        return (declarations ? callProblem(ref, module, declarations) : notExported(ref, module, hooks)) ?? null;
      });
      if (problem) out.push(diagnosticAt(spec, ref.source.path, problem, ref.key));
    }
  };
  if (described.service) check(described.service.spec, serviceModule, described.service.hooks);
  for (const res of described.resources) check(res.spec, res.data.hooks, res.hooks);
  cache.save();
  return out;
}

const CACHE_DIR = path.join(PACKAGE_ROOT, 'node_modules', '.cache', 'svcgen-hooks');

/**
 * What each hook reference got (a problem, or null), for one state of the TypeScript files under
 * the specs folder: keyed by their paths and contents and ts-morph's version, one JSON file per state.
 */
class ProblemCache {
  private readonly file: string;
  private readonly entries: Record<string, string | null>;
  private changed = false;

  /** `modules`: the hooks modules the specs name, which may lie outside the specs folder. */
  constructor(specsDir: string, modules: readonly string[]) {
    const hash = crypto.createHash('sha256');
    hash.update(JSON.parse(fs.readFileSync(require.resolve('ts-morph/package.json'), 'utf8')).version);
    for (const file of [...new Set([...typeScriptFiles(specsDir), ...modules.map((m) => path.resolve(m))])]) {
      hash.update('\0').update(path.relative(specsDir, file)).update('\0');
      // A missing module is a state too (validation reports it).
      hash.update(fs.existsSync(file) ? fs.readFileSync(file) : '\0missing');
    }
    this.file = path.join(CACHE_DIR, `${hash.digest('hex')}.json`);
    try {
      this.entries = JSON.parse(fs.readFileSync(this.file, 'utf8')) as Record<string, string | null>;
    } catch {
      this.entries = {};
    }
  }

  get(module: string, ref: HookRef, compute: () => string | null): string | null {
    const key = `${module}\0${ref.name}\0${ref.role}`;
    if (!(key in this.entries)) {
      this.entries[key] = compute();
      this.changed = true;
    }
    return this.entries[key];
  }

  save(): void {
    if (!this.changed) return;
    try {
      fs.mkdirSync(CACHE_DIR, { recursive: true });
      fs.writeFileSync(this.file, JSON.stringify(this.entries));
    } catch {
      // A read-only install still works, only slower.
    }
  }
}

/** The TypeScript files under `dir`, sorted (node_modules and dot folders aside). */
function typeScriptFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (e.name.startsWith('.') || e.name === 'node_modules') continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...typeScriptFiles(p));
    else if (/\.(c|m)?tsx?$/.test(e.name)) out.push(p);
  }
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
  const takes =
    min > call.args ? `requires ${count(min, 'parameter')}` : max === 0 ? 'takes no parameter' : `takes ${count(max, 'parameter')}`;
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
    const node =
      decl && 'isRestParameter' in decl
        ? (decl as unknown as { isRestParameter(): boolean; isOptional(): boolean; hasInitializer(): boolean })
        : undefined;
    if (node?.isRestParameter()) return [min, Infinity];
    max++;
    if (!(node?.isOptional() || node?.hasInitializer())) min = max;
  }
  return [min, max];
}
