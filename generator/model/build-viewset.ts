/**
 * What a resource's viewset serves: its operations with their resolved authentication, throttles
 * and docs, bulk routes, actions, relation endpoints, custom endpoints, the soft delete's routes and
 * pagination. Part of building the model (build-model.ts).
 */
import { CRUD_OPERATIONS, GENERIC_SUMMARIES, isBuiltinPaginator } from '@svcgen/runtime/catalogue';
import { paramSpec } from './build-filters';
import type {
  ActionSpec,
  ThrottleSpec,
  AuthListSpec,
  EndpointSpec,
  PaginationSpec,
  RelationSpec,
  AccountKind,
  ViewsetSpec,
} from '../validate/meta-schema';
import type {
  Action,
  BulkOperation,
  RateLimit,
  SoftDelete,
  SoftDeleteRoute,
  AuthSpec,
  Endpoint,
  Field,
  ManyToMany,
  Operation,
  OperationKind,
  Pagination,
  Relation,
  SchemaField,
  SchemaModel,
} from './model';
import { pascalCase } from './names';
import { endpointMethod, endpointOperationId, relationOperationIds, relationPath, type ResourceNames } from './resource-names';
import { OPERATION_AUTH_KEYS } from '../validate/viewset-defaults';
import { type Draft, m2mOf } from './build-fields';
import { type SchemaContext, boundsOf, freeSchema, manualSchema, resolveSchema, sectionSchema, valueKind } from './build-schemas';

/** The short default of each operation kind's summary: the default behaviours' generic one. */
const DEFAULT_DOCS: Record<OperationKind, string> = GENERIC_SUMMARIES;

/**
 * The soft delete of a viewset: its field (validated: a nullable datetime), its restore and hard
 * delete routes (authenticated as delete is; restore also takes delete's `permission_roles`), and the
 * columns that stay unique among live rows: each unique field and each unique index.
 */
export function softDeleteOf(d: Draft, viewset: ViewsetSpec, writeAuth: AuthSpec): SoftDelete | null {
  const names = d.names.softDelete;
  if (!names) return null;
  const auth = resolveAuth(viewset.delete_auth, viewset.auth, writeAuth);
  const route = (operationId: string, roles: string[] | undefined): SoftDeleteRoute => ({
    operationId,
    auth,
    roles,
    throttles: throttlesOf(viewset, undefined, operationId, d.table),
  });
  const hardRoles = typeof viewset.soft_delete === 'object' ? viewset.soft_delete.hard_delete_roles : undefined;
  const fieldOfColumn = (column: string) => d.fields.find((f) => f.column === column)?.name ?? column;
  return {
    field: d.fields.find((f) => f.name === names.field)!,
    restore: route(names.restore.name, viewset.permission_roles?.delete),
    hardDelete: names.hardDelete && hardRoles ? { ...route(names.hardDelete.name, hardRoles), roles: [...hardRoles] } : undefined,
    uniques: [
      ...d.fields.filter((f) => f.unique && !f.primaryKey).map((f) => ({ fields: [f.name], columns: [f.column] })),
      ...d.names.indexes.filter((i) => i.unique).map((i) => ({ fields: i.columns.map(fieldOfColumn), columns: i.columns })),
    ],
  };
}

export function relationsOf(ctx: SchemaContext, viewset: ViewsetSpec, m2m: ManyToMany[], writeAuth: AuthSpec): Relation[] {
  return (viewset.m2m_relations ?? []).map((rel: RelationSpec) => {
    const field = m2m.find((m) => m.name === rel.related_name)!;
    const target = ctx.byModel.get(rel.model)!;
    const path = relationPath(rel.path, target.names);
    const fallback = !isNotSet(rel.auth) ? rel.auth : !isNotSet(viewset.m2m_auth) ? viewset.m2m_auth : viewset.auth;
    const tctx: SchemaContext = { draft: target, m2m: [], reverse: [], byModel: ctx.byModel };
    const name = `${ctx.draft.model}${pascalCase(rel.related_name)}Item`;
    let itemSchema: SchemaModel;
    let itemSchemaIsTargetOut = false;
    if (rel.related_schema) itemSchema = manualSchema(tctx, rel.related_schema.name ?? name, 'out', rel.related_schema);
    else if (rel.serializer_class?.Meta.schema_out) {
      itemSchema = sectionSchema(tctx, name, 'out', rel.serializer_class.Meta.schema_out, 'serializer_class');
    } else {
      itemSchema = resolveSchema({ draft: target, m2m: m2mOf(target, ctx.byModel), reverse: [], byModel: ctx.byModel }, 'out')!;
      itemSchemaIsTargetOut = true;
    }
    const operationIds = relationOperationIds(ctx.draft.names, path);
    return {
      relatedName: rel.related_name,
      path,
      target: rel.model,
      m2m: field,
      getAuth: resolveAuth(rel.get_auth, fallback),
      postAuth: resolveAuth(rel.post_auth, fallback, writeAuth),
      add: rel.add !== false,
      remove: rel.remove !== false,
      get: rel.get !== false,
      appendSlash: rel.append_slash === true,
      filters: Object.entries(rel.filters ?? {}).map(([n, spec]) => {
        const param = paramSpec(spec);
        return { name: n, kind: param.type, default: param.default };
      }),
      itemSchema,
      itemSchemaIsTargetOut,
      getDecorators: rel.get_decorators ?? [],
      postDecorators: rel.post_decorators ?? [],
      getOperationId: operationIds.get,
      manageOperationId: operationIds.manage,
      queryParamsHandler: rel.query_params_handler,
      queryHandler: rel.query_handler,
    };
  });
}

export function actionsOf(names: ResourceNames, viewset: ViewsetSpec, writeAuth: AuthSpec): Action[] {
  return Object.entries(viewset.actions ?? {}).map(([name, a]: [string, ActionSpec], i) => ({
    name,
    handler: a.handler,
    detail: names.actions[i].detail,
    routes: names.actions[i].routes.map((route) => ({
      method: route.method,
      operationId: route.operationId.name,
      transaction: route.method !== 'get',
    })),
    // One set of authenticators for the action's routes: those of a write when any route writes.
    auth: resolveAuth(a.auth, viewset.auth, names.actions[i].routes.some((route) => route.method !== 'get') ? writeAuth : null),
    summary: a.summary,
    description: a.description,
    decorators: a.decorators ?? [],
    errors: a.errors ?? {},
    response: a.response && typeof a.response === 'object' ? freeSchema(`${pascalCase(a.handler)}Response`, 'out', a.response) : undefined,
    paginate: a.paginate === undefined ? undefined : (paginationOf(a.paginate) ?? undefined),
    throttles: throttlesOf(viewset, a.throttle, `${names.table.name}.${name}`, names.table.name),
  }));
}

/**
 * The rate limits of an operation or action: the viewset's `throttle` (one counter per caller for
 * the whole viewset, named by its table), then its own (a counter of its own, named by `own`).
 */
function throttlesOf(viewset: ViewsetSpec, spec: ThrottleSpec | undefined, own: string, table: string): RateLimit[] {
  const limit = (t: ThrottleSpec, name: string): RateLimit => ({ rate: t.rate, scope: t.scope ?? 'user', name });
  return [...(viewset.throttle ? [limit(viewset.throttle, table)] : []), ...(spec ? [limit(spec, own)] : [])];
}

export function endpointsOf(
  list: readonly (EndpointSpec & { account?: AccountKind })[],
  tag: string,
  at: (i: number) => (string | number)[],
  file: string,
  writeAuth: AuthSpec = null,
): Endpoint[] {
  return list.map((e, i) => {
    const method = endpointMethod(e.method) as Endpoint['method'];
    return {
      method,
      path: e.path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1'),
      handler: e.handler,
      operationId: endpointOperationId(e.handler, { file, path: at(i) }).name,
      auth: resolveAuth(e.auth, undefined, READ_METHODS.has(method) ? null : writeAuth),
      status: e.status ?? (method === 'post' ? 201 : 200),
      // Refresh and logout write one row at a time, each atomic alone, and must keep what they write
      // when they answer 401: a reused refresh token's family stays revoked.
      transaction: !READ_METHODS.has(method) && e.account !== 'refresh' && e.account !== 'logout',
      tags: e.tags ?? [tag],
      summary: e.summary,
      description: e.description,
      decorators: e.decorators ?? [],
      errors: e.errors ?? {},
      request: e.request ? freeSchema(e.request.name ?? `${pascalCase(e.handler)}Request`, 'in', e.request) : undefined,
      response: e.response ? freeSchema(e.response.name ?? `${pascalCase(e.handler)}Response`, 'out', e.response) : undefined,
      paginate: e.paginate === undefined ? undefined : (paginationOf(e.paginate) ?? undefined),
      ...(e.account ? { account: e.account } : {}),
    };
  });
}

/** Custom endpoints with these methods only read: no transaction. */
const READ_METHODS = new Set<Endpoint['method']>(['get', 'head', 'options']);

/** How the five operations are served: the table the runtime serves them by. */
const OPERATION_TABLE: Record<
  OperationKind,
  { method: Operation['method']; pathKind: Operation['pathKind']; status: number; transaction: boolean }
> = CRUD_OPERATIONS;

const isNotSet = (v: unknown) => v === undefined || v === 'NOT_SET';

/**
 * The default behaviours' resolution: a per-operation attribute overrides `auth` unless NOT_SET; null is public.
 * Both NOT_SET: `unset`, public unless the service sets `auth.default_write_auth` for a write.
 */
export function resolveAuth(operationAuth: AuthListSpec, fallback: AuthListSpec, unset: AuthSpec = null): AuthSpec {
  const chosen = !isNotSet(operationAuth) ? operationAuth : fallback;
  if (chosen === undefined || chosen === 'NOT_SET') return unset && [...unset];
  return chosen === null ? null : [...chosen];
}

/** The operations that write. */
const WRITES = new Set<OperationKind>(['create', 'update', 'delete']);

export function operationsOf(names: ResourceNames, viewset: ViewsetSpec, writeAuth: AuthSpec): Operation[] {
  return names.operations.map(({ kind, operationId }) => {
    const op = OPERATION_TABLE[kind];
    return {
      kind,
      method: op.method,
      pathKind: op.pathKind,
      status: op.status,
      transaction: op.transaction,
      operationId: operationId.name,
      summary: DEFAULT_DOCS[kind],
      description: viewset[`${kind}_docs`],
      auth: resolveAuth(viewset[OPERATION_AUTH_KEYS[kind]], viewset.auth, WRITES.has(kind) ? writeAuth : null),
      decorators: viewset.extra_decorators?.[kind] ?? [],
      override: viewset.overrides?.[kind],
      roles: viewset.permission_roles?.[kind],
      throttles: throttlesOf(viewset, viewset.operation_throttles?.[kind], operationId.name, names.table.name),
    };
  });
}

/** The most items of one bulk request when the spec gives no `max_items`. */
export const DEFAULT_BULK_MAX_ITEMS = 100;

/** Bulk routes, each with the operation it repeats (validation makes sure the viewset serves it). */
export function bulkOf(names: ResourceNames, viewset: ViewsetSpec, operations: Operation[]): BulkOperation[] {
  return names.bulk.map(({ kind, method, operationId }) => ({
    kind,
    method,
    operationId: operationId.name,
    operation: operations.find((o) => o.kind === kind)!,
    atomic: viewset.bulk?.atomic !== false,
    maxItems: viewset.bulk?.max_items ?? DEFAULT_BULK_MAX_ITEMS,
  }));
}

/** The primary key as a request body carries it, required. */
export function bulkKey(d: Draft): SchemaField {
  return bulkKeyOf(d.fields[0]);
}

/** The primary key `pk` as a body names a row by it, required. */
export function bulkKeyOf(pk: Field): SchemaField {
  const kind = valueKind(pk);
  return {
    name: pk.name,
    kind: 'value',
    field: pk,
    value: kind,
    required: true,
    nullable: false,
    maxLength: pk.maxLength,
    bounds: boundsOf(kind),
    description: pk.description,
  };
}

/** One item of a bulk update: the primary key first, then the update schema's other fields. */
export function bulkUpdateItem(d: Draft, update: SchemaModel): SchemaModel {
  const key = bulkKey(d);
  return {
    name: `${d.model}BulkUpdate`,
    role: 'update',
    source: update.source,
    fields: [key, ...update.fields.filter((f) => f.name !== key.name)],
  };
}

export function paginationOf(value: PaginationSpec): Pagination | null {
  if (value === null) return null;
  if (value === undefined) return { class: 'PageNumberPagination', builtin: true, options: {} };
  const cls = typeof value === 'string' ? value : value.class;
  const options = typeof value === 'string' ? {} : { page_size: value.page_size, max_page_size: value.max_page_size };
  return { class: cls, builtin: isBuiltinPaginator(cls), options };
}
