/**
 * The view of one route as `templates/partials/route.hbs` prints it: the method, path,
 * authentication, roles and rate limits, the operation (its input schemas, transaction, status and
 * `handle`, whose body the partial named by `partial` prints), and what its OpenAPI entry adds to
 * them; the runtime's `operationRoute` builds the route and derives the rest of the entry.
 * A `RouteFile` holds what the routes of one file share: imports, hooks and constants.
 */
import type { AuthSpec, Pagination, RateLimit, SchemaModel } from '../model/model';
import { literal } from '../model/names';
import type { CrudOperation, GenericOperation } from '@svcgen/runtime/catalogue';
import { authExpr, decoratorsExpr, hookCall, hookRef, type HookScope } from './hooks';
import type { Imports } from './imports';

export interface ConstantView {
  name: string;
  type: string | undefined;
  value: string;
}

/** What documentation adds to the operation (code); the runtime's `operationRoute` derives the rest. */
export interface DocView {
  /** Code: one of the default behaviours' operations, whose summary and title the runtime derives. */
  kind: string | undefined;
  summary: string | undefined;
  description: string | undefined;
  tags: string | undefined;
  /** Error statuses the hook answers → the body it sends, as literal text. */
  errors: string | undefined;
  /** The documented path parameters or body when they are not the validated ones. */
  params: string | undefined;
  body: string | undefined;
  /** Code: the body of the success response, when it has one and the responses are the default ones. */
  response: string | undefined;
  responses: string | undefined;
}

export interface RouteView {
  /** Code: the function building the route (`route`, the resource's, or `operationRoute`) and its first arguments. */
  builder: string;
  /** One of a resource's five operations, which the runtime serves at its method and path, with its status and transaction. */
  crud: string | undefined;
  method: string;
  /** Code: the path as a string or template literal (none for the five operations). */
  path: string | undefined;
  auth: string;
  /** Code: the roles checked after authentication (`permission_roles`), when set. */
  roles: string | undefined;
  /** Code: the rate limits counted after the roles, when there are any. */
  throttles: string | undefined;
  /** Whether the route's row lookup checks `If-Match`, and whether the resource requires it. */
  ifMatch: 'optional' | 'required' | undefined;
  operationId: string;
  decorators: string | undefined;
  params: string | undefined;
  query: string | undefined;
  body: string | undefined;
  /** Code: `true`, or a function of the request deciding whether a missing body is read as `{}`. */
  optionalBody: string | undefined;
  normalize?: string;
  transaction: boolean;
  status: number;
  /** Code: where the operation's ETag comes from (`'body'`, or the written row's state), when it has one. */
  etag: string | undefined;
  /** Code: the parameters of `handle`. */
  input: string;
  /** The partial printing the body of `handle` (`operations/<kind>`), and what it prints. */
  partial: string;
  handle: object;
  doc: DocView;
  /** Whether `doc` has a member to print. */
  documented: boolean;
}

/** What a route builder says about its route; the rest is derived. */
export interface RouteSpec {
  /** One of a resource's five operations: the runtime derives its method, path, status, transaction and generic docs. */
  crud?: CrudOperation;
  method: string;
  /** Code: the path (none for the five operations). */
  path?: string;
  auth: AuthSpec;
  roles?: readonly string[];
  throttles?: readonly RateLimit[];
  ifMatch?: 'optional' | 'required';
  operationId: string;
  decorators: readonly (string | null)[];
  params?: string;
  /** Error statuses the hook answers, as `{ status: body }` literal text. */
  errors?: string;
  /** The documented path parameters when they are not validated (a custom endpoint's, passed on as strings). */
  docParams?: string;
  query?: string;
  body?: string;
  /** The documented body when it is not the validated one (a bulk route checks its items one by one). */
  docBody?: string;
  /** `true`, or code: a function of the raw request deciding it per request. */
  optionalBody?: boolean | string;
  /** Code: the function given the body as received, returning the body to validate (`normalize_input`). */
  normalize?: string;
  transaction: boolean;
  status: number;
  etag?: string;
  input: string;
  partial: string;
  handle: object;
  /** One of the default behaviours' operations: the runtime documents its summary and MCP title. */
  kind?: GenericOperation;
  /** The summary, when it is not the generic one of `kind`. */
  summary?: string;
  description?: string;
  /** Code: the tags, for a route outside a resource (a resource's routes have its tag). */
  tags?: string;
  /** Code: the body of the success response with the operation's status. */
  response?: string;
  /** Code: the success responses, when they are not just the operation's status with `response`. */
  responses?: string;
}

/** A documented response: `{ status, description, schema }`. */
export function response(status: number, description: string, schema?: string): string {
  return `{ status: ${status}, description: '${description}'${schema ? `, schema: ${schema}` : ''} }`;
}

/**
 * What the routes of one file share, each recorded when a route first uses it: the imports, the
 * hooks module(s) it calls and the constants declared before the routes.
 */
export class RouteFile {
  private readonly constants = new Map<string, ConstantView>();

  /**
   * `schemaModule`: where the schemas the routes name come from (a resource's `./schemas`), or
   * undefined when the file declares them itself.
   */
  constructor(
    readonly imports: Imports,
    readonly hooks: HookScope,
    private readonly schemaModule: string | undefined,
  ) {
    imports.runtimeType('Route');
    imports.runtimeType('ServiceContext');
  }

  /** A schema by name. */
  schema(name: string | SchemaModel): string {
    const n = typeof name === 'string' ? name : name.name;
    return this.schemaModule ? this.imports.value(this.schemaModule, n) : n;
  }

  /**
   * `const <name> = <value>`, declared once before the routes; `value` runs on each use and the first
   * declares it. Two uses of one name with different values are two declarations of that name (not
   * one shared by both): the generated-name check reports them at the spec position the name comes from.
   */
  constant(name: string, value: () => string, type?: string): string {
    const code = value();
    const same = [...this.constants.values()].filter((c) => c.name === name);
    if (!same.some((c) => c.value === code && c.type === type))
      this.constants.set(same.length ? `${name}\0${same.length + 1}` : name, { name, type, value: code });
    return name;
  }

  /** The constants in the order the routes first used them (each after those its value uses). */
  constantViews(): ConstantView[] {
    return [...this.constants.values()];
  }

  hookRef(name: string): string {
    return hookRef(name, this.hooks);
  }

  hookCall(name: string, args: string): string {
    return hookCall(name, args, this.hooks);
  }

  /** `new <Paginator>(options, settings)`: a built-in paginator or one the hooks export. */
  newPaginator(p: Pagination): string {
    const cls = p.builtin ? this.imports.runtime(p.class) : this.hookRef(p.class);
    const options = Object.fromEntries(Object.entries(p.options).filter(([, v]) => v !== undefined));
    return `new ${cls}(${literal(options)}, service.settings)`;
  }

  /** Code: the function building a route and its first arguments. */
  protected builder(): string {
    return `${this.imports.runtime('operationRoute')}(service, `;
  }

  route(spec: RouteSpec): RouteView {
    const throttles = spec.throttles ?? [];
    const doc: DocView = {
      kind: spec.kind && !spec.crud ? `'${spec.kind}'` : undefined,
      summary: spec.summary,
      description: spec.description,
      tags: spec.tags,
      errors: spec.errors,
      params: spec.docParams,
      body: spec.docBody,
      response: spec.response,
      responses: spec.responses,
    };
    return {
      builder: this.builder(),
      crud: spec.crud,
      method: spec.method,
      path: spec.path,
      auth: authExpr(spec.auth, this.hooks),
      roles: spec.roles ? `[${spec.roles.map((r) => `'${r}'`).join(', ')}]` : undefined,
      throttles: throttles.length ? `[${throttles.map((t) => literal(t)).join(', ')}]` : undefined,
      ifMatch: spec.ifMatch,
      operationId: spec.operationId,
      decorators: decoratorsExpr(spec.decorators, this.hooks),
      params: spec.params,
      query: spec.query,
      body: spec.body,
      optionalBody: spec.optionalBody === true ? 'true' : spec.optionalBody || undefined,
      normalize: spec.normalize,
      transaction: spec.transaction,
      status: spec.status,
      etag: spec.etag,
      input: spec.input,
      partial: spec.partial,
      handle: spec.handle,
      doc,
      documented: Object.values(doc).some((v) => v !== undefined),
    };
  }
}
