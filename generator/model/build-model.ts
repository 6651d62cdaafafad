/**
 * Stage 3: the intermediate model from the described specs (check-model.ts): the names derived
 * there, and everything else (columns, schemas, resolved auth, operations, filters) derived here,
 * once, from the typed spec documents. Templates only print the model.
 */
import { INT32, isBuiltinPaginator } from '@svcgen/runtime/catalogue';
import { buildFilters, compileLookup, modelGraph, paramSpec, type ModelGraph } from './build-filters';
import type { DescribedResource, DescribedSpecs } from './check-model';
import type {
  ActionSpec,
  ThrottleSpec,
  AuthListSpec,
  EndpointSpec,
  FieldSpec,
  ManualFieldSpec,
  ManualSchemaSpec,
  PaginationSpec,
  RelationSpec,
  ResourceSpec,
  SerializerSectionSpec,
  ServiceSpec,
  AccountKind,
  ViewsetSpec,
} from '../validate/meta-schema';
import { SETTINGS, type SettingName } from '../validate/meta-schema';
import type {
  Action,
  BulkOperation,
  RateLimit,
  SoftDelete,
  SoftDeleteRoute,
  AuthSpec,
  Endpoint,
  Field,
  FieldType,
  ManyToMany,
  Operation,
  OperationKind,
  OrderingColumn,
  Pagination,
  Relation,
  NestedWrite,
  Resource,
  ReverseRelation,
  SchemaField,
  SchemaModel,
  SchemaRole,
  ServiceModel,
  ValueKind,
} from './model';
import { pascalCase, snakeCase } from './names';
import { columnName, endpointMethod, endpointOperationId, relationOperationIds, relationPath, type ResourceNames } from './resource-names';
import { OPERATION_AUTH_KEYS } from '../validate/viewset-defaults';

const DEFAULT_DOCS: Record<OperationKind, string> = {
  list: 'List all objects.',
  create: 'Create a new object.',
  retrieve: 'Retrieve a specific object by its primary key.',
  update: 'Update an object by its primary key.',
  delete: 'Delete an object by its primary key.',
};

const SAFE = { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER };

const VALUE_KIND: Record<Exclude<FieldType, 'foreign_key' | 'list'>, ValueKind> = {
  integer: 'int',
  big_integer: 'bigint',
  float: 'float',
  decimal: 'decimal',
  string: 'str',
  text: 'str',
  password: 'str',
  email: 'email',
  url: 'url',
  uuid: 'uuid',
  boolean: 'bool',
  date: 'date',
  datetime: 'datetime',
  json: 'json',
};

const MANUAL_KIND: Record<string, ValueKind> = {
  str: 'str',
  int: 'int',
  float: 'float',
  bool: 'bool',
  date: 'date',
  datetime: 'datetime',
  uuid: 'uuid',
  decimal: 'decimal',
  email: 'email',
  url: 'url',
  dict: 'json',
  list: 'list',
};

/** A resource's columns, before its schemas and operations: what other resources refer to. */
interface Draft {
  described: DescribedResource;
  spec: ResourceSpec;
  names: ResourceNames;
  model: string;
  table: string;
  /** Column fields, the primary key first. */
  fields: Field[];
  m2mSpecs: [string, FieldSpec][];
}

export function buildModel(described: DescribedSpecs): ServiceModel {
  const service: ServiceSpec | undefined = described.service?.data;
  // Foreign keys carry their target's table and primary key: both are known before any field is made.
  const targets: Targets = new Map(
    described.resources.map((r) => [r.names.model.name, { table: r.names.table.name, pk: primaryKeyOf(r) }]),
  );
  const drafts = described.resources.map((r) => draftResource(r, targets));
  const byModel = new Map(drafts.map((d) => [d.model, d]));
  // Second pass, every resource's fields known: each relation field naming its reverse side.
  const m2ms = new Map(drafts.map((d) => [d.model, m2mOf(d, byModel)]));
  const reverse = reverseRelations(drafts, m2ms);
  const settings = Object.fromEntries(
    (Object.keys(SETTINGS) as SettingName[]).map((name) => [name, service?.settings?.[name] ?? SETTINGS[name].default]),
  ) as Record<SettingName, string | number | boolean>;
  // The authenticators of a resource's writes the spec leaves NOT_SET: `auth.default_write_auth`, else public (the default behaviours').
  const writeAuth: AuthSpec = service?.auth?.default_write_auth ? [...service.auth.default_write_auth] : null;
  return {
    title: service?.title ?? '',
    version: String(service?.version ?? ''),
    description: service?.description,
    license: service?.license,
    contact: service?.contact,
    basePath: service?.base_path ?? '',
    extraFields: service?.extra_fields ?? 'ignore',
    tokenPaths: (service?.endpoints ?? []).filter((e) => e.response?.fields.access_token !== undefined).map((e) => e.path),
    settings,
    sqliteFile: service?.database?.sqlite_file ?? 'data/service.sqlite3',
    auth: {
      userModel: service?.auth?.user_model,
      keysDir: service?.auth?.keys_dir ?? 'data/keys',
      extraClaims: service?.auth?.extra_claims ?? [],
      profileFields: service?.auth?.profile_fields ?? [],
      cookies: service?.auth?.cookies === true || service?.auth?.cookies === 'only',
      cookiesOnly: service?.auth?.cookies === 'only',
    },
    hooks: service?.hooks,
    views: service?.views,
    hookRefs: described.service?.hooks ?? [],
    sharedHooks: [...(service?.paginators ?? []), ...(service?.auth?.authenticators ?? [])],
    endpoints: endpointsOf(service?.endpoints ?? [], 'default', (i) => ['endpoints', i, 'handler'], described.service?.spec.file ?? ''),
    exceptionHandlers: Object.entries(service?.exception_handlers ?? {}).map(([exception, handler]) => ({ exception, handler })),
    resources: withNestedWrites(
      drafts,
      drafts.map((d) => buildResource(d, byModel, m2ms, reverse, service?.extra_fields ?? 'ignore', writeAuth)),
    ),
  };
}

/**
 * Third pass, every resource built: the nested writes of each input section (`- lines: {write: ...}`),
 * whose items take the child resource's create fields, appended to schema_in and schema_update.
 */
function withNestedWrites(drafts: Draft[], resources: Resource[]): Resource[] {
  const byModel = new Map(resources.map((r) => [r.model, r]));
  resources.forEach((r, i) => {
    const sections = drafts[i].spec.serializer;
    for (const [role, kind] of [
      ['in', 'create'],
      ['update', 'update'],
    ] as const) {
      const schema = r.schemas[role];
      if (schema.source !== 'serializer') continue;
      for (const entry of sections?.[SECTION[role]]?.fields ?? []) {
        if (typeof entry === 'string') continue;
        const [name, spec] = Object.entries(entry)[0];
        if (spec.write === undefined) continue;
        const write = nestedWrite(r, name, spec.write, byModel, kind, spec.max_items ?? DEFAULT_NESTED_MAX_ITEMS);
        schema.fields.push({ name, kind: 'nested_write', value: 'list', required: false, nullable: false, write });
        r.nestedWrites[kind].push(write);
      }
      const writes = r.nestedWrites[kind];
      if (writes.length === 0) continue;
      const base = r.responses[kind];
      const lists = writes.map((w): SchemaField => ({
        name: w.name,
        kind: 'nested_write',
        value: 'list',
        required: kind === 'create',
        nullable: false,
        write: w,
      }));
      r.nestedResults[kind] = {
        name: `${r.model}${kind === 'create' ? 'Create' : 'Update'}Result`,
        role: 'out',
        source: base.source,
        fields: [...base.fields, ...lists],
      };
    }
  });
  return resources;
}

/** The nested write of the reverse relation `name` (validated: a reverse foreign key whose resource creates its rows). */
function nestedWrite(
  r: Resource,
  name: string,
  mode: NestedWrite['mode'],
  byModel: ReadonlyMap<string, Resource>,
  kind: 'create' | 'update',
  maxItems: number,
): NestedWrite {
  const relation = r.reverse.find((rel) => rel.name === name)!;
  const child = byModel.get(relation.from)!;
  const fields = child.schemas.in.fields.filter((f) => f.field !== relation.field && f.kind !== 'nested_write');
  const suffix = kind === 'create' ? 'Item' : 'UpdateItem';
  // In an update, an item naming a child's key changes that child; one without creates a child.
  const key: SchemaField = { ...bulkKeyOf(child.pk), required: false };
  const item: SchemaModel = {
    name: `${r.model}${pascalCase(name)}${suffix}`,
    role: 'in',
    source: 'serializer',
    fields: kind === 'create' ? fields : [key, ...fields.filter((f) => f.name !== key.name)],
  };
  return { name, relation, mode, child, item, maxItems };
}

/** The primary key field: the one marked `primary_key`, else the implicit auto-increment `id`. */
function primaryKeyOf(r: DescribedResource): Field {
  const file = r.spec.file;
  const entry = Object.entries(r.data.fields).find(([, f]) => f.primary_key === true);
  return entry ? makeField(file, entry[0], entry[1], undefined) : implicitId(file);
}

/** What a foreign key needs of the resource it points to. */
type Targets = ReadonlyMap<string, { table: string; pk: Field }>;

function draftResource(r: DescribedResource, targets: Targets): Draft {
  const fields: Field[] = [targets.get(r.names.model.name)!.pk];
  const m2mSpecs: [string, FieldSpec][] = [];
  for (const [name, f] of Object.entries(r.data.fields)) {
    if (f.type === 'many_to_many') m2mSpecs.push([name, f]);
    else if (f.primary_key !== true)
      fields.push(makeField(r.spec.file, name, f, f.type === 'foreign_key' ? targets.get(f.to!) : undefined));
  }
  return { described: r, spec: r.data, names: r.names, model: r.names.model.name, table: r.names.table.name, fields, m2mSpecs };
}

function implicitId(file: string): Field {
  return {
    name: 'id',
    column: 'id',
    type: 'integer',
    primaryKey: true,
    autoIncrement: true,
    nullable: false,
    blank: false,
    unique: true,
    ignoreCase: false,
    index: false,
    hasDefault: false,
    default: undefined,
    autoNowAdd: false,
    autoNow: false,
    source: { file, path: ['fields'] },
  };
}

const DEFAULT_MAX_LENGTH: Partial<Record<FieldType, number>> = { email: 254, url: 200, password: 128 };

/**
 * The items a `list` field holds when its spec sets no `max_items`: a list is read whole by every
 * `contains` and `overlap` filter on it, row by row, so its length is the work one row costs.
 */
export const DEFAULT_LIST_MAX_ITEMS = 1000;

/**
 * The items one request may send in a nested write's list when the spec sets no `max_items`: each
 * is a write of the parent's one transaction, which holds a connection (and SQLite's write lock)
 * until the last is written. As a bulk route's default.
 */
export const DEFAULT_NESTED_MAX_ITEMS = 100;

/** A column field; `target` is the table and primary key a foreign key refers to. */
function makeField(file: string, name: string, f: FieldSpec, target: { table: string; pk: Field } | undefined): Field {
  const type = f.type as FieldType;
  const isFk = type === 'foreign_key';
  const primaryKey = f.primary_key === true;
  return {
    name,
    column: columnName(name, type),
    type,
    primaryKey,
    autoIncrement: primaryKey && (type === 'integer' || type === 'big_integer') && f.default === undefined,
    nullable: f.null === true,
    blank: f.blank === true || f.default === '',
    unique: primaryKey || f.unique === true,
    ignoreCase: f.unique === true && f.ignore_case === true,
    index: f.db_index === true || isFk,
    hasDefault: f.default !== undefined,
    default: f.default,
    autoNowAdd: f.auto_now_add === true,
    autoNow: f.auto_now === true,
    maxLength: f.max_length ?? DEFAULT_MAX_LENGTH[type],
    maxDigits: type === 'decimal' ? (f.max_digits ?? 12) : undefined,
    decimalPlaces: type === 'decimal' ? (f.decimal_places ?? 2) : undefined,
    choices: f.choices,
    list: type === 'list' ? { of: f.of!, maxItems: f.max_items ?? DEFAULT_LIST_MAX_ITEMS } : undefined,
    description: f.description,
    relation:
      isFk && target ? { target: f.to!, targetTable: target.table, targetPk: target.pk, onDelete: f.on_delete ?? 'cascade' } : undefined,
    renamedFrom: f.renamed_from,
    source: { file, path: ['fields', name] },
  };
}

function m2mOf(d: Draft, byModel: ReadonlyMap<string, Draft>): ManyToMany[] {
  return d.m2mSpecs.map(([name, f]) => {
    const target = byModel.get(f.to!)!;
    const own = `${snakeCase(d.model)}_id`;
    const other = `${snakeCase(target.model)}_id`;
    const self = own === other;
    return {
      name,
      target: target.model,
      targetTable: target.table,
      targetPk: target.fields[0],
      joinTable: `${d.table}_${name}`,
      ownColumn: self ? `from_${own}` : own,
      otherColumn: self ? `to_${other}` : other,
      description: f.description,
      source: { file: d.described.spec.file, path: ['fields', name] },
    };
  });
}

/**
 * The reverse relations of every model, by target: each foreign key or many-to-many field with a
 * `reverse_name`, in order of resources, then fields.
 */
function reverseRelations(drafts: Draft[], m2ms: ReadonlyMap<string, ManyToMany[]>): Map<string, ReverseRelation[]> {
  const byTarget = new Map<string, ReverseRelation[]>();
  for (const d of drafts) {
    for (const [name, f] of Object.entries(d.spec.fields)) {
      if (f.reverse_name === undefined) continue;
      const common = {
        name: f.reverse_name,
        from: d.model,
        fromTable: d.table,
        source: { file: d.described.spec.file, path: ['fields', name, 'reverse_name'] },
      };
      const rel: ReverseRelation =
        f.type === 'many_to_many'
          ? { ...common, kind: 'many_to_many', m2m: m2ms.get(d.model)!.find((m) => m.name === name)! }
          : { ...common, kind: 'foreign_key', field: d.fields.find((x) => x.name === name)! };
      byTarget.set(f.to!, [...(byTarget.get(f.to!) ?? []), rel]);
    }
  }
  return byTarget;
}

/** An ordering field's column; `author__username` follows the foreign keys (validated: no many-to-many on the way). */
function orderingColumn(d: Draft, graph: ModelGraph, name: string): OrderingColumn {
  if (!name.includes('__')) return { column: d.fields.find((f) => f.name === name)!.column };
  const plan = compileLookup(graph, d.model, name);
  return { column: plan.column, hops: plan.hops.map((h) => ({ from: h.from, table: h.table, key: h.select })) };
}

function buildResource(
  d: Draft,
  byModel: ReadonlyMap<string, Draft>,
  m2ms: ReadonlyMap<string, ManyToMany[]>,
  reverses: ReadonlyMap<string, ReverseRelation[]>,
  extraFields: 'ignore' | 'forbid',
  writeAuth: AuthSpec,
): Resource {
  const viewset: ViewsetSpec = d.spec.viewset ?? {};
  const names = d.names;
  const m2m = m2ms.get(d.model)!;
  const reverse = reverses.get(d.model) ?? [];
  const ctx: SchemaContext = { draft: d, m2m, reverse, byModel };

  const schemas = {} as Record<SchemaRole, SchemaModel>;
  for (const role of ['in', 'out', 'update'] as const) schemas[role] = resolveSchema(ctx, role)!;
  const detail = resolveSchema(ctx, 'detail');
  schemas.detail = detail ?? schemas.out;

  const graph = modelGraph(byModel, (t) => m2mOf(t, byModel));
  const orderingFields = (viewset.ordering_fields ?? []).map((name) => ({ name, ...orderingColumn(d, graph, name) }));
  const defaultOrdering = viewset.default_ordering
    ? viewset.default_ordering.split(',').map((term) => ({
        ...orderingColumn(d, graph, term.replace(/^-/, '')),
        order: term.startsWith('-') ? ('desc' as const) : ('asc' as const),
      }))
    : [];

  const operations = operationsOf(names, viewset, writeAuth);
  return {
    model: d.model,
    snake: names.snake,
    table: d.table,
    verboseName: names.verboseName,
    verboseNamePlural: names.verboseNamePlural,
    verboseKey: names.verboseName.replace(/ /g, '_'),
    classKey: names.snake,
    base: names.base.name,
    moduleName: d.table,
    tag: names.tag,
    specFile: d.described.spec.relPath,
    hooks: d.spec.hooks,
    hookRefs: d.described.hooks,
    pk: d.fields[0],
    fields: d.fields,
    m2m,
    reverse,
    indexes: names.indexes.map(({ name, columns, unique, entry }) => ({ name, columns, unique, source: entry })),
    softDelete: softDeleteOf(d, viewset, writeAuth),
    schemas,
    hasDetail: detail !== undefined,
    responses: { create: responseSchema(ctx, schemas, 'create'), update: responseSchema(ctx, schemas, 'update') },
    nestedWrites: { create: [], update: [] },
    nestedResults: {},
    operations,
    bulk: bulkOf(names, viewset, operations),
    bulkKey: names.bulk.some((b) => b.kind !== 'create') ? bulkKey(d) : null,
    bulkUpdateItem: names.bulk.some((b) => b.kind === 'update') ? bulkUpdateItem(d, schemas.update) : null,
    pagination: paginationOf(viewset.pagination_class),
    ordering: { fields: orderingFields, default: defaultOrdering },
    requireUpdateFields: viewset.require_update_fields === true,
    errorSchema: viewset.error_schema
      ? manualSchema(ctx, viewset.error_schema.name ?? `${d.model}Error`, 'out', viewset.error_schema)
      : null,
    lifecycle: viewset.lifecycle ?? {},
    querysetRequest: viewset.queryset_request,
    normalizeInput: viewset.normalize_input,
    querysetWrite: viewset.queryset_write ?? viewset.queryset_request,
    objectPermission: viewset.has_object_permission,
    actions: actionsOf(names, viewset, writeAuth),
    relations: relationsOf(ctx, viewset, m2m, writeAuth),
    expand: Object.entries(viewset.expand ?? {}).map(([name, spec]) =>
      schemaFieldFor(ctx, lookup(ctx, name), 'out', spec.fields, spec.limit),
    ),
    fieldSelection: viewset.field_selection === true,
    requireIfMatch: viewset.require_if_match === true,
    extraFields: viewset.extra_fields ?? extraFields,
    search: viewset.search_fields
      ? { fields: viewset.search_fields.map((name) => ({ name, lookup: compileLookup(graph, d.model, `${name}__icontains`) })) }
      : null,
    filters: buildFilters(viewset, d.model, graph),
    endpoints: endpointsOf(
      viewset.endpoints ?? [],
      names.tag,
      (i) => ['viewset', 'endpoints', i, 'handler'],
      d.described.spec.file,
      writeAuth,
    ),
  };
}

/**
 * The soft delete of a viewset: its field (validated: a nullable datetime), its restore and hard
 * delete routes (authenticated as delete is; restore also takes delete's `permission_roles`), and the
 * columns that stay unique among live rows: each unique field and each unique index.
 */
function softDeleteOf(d: Draft, viewset: ViewsetSpec, writeAuth: AuthSpec): SoftDelete | null {
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

function relationsOf(ctx: SchemaContext, viewset: ViewsetSpec, m2m: ManyToMany[], writeAuth: AuthSpec): Relation[] {
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

function actionsOf(names: ResourceNames, viewset: ViewsetSpec, writeAuth: AuthSpec): Action[] {
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

function endpointsOf(
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

/** `str` or `{type: str, ...}`: a manual schema field's options. */
function manualOptions(spec: ManualFieldSpec): Exclude<ManualFieldSpec, string> {
  return typeof spec === 'string' ? { type: spec } : spec;
}

/** A manual schema not tied to a model's fields (custom endpoints and actions). */
function freeSchema(name: string, role: SchemaRole, manual: ManualSchemaSpec): SchemaModel {
  const fields = Object.entries(manual.fields).map(([fname, spec]) => {
    const opts = manualOptions(spec);
    const sf: SchemaField = {
      name: fname,
      kind: 'value',
      value: MANUAL_KIND[opts.type],
      required: opts.required ?? opts.default === undefined,
      nullable: opts.nullable === true,
      maxLength: opts.max_length,
      description: opts.description,
      bounds: MANUAL_KIND[opts.type] === 'int' ? SAFE : undefined,
    };
    if (opts.default !== undefined) sf.defaultValue = { value: opts.default };
    return sf;
  });
  return { name: manual.name ?? name, role, source: 'manual', fields };
}

/** Custom endpoints with these methods only read: no transaction. */
const READ_METHODS = new Set<Endpoint['method']>(['get', 'head', 'options']);

const OPERATION_TABLE: Record<
  OperationKind,
  { method: Operation['method']; pathKind: Operation['pathKind']; status: number; transaction: boolean }
> = {
  create: { method: 'post', pathKind: 'collection', status: 201, transaction: true },
  list: { method: 'get', pathKind: 'collection', status: 200, transaction: false },
  retrieve: { method: 'get', pathKind: 'item', status: 200, transaction: false },
  update: { method: 'patch', pathKind: 'itemSlash', status: 200, transaction: true },
  delete: { method: 'delete', pathKind: 'itemSlash', status: 204, transaction: true },
};

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

function operationsOf(names: ResourceNames, viewset: ViewsetSpec, writeAuth: AuthSpec): Operation[] {
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
function bulkOf(names: ResourceNames, viewset: ViewsetSpec, operations: Operation[]): BulkOperation[] {
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
function bulkKey(d: Draft): SchemaField {
  return bulkKeyOf(d.fields[0]);
}

/** The primary key `pk` as a body names a row by it, required. */
function bulkKeyOf(pk: Field): SchemaField {
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
function bulkUpdateItem(d: Draft, update: SchemaModel): SchemaModel {
  const key = bulkKey(d);
  return {
    name: `${d.model}BulkUpdate`,
    role: 'update',
    source: update.source,
    fields: [key, ...update.fields.filter((f) => f.name !== key.name)],
  };
}

function paginationOf(value: PaginationSpec): Pagination | null {
  if (value === null) return null;
  if (value === undefined) return { class: 'PageNumberPagination', builtin: true, options: {} };
  const cls = typeof value === 'string' ? value : value.class;
  const options = typeof value === 'string' ? {} : { page_size: value.page_size, max_page_size: value.max_page_size };
  return { class: cls, builtin: isBuiltinPaginator(cls), options };
}

/* ---------------------------------------------------------------- schemas */

interface SchemaContext {
  draft: Draft;
  m2m: ManyToMany[];
  /** Reverse relations read schemas may name. */
  reverse: ReverseRelation[];
  byModel: ReadonlyMap<string, Draft>;
}

const SECTION: Record<SchemaRole, 'ReadSerializer' | 'DetailSerializer' | 'CreateSerializer' | 'UpdateSerializer'> = {
  out: 'ReadSerializer',
  detail: 'DetailSerializer',
  in: 'CreateSerializer',
  update: 'UpdateSerializer',
};

const SCHEMA_SUFFIX: Record<SchemaRole, string> = { in: 'In', out: 'Out', detail: 'Detail', update: 'Update' };

/**
 * The schema for a role, from the first source that defines it: a manual schema on the viewset,
 * the viewset's serializer_class, the resource's serializer, else generated from the fields.
 * `detail` with no source of its own is undefined (retrieve falls back to schema_out).
 */
function resolveSchema(ctx: SchemaContext, role: SchemaRole): SchemaModel | undefined {
  const spec = ctx.draft.spec;
  const viewset = spec.viewset ?? {};
  const name = `${ctx.draft.model}${SCHEMA_SUFFIX[role]}`;
  const manual = viewset[`schema_${role}`];
  if (manual) return manualSchema(ctx, manual.name ?? name, role, manual);
  const fromClass = viewset.serializer_class?.Meta[`schema_${role}`];
  if (fromClass && hasContent(fromClass)) return sectionSchema(ctx, name, role, fromClass, 'serializer_class');
  const section = spec.serializer?.[SECTION[role]];
  if (section && hasContent(section)) return sectionSchema(ctx, name, role, section, 'serializer');
  if (role === 'detail') return undefined;
  const fields = autoFields(ctx, role).map((f) => schemaFieldFor(ctx, f, role, undefined));
  // PATCH semantics: every field of a generated update schema is optional.
  if (role === 'update') for (const f of fields) f.required = false;
  return { name, role, source: 'auto', fields };
}

/**
 * What an operation answers with (ninja-aio-crud's `schema_<operation>_out`): the named schema of the
 * resource, or a manual schema of its own (`<Model>CreateOut`, `<Model>UpdateOut` unless named).
 */
function responseSchema(ctx: SchemaContext, schemas: Record<SchemaRole, SchemaModel>, kind: 'create' | 'update'): SchemaModel {
  const spec = ctx.draft.spec.viewset?.[`schema_${kind}_out`];
  if (spec === undefined || spec === 'schema_out') return schemas.out;
  if (spec === 'schema_detail') return schemas.detail;
  return manualSchema(ctx, spec.name ?? `${ctx.draft.model}${kind === 'create' ? 'CreateOut' : 'UpdateOut'}`, 'out', spec);
}

const hasContent = (s: SerializerSectionSpec) =>
  (s.fields?.length ?? 0) + (s.optionals?.length ?? 0) + (s.excludes?.length ?? 0) + (s.customs?.length ?? 0) > 0;

type FieldRef = Field | ManyToMany | ReverseRelation;
const isM2m = (f: FieldRef): f is ManyToMany => 'joinTable' in f;
const isReverse = (f: FieldRef): f is ReverseRelation => 'fromTable' in f;

/** The most children a reverse relation shows per item when its entry gives no `limit`. */
export const DEFAULT_REVERSE_LIMIT = 100;

/** Fields a schema of this role takes when nothing names them. */
function autoFields(ctx: SchemaContext, role: SchemaRole): FieldRef[] {
  const all: FieldRef[] = [...ctx.draft.fields, ...ctx.m2m];
  if (role === 'out' || role === 'detail') return all.filter((f) => isM2m(f) || (f as Field).type !== 'password');
  // The soft delete's field is written by DELETE and restore only.
  const softDeleted = ctx.draft.names.softDelete?.field;
  return all.filter((f) => isM2m(f) || (isEditable(f as Field, role) && f.name !== softDeleted));
}

function isEditable(f: Field, role: SchemaRole): boolean {
  if (f.autoNow || f.autoNowAdd) return false;
  if (f.primaryKey) return role === 'in' && !f.autoIncrement;
  return true;
}

function lookup(ctx: SchemaContext, name: string): FieldRef {
  return ctx.draft.fields.find((f) => f.name === name) ?? ctx.m2m.find((m) => m.name === name) ?? ctx.reverse.find((r) => r.name === name)!;
}

function sectionSchema(
  ctx: SchemaContext,
  name: string,
  role: SchemaRole,
  section: SerializerSectionSpec,
  source: SchemaModel['source'],
): SchemaModel {
  const excludes = new Set<string>(section.excludes ?? []);
  const entries: { name: string; nested?: string[]; limit?: number; optional: boolean }[] = [];
  if (section.fields || section.optionals) {
    for (const entry of section.fields ?? []) {
      if (typeof entry === 'string') entries.push({ name: entry, optional: false });
      else {
        const [fname, spec] = Object.entries(entry)[0];
        // A nested write (`write`) is not a field: withNestedWrites adds it once every resource is built.
        if (spec.write === undefined) entries.push({ name: fname, nested: spec.fields, limit: spec.limit, optional: false });
      }
    }
    for (const [fname] of section.optionals ?? []) entries.push({ name: fname, optional: true });
  } else {
    for (const f of autoFields(ctx, role)) entries.push({ name: f.name, optional: false });
  }
  const fields = entries
    .filter((e) => !excludes.has(e.name))
    .map((e) => {
      const sf = schemaFieldFor(ctx, lookup(ctx, e.name), role, e.nested, e.limit);
      if (e.optional || role === 'update') sf.required = false;
      return sf;
    });
  for (const [fname, type, hook] of section.customs ?? []) {
    fields.push({ name: fname, kind: 'value', value: MANUAL_KIND[type], required: true, nullable: false, compute: hook });
  }
  return { name, role, source, fields };
}

function manualSchema(ctx: SchemaContext, name: string, role: SchemaRole, manual: ManualSchemaSpec): SchemaModel {
  const fields = Object.entries(manual.fields).map(([fname, spec]) => {
    const opts = manualOptions(spec);
    const ref: Field | ManyToMany | undefined = ctx.draft.fields.find((f) => f.name === fname) ?? ctx.m2m.find((m) => m.name === fname);
    const sf: SchemaField = ref
      ? schemaFieldFor(ctx, ref, role, undefined)
      : { name: fname, kind: 'value', value: MANUAL_KIND[opts.type], required: true, nullable: false };
    // `list` names a list field's own value: its items keep their type and options.
    const ownList = sf.list !== undefined && opts.type === 'list';
    if (sf.kind === 'value' && MANUAL_KIND[opts.type] !== undefined && !ownList && !compatible(sf.value, MANUAL_KIND[opts.type])) {
      sf.value = MANUAL_KIND[opts.type];
    }
    if (opts.required !== undefined) sf.required = opts.required;
    else if (role === 'update') sf.required = false;
    if (opts.nullable !== undefined) sf.nullable = opts.nullable;
    if (opts.max_length !== undefined) sf.maxLength = opts.max_length;
    if (opts.default !== undefined) sf.defaultValue = { value: opts.default };
    return sf;
  });
  return { name, role, source: 'manual', fields };
}

/** A manual type that only widens the field's own kind keeps the field's constraints. */
function compatible(fieldKind: ValueKind, manualKind: ValueKind): boolean {
  if (fieldKind === manualKind) return true;
  if (manualKind === 'str') return ['email', 'url', 'uuid', 'date', 'datetime'].includes(fieldKind);
  if (manualKind === 'int') return fieldKind === 'bigint';
  return false;
}

/** The value kind of a field; of each item, for a list. */
function valueKind(f: Field): ValueKind {
  if (f.type === 'foreign_key') return valueKind(f.relation!.targetPk);
  return f.type === 'list' ? VALUE_KIND[f.list!.of] : VALUE_KIND[f.type];
}

/** The integer range of a field's values, or of a list's items. */
function fieldBounds(f: Field): SchemaField['bounds'] {
  const type = f.type === 'list' ? f.list!.of : f.type;
  return type === 'integer' ? INT32 : type === 'big_integer' ? SAFE : undefined;
}

function boundsOf(kind: ValueKind): SchemaField['bounds'] {
  return kind === 'int' ? INT32 : kind === 'bigint' ? SAFE : undefined;
}

function schemaFieldFor(ctx: SchemaContext, ref: FieldRef, role: SchemaRole, nested: string[] | undefined, limit?: number): SchemaField {
  const input = role === 'in' || role === 'update';
  if (isReverse(ref)) {
    // The children's keys (or records), at most `limit` per item: read schemas only (validated).
    const from = ctx.byModel.get(ref.from)!;
    const kind = valueKind(from.fields[0]);
    const sf: SchemaField = {
      name: ref.name,
      kind: nested ? 'nested_reverse' : 'reverse',
      reverse: ref,
      value: kind,
      required: true,
      nullable: false,
      bounds: boundsOf(kind),
      limit: limit ?? DEFAULT_REVERSE_LIMIT,
    };
    if (nested) sf.nested = { target: ref.from, fields: nestedFields(ctx, ref.from, nested) };
    return sf;
  }
  if (isM2m(ref)) {
    const kind = valueKind(ref.targetPk);
    const sf: SchemaField = {
      name: ref.name,
      kind: nested ? 'nested_many' : 'many_to_many',
      m2m: ref,
      value: kind,
      required: false,
      nullable: false,
      bounds: boundsOf(kind),
      description: ref.description,
    };
    // The related records (not their keys, which an update sends back whole): at most `limit` per item.
    if (nested) {
      sf.nested = { target: ref.target, fields: nestedFields(ctx, ref.target, nested) };
      sf.limit = limit ?? DEFAULT_REVERSE_LIMIT;
    }
    return sf;
  }
  const kind = valueKind(ref);
  const sf: SchemaField = {
    name: ref.name,
    kind: ref.type === 'foreign_key' ? (nested ? 'nested_one' : 'foreign_key') : 'value',
    field: ref,
    value: kind,
    required: input ? !(ref.nullable || ref.hasDefault || (ref.primaryKey && ref.type === 'uuid')) : true,
    nullable: ref.nullable,
    maxLength: ref.maxLength,
    choices: ref.choices,
    bounds: ref.type === 'foreign_key' ? boundsOf(kind) : fieldBounds(ref),
    decimal: ref.type === 'decimal' ? { maxDigits: ref.maxDigits!, decimalPlaces: ref.decimalPlaces! } : undefined,
    description: ref.description,
  };
  if (ref.list) sf.list = { maxItems: ref.list.maxItems };
  if (input && ref.type === 'password') sf.value = 'str';
  if (nested && ref.type === 'foreign_key')
    sf.nested = { target: ref.relation!.target, fields: nestedFields(ctx, ref.relation!.target, nested) };
  return sf;
}

function nestedFields(ctx: SchemaContext, target: string, names: string[]): SchemaField[] {
  const t = ctx.byModel.get(target)!;
  const tctx: SchemaContext = { draft: t, m2m: [], reverse: [], byModel: ctx.byModel };
  return names.map((n) => {
    const f = t.fields.find((x) => x.name === n)!;
    return schemaFieldFor(tctx, f, 'out', undefined);
  });
}
