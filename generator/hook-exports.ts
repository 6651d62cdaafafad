/**
 * Every hook a spec names must be exported by its hooks module. Checked with ts-morph (the
 * TypeScript compiler's view of the module, re-exports included) and reported at the spec position
 * that names the hook.
 */
import * as path from 'node:path';
import { Project } from 'ts-morph';
import { BUILTIN_AUTHENTICATORS, BUILTIN_EXCEPTIONS, BUILTIN_PAGINATORS } from './build-model';
import type { Diagnostic } from './diagnostics';
import { diagnosticAt, type LoadedSpecs, type SpecFile, type YamlPath } from './load';

const BUILTIN_EXCEPTION_NAMES = new Set(BUILTIN_EXCEPTIONS);

type Raw = Record<string, any>;

interface HookRef {
  name: string;
  at: YamlPath;
  /** Point at the map key rather than the value (for names written as keys). */
  key?: boolean;
}

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const isName = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

function authRefs(value: unknown, at: YamlPath): HookRef[] {
  return asList(value).flatMap((a, i) => (isName(a) && !BUILTIN_AUTHENTICATORS.includes(a) ? [{ name: a, at: [...at, i] }] : []));
}

function decoratorRefs(value: unknown, at: YamlPath): HookRef[] {
  return asList(value).flatMap((d, i) => (isName(d) ? [{ name: d, at: [...at, i] }] : []));
}

function endpointRefs(list: unknown, at: YamlPath): HookRef[] {
  return asList(list).flatMap((e, i) => {
    const ep = (e ?? {}) as Raw;
    const paginator = typeof ep.paginate === 'string' ? ep.paginate : ep.paginate?.class;
    const paginatorAt = typeof ep.paginate === 'string' ? [...at, i, 'paginate'] : [...at, i, 'paginate', 'class'];
    return [
      ...(isName(paginator) && !BUILTIN_PAGINATORS.includes(paginator) ? [{ name: paginator, at: paginatorAt }] : []),
      ...(isName(ep.handler) ? [{ name: ep.handler, at: [...at, i, 'handler'] }] : []),
      ...authRefs(ep.auth, [...at, i, 'auth']),
      ...decoratorRefs(ep.decorators, [...at, i, 'decorators']),
    ];
  });
}

/** The hook names a resource file uses, with their positions. */
function resourceRefs(data: Raw): HookRef[] {
  const v: Raw = data.viewset ?? {};
  const refs: HookRef[] = [];
  const one = (value: unknown, at: YamlPath) => {
    if (isName(value)) refs.push({ name: value, at });
  };
  one(v.query_params_handler, ['viewset', 'query_params_handler']);
  one(v.queryset_request, ['viewset', 'queryset_request']);
  for (const [k, h] of Object.entries((v.lifecycle ?? {}) as Raw)) one(h, ['viewset', 'lifecycle', k]);
  for (const [k, h] of Object.entries((v.overrides ?? {}) as Raw)) one(h, ['viewset', 'overrides', k]);
  for (const [k, list] of Object.entries((v.extra_decorators ?? {}) as Raw)) refs.push(...decoratorRefs(list, ['viewset', 'extra_decorators', k]));
  for (const key of ['auth', 'get_auth', 'post_auth', 'patch_auth', 'delete_auth', 'm2m_auth']) refs.push(...authRefs(v[key], ['viewset', key]));
  const pagination = typeof v.pagination_class === 'string' ? v.pagination_class : v.pagination_class?.class;
  if (isName(pagination) && !BUILTIN_PAGINATORS.includes(pagination)) {
    refs.push({ name: pagination, at: typeof v.pagination_class === 'string' ? ['viewset', 'pagination_class'] : ['viewset', 'pagination_class', 'class'] });
  }
  for (const [name, a] of Object.entries((v.actions ?? {}) as Raw)) {
    one(a?.handler, ['viewset', 'actions', name, 'handler']);
    refs.push(...authRefs(a?.auth, ['viewset', 'actions', name, 'auth']), ...decoratorRefs(a?.decorators, ['viewset', 'actions', name, 'decorators']));
  }
  asList(v.m2m_relations).forEach((rel, i) => {
    const r = (rel ?? {}) as Raw;
    const at = ['viewset', 'm2m_relations', i];
    one(r.query_handler, [...at, 'query_handler']);
    one(r.query_params_handler, [...at, 'query_params_handler']);
    for (const key of ['auth', 'get_auth', 'post_auth']) refs.push(...authRefs(r[key], [...at, key]));
    refs.push(...decoratorRefs(r.get_decorators, [...at, 'get_decorators']), ...decoratorRefs(r.post_decorators, [...at, 'post_decorators']));
  });
  refs.push(...endpointRefs(v.endpoints, ['viewset', 'endpoints']));
  return refs;
}

function serviceRefs(data: Raw): HookRef[] {
  const refs = endpointRefs(data.endpoints, ['endpoints']);
  if (isName(data.views)) refs.push({ name: data.views, at: ['views'] });
  for (const [exception, handler] of Object.entries((data.exception_handlers ?? {}) as Raw)) {
    if (!BUILTIN_EXCEPTION_NAMES.has(exception)) refs.push({ name: exception, at: ['exception_handlers', exception], key: true });
    if (isName(handler)) refs.push({ name: handler, at: ['exception_handlers', exception] });
  }
  for (const [i, p] of asList(data.paginators).entries()) if (isName(p)) refs.push({ name: p, at: ['paginators', i] });
  for (const [i, a] of asList(data.auth?.authenticators).entries()) if (isName(a)) refs.push({ name: a, at: ['auth', 'authenticators', i] });
  return refs;
}

/**
 * Diagnostics for hook names their module does not export. Files whose hooks module is missing are
 * skipped here (validation already reports the missing module).
 */
export function checkHookExports(loaded: LoadedSpecs): Diagnostic[] {
  // Only the hooks modules themselves are read: resolving their imports (runtime, knex, ...) would cost seconds.
  const project = new Project({
    skipAddingFilesFromTsConfig: true,
    skipFileDependencyResolution: true,
    compilerOptions: { noEmit: true, noResolve: true, types: [] },
  });
  const exportsCache = new Map<string, Set<string> | undefined>();
  const exportsOf = (module: string): Set<string> | undefined => {
    const file = path.resolve(loaded.dir, module);
    if (!exportsCache.has(file)) {
      const source = project.addSourceFileAtPathIfExists(file);
      exportsCache.set(file, source ? new Set(source.getExportedDeclarations().keys()) : undefined);
    }
    return exportsCache.get(file);
  };
  const out: Diagnostic[] = [];
  const serviceData = (loaded.service?.data ?? {}) as Raw;
  const shared = new Set([...asList(serviceData.paginators), ...asList(serviceData.auth?.authenticators)].filter(isName));
  const check = (spec: SpecFile, refs: HookRef[]) => {
    const own = (spec.data as Raw)?.hooks;
    for (const ref of refs) {
      // Paginators and authenticators the service file shares are exports of the service's module.
      const module = shared.has(ref.name) && spec !== loaded.service ? serviceData.hooks : own;
      if (!isName(module)) continue;
      const names = exportsOf(module);
      if (names && !names.has(ref.name)) {
        out.push(diagnosticAt(spec, ref.at, `hook "${ref.name}" is not exported by ${module}: export it from that module or fix the name`, ref.key));
      }
    }
  };
  if (loaded.service?.data) check(loaded.service, serviceRefs(serviceData));
  for (const spec of loaded.resources) if (spec.data) check(spec, resourceRefs(spec.data as Raw));
  return out;
}
