/**
 * The access matrix: for every operation the service serves, what each kind of caller gets from the
 * rules the specs declare (authenticators, `permission_roles`, `hard_delete_roles`), and which hooks
 * decide after them. Derived from the model alone, so that a spec change shows what it does to access
 * before anything runs. `build` commits it (access.json, access.md); gate.ts compares it with the
 * committed one.
 *
 * A cell is `401` (refused: no credentials the operation accepts), `403` (refused: authenticated
 * but not allowed), `hooks` (the declared rules let the caller through; hooks named in the row, such
 * as a decorator, an object-permission check, an override or the action's handler, decide) or `2xx`
 * (nothing declared refuses it).
 */
import type { AuthSpec, Resource, ServiceModel, SourceRef } from '../model/model';

export type Access = '401' | '403' | 'hooks' | '2xx';

/** How open a cell is: refused, decided by hooks, open. A change that raises it widens access. */
export const OPENNESS: Record<Access, number> = { '401': 0, '403': 0, hooks: 1, '2xx': 2 };

/** A kind of caller: who it is, as the runtime sees the user. */
export interface Caller {
  /** Column name: `anonymous`, `authenticated`, `role:<name>`, `staff`, `superuser`. */
  name: string;
  /** Whether a token of an active user is sent. */
  user: boolean;
  staff: boolean;
  superuser: boolean;
  roles: string[];
}

export interface AccessRow {
  operationId: string;
  /** `METHOD /path`, the path as OpenAPI writes it. */
  route: string;
  access: Record<string, Access>;
  /** Why, per caller: the rules that decide, in the order they run. */
  rules: Record<string, string[]>;
  /** The hooks that decide after the declared rules. */
  hooks: string[];
  /** The operation's authenticators (`null`: public). */
  auth: AuthSpec;
  /** Where the rules of the row are written, the most specific first (a widening is reported at the first that exists). */
  sources: SourceRef[];
}

export interface AccessMatrix {
  callers: Caller[];
  rows: AccessRow[];
}

/** What the declared rules of one operation are. */
interface Rules {
  operationId: string;
  method: string;
  path: string;
  auth: AuthSpec;
  /** Where the authenticators come from, for explanations: `viewset.patch_auth`. */
  authFrom: string;
  roles?: readonly string[];
  rolesFrom?: string;
  hooks: string[];
  sources: SourceRef[];
}

const BUILTIN_AUTH = new Set(['JWTAuth', 'AdminAuth', 'SuperuserAuth']);

/** The caller kinds: anonymous, a plain authenticated user, one per role the specs name, staff, superuser. */
function callersOf(roleNames: string[]): Caller[] {
  return [
    { name: 'anonymous', user: false, staff: false, superuser: false, roles: [] },
    { name: 'authenticated', user: true, staff: false, superuser: false, roles: [] },
    ...roleNames.map((role) => ({ name: `role:${role}`, user: true, staff: false, superuser: false, roles: [role] })),
    { name: 'staff', user: true, staff: true, superuser: false, roles: [] },
    // As Django creates them: a superuser is staff too.
    { name: 'superuser', user: true, staff: true, superuser: true, roles: [] },
  ];
}

/** Whether a caller holds a role, as the runtime's `hasRole` decides. */
function holds(caller: Caller, role: string): boolean {
  if (caller.superuser) return true;
  if (role === 'staff') return caller.staff;
  if (role === 'superuser') return false;
  return caller.roles.includes(role);
}

/** What one caller gets from one operation's rules, and why. */
function decide(rules: Rules, caller: Caller): { access: Access; why: string[] } {
  const why: string[] = [];
  if (rules.auth === null) {
    why.push(`${rules.authFrom} is public (null): no token needed`);
  } else if (!caller.user) {
    why.push(`${rules.authFrom} [${rules.auth.join(', ')}] needs credentials, and the caller sends none: 401`);
    return { access: '401', why };
  } else {
    // The authenticators are tried in order; the first that accepts the caller wins.
    const custom = rules.auth.filter((a) => !BUILTIN_AUTH.has(a));
    const accepts = rules.auth.find(
      (a) => a === 'JWTAuth' || (a === 'AdminAuth' && caller.staff) || (a === 'SuperuserAuth' && caller.superuser),
    );
    if (accepts) why.push(`${rules.authFrom} [${rules.auth.join(', ')}]: ${accepts} accepts the caller's token`);
    else if (custom.length) {
      why.push(
        `${rules.authFrom} [${rules.auth.join(', ')}]: the custom authenticator${custom.length > 1 ? 's' : ''} ${custom.join(', ')} decide${custom.length > 1 ? '' : 's'}`,
      );
      return { access: 'hooks', why };
    } else {
      const refusal = rules.auth.includes('AdminAuth')
        ? 'AdminAuth refuses a user who is not staff'
        : 'SuperuserAuth refuses a user who is not a superuser';
      why.push(`${rules.authFrom} [${rules.auth.join(', ')}]: ${refusal}: 403`);
      return { access: '403', why };
    }
  }
  if (rules.roles?.length) {
    const roles = rules.roles.join(', ');
    if (!caller.user) {
      why.push(`${rules.rolesFrom} [${roles}] needs an authenticated caller: 401`);
      return { access: '401', why };
    }
    const held = rules.roles.find((r) => holds(caller, r));
    if (!held) {
      why.push(`${rules.rolesFrom} [${roles}]: the caller holds none of them: 403`);
      return { access: '403', why };
    }
    why.push(`${rules.rolesFrom} [${roles}]: the caller holds ${held}${caller.superuser ? ' (a superuser holds every role)' : ''}`);
  }
  if (rules.hooks.length) {
    why.push(
      rules.hooks.length === 1
        ? `then the hook ${rules.hooks[0]} decides`
        : `then the hooks ${rules.hooks.join(', ')} decide, in that order`,
    );
    return { access: 'hooks', why };
  }
  why.push('no hook decides: the operation answers');
  return { access: '2xx', why };
}

/** The decorators named, without the nulls that drop inherited ones. */
const named = (decorators: readonly (string | null)[]) => decorators.filter((d): d is string => d !== null);

/** The rules of every operation of a resource, in the order its routes are registered. */
function resourceRules(r: Resource, base: string): Rules[] {
  const out: Rules[] = [];
  const at = (...path: (string | number)[]): SourceRef => ({ file: r.specFile, path: ['viewset', ...path] });
  const item = `${base}/${r.base}/{pk}/`;
  const authKey = { create: 'post_auth', list: 'get_auth', retrieve: 'get_auth', update: 'patch_auth', delete: 'delete_auth' } as const;
  const objectPermission = r.objectPermission ? [r.objectPermission] : [];
  for (const o of r.operations) {
    const detail = o.kind === 'retrieve' || o.kind === 'update' || o.kind === 'delete';
    out.push({
      operationId: o.operationId,
      method: o.method,
      path: o.pathKind === 'collection' ? `${base}/${r.base}/` : item,
      auth: o.auth,
      authFrom: `viewset.${authKey[o.kind]} (or viewset.auth)`,
      roles: o.roles,
      rolesFrom: `viewset.permission_roles.${o.kind}`,
      hooks: [...named(o.decorators), ...(detail ? objectPermission : []), ...(o.override ? [o.override] : [])],
      sources: [at('permission_roles', o.kind), at(authKey[o.kind]), at('auth'), at()],
    });
  }
  if (r.softDelete) {
    const d = r.operations.find((o) => o.kind === 'delete');
    const restore = r.softDelete.restore;
    out.push({
      operationId: restore.operationId,
      method: 'post',
      path: `${item}restore/`,
      auth: restore.auth,
      authFrom: 'viewset.delete_auth (or viewset.auth)',
      roles: restore.roles,
      rolesFrom: 'viewset.permission_roles.delete',
      hooks: [...(d ? named(d.decorators) : []), ...objectPermission],
      sources: [at('permission_roles', 'delete'), at('delete_auth'), at('soft_delete'), at('auth'), at()],
    });
    const hard = r.softDelete.hardDelete;
    if (hard) {
      out.push({
        operationId: hard.operationId,
        method: 'delete',
        path: `${item}hard/`,
        auth: hard.auth,
        authFrom: 'viewset.delete_auth (or viewset.auth)',
        roles: hard.roles,
        rolesFrom: 'viewset.soft_delete.hard_delete_roles',
        hooks: objectPermission,
        sources: [at('soft_delete', 'hard_delete_roles'), at('delete_auth'), at('auth'), at()],
      });
    }
  }
  for (const b of r.bulk) {
    const o = b.operation;
    out.push({
      operationId: b.operationId,
      method: b.method,
      path: `${base}/${r.base}/bulk/`,
      auth: o.auth,
      authFrom: `viewset.${authKey[o.kind]} (or viewset.auth)`,
      roles: o.roles,
      rolesFrom: `viewset.permission_roles.${o.kind}`,
      hooks: [...(o.kind !== 'create' ? objectPermission : []), ...(o.override ? [o.override] : [])],
      sources: [at('bulk'), at('permission_roles', o.kind), at(authKey[o.kind]), at('auth'), at()],
    });
  }
  for (const a of r.actions) {
    for (const route of a.routes) {
      out.push({
        operationId: route.operationId,
        method: route.method,
        path: a.detail ? `${item}${a.name}/` : `${base}/${r.base}/${a.name}/`,
        auth: a.auth,
        authFrom: `viewset.actions.${a.name}.auth (or viewset.auth)`,
        hooks: [...named(a.decorators), ...(a.detail ? objectPermission : []), a.handler],
        sources: [at('actions', a.name, 'auth'), at('actions', a.name), at('auth'), at()],
      });
    }
  }
  r.relations.forEach((rel, i) => {
    const from = `viewset.m2m_relations[${i}]`;
    if (rel.get) {
      out.push({
        operationId: rel.getOperationId,
        method: 'get',
        path: `${item}${rel.path}${rel.appendSlash ? '/' : ''}`,
        auth: rel.getAuth,
        authFrom: `${from}.get_auth (or its auth, viewset.m2m_auth, viewset.auth)`,
        hooks: named(rel.getDecorators),
        sources: [at('m2m_relations', i, 'get_auth'), at('m2m_relations', i, 'auth'), at('m2m_auth'), at('m2m_relations', i), at()],
      });
    }
    if (rel.add || rel.remove) {
      out.push({
        operationId: rel.manageOperationId,
        method: 'post',
        path: `${item}${rel.path}/`,
        auth: rel.postAuth,
        authFrom: `${from}.post_auth (or its auth, viewset.m2m_auth, viewset.auth)`,
        hooks: named(rel.postDecorators),
        sources: [at('m2m_relations', i, 'post_auth'), at('m2m_relations', i, 'auth'), at('m2m_auth'), at('m2m_relations', i), at()],
      });
    }
  });
  r.endpoints.forEach((e, i) => {
    out.push({
      operationId: e.operationId,
      method: e.method,
      path: base + e.path.replace(/:(\w+)/g, '{$1}'),
      auth: e.auth,
      authFrom: `viewset.endpoints[${i}].auth`,
      hooks: [...named(e.decorators), e.handler],
      sources: [at('endpoints', i, 'auth'), at('endpoints', i)],
    });
  });
  return out;
}

/** The roles the rules name, other than staff and superuser (which have columns of their own), sorted. */
function roleNames(rules: Rules[]): string[] {
  const roles = new Set(rules.flatMap((r) => r.roles ?? []));
  roles.delete('staff');
  roles.delete('superuser');
  return [...roles].sort();
}

export function accessMatrix(model: ServiceModel, serviceFile: string): AccessMatrix {
  const base = model.basePath.replace(/\/+$/, '');
  const rules: Rules[] = [
    ...model.endpoints.map((e, i) => ({
      operationId: e.operationId,
      method: e.method,
      path: base + e.path.replace(/:(\w+)/g, '{$1}'),
      auth: e.auth,
      authFrom: `endpoints[${i}].auth`,
      hooks: [...named(e.decorators), e.handler],
      sources: [
        { file: serviceFile, path: ['endpoints', i, 'auth'] },
        { file: serviceFile, path: ['endpoints', i] },
      ],
    })),
    ...model.resources.flatMap((r) => resourceRules(r, base)),
  ];
  const callers = callersOf(roleNames(rules));
  const rows = rules.map((rule) => {
    const access: Record<string, Access> = {};
    const why: Record<string, string[]> = {};
    for (const caller of callers) {
      const decided = decide(rule, caller);
      access[caller.name] = decided.access;
      why[caller.name] = decided.why;
    }
    return {
      operationId: rule.operationId,
      route: `${rule.method.replace(/^api_/, '').toUpperCase()} ${rule.path}`,
      access,
      rules: why,
      hooks: rule.hooks,
      auth: rule.auth,
      sources: rule.sources,
    };
  });
  return { callers, rows };
}

/**
 * What the generated access test asserts of one cell (see `@svcgen/runtime/access-test`): a refusal
 * exactly; a `2xx` as neither 401 nor 403 (the test sends an empty body, so a 422 or 404 counts as
 * let through); a `hooks` cell as not 401 when the caller's token is accepted by a built-in
 * authenticator of the operation (or the operation is public: a valid token is still read), since
 * a valid token is never "no credentials", and not at all otherwise: only the hooks know.
 */
export type AccessCheck = '401' | '403' | 'allowed' | 'authenticated' | 'unchecked';

export function accessCheck(row: AccessRow, caller: Caller): AccessCheck {
  const cell = row.access[caller.name];
  if (cell === '401' || cell === '403') return cell;
  if (cell === '2xx') return 'allowed';
  if (!caller.user) return 'unchecked';
  const builtIn =
    row.auth === null ||
    row.auth.some((a) => a === 'JWTAuth' || (a === 'AdminAuth' && caller.staff) || (a === 'SuperuserAuth' && caller.superuser));
  return builtIn ? 'authenticated' : 'unchecked';
}
