/**
 * How generated code names user hooks. A file's own hooks are exports of its hook module
 * (`hooks.x`: a resource's module, or the service's for service-level files); the paginators and
 * authenticators the service file shares with every resource are exports of the service's module
 * (`serviceHooks.x` in resource files); built-in authenticators are runtime exports. Each reference
 * records its import.
 */
import { isBuiltinAuthenticator } from '@svcgen/runtime/catalogue';
import type { AuthSpec } from '../model/model';
import type { Imports } from './imports';

export interface HookScope {
  imports: Imports;
  /** Import specifier of the file's own hook module, when there is one. */
  own: string | undefined;
  /** Import specifier of the service's hook module, when there is one. */
  service: string | undefined;
  /** Names the service's hook module shares with every resource. */
  shared: ReadonlySet<string>;
}

/** The expression naming hook `name`. */
export function hookRef(name: string, scope: HookScope): string {
  const { imports, own, service } = scope;
  if (scope.shared.has(name) && service !== undefined && service !== own) return `${imports.namespace(service, 'serviceHooks')}.${name}`;
  if (own === undefined) throw new Error(`hook ${name} has no module to come from`);
  return `${imports.namespace(own, 'hooks')}.${name}`;
}

/** A call of hook `name` with the request context and its own arguments (`args`, an object literal). */
export function hookCall(name: string, args: string, scope: HookScope): string {
  return `${hookRef(name, scope)}(${scope.imports.runtime('withArgs')}(ctx, ${args}))`;
}

/** `null` (public) or the list of authenticators. */
export function authExpr(auth: AuthSpec, scope: HookScope): string {
  if (auth === null) return 'null';
  return `[${auth.map((a) => (isBuiltinAuthenticator(a) ? scope.imports.runtime(a) : hookRef(a, scope))).join(', ')}]`;
}

/** The decorators of a view, in order, null entries kept (decorate_view ignores them); undefined when there are none. */
export function decoratorsExpr(decorators: readonly (string | null)[], scope: HookScope): string | undefined {
  if (decorators.length === 0) return undefined;
  return decorators.map((d) => (d === null ? 'null' : hookRef(d, scope))).join(', ');
}
