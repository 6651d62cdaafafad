/**
 * The API surface: what clients of the service depend on, per operation: its route, its path
 * parameters, the fields of its request body, the fields of each success response, and the statuses
 * it documents. Derived from the model, the same model the Zod schemas and the OpenAPI document are
 * printed from (test/http/api-surface.test.ts holds the two together on the running services), so
 * the breaking-change gate (breaks.ts) needs no service loaded, compiled or run to see what a spec
 * change does to the API.
 */
import { INT32 } from '@svcgen/runtime/catalogue';
import type { FilterParam, ParamType } from '../model/filter-plans';
import type { Operation, Pagination, Resource, SchemaField, SchemaModel, ServiceModel, SourceRef } from '../model/model';

/** A field as clients see it. */
export interface ApiField {
  /** `integer`, `number`, `string`, `string:<format>`, `boolean`, `json`, `object`, `array<…>`. */
  type: string;
  /** A request field the client must send. */
  required?: true;
  nullable?: true;
  enum?: (string | number)[];
  maxLength?: number;
  /** The range a numeric parameter accepts. */
  minimum?: number;
  maximum?: number;
  /** The fields of a nested object, or of a nested list's items. */
  fields?: Record<string, ApiField>;
}

export interface ApiOperation {
  /** `METHOD /path`, the path as OpenAPI writes it. */
  route: string;
  /** The path parameters, as `{name}` in the route names them. */
  path?: Record<string, ApiField>;
  /**
   * The query parameters the service reads: filters, `ordering` (its enum: the names it may order
   * by), `search`, page parameters, `fields` (its enum: the fields it may keep). A list parameter
   * (`in`) is an `array<…>`, a `range` a `range<…>`.
   */
  query?: Record<string, ApiField>;
  /** The request body's fields (of each item, for a bulk create or update); absent without a body of known fields. */
  body?: Record<string, ApiField>;
  /** Success status → the response's fields (of each item, for a list), or null when it has no body of known fields. */
  responses: Record<string, Record<string, ApiField> | null>;
  /** The statuses documented besides success: the hook's own `errors`. */
  errors: string[];
}

export interface ApiSurface {
  operations: Record<string, ApiOperation>;
}

/** Where in the specs each operation, and each schema it uses, is written: for the gate's messages. */
export interface ApiSources {
  operations: Record<string, SourceRef[]>;
  /** `operationId body|<status>` → where its schema's fields are written. */
  schemas: Record<string, SourceRef[]>;
  /** `operationId body|<status> field` → the field's own position, when it is a model field. */
  fields: Record<string, SourceRef>;
  /**
   * `operationId query|path name` → where the parameter is written, the most specific first;
   * `operationId query` → where the operation's filters are written, for one that is gone.
   */
  params: Record<string, SourceRef[]>;
}

/** A parameter as the surface records it, with where it is written. */
interface Param {
  field: ApiField;
  at: SourceRef[];
}

const PARAM_TYPES: Record<ParamType, string> = {
  str: 'string',
  int: 'integer',
  float: 'number',
  bool: 'boolean',
  date: 'string:date',
  datetime: 'string:date-time',
  uuid: 'string:uuid',
  decimal: 'string:decimal',
  email: 'string:email',
  url: 'string:uri',
  list: 'array',
  dict: 'json',
};

/** A filter parameter as clients send it: one value, several (`in`) or two (`range`), optional. */
function filterParam(p: Pick<FilterParam, 'type' | 'shape' | 'bounds'>): ApiField {
  const type = PARAM_TYPES[p.type] ?? 'string';
  const out: ApiField = { type: p.shape === 'in' ? `array<${type}>` : p.shape === 'range' ? `range<${type}>` : type };
  // The document gives the range of a single value; a list of values is a string there.
  if (p.bounds === 'int32' && p.shape === undefined) Object.assign(out, { minimum: INT32.min, maximum: INT32.max });
  return out;
}

/** The page parameters of a built-in paginator; a custom one's are its own, unknown here. */
function pageParams(p: Pagination | null | undefined, at: SourceRef[]): Record<string, Param> {
  if (!p?.builtin) return {};
  // Their ranges are the paginator's own, which no spec changes: the surface records names and types.
  const int: Param = { field: { type: 'integer' }, at };
  if (p.class === 'LimitOffsetPagination') return { limit: int, offset: int };
  if (p.class === 'CursorPagination') return { cursor: { field: { type: 'string' }, at }, page_size: int };
  return { page: int, page_size: int };
}

/** The path parameter of an item route: the primary key, as the route converts it. */
function pkParam(r: Resource): ApiField {
  switch (r.pk.type) {
    // An integer key's range is its column's: its type says it.
    case 'integer':
    case 'big_integer':
      return { type: 'integer' };
    case 'uuid':
      return { type: 'string:uuid' };
    default:
      return r.pk.maxLength ? { type: 'string', maxLength: r.pk.maxLength } : { type: 'string' };
  }
}

/** The path parameters of an endpoint's `:name` segments: strings, as the handler receives them. */
function endpointPath(path: string, at: SourceRef[]): Record<string, Param> {
  return Object.fromEntries([...path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => [m[1], { field: { type: 'string' }, at }]));
}

/** The query parameters of a resource's list: page, filters, `ordering`, `search`, `fields`. */
function listParams(r: Resource): Record<string, Param> {
  const at = (...path: (string | number)[]): SourceRef => ({ file: r.specFile, path });
  const viewset = [at('viewset'), at()];
  const out: Record<string, Param> = { ...pageParams(r.pagination, [at('viewset', 'pagination_class'), ...viewset]) };
  const seen = { query_params: 0, relations_filters: 0, filters_match_cases: 0 };
  for (const p of r.filters?.params ?? []) {
    const index = seen[p.from]++;
    const own = p.from === 'query_params' ? at('viewset', p.from, p.name) : at('viewset', p.from, index);
    out[p.name] = { field: filterParam(p), at: [own, at('viewset', p.from), ...viewset] };
  }
  Object.assign(out, orderingParam(r));
  if (r.search) out.search = { field: { type: 'string' }, at: [at('viewset', 'search_fields'), ...viewset] };
  if (r.fieldSelection)
    out.fields = {
      field: { type: 'string', enum: r.schemas.out.fields.map((f) => f.name) },
      at: [at('viewset', 'field_selection'), ...viewset],
    };
  return { ...out, ...expandParam(r) };
}

/** `expand`: the relations the viewset lets `?expand=` nest, a comma-separated list. */
function expandParam(r: Resource): Record<string, Param> {
  if (!r.expand.length) return {};
  const at = (...path: (string | number)[]): SourceRef => ({ file: r.specFile, path });
  return {
    expand: { field: { type: 'array<string>', enum: r.expand.map((f) => f.name) }, at: [at('viewset', 'expand'), at('viewset'), at()] },
  };
}

/** `ordering`: comma-separated names among `ordering_fields`, each optionally prefixed with `-`. */
function orderingParam(r: Resource): Record<string, Param> {
  if (!r.ordering.fields.length) return {};
  const at = (...path: (string | number)[]): SourceRef => ({ file: r.specFile, path });
  return {
    ordering: {
      field: { type: 'string', enum: r.ordering.fields.map((f) => f.name) },
      at: [at('viewset', 'ordering_fields'), at('viewset'), at()],
    },
  };
}

const TYPES: Record<SchemaField['value'], string> = {
  int: 'integer',
  bigint: 'integer',
  float: 'number',
  decimal: 'string:decimal',
  str: 'string',
  email: 'string:email',
  url: 'string:uri',
  uuid: 'string:uuid',
  bool: 'boolean',
  date: 'string:date',
  datetime: 'string:date-time',
  json: 'json',
  list: 'array',
};

function apiField(f: SchemaField, request: boolean): ApiField {
  const out: ApiField = { type: TYPES[f.value] };
  if (f.kind === 'many_to_many' || f.kind === 'reverse' || f.list) out.type = `array<${TYPES[f.value]}>`;
  if (f.kind === 'nested_one') out.type = 'object';
  if (f.kind === 'nested_many' || f.kind === 'nested_reverse') out.type = 'array<object>';
  if (f.nested) out.fields = fieldsOf(f.nested.fields, false);
  // A nested write: its items in a request, the children written in a response.
  if (f.kind === 'nested_write') {
    out.type = 'array<object>';
    out.fields = request ? fieldsOf(f.write!.item.fields, true) : fieldsOf(f.write!.child.responses.create.fields, false);
  }
  if (request && f.required) out.required = true;
  if (f.nullable) out.nullable = true;
  if (f.choices) out.enum = [...f.choices];
  if (request && f.maxLength !== undefined) out.maxLength = f.maxLength;
  return out;
}

function fieldsOf(fields: readonly SchemaField[], request: boolean): Record<string, ApiField> {
  return Object.fromEntries(fields.map((f) => [f.name, apiField(f, request)]));
}

/** What one operation's surface is built from. */
interface Parts {
  operationId: string;
  method: string;
  path: string;
  body?: SchemaModel;
  responses: Record<string, SchemaModel | null>;
  errors?: Record<string, unknown>;
  pathParams?: Record<string, Param>;
  query?: Record<string, Param>;
  /** Where its query parameters are written: the place to report one that is gone. */
  queryAt?: SourceRef[];
  sources: SourceRef[];
  schemaSources: SourceRef[];
  /** Where the request body's fields are written, when not `schemaSources`. */
  bodySources?: SourceRef[];
}

/** A read schema of list or retrieve with the relations only `?expand=` shows (a field a client may be sent). */
function withExpansions(r: Resource, s: SchemaModel): SchemaModel {
  const extra = r.expand.filter((e) => !s.fields.some((f) => f.name === e.name));
  return extra.length ? { ...s, fields: [...s.fields, ...extra] } : s;
}

/** The keys of a resource's viewset where its schemas are written, the most specific first. */
function schemaSources(r: Resource): SourceRef[] {
  const at = (...path: (string | number)[]): SourceRef => ({ file: r.specFile, path });
  return [at('serializer'), at('viewset', 'serializer_class'), at('viewset', 'schema_out'), at('viewset'), at('fields'), at()];
}

function resourceParts(r: Resource, base: string): Parts[] {
  const at = (...path: (string | number)[]): SourceRef => ({ file: r.specFile, path });
  const item = `${base}/${r.base}/{pk}/`;
  const collection = `${base}/${r.base}/`;
  const schemas = schemaSources(r);
  // A create or update body is written in the serializer, or else is the resource's fields.
  const bodySources = [at('serializer'), at('viewset', 'serializer_class'), at('fields'), at()];
  const ops: Parts[] = [];
  const viewset = [at('viewset', 'disable'), at('viewset'), at()];
  const pk: Record<string, Param> = { pk: { field: pkParam(r), at: [at('fields', r.pk.name), at('fields'), at()] } };
  const fieldsOnly = (schema: SchemaModel): Record<string, Param> =>
    r.fieldSelection
      ? {
          fields: { field: { type: 'string', enum: schema.fields.map((f) => f.name) }, at: [at('viewset', 'field_selection'), ...viewset] },
        }
      : {};
  const shapes: Record<Operation['kind'], (o: Operation) => Pick<Parts, 'body' | 'responses' | 'path' | 'pathParams' | 'query'>> = {
    create: () => ({ path: collection, body: r.schemas.in, responses: { 201: r.nestedResults.create ?? r.responses.create } }),
    list: () => ({
      path: collection,
      query: listParams(r),
      queryAt: ['query_params', 'relations_filters', 'filters_match_cases'].map((key) => at('viewset', key)),
      responses: { 200: withExpansions(r, r.schemas.out) },
    }),
    retrieve: () => ({
      path: item,
      pathParams: pk,
      query: { ...fieldsOnly(r.schemas.detail), ...expandParam(r) },
      responses: { 200: withExpansions(r, r.schemas.detail) },
    }),
    update: () => ({
      path: item,
      pathParams: pk,
      body: r.schemas.update,
      responses: { 200: r.nestedResults.update ?? r.responses.update },
    }),
    delete: (o) => ({
      path: item,
      pathParams: pk,
      responses: o.override ? { 200: null, 204: null } : ({ 204: null } as Parts['responses']),
    }),
  };
  for (const o of r.operations)
    ops.push({ operationId: o.operationId, method: o.method, ...shapes[o.kind](o), sources: viewset, schemaSources: schemas, bodySources });
  if (r.softDelete) {
    ops.push({
      operationId: r.softDelete.restore.operationId,
      method: 'post',
      path: `${item}restore/`,
      pathParams: pk,
      responses: { 200: r.schemas.out },
      sources: [at('viewset', 'soft_delete'), ...viewset],
      schemaSources: schemas,
    });
    if (r.softDelete.hardDelete)
      ops.push({
        operationId: r.softDelete.hardDelete.operationId,
        method: 'delete',
        path: `${item}hard/`,
        pathParams: pk,
        responses: { 204: null },
        sources: [at('viewset', 'soft_delete'), ...viewset],
        schemaSources: schemas,
      });
  }
  for (const b of r.bulk) {
    // A bulk create's items are create bodies, a bulk update's the key and the update fields; a bulk delete takes keys.
    const body = b.kind === 'create' ? r.schemas.in : b.kind === 'update' ? (r.bulkUpdateItem ?? undefined) : undefined;
    ops.push({
      operationId: b.operationId,
      method: b.method,
      path: `${base}/${r.base}/bulk/`,
      body,
      responses: { [b.atomic ? b.operation.status : 207]: null },
      sources: [at('viewset', 'bulk'), ...viewset],
      schemaSources: schemas,
      bodySources,
    });
  }
  for (const a of r.actions) {
    const actionAt = [at('viewset', 'actions', a.name), at('viewset', 'actions'), ...viewset];
    // A paged list action takes the paginator's parameters and, but under CursorPagination, the list's `ordering`.
    const cursor = a.paginate?.builtin && a.paginate.class === 'CursorPagination';
    const query =
      a.detail || !a.paginate
        ? undefined
        : { ...pageParams(a.paginate, [at('viewset', 'actions', a.name, 'paginate'), ...actionAt]), ...(cursor ? {} : orderingParam(r)) };
    for (const route of a.routes) {
      ops.push({
        operationId: route.operationId,
        method: route.method,
        path: a.detail ? `${item}${a.name}/` : `${collection}${a.name}/`,
        ...(a.detail ? { pathParams: pk } : {}),
        query,
        responses: { 200: a.response ?? null },
        errors: a.errors,
        sources: [at('viewset', 'actions', a.name), at('viewset', 'actions'), ...viewset],
        schemaSources: [at('viewset', 'actions', a.name, 'response'), at('viewset', 'actions', a.name)],
      });
    }
  }
  r.relations.forEach((rel, i) => {
    const sources = [at('viewset', 'm2m_relations', i), at('viewset', 'm2m_relations'), ...viewset];
    const filtersAt = (name: string) => [
      at('viewset', 'm2m_relations', i, 'filters', name),
      at('viewset', 'm2m_relations', i, 'filters'),
      ...sources,
    ];
    // A relation's filter with a default is still optional to the client: the default applies.
    const query = {
      ...pageParams(r.pagination, [at('viewset', 'pagination_class'), ...sources]),
      ...Object.fromEntries(rel.filters.map((f) => [f.name, { field: filterParam({ type: f.kind as ParamType }), at: filtersAt(f.name) }])),
    };
    if (rel.get)
      ops.push({
        operationId: rel.getOperationId,
        method: 'get',
        path: `${item}${rel.path}${rel.appendSlash ? '/' : ''}`,
        pathParams: pk,
        query,
        queryAt: [at('viewset', 'm2m_relations', i, 'filters')],
        responses: { 200: rel.itemSchema },
        sources,
        schemaSources: [at('viewset', 'm2m_relations', i, 'related_schema'), ...sources],
      });
    if (rel.add || rel.remove)
      ops.push({
        operationId: rel.manageOperationId,
        method: 'post',
        path: `${item}${rel.path}/`,
        pathParams: pk,
        responses: { 200: null },
        sources,
        schemaSources: sources,
      });
  });
  r.endpoints.forEach((e, i) => {
    const endpointAt = [at('viewset', 'endpoints', i), at('viewset', 'endpoints'), ...viewset];
    ops.push({
      operationId: e.operationId,
      method: e.method,
      path: base + e.path.replace(/:(\w+)/g, '{$1}'),
      pathParams: endpointPath(e.path, [at('viewset', 'endpoints', i, 'path'), ...endpointAt]),
      query: pageParams(e.paginate, [at('viewset', 'endpoints', i, 'paginate'), ...endpointAt]),
      body: e.request,
      responses: { [e.status]: e.response ?? null },
      errors: e.errors,
      sources: [at('viewset', 'endpoints', i), at('viewset', 'endpoints'), ...viewset],
      schemaSources: [at('viewset', 'endpoints', i, 'response'), at('viewset', 'endpoints', i)],
    });
  });
  return ops;
}

/** The API surface of the model, and where each part of it is written. */
export function apiSurface(model: ServiceModel, serviceFile = 'service.yaml'): { surface: ApiSurface; sources: ApiSources } {
  const base = model.basePath.replace(/\/+$/, '');
  const parts: Parts[] = [
    ...model.endpoints.map((e, i) => ({
      operationId: e.operationId,
      method: e.method,
      path: base + e.path.replace(/:(\w+)/g, '{$1}'),
      pathParams: endpointPath(e.path, [
        { file: serviceFile, path: ['endpoints', i, 'path'] },
        { file: serviceFile, path: ['endpoints', i] },
      ]),
      query: pageParams(e.paginate, [
        { file: serviceFile, path: ['endpoints', i, 'paginate'] },
        { file: serviceFile, path: ['endpoints', i] },
      ]),
      body: e.request,
      responses: { [e.status]: e.response ?? null },
      errors: e.errors,
      sources: [{ file: serviceFile, path: ['endpoints', i] }],
      schemaSources: [
        { file: serviceFile, path: ['endpoints', i, 'response'] },
        { file: serviceFile, path: ['endpoints', i] },
      ],
    })),
    ...model.resources.flatMap((r) => resourceParts(r, base)),
  ];
  const surface: ApiSurface = { operations: {} };
  const sources: ApiSources = { operations: {}, schemas: {}, fields: {}, params: {} };
  for (const p of parts) {
    const responses: ApiOperation['responses'] = {};
    for (const [status, schema] of Object.entries(p.responses)) responses[status] = schema ? fieldsOf(schema.fields, false) : null;
    const params = (where: 'path' | 'query', given: Record<string, Param> | undefined) => {
      if (!given || !Object.keys(given).length) return {};
      for (const [name, param] of Object.entries(given)) sources.params[`${p.operationId} ${where} ${name}`] = param.at;
      if (where === 'query' && p.queryAt) sources.params[`${p.operationId} query`] = p.queryAt;
      return { [where]: Object.fromEntries(Object.entries(given).map(([name, param]) => [name, param.field])) };
    };
    surface.operations[p.operationId] = {
      route: `${p.method.replace(/^api_/, '').toUpperCase()} ${p.path}`,
      ...params('path', p.pathParams),
      ...params('query', p.query),
      ...(p.body ? { body: fieldsOf(p.body.fields, true) } : {}),
      responses,
      errors: Object.keys(p.errors ?? {}).sort(),
    };
    sources.operations[p.operationId] = p.sources;
    const parts_ = [
      ...(p.body ? [['body', p.body] as const] : []),
      ...Object.entries(p.responses).map(([s, schema]) => [s, schema] as const),
    ];
    for (const [part, schema] of parts_) {
      sources.schemas[`${p.operationId} ${part}`] = part === 'body' ? (p.bodySources ?? p.schemaSources) : p.schemaSources;
      for (const f of schema?.fields ?? []) if (f.field) sources.fields[`${p.operationId} ${part} ${f.name}`] = f.field.source;
    }
  }
  return { surface, sources };
}
