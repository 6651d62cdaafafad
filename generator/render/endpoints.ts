/**
 * Custom endpoints: the route of one endpoint (in a resource's routes.ts or the service's
 * endpoints.ts), and the view of `endpoints.ts`, the service's endpoints with their schemas.
 */
import type { Endpoint, SchemaModel, ServiceModel } from '../model/model';
import { camelCase, docLine, literal, str } from '../model/names';
import { header, hookModuleFrom, runtimeFrom, type RenderContext } from './context';
import { Imports } from './imports';
import { response, RouteFile, type RouteView } from './route';
import { objectSchemaView, type ObjectSchemaView } from './schemas';

/**
 * An endpoint's hook receives the validated body (with a request schema), the path parameters and
 * the query string as received, and with `paginate` the validated page parameters; it returns the
 * whole list, which the paginator pages. The page parameters are the operation's query schema, so
 * they are validated with the body before the decorators run.
 */
export function endpointRoute(e: Endpoint, file: RouteFile): RouteView {
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
    // The hook receives path parameters as strings; the document names them.
    docParams: pathParams.length ? `${z}.object({ ${pathParams.map((p) => `${p}: ${z}.string()`).join(', ')} })` : undefined,
    transaction: e.transaction,
    status: e.status,
    input: `{ ${['params', paginator ? 'query: pagination' : 'query', ...(request ? ['body'] : [])].join(', ')} }, ctx`,
    partial: 'operations/endpoint',
    handle: {
      call: file.hookCall(e.handler, `{ ${args.join(', ')} }`),
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
    responses: response(e.status, item && paginator ? `${paginator}.responseSchema(${item})` : item),
    errorSchema: imports.runtime('GenericMessageSchema'),
  });
}

/** The request and response schemas of the service's endpoints, each once. */
function endpointSchemas(model: ServiceModel, imports: Imports): ObjectSchemaView[] {
  const seen = new Set<string>();
  return model.endpoints.flatMap((e) =>
    [e.request, e.response]
      .filter((s): s is SchemaModel => s !== undefined && !seen.has(s.name) && seen.add(s.name) !== undefined)
      .map((s) => objectSchemaView(s, s.role === 'in' ? `Request body of ${e.handler}.` : `Response of ${e.handler}.`, imports)),
  );
}

export function endpointsView(model: ServiceModel, ctx: RenderContext) {
  const imports = new Imports(runtimeFrom(ctx, 0));
  const hooks = model.hooks ? hookModuleFrom(ctx, model.hooks, 0) : undefined;
  // Service-level code reaches the shared paginators and authenticators through its own hook module.
  const file = new RouteFile(imports, { imports, own: hooks, service: hooks, shared: new Set(model.sharedHooks) }, undefined);
  const schemas = endpointSchemas(model, imports);
  if (schemas.length) imports.runtime('z');
  const routes = model.endpoints.map((e) => endpointRoute(e, file));
  return {
    header: header(`${ctx.specsName}/service.yaml`),
    schemas,
    constants: file.constantViews(),
    routes,
    imports: imports.print(),
  };
}
