/**
 * How generated code names user hooks. A resource's hooks are exports of its own module
 * (`hooks.x`); paginators and authenticators the service file declares for every resource are
 * exports of the service's module (`serviceHooks.x`); built-in authenticators are runtime names.
 */
import { isBuiltinAuthenticator } from '../../runtime/catalogue';

export interface HookScope {
  /** Names exported by the service hooks module and shared with every resource. */
  shared: ReadonlySet<string>;
  /** Whether code in this scope reaches shared names through `serviceHooks` (resource modules) or `hooks` (service modules). */
  sharedVia: 'serviceHooks' | 'hooks';
}

export function hookRef(name: string, scope: HookScope): string {
  return scope.shared.has(name) ? `${scope.sharedVia}.${name}` : `hooks.${name}`;
}

/** `null` (public) or the list of authenticators. */
export function authExpr(auth: readonly string[] | null, scope: HookScope): string {
  if (auth === null) return 'null';
  return `[${auth.map((a) => (isBuiltinAuthenticator(a) ? a : hookRef(a, scope))).join(', ')}]`;
}

/** A named view with its decorators (null entries kept: decorate_view ignores them). */
export function viewExpr(operationId: string, decorators: readonly (string | null)[], scope: HookScope): string {
  const list = decorators.map((d) => (d === null ? 'null' : hookRef(d, scope)));
  return `defineView('${operationId}'${list.length ? `, [${list.join(', ')}]` : ''})`;
}

/** Whether generated code in this scope refers to the service hooks module. */
export function usesServiceHooks(code: string): boolean {
  return /\bserviceHooks\./.test(code);
}
