/**
 * Every place a spec names a hook, collected in one walk per file, with its position and the module
 * that must export it. The semantic checks (a hook named in a file without a hooks module, a hook its
 * module does not export) and the model read this one list.
 */
import {
  BUILTIN_AUTHENTICATORS,
  BUILTIN_EXCEPTIONS,
  BUILTIN_PAGINATORS,
  isBuiltinAuthenticator,
  isBuiltinException,
  isBuiltinPaginator,
} from '@svcgen/runtime/catalogue';
import type { ResourceSpec, ServiceSpec } from './meta-schema';
import type { SourceRef, SpecFile } from '../load/load';

/** What a hook is used as; built-in names (runtime authenticators, paginators, exceptions) are never hooks. */
export type HookRole = 'handler' | 'authenticator' | 'paginator' | 'decorator' | 'exception' | 'exception_handler' | 'views';

/** The built-ins a spec may name in place of a hook of each role (none for the other roles). */
export const BUILTINS_BY_ROLE: Partial<Record<HookRole, { what: string; names: readonly string[] }>> = {
  authenticator: { what: 'authenticator', names: BUILTIN_AUTHENTICATORS },
  paginator: { what: 'paginator', names: BUILTIN_PAGINATORS },
  exception: { what: 'exception class', names: BUILTIN_EXCEPTIONS },
};

/**
 * The arguments a hook that is a function receives, by role: what its export must accept. Handlers
 * are called by generated code (`hooks.x(ctx)`), so they must take exactly that call; the others are
 * passed to the runtime as values, where a function may ignore trailing arguments but must not require
 * more. Authenticators, paginators and exception classes are objects and classes, not calls.
 */
export const HOOK_CALLS: Partial<Record<HookRole, { args: number; what: string; passed: 'call' | 'value' }>> = {
  handler: { args: 1, what: 'the request context and its values', passed: 'call' },
  decorator: { args: 1, what: 'the view it wraps', passed: 'value' },
  exception_handler: { args: 2, what: 'the request and the error', passed: 'value' },
  views: { args: 1, what: "the API's Express router", passed: 'value' },
};

export interface HookRef {
  name: string;
  role: HookRole;
  source: SourceRef;
  /** The name is written as a map key (exception classes in `exception_handlers`). */
  key?: boolean;
  /**
   * `own`: an export of the file's own hooks module; `service`: an export of the service file's hooks
   * module, shared with every resource (paginators and authenticators the service file declares).
   */
  module: 'own' | 'service';
}

/** A resource file that passed the meta-schema, with the hooks it names. */
export interface HookedResource {
  spec: SpecFile;
  data: ResourceSpec;
  hooks: HookRef[];
}

/**
 * The specs that passed the meta-schema (in the specs folder `dir`), with the hooks each names: what
 * the checks of the hooks modules read. The model stage adds each resource's names (DescribedSpecs).
 */
export interface HookedSpecs {
  dir: string;
  service?: { spec: SpecFile; data: ServiceSpec; hooks: HookRef[] };
  resources: HookedResource[];
}

/** Paginators and authenticators the service file declares for every resource. */
export function sharedHookNames(service: ServiceSpec | undefined): Set<string> {
  return new Set([...(service?.paginators ?? []), ...(service?.auth?.authenticators ?? [])]);
}

type AuthList = readonly string[] | null | 'NOT_SET' | undefined;
type Decorators = readonly (string | null)[] | undefined;
type Paginator = string | { class: string } | null | undefined;
interface EndpointSpec {
  handler: string;
  /** An account endpoint (the service file's `account:` entries): the runtime handles it. */
  account?: string;
  auth?: AuthList;
  decorators?: Decorators;
  paginate?: Paginator;
}

class Collector {
  readonly refs: HookRef[] = [];

  constructor(
    private readonly file: string,
    private readonly shared: ReadonlySet<string>,
    private readonly inService: boolean,
  ) {}

  private add(name: string, role: HookRole, path: (string | number)[], key = false): void {
    const module = !this.inService && this.shared.has(name) && (role === 'authenticator' || role === 'paginator') ? 'service' : 'own';
    this.refs.push({ name, role, source: { file: this.file, path }, module, ...(key ? { key } : {}) });
  }

  handler(name: string | undefined, path: (string | number)[], role: 'handler' | 'exception_handler' | 'views' = 'handler'): void {
    if (name) this.add(name, role, path);
  }

  auth(list: AuthList, path: (string | number)[]): void {
    if (!Array.isArray(list)) return;
    list.forEach((name, i) => isBuiltinAuthenticator(name) || this.add(name, 'authenticator', [...path, i]));
  }

  decorators(list: Decorators, path: (string | number)[]): void {
    list?.forEach((name, i) => name !== null && this.add(name, 'decorator', [...path, i]));
  }

  paginator(value: Paginator, path: (string | number)[]): void {
    if (value === null || value === undefined) return;
    const [name, at] = typeof value === 'string' ? [value, path] : [value.class, [...path, 'class']];
    if (!isBuiltinPaginator(name)) this.add(name, 'paginator', at);
  }

  exception(name: string, path: (string | number)[]): void {
    if (!isBuiltinException(name)) this.add(name, 'exception', path, true);
  }

  endpoints(list: readonly EndpointSpec[] | undefined, path: (string | number)[]): void {
    list?.forEach((e, i) => {
      this.paginator(e.paginate, [...path, i, 'paginate']);
      // An account endpoint's handler is the runtime's: its `handler` names the operation only.
      if (e.account === undefined) this.handler(e.handler, [...path, i, 'handler']);
      this.auth(e.auth, [...path, i, 'auth']);
      this.decorators(e.decorators, [...path, i, 'decorators']);
    });
  }
}

const AUTH_KEYS = ['auth', 'get_auth', 'post_auth', 'patch_auth', 'delete_auth', 'm2m_auth'] as const;

/** The hooks a resource file names, in the order they are written. */
export function resourceHookRefs(file: string, spec: ResourceSpec, shared: ReadonlySet<string>): HookRef[] {
  const c = new Collector(file, shared, false);
  const v = spec.viewset ?? {};
  for (const section of ['ReadSerializer', 'DetailSerializer'] as const) {
    (spec.serializer?.[section]?.customs ?? []).forEach(([, , hook], i) => c.handler(hook, ['serializer', section, 'customs', i, 2]));
  }
  c.handler(v.query_params_handler, ['viewset', 'query_params_handler']);
  c.handler(v.queryset_request, ['viewset', 'queryset_request']);
  c.handler(v.normalize_input, ['viewset', 'normalize_input']);
  c.handler(v.queryset_write, ['viewset', 'queryset_write']);
  c.handler(v.has_object_permission, ['viewset', 'has_object_permission']);
  c.paginator(v.pagination_class, ['viewset', 'pagination_class']);
  for (const key of AUTH_KEYS) c.auth(v[key], ['viewset', key]);
  for (const [op, name] of Object.entries(v.overrides ?? {})) c.handler(name, ['viewset', 'overrides', op]);
  for (const [event, name] of Object.entries(v.lifecycle ?? {})) c.handler(name, ['viewset', 'lifecycle', event]);
  for (const [op, list] of Object.entries(v.extra_decorators ?? {})) c.decorators(list, ['viewset', 'extra_decorators', op]);
  (v.m2m_relations ?? []).forEach((rel, i) => {
    const at = ['viewset', 'm2m_relations', i];
    c.handler(rel.query_handler, [...at, 'query_handler']);
    c.handler(rel.query_params_handler, [...at, 'query_params_handler']);
    for (const key of ['auth', 'get_auth', 'post_auth'] as const) c.auth(rel[key], [...at, key]);
    c.decorators(rel.get_decorators, [...at, 'get_decorators']);
    c.decorators(rel.post_decorators, [...at, 'post_decorators']);
  });
  for (const [name, action] of Object.entries(v.actions ?? {})) {
    const at = ['viewset', 'actions', name];
    c.paginator(action.paginate, [...at, 'paginate']);
    c.handler(action.handler, [...at, 'handler']);
    c.auth(action.auth, [...at, 'auth']);
    c.decorators(action.decorators, [...at, 'decorators']);
  }
  c.endpoints(v.endpoints, ['viewset', 'endpoints']);
  return c.refs;
}

/** The hooks the service file names, in the order they are written. */
export function serviceHookRefs(file: string, spec: ServiceSpec): HookRef[] {
  const c = new Collector(file, new Set(), true);
  c.endpoints(spec.endpoints, ['endpoints']);
  for (const [exception, handler] of Object.entries(spec.exception_handlers ?? {})) {
    c.exception(exception, ['exception_handlers', exception]);
    c.handler(handler, ['exception_handlers', exception], 'exception_handler');
  }
  (spec.paginators ?? []).forEach((name, i) => c.paginator(name, ['paginators', i]));
  c.auth(spec.auth?.authenticators, ['auth', 'authenticators']);
  c.handler(spec.views, ['views'], 'views');
  return c.refs;
}
