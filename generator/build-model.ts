/**
 * Stage 3: the intermediate model from validated specs. Every derived value (names, columns,
 * paths, resolved auth, schema fields) is computed here, once; templates only print it.
 */
import type { LoadedSpecs, SpecFile } from './load';
import { SETTINGS, type SettingName } from './meta-schema';
import type {
  Action,
  AuthSpec,
  Endpoint,
  Field,
  FieldType,
  ManyToMany,
  Operation,
  OperationKind,
  Pagination,
  Relation,
  Resource,
  SchemaField,
  SchemaModel,
  SchemaRole,
  ServiceModel,
  ValueKind,
} from './model';
import { buildFilters, modelGraph } from './build-filters';
import { pascalCase, snakeCase, wordsOf } from './names';

/* The raw spec shapes, as the meta-schema guarantees them. */
type Raw = Record<string, any>;

export const BUILTIN_PAGINATORS = ['PageNumberPagination', 'LimitOffsetPagination', 'PageNumberResultsPagination'];
export const BUILTIN_AUTHENTICATORS = ['JWTAuth', 'AdminAuth', 'SuperuserAuth'];

/** Exception classes of the runtime that exception_handlers may name without a hooks module. */
export const BUILTIN_EXCEPTIONS = [
  'ApiException',
  'BaseException',
  'SerializeError',
  'AuthError',
  'ForbiddenError',
  'NotFoundError',
  'MultipleObjectsError',
  'HttpError',
  'RequestValidationError',
  'ValidationError',
  'IntegrityError',
];

const DEFAULT_DOCS: Record<OperationKind, string> = {
  list: 'List all objects.',
  create: 'Create a new object.',
  retrieve: 'Retrieve a specific object by its primary key.',
  update: 'Update an object by its primary key.',
  delete: 'Delete an object by its primary key.',
};

const INT32 = { min: -2147483648, max: 2147483647 };
const SAFE = { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER };

const VALUE_KIND: Record<Exclude<FieldType, 'foreign_key'>, ValueKind> = {
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

interface Draft {
  spec: SpecFile;
  raw: Raw;
  model: string;
  table: string;
  fields: Field[];
  m2mRaw: [string, Raw][];
}

export function buildModel(loaded: LoadedSpecs): ServiceModel {
  const service = (loaded.service?.data ?? {}) as Raw;
  const drafts = loaded.resources.map(draftResource);
  const byModel = new Map(drafts.map((d) => [d.model, d]));

  // Foreign keys need their target's primary key, so they resolve after every draft exists.
  for (const d of drafts) {
    for (const f of d.fields) {
      if (f.type !== 'foreign_key') continue;
      const target = byModel.get(f.relation!.target)!;
      f.relation!.targetTable = target.table;
      f.relation!.targetPk = target.fields[0];
    }
  }

  const settings = Object.fromEntries(
    (Object.keys(SETTINGS) as SettingName[]).map((name) => [name, service.settings?.[name] ?? SETTINGS[name].default]),
  ) as Record<SettingName, string | number | boolean>;

  const resources = drafts.map((d) => buildResource(d, byModel));
  return {
    title: service.title,
    version: String(service.version),
    description: service.description,
    basePath: service.base_path ?? '',
    settings,
    sqliteFile: service.database?.sqlite_file ?? 'data/service.sqlite3',
    auth: { userModel: service.auth?.user_model, keysDir: service.auth?.keys_dir ?? 'data/keys', extraClaims: service.auth?.extra_claims ?? [] },
    hooks: service.hooks,
    views: service.views,
    sharedHooks: [...(service.paginators ?? []), ...(service.auth?.authenticators ?? [])],
    endpoints: endpointsOf(service.endpoints ?? [], 'service'),
    exceptionHandlers: Object.entries((service.exception_handlers ?? {}) as Record<string, string>).map(([exception, handler]) => ({
      exception,
      handler,
    })),
    resources,
  };
}

function verboseNames(raw: Raw): { verboseName: string; verboseNamePlural: string } {
  const viewset = raw.viewset ?? {};
  const verboseName = viewset.model_verbose_name || raw.verbose_name || wordsOf(raw.model);
  const verboseNamePlural = viewset.model_verbose_name_plural || raw.verbose_name_plural || `${verboseName}s`;
  return { verboseName, verboseNamePlural };
}

function draftResource(spec: SpecFile): Draft {
  const raw = spec.data as Raw;
  // The table follows the resource's own names; model_verbose_name(_plural) only change how it is shown.
  const plural = raw.verbose_name_plural || `${raw.verbose_name || wordsOf(raw.model)}s`;
  const table = raw.table ?? snakeCase(plural.replace(/ /g, '_'));
  const fields: Field[] = [];
  const m2mRaw: [string, Raw][] = [];
  for (const [name, f] of Object.entries(raw.fields as Record<string, Raw>)) {
    if (f.type === 'many_to_many') {
      m2mRaw.push([name, f]);
      continue;
    }
    fields.push(makeField(spec, name, f));
  }
  let pkIndex = fields.findIndex((f) => f.primaryKey);
  if (pkIndex < 0) {
    fields.unshift(implicitId(spec));
    pkIndex = 0;
  }
  const [pk] = fields.splice(pkIndex, 1);
  fields.unshift(pk);
  return { spec, raw, model: raw.model, table, fields, m2mRaw };
}

function implicitId(spec: SpecFile): Field {
  return {
    name: 'id',
    column: 'id',
    type: 'integer',
    primaryKey: true,
    autoIncrement: true,
    nullable: false,
    blank: false,
    unique: true,
    index: false,
    hasDefault: false,
    default: undefined,
    autoNowAdd: false,
    autoNow: false,
    source: { file: spec.file, path: ['fields'] },
  };
}

function makeField(spec: SpecFile, name: string, f: Raw): Field {
  const isFk = f.type === 'foreign_key';
  const primaryKey = f.primary_key === true;
  return {
    name,
    column: isFk ? `${name}_id` : name,
    type: f.type,
    primaryKey,
    autoIncrement: primaryKey && (f.type === 'integer' || f.type === 'big_integer') && f.default === undefined,
    nullable: f.null === true,
    blank: f.blank === true || f.default === '',
    unique: primaryKey || f.unique === true,
    index: f.db_index === true || isFk,
    hasDefault: f.default !== undefined,
    default: f.default,
    autoNowAdd: f.auto_now_add === true,
    autoNow: f.auto_now === true,
    maxLength: f.max_length ?? (f.type === 'email' ? 254 : f.type === 'url' ? 200 : f.type === 'password' ? 128 : undefined),
    maxDigits: f.type === 'decimal' ? (f.max_digits ?? 12) : undefined,
    decimalPlaces: f.type === 'decimal' ? (f.decimal_places ?? 2) : undefined,
    choices: f.choices,
    description: f.description,
    relation: isFk
      ? { target: f.to, targetTable: '', targetPk: undefined as unknown as Field, onDelete: f.on_delete ?? 'cascade' }
      : undefined,
    renamedFrom: f.renamed_from,
    source: { file: spec.file, path: ['fields', name] },
  };
}

function m2mOf(d: Draft, byModel: Map<string, Draft>): ManyToMany[] {
  return d.m2mRaw.map(([name, f]) => {
    const target = byModel.get(f.to)!;
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
      source: { file: d.spec.file, path: ['fields', name] },
    };
  });
}

function buildResource(d: Draft, byModel: Map<string, Draft>): Resource {
  const raw = d.raw;
  const viewset: Raw = raw.viewset ?? {};
  const { verboseName, verboseNamePlural } = verboseNames(raw);
  const m2m = m2mOf(d, byModel);
  const pk = d.fields[0];
  const ctx: SchemaContext = { draft: d, m2m, byModel };

  const schemas = {} as Record<SchemaRole, SchemaModel>;
  for (const role of ['in', 'out', 'update'] as const) schemas[role] = resolveSchema(ctx, role)!;
  const detail = resolveSchema(ctx, 'detail');
  schemas.detail = detail ?? schemas.out;

  const base = (viewset.api_route_path ?? '').replace(/^\/+|\/+$/g, '') || verboseNamePlural.toLowerCase().split(' ').join('-');
  const viewsetClass = viewset.class ?? 'APIViewSet';
  const docs = Object.fromEntries(
    (Object.keys(DEFAULT_DOCS) as OperationKind[]).map((k) => [k, viewset[`${k}_docs`] ?? DEFAULT_DOCS[k]]),
  ) as Record<OperationKind, string>;

  const columnOf = (name: string) => d.fields.find((f) => f.name === name)!.column;
  const orderingFields = ((viewset.ordering_fields ?? []) as string[]).map((name) => ({ name, column: columnOf(name) }));
  const defaultOrdering = viewset.default_ordering
    ? (viewset.default_ordering as string).split(',').map((term) => ({
        column: columnOf(term.replace(/^-/, '')),
        order: term.startsWith('-') ? ('desc' as const) : ('asc' as const),
      }))
    : [];

  return {
    model: d.model,
    snake: snakeCase(d.model),
    table: d.table,
    verboseName,
    verboseNamePlural,
    verboseKey: verboseName.replace(/ /g, '_'),
    classKey: snakeCase(d.model),
    base,
    moduleName: d.table,
    tag: verboseNamePlural[0].toUpperCase() + verboseNamePlural.slice(1),
    specFile: d.spec.relPath,
    hooks: raw.hooks,
    viewsetClass,
    pk,
    fields: d.fields,
    m2m,
    schemas,
    hasDetail: detail !== undefined,
    operations: operationsOf(d, viewset, viewsetClass, docs),
    pagination: paginationOf(viewset),
    ordering: { fields: orderingFields, default: defaultOrdering },
    requireUpdateFields: viewset.require_update_fields === true,
    errorSchema: viewset.error_schema ? manualSchema(ctx, `${d.model}Error`, 'out', viewset.error_schema) : null,
    lifecycle: viewset.lifecycle ?? {},
    querysetRequest: viewset.queryset_request,
    docs,
    actions: actionsOf(ctx, viewset),
    relations: relationsOf(ctx, viewset, m2m),
    filters: buildFilters(viewset, d.model, modelGraph(byModel, (t) => m2mOf(t, byModel))),
    endpoints: endpointsOf(viewset.endpoints ?? [], d.table),
  };
}

/** A query parameter or filter given as `[type, default]` or `{type, default}`. */
export function paramOf(name: string, spec: unknown): { name: string; kind: string; default: unknown } {
  if (Array.isArray(spec)) return { name, kind: spec[0], default: spec.length > 1 ? spec[1] : null };
  const o = spec as Raw;
  return { name, kind: o.type, default: o.default ?? null };
}

function relationsOf(ctx: SchemaContext, viewset: Raw, m2m: ManyToMany[]): Relation[] {
  const snake = snakeCase(ctx.draft.model);
  return ((viewset.m2m_relations ?? []) as Raw[]).map((rel) => {
    const field = m2m.find((m) => m.name === rel.related_name)!;
    const target = ctx.byModel.get(rel.model)!;
    const { verboseNamePlural } = verboseNames(target.raw);
    const path = ((rel.path ?? '') as string).replace(/^\/+/, '') || verboseNamePlural.toLowerCase().split(' ').join('-');
    const fallback = !isNotSet(rel.auth) ? rel.auth : !isNotSet(viewset.m2m_auth) ? viewset.m2m_auth : viewset.auth;
    const tctx: SchemaContext = { draft: target, m2m: [], byModel: ctx.byModel };
    const name = `${ctx.draft.model}${pascalCase(rel.related_name)}Item`;
    let itemSchema: SchemaModel;
    let itemSchemaIsTargetOut = false;
    if (rel.related_schema) itemSchema = manualSchema(tctx, rel.related_schema.name ?? name, 'out', rel.related_schema);
    else if (rel.serializer_class?.Meta?.schema_out) itemSchema = sectionSchema(tctx, name, 'out', rel.serializer_class.Meta.schema_out, 'serializer_class');
    else {
      itemSchema = resolveSchema({ draft: target, m2m: m2mOf(target, ctx.byModel), byModel: ctx.byModel }, 'out')!;
      itemSchemaIsTargetOut = true;
    }
    const segment = path.replace(/[^a-z0-9]+/g, '_');
    return {
      relatedName: rel.related_name,
      path,
      target: rel.model,
      m2m: field,
      getAuth: resolveAuth(rel.get_auth, fallback),
      postAuth: resolveAuth(rel.post_auth, fallback),
      add: rel.add !== false,
      remove: rel.remove !== false,
      get: rel.get !== false,
      appendSlash: rel.append_slash === true,
      filters: Object.entries((rel.filters ?? {}) as Record<string, unknown>).map(([n, spec]) => paramOf(n, spec)),
      itemSchema,
      itemSchemaIsTargetOut,
      getDecorators: rel.get_decorators ?? [],
      postDecorators: rel.post_decorators ?? [],
      getOperationId: `get_${snake}_${segment}`,
      manageOperationId: `manage_${snake}_${segment}`,
      queryParamsHandler: rel.query_params_handler,
      queryHandler: rel.query_handler,
    };
  });
}

function actionsOf(ctx: SchemaContext, viewset: Raw): Action[] {
  const snake = snakeCase(ctx.draft.model);
  return Object.entries((viewset.actions ?? {}) as Record<string, Raw>).map(([name, a]) => ({
    name,
    handler: a.handler,
    methods: a.methods ?? ['post'],
    operationId: `${name.replace(/-/g, '_')}_${snake}`,
    auth: resolveAuth(a.auth, viewset.auth),
    summary: a.summary,
    description: a.description,
    decorators: a.decorators ?? [],
    response:
      a.response && typeof a.response === 'object'
        ? freeSchema(`${pascalCase(a.handler)}Response`, 'out', a.response)
        : undefined,
  }));
}

function endpointsOf(list: Raw[], scope: string): Endpoint[] {
  return list.map((e) => {
    const method = (e.method as string).replace(/^api_/, '') as Endpoint['method'];
    return {
      method,
      path: (e.path as string).replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1'),
      handler: e.handler,
      operationId: snakeCase(e.handler),
      auth: resolveAuth(e.auth, undefined),
      status: e.status ?? (method === 'post' ? 201 : 200),
      tags: e.tags ?? [scope === 'service' ? 'default' : scope],
      summary: e.summary,
      description: e.description,
      decorators: e.decorators ?? [],
      request: e.request ? freeSchema(e.request.name ?? `${pascalCase(e.handler)}Request`, 'in', e.request) : undefined,
      response: e.response ? freeSchema(e.response.name ?? `${pascalCase(e.handler)}Response`, 'out', e.response) : undefined,
      paginate: e.paginate === undefined ? undefined : (paginationOf({ pagination_class: e.paginate }) ?? undefined),
      pathParams: [...(e.path as string).matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]),
    };
  });
}

/** A manual schema not tied to a model's fields (custom endpoints and actions). */
function freeSchema(name: string, role: SchemaRole, manual: Raw): SchemaModel {
  const fields = Object.entries(manual.fields as Record<string, string | Raw>).map(([fname, spec]) => {
    const opts: Raw = typeof spec === 'string' ? { type: spec } : spec;
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

const OPERATION_TABLE: { kind: OperationKind; method: Operation['method']; pathKind: Operation['pathKind']; status: number; authKey: string }[] = [
  { kind: 'create', method: 'post', pathKind: 'collection', status: 201, authKey: 'post_auth' },
  { kind: 'list', method: 'get', pathKind: 'collection', status: 200, authKey: 'get_auth' },
  { kind: 'retrieve', method: 'get', pathKind: 'item', status: 200, authKey: 'get_auth' },
  { kind: 'update', method: 'patch', pathKind: 'itemSlash', status: 200, authKey: 'patch_auth' },
  { kind: 'delete', method: 'delete', pathKind: 'itemSlash', status: 204, authKey: 'delete_auth' },
];

const VIEWSET_OPERATIONS: Record<string, OperationKind[]> = {
  APIViewSet: ['create', 'list', 'retrieve', 'update', 'delete'],
  ReadOnlyViewSet: ['list', 'retrieve'],
  WriteOnlyViewSet: ['create', 'update', 'delete'],
};

const isNotSet = (v: unknown) => v === undefined || v === 'NOT_SET';

/** The seed's resolution: a per-operation attribute overrides `auth` unless NOT_SET; null is public. */
export function resolveAuth(operationAuth: unknown, fallback: unknown): AuthSpec {
  const chosen = !isNotSet(operationAuth) ? operationAuth : fallback;
  return isNotSet(chosen) || chosen === null ? null : (chosen as string[]);
}

function operationsOf(d: Draft, viewset: Raw, viewsetClass: string, docs: Record<OperationKind, string>): Operation[] {
  const disabled = new Set<string>(viewset.disable ?? []);
  const enabled = new Set(VIEWSET_OPERATIONS[viewsetClass]);
  const snake = snakeCase(d.model);
  return OPERATION_TABLE.filter((op) => enabled.has(op.kind) && !disabled.has(op.kind) && !disabled.has('all')).map((op) => ({
    kind: op.kind,
    method: op.method,
    pathKind: op.pathKind,
    status: op.status,
    operationId: op.kind === 'list' ? `list_${verboseNames(d.raw).verboseNamePlural.replace(/[ -]+/g, '_')}` : `${op.kind}_${snake}`,
    summary: docs[op.kind],
    auth: resolveAuth(viewset[op.authKey], viewset.auth),
    decorators: viewset.extra_decorators?.[op.kind] ?? [],
    override: viewset.overrides?.[op.kind],
  }));
}

function paginationOf(viewset: Raw): Pagination | null {
  const value = viewset.pagination_class;
  if (value === null) return null;
  if (value === undefined) return { class: 'PageNumberPagination', builtin: true, options: {} };
  const cls: string = typeof value === 'string' ? value : value.class;
  const options = typeof value === 'string' ? {} : { page_size: value.page_size, max_page_size: value.max_page_size };
  return { class: cls, builtin: BUILTIN_PAGINATORS.includes(cls), options };
}

/* ---------------------------------------------------------------- schemas */

interface SchemaContext {
  draft: Draft;
  m2m: ManyToMany[];
  byModel: Map<string, Draft>;
}

const SECTION: Record<SchemaRole, string> = {
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
  const raw = ctx.draft.raw;
  const viewset: Raw = raw.viewset ?? {};
  const name = `${ctx.draft.model}${SCHEMA_SUFFIX[role]}`;
  const manual = viewset[`schema_${role === 'in' ? 'in' : role}`];
  if (manual) return manualSchema(ctx, manual.name ?? name, role, manual);
  const fromClass = viewset.serializer_class?.Meta?.[`schema_${role}`];
  if (fromClass && hasContent(fromClass)) return sectionSchema(ctx, name, role, fromClass, 'serializer_class');
  const section = raw.serializer?.[SECTION[role]];
  if (section && hasContent(section)) return sectionSchema(ctx, name, role, section, 'serializer');
  if (role === 'detail') return undefined;
  const fields = autoFields(ctx, role).map((f) => schemaFieldFor(ctx, f, role, undefined));
  // PATCH semantics: every field of a generated update schema is optional.
  if (role === 'update') for (const f of fields) f.required = false;
  return { name, role, source: 'auto', fields };
}

const hasContent = (s: Raw) => (s.fields?.length ?? 0) + (s.optionals?.length ?? 0) + (s.excludes?.length ?? 0) > 0;

type FieldRef = Field | ManyToMany;
const isM2m = (f: FieldRef): f is ManyToMany => 'joinTable' in f;

/** Fields a schema of this role takes when nothing names them. */
function autoFields(ctx: SchemaContext, role: SchemaRole): FieldRef[] {
  const all: FieldRef[] = [...ctx.draft.fields, ...ctx.m2m];
  if (role === 'out' || role === 'detail') return all.filter((f) => isM2m(f) || f.type !== 'password');
  return all.filter((f) => isM2m(f) || isEditable(f, role));
}

function isEditable(f: Field, role: SchemaRole): boolean {
  if (f.autoNow || f.autoNowAdd) return false;
  if (f.primaryKey) return role === 'in' && !f.autoIncrement;
  return true;
}

function lookup(ctx: SchemaContext, name: string): FieldRef {
  return ctx.draft.fields.find((f) => f.name === name) ?? ctx.m2m.find((m) => m.name === name)!;
}

function sectionSchema(ctx: SchemaContext, name: string, role: SchemaRole, section: Raw, source: SchemaModel['source']): SchemaModel {
  const excludes = new Set<string>(section.excludes ?? []);
  const entries: { name: string; nested?: string[]; optional: boolean }[] = [];
  if (section.fields || section.optionals) {
    for (const entry of section.fields ?? []) {
      if (typeof entry === 'string') entries.push({ name: entry, optional: false });
      else {
        const [fname, spec] = Object.entries(entry as Record<string, { fields: string[] }>)[0];
        entries.push({ name: fname, nested: spec.fields, optional: false });
      }
    }
    for (const [fname] of section.optionals ?? []) entries.push({ name: fname, optional: true });
  } else {
    for (const f of autoFields(ctx, role)) entries.push({ name: f.name, optional: false });
  }
  const fields = entries
    .filter((e) => !excludes.has(e.name))
    .map((e) => {
      const sf = schemaFieldFor(ctx, lookup(ctx, e.name), role, e.nested);
      if (e.optional || role === 'update') sf.required = false;
      return sf;
    });
  return { name, role, source, fields };
}

function manualSchema(ctx: SchemaContext, name: string, role: SchemaRole, manual: Raw): SchemaModel {
  const fields = Object.entries(manual.fields as Record<string, string | Raw>).map(([fname, spec]) => {
    const opts: Raw = typeof spec === 'string' ? { type: spec } : spec;
    const ref = ctx.draft.fields.find((f) => f.name === fname) ?? ctx.m2m.find((m) => m.name === fname);
    const sf: SchemaField = ref
      ? schemaFieldFor(ctx, ref, role, undefined)
      : { name: fname, kind: 'value', value: MANUAL_KIND[opts.type], required: true, nullable: false };
    if (sf.kind === 'value' && MANUAL_KIND[opts.type] !== undefined && !compatible(sf.value, MANUAL_KIND[opts.type])) {
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

function valueKind(f: Field): ValueKind {
  return f.type === 'foreign_key' ? valueKind(f.relation!.targetPk) : VALUE_KIND[f.type];
}

function boundsOf(kind: ValueKind): SchemaField['bounds'] {
  return kind === 'int' ? INT32 : kind === 'bigint' ? SAFE : undefined;
}

function schemaFieldFor(ctx: SchemaContext, ref: FieldRef, role: SchemaRole, nested: string[] | undefined): SchemaField {
  const input = role === 'in' || role === 'update';
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
    if (nested) sf.nested = { target: ref.target, fields: nestedFields(ctx, ref.target, nested) };
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
    bounds: ref.type === 'foreign_key' ? boundsOf(kind) : ref.type === 'integer' ? INT32 : ref.type === 'big_integer' ? SAFE : undefined,
    decimal: ref.type === 'decimal' ? { maxDigits: ref.maxDigits!, decimalPlaces: ref.decimalPlaces! } : undefined,
    description: ref.description,
  };
  if (input && ref.type === 'password') sf.value = 'str';
  if (nested && ref.type === 'foreign_key') sf.nested = { target: ref.relation!.target, fields: nestedFields(ctx, ref.relation!.target, nested) };
  return sf;
}

function nestedFields(ctx: SchemaContext, target: string, names: string[]): SchemaField[] {
  const t = ctx.byModel.get(target)!;
  const tctx: SchemaContext = { draft: t, m2m: [], byModel: ctx.byModel };
  return names.map((n) => {
    const f = t.fields.find((x) => x.name === n)!;
    return schemaFieldFor(tctx, f, 'out', undefined);
  });
}

