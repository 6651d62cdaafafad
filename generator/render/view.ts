/**
 * View models: what each template prints, derived from the intermediate model. Code fragments
 * (Zod expressions, value conversions) are computed here so the templates stay plain.
 */
import type { Endpoint, Operation, Resource, SchemaModel, ServiceModel } from '../model';
import { camelCase, docLine, literal, pascalCase, str } from '../names';
import { authExpr, hookRef, usesServiceHooks, viewExpr, type HookScope } from './hooks';
import { relationsRouteView } from './m2m';
import { zodInput, zodOutput } from './zod';
import { Imports } from './imports';
import { header, runtimeFrom, type RenderContext } from './context';
export type { RenderContext } from './context';

const up = (specifier: string, depth: number) => runtimeFrom({ runtimeFromRoot: specifier, specsFromRoot: '', specsName: '' }, depth);

const imports = (names: Iterable<string>) => [...new Set(names)].sort((a, b) => a.replace(/^type /, '').localeCompare(b.replace(/^type /, ''))).join(', ');

/* ------------------------------------------------------------- routes.ts */

const PATHS: Record<Operation['pathKind'], (base: string) => string> = {
  collection: (base) => `\`/${base}\${slash}\``,
  item: (base) => `\`/${base}/:pk\${slash}\``,
  itemSlash: (base) => `'/${base}/:pk/'`,
};

const SUCCESS: Record<Operation['kind'], string> = {
  create: 'Created',
  list: 'OK',
  retrieve: 'OK',
  update: 'OK',
  delete: 'No Content',
};


export function routesView(r: Resource, model: ServiceModel, ctx: RenderContext) {
  const scope: HookScope = { shared: new Set(model.sharedHooks), sharedVia: 'serviceHooks' };
  const hooksImport = r.hooks ? up(`${ctx.specsFromRoot}/${r.hooks.replace(/\.ts$/, '')}`, 2) : undefined;
  const serviceHooksPath = model.hooks ? up(`${ctx.specsFromRoot}/${model.hooks.replace(/\.ts$/, '')}`, 2) : undefined;
  const listOp = r.operations.some((o) => o.kind === 'list');
  const responseSchema = (o: Operation) => {
    if (o.kind === 'delete') return '';
    if (o.kind === 'retrieve') return r.schemas.detail.name;
    if (o.kind === 'list') return r.pagination ? `paginator.responseSchema(${r.schemas.out.name})` : `z.array(${r.schemas.out.name})`;
    return r.schemas.out.name;
  };
  const operations = r.operations.map((o) => {
    const schema = responseSchema(o);

    return {
      kind: o.kind,
      method: o.method,
      path: PATHS[o.pathKind](r.base),
      auth: authExpr(o.auth, scope),
      view: viewExpr(o.operationId, o.decorators, scope),
      override: o.override,
      operationId: o.operationId,
      summary: str(docLine(o.summary)),
      params: o.pathKind !== 'collection',
      query: o.kind === 'list',
      body: o.kind === 'create' ? r.schemas.in.name : o.kind === 'update' ? r.schemas.update.name : undefined,
      responses:
        o.kind === 'delete' && o.override
          ? `{ status: 200, description: 'OK (the override answers with a body)' }, { status: 204, description: 'No Content' }`
          : `{ status: ${o.status}, description: '${SUCCESS[o.kind]}'${schema ? `, schema: ${schema}` : ''} }`,
      secured: o.auth !== null,
    };
  });
  const actions = r.actions.map((a) => ({
    name: a.name,
    handler: a.handler,
    methods: a.methods,
    multiMethod: a.methods.length > 1,
    operationId: a.operationId,
    auth: authExpr(a.auth, scope),
    view: viewExpr(a.operationId, a.decorators, scope),
    summary: str(docLine(a.summary ?? `Run the ${a.name} action on a ${r.verboseName}.`)),
    responses: `{ status: 200, description: 'OK'${a.response ? `, schema: ${a.response.name}` : ''} }`,
    secured: a.auth !== null,
  }));
  const endpoints = r.endpoints.map((e) => endpointView(e, scope));
  const relations = relationsRouteView(r, model, scope);
  const endpointPaginators = endpoints.filter((e) => e.paginate);
  const ordering = r.ordering.fields.length
    ? `orderingParam({ ${r.ordering.fields.map((f) => `${f.name}: ${str(f.column)}`).join(', ')} })`
    : undefined;
  const pageSchema = r.pagination ? 'paginator.querySchema' : 'z.object({})';
  // Filter parameters (query_params, relations_filters, match cases) come from the resource's filters.ts.
  const filtered = r.filters ? `${pageSchema}.extend(filtering.FILTER_QUERY.shape)` : pageSchema;
  const listQuery = ordering ? `${filtered}.extend({ ordering: ${ordering} })` : filtered;
  // After the queryset hook: the query_params_handler hook with the generated mixins, or the mixins in order.
  const filterArgs = '{ query, filters: filtering.filtersOf(params), mixins: filtering.MIXINS }';
  const applyFilters = r.filters?.handler
    ? `await settleHook(hooks.${r.filters.handler}(withArgs(ctx, ${filterArgs})));`
    : 'filtering.applyFilters(query, filtering.filtersOf(params));';
  const code = JSON.stringify(operations) + JSON.stringify(actions) + JSON.stringify(endpoints) + JSON.stringify(relations) + listQuery;
  const runtimeImports = [...(r.hooks ? ['withArgs'] : []), 'defineView', 'parseRequest', 'requestContext', 'rowLookup', 'type Route', 'type ServiceContext'];
  if (listOp) runtimeImports.push('querySource', 'type OrderTerm', r.pagination ? 'paginate' : 'listAll');
  if (listOp && r.pagination?.builtin) runtimeImports.push(r.pagination.class);
  if (ordering) runtimeImports.push('orderingParam');
  if (listOp && r.filters?.handler) runtimeImports.push('settleHook');
  if (!r.pagination && listOp) runtimeImports.push('z');
  if (code.includes('z.array(')) runtimeImports.push('z');
  if (r.requireUpdateFields && r.operations.some((o) => o.kind === 'update')) runtimeImports.push('SerializeError');
  for (const a of ['JWTAuth', 'AdminAuth', 'SuperuserAuth']) if (code.includes(`[${a}`) || code.includes(` ${a}]`) || code.includes(`, ${a}`)) runtimeImports.push(a);
  if (!r.errorSchema || endpoints.length) runtimeImports.push('GenericMessageSchema');
  runtimeImports.push('send');
  if (relations.length) runtimeImports.push('querySource', 'M2MSchemaOut');
  if (endpointPaginators.length) runtimeImports.push('paginate', 'listSource');
  for (const e of endpointPaginators) if (e.paginate?.builtinClass) runtimeImports.push(e.paginate.builtinClass);
  if (relations.some((x) => x.get)) runtimeImports.push('relatedRows', r.pagination ? 'paginate' : 'listAll');
  if (relations.some((x) => x.get && !x.queryParamsHandler)) runtimeImports.push('applyRelationFilters');
  if (relations.some((x) => x.manage)) runtimeImports.push('manageRelation', 'm2mBodySchema');
  if (relations.some((x) => x.queryHandler)) runtimeImports.push('foundRow');
  if (relations.some((x) => x.queryParamsHandler)) runtimeImports.push('settleHook');
  if (relations.some((x) => x.get && x.querySchema.includes('fromString'))) runtimeImports.push('fromString');
  if (relations.some((x) => x.querySchema.includes('z.') || x.keySchema.includes('z.') || x.getResponse.includes('z.'))) runtimeImports.push('z');
  if (relations.some((x) => x.keySchema.includes('intInput'))) runtimeImports.push('intInput');
  if (relations.some((x) => x.keySchema.includes('uuidInput'))) runtimeImports.push('uuidInput');
  if (relations.some((x) => x.get) && r.pagination?.builtin) runtimeImports.push(r.pagination.class);
  if (actions.some((a) => a.methods.includes('get'))) runtimeImports.push('type Db');
  const schemaImports = [r.schemas.in.name, r.schemas.out.name, r.schemas.update.name, `${r.model}Params`];
  if (r.hasDetail) schemaImports.push(r.schemas.detail.name);
  if (r.errorSchema) schemaImports.push(r.errorSchema.name);
  for (const a of r.actions) if (a.response) schemaImports.push(a.response.name);
  for (const rel of r.relations) if (!rel.itemSchemaIsTargetOut) schemaImports.push(rel.itemSchema.name);
  for (const e of r.endpoints) for (const s of [e.request, e.response]) if (s) schemaImports.push(s.name);
  const used = (name: string) => code.includes(name) || operations.some((o) => o.body === name) || name === r.errorSchema?.name;
  const pagination = r.pagination
    ? {
        class: r.pagination.builtin ? r.pagination.class : hookRef(r.pagination.class, scope),
        options: literal(Object.fromEntries(Object.entries(r.pagination.options).filter(([, v]) => v !== undefined))),
      }
    : undefined;
  return {
    header: header(`${ctx.specsName}/${r.specFile}`),
    runtime: up(ctx.runtimeFromRoot, 2),
    runtimeImports: imports(runtimeImports.filter(Boolean)),
    hooksImport,
    serviceHooksImport: usesServiceHooks(code + (pagination?.class ?? '')) ? serviceHooksPath : undefined,
    schemaImports: imports(schemaImports.filter((n) => n.endsWith('Params') || used(n) || n === r.schemas.out.name)),
    routesFn: `${camelCase(r.moduleName)}Routes`,
    verboseName: r.verboseName,
    model: r.model,
    tag: str(r.tag),
    listOp,
    pagination,
    listQuery,
    filtersImport: listOp && r.filters !== null,
    applyFilters: listOp && r.filters ? applyFilters : undefined,
    ordering: ordering ? 'params.ordering ?? defaultOrdering' : 'defaultOrdering',
    defaultOrdering: r.ordering.default.map((t) => `{ column: ${str(t.column)}, order: '${t.order}' }`).join(', '),
    querysetRequest: r.querysetRequest,
    lifecycle: r.lifecycle,
    requireUpdateFields: r.requireUpdateFields,
    schemaIn: r.schemas.in.name,
    schemaOut: r.schemas.out.name,
    schemaUpdate: r.schemas.update.name,
    schemaDetail: r.schemas.detail.name,
    outColumns: 'OUT_COLUMNS',
    detailColumns: r.hasDetail ? 'DETAIL_COLUMNS' : 'OUT_COLUMNS',
    m2mIn: r.schemas.in.fields.filter((f) => f.m2m).map((f) => ({ name: f.name, pascal: pascalCase(f.name) })),
    m2mUpdate: r.schemas.update.fields.filter((f) => f.m2m).map((f) => ({ name: f.name, pascal: pascalCase(f.name) })),
    errorSchema: r.errorSchema ? r.errorSchema.name : 'GenericMessageSchema',
    operations,
    pkName: r.pk.name,
    base: r.base,
    actions,
    endpoints,
    relations,
    endpointPaginators,
    listParamsUsed: r.pagination !== null || ordering !== undefined || r.filters !== null || r.operations.some((o) => o.kind === 'list' && o.override),
    needsPaginator: r.pagination !== null && (listOp || relations.some((x) => x.get)),
    targetImports: [...new Map(relations.flatMap((x) => (x.targetImport ? [[x.targetImport.name, x.targetImport]] : [])) as [string, { name: string; module: string }][]).values()],
  };
}

function endpointView(e: Endpoint, scope: HookScope) {
  const paginate = e.paginate
    ? {
        queryConst: `${camelCase(e.handler)}Paginator`,
        class: e.paginate.builtin ? e.paginate.class : hookRef(e.paginate.class, scope),
        builtinClass: e.paginate.builtin ? e.paginate.class : undefined,
        options: literal(Object.fromEntries(Object.entries(e.paginate.options).filter(([, v]) => v !== undefined))),
      }
    : undefined;
  const response = e.response ? (paginate ? `${paginate.queryConst}.responseSchema(${e.response.name})` : e.response.name) : undefined;
  return {
    paginate,
    method: e.method,
    path: e.path,
    handler: e.handler,
    auth: authExpr(e.auth, scope),
    view: viewExpr(e.operationId, e.decorators, scope),
    request: e.request?.name,
    transactional: e.method !== 'get' && e.method !== 'head' && e.method !== 'options',
    status: e.status,
    operationId: e.operationId,
    summary: str(docLine(e.summary ?? e.handler)),
    description: e.description ? str(e.description) : undefined,
    tags: e.tags.map((t) => str(t)).join(', '),
    responses: `{ status: ${e.status}, description: '${e.status === 201 ? 'Created' : e.status === 204 ? 'No Content' : 'OK'}'${response ? `, schema: ${response}` : ''} }`,
    secured: e.auth !== null,
  };
}

export function endpointsView(model: ServiceModel, ctx: RenderContext) {
  const endpoints = model.endpoints.map((e) => endpointView(e, { shared: new Set(model.sharedHooks), sharedVia: 'hooks' }));
  const seen = new Set<string>();
  const schemas = model.endpoints.flatMap((e) =>
    [e.request, e.response].filter((s): s is SchemaModel => s !== undefined).map((s) => ({
      name: s.name,
      doc: s.role === 'in' ? `Request body of ${e.handler}.` : `Response of ${e.handler}.`,
      fields: s.fields.map((f) => ({ name: f.name, zod: s.role === 'in' ? zodInput(f, new Imports('')) : zodOutput(f, new Imports('')) })),
    })),
  ).filter((s) => !seen.has(s.name) && seen.add(s.name) !== undefined);
  const code = JSON.stringify({ endpoints, schemas });
  const runtimeImports = ['defineView', 'GenericMessageSchema', 'requestContext', 'send', 'type Route', 'type ServiceContext', 'withArgs', 'z'];
  if (endpoints.some((e) => e.paginate)) runtimeImports.push('paginate', 'listSource');
  for (const e of endpoints) if (e.paginate?.builtinClass) runtimeImports.push(e.paginate.builtinClass);
  if (endpoints.some((e) => e.request)) runtimeImports.push('parseRequest');
  for (const n of ['intInput', 'decimalInput', 'urlInput']) if (code.includes(n)) runtimeImports.push(n);
  for (const a of ['JWTAuth', 'AdminAuth', 'SuperuserAuth']) if (code.includes(a)) runtimeImports.push(a);
  return {
    header: header(`${ctx.specsName}/service.yaml`),
    runtime: up(ctx.runtimeFromRoot, 0),
    runtimeImports: imports(runtimeImports),
    hooksImport: model.hooks ? `${ctx.specsFromRoot}/${model.hooks.replace(/\.ts$/, '')}` : undefined,
    schemas,
    endpoints,
    paginated: endpoints.filter((e) => e.paginate),
    usesDb: endpoints.some((e) => e.transactional),
  };
}
