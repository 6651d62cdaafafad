/**
 * The API surface: what clients of the service depend on, per operation: its route, its path
 * parameters, the fields of its request body, the fields of each success response, and the statuses
 * it documents. Derived from the model, the same model the Zod schemas and the OpenAPI document are
 * printed from (test/http/api-surface.test.ts holds the two together on the running services), so
 * the breaking-change gate (breaks.ts) needs no service loaded, compiled or run to see what a spec
 * change does to the API.
 */
import type { Operation, Resource, SchemaField, SchemaModel, ServiceModel, SourceRef } from '../model/model';

/** A field as clients see it. */
export interface ApiField {
  /** `integer`, `number`, `string`, `string:<format>`, `boolean`, `json`, `object`, `array<…>`. */
  type: string;
  /** A request field the client must send. */
  required?: true;
  nullable?: true;
  enum?: (string | number)[];
  maxLength?: number;
  /** The fields of a nested object, or of a nested list's items. */
  fields?: Record<string, ApiField>;
}

export interface ApiOperation {
  /** `METHOD /path`, the path as OpenAPI writes it. */
  route: string;
  /** The request body's fields; absent without a body of known fields. */
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
  sources: SourceRef[];
  schemaSources: SourceRef[];
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
  const ops: Parts[] = [];
  const viewset = [at('viewset', 'disable'), at('viewset'), at()];
  const shapes: Record<Operation['kind'], (o: Operation) => Pick<Parts, 'body' | 'responses' | 'path'>> = {
    create: () => ({ path: collection, body: r.schemas.in, responses: { 201: r.nestedResults.create ?? r.responses.create } }),
    list: () => ({ path: collection, responses: { 200: withExpansions(r, r.schemas.out) } }),
    retrieve: () => ({ path: item, responses: { 200: withExpansions(r, r.schemas.detail) } }),
    update: () => ({ path: item, body: r.schemas.update, responses: { 200: r.nestedResults.update ?? r.responses.update } }),
    delete: (o) => ({ path: item, responses: o.override ? { 200: null, 204: null } : { 204: null } as Parts['responses'] }),
  };
  for (const o of r.operations) ops.push({ operationId: o.operationId, method: o.method, ...shapes[o.kind](o), sources: viewset, schemaSources: schemas });
  if (r.softDelete) {
    ops.push({ operationId: r.softDelete.restore.operationId, method: 'post', path: `${item}restore/`, responses: { 200: r.schemas.out }, sources: [at('viewset', 'soft_delete'), ...viewset], schemaSources: schemas });
    if (r.softDelete.hardDelete) ops.push({ operationId: r.softDelete.hardDelete.operationId, method: 'delete', path: `${item}hard/`, responses: { 204: null }, sources: [at('viewset', 'soft_delete'), ...viewset], schemaSources: schemas });
  }
  for (const b of r.bulk) {
    ops.push({ operationId: b.operationId, method: b.method, path: `${base}/${r.base}/bulk/`, responses: { [b.atomic ? b.operation.status : 207]: null }, sources: [at('viewset', 'bulk'), ...viewset], schemaSources: schemas });
  }
  for (const a of r.actions) {
    for (const route of a.routes) {
      ops.push({
        operationId: route.operationId,
        method: route.method,
        path: a.detail ? `${item}${a.name}/` : `${collection}${a.name}/`,
        responses: { 200: a.response ?? null },
        errors: a.errors,
        sources: [at('viewset', 'actions', a.name), at('viewset', 'actions'), ...viewset],
        schemaSources: [at('viewset', 'actions', a.name, 'response'), at('viewset', 'actions', a.name)],
      });
    }
  }
  r.relations.forEach((rel, i) => {
    const sources = [at('viewset', 'm2m_relations', i), at('viewset', 'm2m_relations'), ...viewset];
    if (rel.get) ops.push({ operationId: rel.getOperationId, method: 'get', path: `${item}${rel.path}${rel.appendSlash ? '/' : ''}`, responses: { 200: rel.itemSchema }, sources, schemaSources: [at('viewset', 'm2m_relations', i, 'related_schema'), ...sources] });
    if (rel.add || rel.remove) ops.push({ operationId: rel.manageOperationId, method: 'post', path: `${item}${rel.path}/`, responses: { 200: null }, sources, schemaSources: sources });
  });
  r.endpoints.forEach((e, i) => {
    ops.push({
      operationId: e.operationId,
      method: e.method,
      path: base + e.path.replace(/:(\w+)/g, '{$1}'),
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
      body: e.request,
      responses: { [e.status]: e.response ?? null },
      errors: e.errors,
      sources: [{ file: serviceFile, path: ['endpoints', i] }],
      schemaSources: [{ file: serviceFile, path: ['endpoints', i, 'response'] }, { file: serviceFile, path: ['endpoints', i] }],
    })),
    ...model.resources.flatMap((r) => resourceParts(r, base)),
  ];
  const surface: ApiSurface = { operations: {} };
  const sources: ApiSources = { operations: {}, schemas: {}, fields: {} };
  for (const p of parts) {
    const responses: ApiOperation['responses'] = {};
    for (const [status, schema] of Object.entries(p.responses)) responses[status] = schema ? fieldsOf(schema.fields, false) : null;
    surface.operations[p.operationId] = {
      route: `${p.method.replace(/^api_/, '').toUpperCase()} ${p.path}`,
      ...(p.body ? { body: fieldsOf(p.body.fields, true) } : {}),
      responses,
      errors: Object.keys(p.errors ?? {}).sort(),
    };
    sources.operations[p.operationId] = p.sources;
    const parts_ = [...(p.body ? [['body', p.body] as const] : []), ...Object.entries(p.responses).map(([s, schema]) => [s, schema] as const)];
    for (const [part, schema] of parts_) {
      sources.schemas[`${p.operationId} ${part}`] = p.schemaSources;
      for (const f of schema?.fields ?? []) if (f.field) sources.fields[`${p.operationId} ${part} ${f.name}`] = f.field.source;
    }
  }
  return { surface, sources };
}
