/**
 * Custom endpoints: the route of one endpoint (in a resource's routes.ts or the service's
 * endpoints.ts), and the view of `endpoints.ts`, the service's endpoints with their schemas.
 */
import type { Endpoint, Resource, SchemaModel, ServiceModel } from '../model/model';
import type { AccountKind } from '../validate/meta-schema';
import { camelCase, docLine, literal, str } from '../model/names';
import { header, hookModuleFrom, runtimeFrom, type RenderContext } from './context';
import { Imports } from './imports';
import { RouteFile, type RouteView } from './route';
import { objectSchemaView, type ObjectSchemaView } from './schemas';

/**
 * An endpoint's hook receives the validated body (with a request schema), the path parameters and
 * the query string as received, and with `paginate` the validated page parameters; it returns the
 * whole list, which the paginator pages. The page parameters are the operation's query schema, so
 * they are validated with the body before the decorators run.
 */
export function endpointRoute(e: Endpoint, file: RouteFile, accounts?: string, cookies = false): RouteView {
  const { imports } = file;
  const paginator = e.paginate ? file.constant(`${camelCase(e.handler)}Paginator`, () => file.newPaginator(e.paginate!)) : undefined;
  const request = e.request ? file.schema(e.request) : undefined;
  const args = [...(request ? ['body'] : []), 'params', ...(paginator ? ['query: ctx.req.query', 'pagination'] : ['query'])];
  const item = e.response ? file.schema(e.response) : undefined;
  const pathParams = [...e.path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]);
  const z = pathParams.length ? imports.runtime('z') : '';
  return file.route({
    method: e.method,
    path: `'${e.path}'`,
    auth: e.auth,
    operationId: e.operationId,
    decorators: e.decorators,
    query: paginator ? `${paginator}.querySchema` : undefined,
    body: request,
    // With cookies, a refresh or logout without a body uses the refresh cookie (a page's bodiless fetch).
    optionalBody: cookies && (e.account === 'refresh' || e.account === 'logout') ? `${accounts!}.refreshCookieSent` : undefined,
    // The hook receives path parameters as strings; the document names them.
    docParams: pathParams.length ? `${z}.object({ ${pathParams.map((p) => `${p}: ${z}.string()`).join(', ')} })` : undefined,
    transaction: e.transaction,
    status: e.status,
    input: `{ ${['params', paginator ? 'query: pagination' : 'query', ...(request ? ['body'] : [])].join(', ')} }, ctx`,
    partial: 'operations/endpoint',
    handle: {
      call: e.account
        ? `${accounts!}.${ACCOUNT_HANDLER[e.account]}(${imports.runtime('withArgs')}(ctx, { ${args.join(', ')} }))`
        : file.hookCall(e.handler, `{ ${args.join(', ')} }`),
      pagination: paginator
        ? {
            page: `${imports.runtime('paginate')}(${paginator}, ${imports.runtime('listSource')}(result), pagination, ctx.req)`,
          }
        : undefined,
    },
    summary: str(docLine(e.summary ?? e.handler)),
    description: e.description ? str(e.description) : undefined,
    tags: e.tags.map((t) => str(t)).join(', '),
    errors: Object.keys(e.errors).length ? literal(e.errors) : undefined,
    response: item && paginator ? `${paginator}.responseSchema(${item})` : item,
  });
}

/** The runtime's handler of each account endpoint (runtime/operations/accounts.ts). */
const ACCOUNT_HANDLER: Record<AccountKind, string> = {
  register: 'register',
  login: 'login',
  refresh: 'refresh',
  logout: 'logout',
  logout_all: 'logoutAll',
  me: 'me',
  password: 'changePassword',
};

/** The fields a registration sets whatever it is sent: an active account, with no role. */
const NEW_ACCOUNT: Record<string, boolean> = { is_active: true, is_staff: false, is_superuser: false };

/** Of the user model's username and email, those unique without case (`ignore_case`), when any is. */
function ignoreCaseOf(user: Resource): { ignoreCase?: string[] } {
  const names = ['username', 'email'].filter((name) => user.fields.find((f) => f.name === name)?.ignoreCase);
  return names.length ? { ignoreCase: names } : {};
}

/** The `accountHandlers(...)` of the user model: its table, its username's length, the profile fields. */
function accountHandlersExpr(model: ServiceModel, imports: Imports): string {
  const user = model.resources.find((r) => r.model === model.auth.userModel)!;
  const column = (name: string) => user.fields.find((f) => f.name === name)?.column ?? name;
  const table = {
    table: user.table,
    pk: user.pk.column,
    usernameMaxLength: user.fields.find((f) => f.name === 'username')?.maxLength ?? 150,
    profileFields: model.auth.profileFields.map(column),
    newAccount: Object.fromEntries(Object.entries(NEW_ACCOUNT).filter(([name]) => user.fields.some((f) => f.name === name))),
    nowColumns: user.fields.filter((f) => f.autoNowAdd || f.autoNow).map((f) => f.column),
    ...ignoreCaseOf(user),
  };
  if (!model.auth.cookies) return `${imports.runtime('accountHandlers')}(${literal(table)})`;
  // The refresh cookie goes only to the routes that read it: the longest path both lie under.
  const reading = model.endpoints.filter((e) => e.account === 'refresh' || e.account === 'logout').map((e) => model.basePath + e.path);
  const cookies = { path: model.basePath || '/', refreshPath: commonPath(reading.length ? reading : [model.basePath + '/']) };
  return `${imports.runtime('accountHandlers')}(${literal(table)}, ${literal(model.auth.cookiesOnly ? { cookies, cookiesOnly: true } : { cookies })})`;
}

/** The longest path, ending with `/`, that every one of `paths` lies under. */
function commonPath(paths: readonly string[]): string {
  const split = paths.map((p) => p.split('/').slice(0, -1));
  const common: string[] = [];
  for (let i = 0; split.every((s) => i < s.length && s[i] === split[0][i]); i++) common.push(split[0][i]);
  return common.join('/') + '/';
}

/** The request and response schemas of the service's endpoints, each once. */
function endpointSchemas(model: ServiceModel, imports: Imports): ObjectSchemaView[] {
  const seen = new Set<string>();
  return model.endpoints.flatMap((e) =>
    [e.request, e.response]
      .filter((s): s is SchemaModel => s !== undefined && !seen.has(s.name) && seen.add(s.name) !== undefined)
      .map((s) =>
        objectSchemaView(s, s.role === 'in' ? `Request body of ${e.handler}.` : `Response of ${e.handler}.`, imports, model.extraFields),
      ),
  );
}

export function endpointsView(model: ServiceModel, ctx: RenderContext) {
  const imports = new Imports(runtimeFrom(ctx, 0));
  const hooks = model.hooks ? hookModuleFrom(ctx, model.hooks, 0) : undefined;
  // Service-level code reaches the shared paginators and authenticators through its own hook module.
  const file = new RouteFile(imports, { imports, own: hooks, service: hooks, shared: new Set(model.sharedHooks) }, undefined);
  const schemas = endpointSchemas(model, imports);
  if (schemas.length) imports.runtime('z');
  // The account endpoints' handlers, made once per service.
  const accounts = model.endpoints.some((e) => e.account)
    ? file.constant('accounts', () => accountHandlersExpr(model, imports))
    : undefined;
  const routes = model.endpoints.map((e) => endpointRoute(e, file, accounts, model.auth.cookies));
  return {
    header: header(`${ctx.specsName}/service.yaml`),
    schemas,
    constants: file.constantViews(),
    routes,
    accounts: accounts !== undefined,
    imports: imports.print(),
  };
}
