/**
 * View models: what each template prints, derived from the intermediate model. Code fragments
 * (Zod expressions, value conversions) are computed here so the templates stay plain.
 */
import type { Endpoint, Field, Operation, Resource, SchemaField, SchemaModel, ServiceModel } from '../model';
import { camelCase, docLine, literal, pascalCase, str } from '../names';
import { authExpr, hookRef, usesServiceHooks, viewExpr, type HookScope } from './hooks';
import { BUILTIN_EXCEPTIONS } from '../build-model';
import { relationsQueriesView, relationsRouteView } from './m2m';
import { zodInput, zodOutput } from './zod';
import { header, runtimeFrom, type RenderContext } from './context';
export type { RenderContext } from './context';

const up = (specifier: string, depth: number) => runtimeFrom({ runtimeFromRoot: specifier, specsFromRoot: '', specsName: '' }, depth);

const list = (names: readonly string[]) => names.map((n) => str(n)).join(', ');
const imports = (names: Iterable<string>) => [...new Set(names)].sort((a, b) => a.replace(/^type /, '').localeCompare(b.replace(/^type /, ''))).join(', ');

/* ------------------------------------------------------------ schemas.ts */

const SCHEMA_DOC: Record<SchemaModel['role'], string> = {
  in: 'Create request body',
  out: 'List items and the responses of create and update',
  detail: 'Retrieve response',
  update: 'Update request body (every field optional unless the spec requires it)',
};

function pkParam(r: Resource): string {
  const kind = r.pk.type;
  if (kind === 'integer') return 'fromString.int().pipe(z.int().min(-2147483648).max(2147483647))';
  if (kind === 'big_integer') return 'fromString.int()';
  if (kind === 'uuid') return 'uuidInput()';
  return r.pk.maxLength ? `z.string().min(1).max(${r.pk.maxLength})` : 'z.string().min(1)';
}

export function schemasView(r: Resource, ctx: RenderContext) {
  const schemas = [r.schemas.in, r.schemas.out, ...(r.hasDetail ? [r.schemas.detail] : []), r.schemas.update].map((s) => {
    const input = s.role === 'in' || s.role === 'update';
    return {
      name: s.name,
      doc: `${SCHEMA_DOC[s.role]} (${s.source === 'auto' ? 'generated from the fields' : s.source}).`,
      fields: s.fields.map((f) => ({ name: f.name, zod: input ? zodInput(f) : zodOutput(f) })),
    };
  });
  const extra = [
    ...r.actions.map((a) => a.response),
    ...r.relations.filter((rel) => !rel.itemSchemaIsTargetOut).map((rel) => rel.itemSchema),
    ...r.endpoints.flatMap((e) => [e.request, e.response]),
  ].filter((s): s is SchemaModel => s !== undefined);
  for (const s of extra) {
    if (schemas.some((x) => x.name === s.name)) continue;
    schemas.push({
      name: s.name,
      doc: s.role === 'in' ? 'Request body of a custom endpoint.' : 'Response of a custom action or endpoint.',
      fields: s.fields.map((f) => ({ name: f.name, zod: s.role === 'in' ? zodInput(f) : zodOutput(f) })),
    });
  }
  const code = schemas.flatMap((s) => s.fields.map((f) => f.zod)).join(' ') + pkParam(r);
  const runtimeImports = ['z', 'fromString', 'decimalInput', 'urlInput', 'intInput', 'jsonInput', 'uuidInput'].filter((n) => n === 'z' || code.includes(n));
  return {
    header: header(`${ctx.specsName}/${r.specFile}`),
    runtime: up(ctx.runtimeFromRoot, 2),
    runtimeImports: imports(runtimeImports),
    schemas,
    model: r.model,
    pkParam: pkParam(r),
    errorSchema: r.errorSchema
      ? { name: r.errorSchema.name, fields: r.errorSchema.fields.map((f) => ({ name: f.name, zod: zodOutput(f) })) }
      : undefined,
  };
}

/* ------------------------------------------------------------ queries.ts */

function convert(f: SchemaField, column: string): string {
  const v = `row.${column}`;
  let expr: string;
  switch (f.value) {
    case 'bool':
      expr = `asBool(${v})`;
      break;
    case 'date':
      expr = `asDate(${v})`;
      break;
    case 'datetime':
      expr = `asDateTime(${v})`;
      break;
    case 'decimal':
      expr = `asDecimal(${v}, ${f.decimal?.decimalPlaces ?? 2})`;
      break;
    case 'json':
      expr = `asJson(${v})`;
      break;
    default:
      return v;
  }
  return f.nullable ? `${v} === null ? null : ${expr}` : expr;
}

interface Loader {
  constName: string;
  varName: string;
  doc: string;
  m2m: boolean;
  joinTable?: string;
  ownColumn?: string;
  otherColumn?: string;
  table: string;
  pk: string;
  columns: string;
  fields: { name: string; expr: string }[];
  /** A list of keys shapes each related row to its key alone. */
  keyOnly?: string;
  call: string;
}

function shapeView(r: Resource, s: SchemaModel, columnsConst: string) {
  const loaders: Loader[] = [];
  const columns = new Set<string>([r.pk.column]);
  const fields = s.fields.map((f) => {
    const varName = camelCase(f.name);
    const constName = `${s.name.replace(/[a-z]/g, (c) => c.toUpperCase()).replace(/([a-z0-9])([A-Z])/g, '$1_$2')}_${f.name.toUpperCase()}`;
    if (f.kind === 'value' || f.kind === 'foreign_key') {
      const column = f.field!.column;
      columns.add(column);
      return { name: f.name, expr: convert(f, column) };
    }
    if (f.kind === 'nested_one') {
      const fk = f.field!;
      const rel = fk.relation!;
      columns.add(fk.column);
      const nestedCols = new Set([rel.targetPk.column, ...f.nested!.fields.map((n) => n.field!.column)]);
      loaders.push({
        constName: `${constName}`,
        varName,
        doc: `${f.name}: the related ${rel.target} with ${f.nested!.fields.map((n) => n.name).join(', ')}.`,
        m2m: false,
        table: rel.targetTable,
        pk: rel.targetPk.column,
        columns: list([...nestedCols]),
        fields: f.nested!.fields.map((n) => ({ name: n.name, expr: convert(n, n.field!.column) })),
        keyOnly: undefined,
        call: `loadForeign(db, ${constName}, rows.map((row) => row.${fk.column}))`,
      });
      return {
        name: f.name,
        expr: fk.nullable
          ? `row.${fk.column} === null ? null : (${varName}.get(row.${fk.column}) ?? null)`
          : `related(${varName}, row.${fk.column})`,
      };
    }
    // many_to_many (keys) or nested_many (records)
    const m = f.m2m!;
    const nested = f.kind === 'nested_many' ? f.nested!.fields : [];
    const nestedCols = new Set([m.targetPk.column, ...nested.map((n) => n.field!.column)]);
    loaders.push({
      constName,
      varName,
      doc: `${f.name}: the related ${m.target} ${f.kind === 'nested_many' ? `records with ${nested.map((n) => n.name).join(', ')}` : 'keys'}, through ${m.joinTable}.`,
      m2m: true,
      joinTable: m.joinTable,
      ownColumn: m.ownColumn,
      otherColumn: m.otherColumn,
      table: m.targetTable,
      pk: m.targetPk.column,
      columns: list([...nestedCols]),
      fields: nested.map((n) => ({ name: n.name, expr: convert(n, n.field!.column) })),
      keyOnly: f.kind === 'many_to_many' ? `row.${m.targetPk.column}` : undefined,
      call: `loadManyToMany(db, ${constName}, rows.map((row) => row.${r.pk.column}))`,
    });
    return { name: f.name, expr: `${varName}.get(row.${r.pk.column}) ?? []` };
  });
  return {
    schema: s.name,
    columnsConst,
    columns: list([...columns]),
    loaders,
    loaderNames: loaders.map((l) => l.varName).join(', '),
    loaderVars: loaders.map((l) => l.varName).join(', '),
    fields,
  };
}

function writeValue(f: SchemaField): string {
  const v = `data.${f.name}`;
  const field = f.field!;
  if (field.type === 'password') return f.required ? `await hashPassword(${v})` : `${v} === undefined ? undefined : await hashPassword(${v})`;
  if (field.type === 'datetime') return `toDb.dateTime(${v})`;
  if (field.type === 'json') return f.nullable ? `${v} === null ? null : toDb.json(${v})` : `toDb.json(${v})`;
  if (field.primaryKey && field.type === 'uuid') return `${v} ?? randomUUID()`;
  return v;
}

function writesView(r: Resource, s: SchemaModel, create: boolean) {
  const values: { column: string; expr: string }[] = [];
  const inSchema = new Set(s.fields.map((f) => f.name));
  for (const f of s.fields) if (f.field) values.push({ column: f.field.column, expr: writeValue(f) });
  for (const field of r.fields) {
    if (inSchema.has(field.name)) continue;
    if (create && field.primaryKey && field.type === 'uuid') values.push({ column: field.column, expr: 'randomUUID()' });
    if ((create && field.autoNowAdd) || field.autoNow) values.push({ column: field.column, expr: 'now()' });
  }
  const checks = s.fields.flatMap((f) => {
    if (f.kind === 'foreign_key' || f.kind === 'nested_one') {
      const rel = f.field!.relation!;
      return [{ field: f.name, table: rel.targetTable, pk: rel.targetPk.column, many: false, model: modelConst(rel.target) }];
    }
    if (f.kind === 'many_to_many' || f.kind === 'nested_many') {
      const m = f.m2m!;
      return [{ field: f.name, table: m.targetTable, pk: m.targetPk.column, many: true, model: modelConst(m.target) }];
    }
    return [];
  });
  return { create, schema: s.name, fn: create ? 'createValues' : 'updateValues', checkFn: create ? 'checkCreateRelated' : 'checkUpdateRelated', values, checks };
}

/** The value kind a column field converts with. */
function recordKind(f: Field): SchemaField['value'] {
  const kinds: Partial<Record<Field['type'], SchemaField['value']>> = { boolean: 'bool', date: 'date', datetime: 'datetime', decimal: 'decimal', json: 'json', float: 'float', integer: 'int', big_integer: 'bigint' };
  return kinds[f.type] ?? 'str';
}

function asField(f: Field): SchemaField {
  return {
    name: f.name,
    kind: 'value',
    field: f,
    value: recordKind(f),
    required: true,
    nullable: f.nullable,
    decimal: f.type === 'decimal' ? { maxDigits: f.maxDigits!, decimalPlaces: f.decimalPlaces! } : undefined,
  };
}

/** The TypeScript type of a column field's value in a record. */
function tsType(f: Field): string {
  const base = f.relation ? tsType(f.relation.targetPk).replace(' | null', '') : ['integer', 'big_integer', 'float'].includes(f.type) ? 'number' : f.type === 'boolean' ? 'boolean' : f.type === 'json' ? 'unknown' : 'string';
  return f.nullable && base !== 'unknown' ? `${base} | null` : base;
}

const modelConst = (model: string) => `${model.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()}_MODEL`;

export function queriesView(r: Resource, model: ServiceModel, ctx: RenderContext) {
  const shapes = [shapeView(r, r.schemas.out, 'OUT_COLUMNS')];
  if (r.hasDetail) shapes.push(shapeView(r, r.schemas.detail, 'DETAIL_COLUMNS'));
  for (const rel of r.relations) {
    if (rel.itemSchemaIsTargetOut) continue;
    const target = model.resources.find((x) => x.model === rel.target)!;
    shapes.push(shapeView(target, rel.itemSchema, `${rel.relatedName.toUpperCase()}_ITEM_COLUMNS`));
  }
  const writes = [writesView(r, r.schemas.in, true), writesView(r, r.schemas.update, false)];
  const relatedModels = new Set(writes.flatMap((w) => w.checks.map((c) => c.model)));
  const related = model.resources
    .filter((x) => relatedModels.has(modelConst(x.model)))
    .map((x) => ({ constName: modelConst(x.model), verboseKey: x.verboseKey, classKey: x.classKey }));
  const recordCode = r.fields.map((f) => (f.relation ? '' : convert(asField(f), f.column))).join(' ');
  const code = JSON.stringify({ shapes, writes }) + recordCode;
  const runtimeImports = ['type Db', 'type ModelInfo', 'type Row', 'type ServiceContext', 'withoutUndefined'];
  for (const fn of ['asBool', 'asDate', 'asDateTime', 'asDecimal', 'asJson', 'loadForeign', 'loadManyToMany', 'related', 'hashPassword', 'now', 'missingKeys', 'exists']) {
    if (code.includes(`${fn}(`)) runtimeImports.push(fn);
  }
  if (code.includes('toDb.')) runtimeImports.push('toDb');
  if (writes.some((w) => w.checks.length)) runtimeImports.push('NotFoundError');
  if (writes.some((w) => w.checks.some((c) => c.many))) runtimeImports.push('missingKeys');
  if (writes.some((w) => w.checks.some((c) => !c.many))) runtimeImports.push('exists');
  if (r.m2m.length) runtimeImports.push('setRelated');
  if (r.relations.length) runtimeImports.push('type RelationSpec');
  const schemaTypes = [
    r.schemas.in.name,
    r.schemas.out.name,
    r.schemas.update.name,
    ...(r.hasDetail ? [r.schemas.detail.name] : []),
    ...r.relations.filter((rel) => !rel.itemSchemaIsTargetOut).map((rel) => rel.itemSchema.name),
  ];
  return {
    header: header(`${ctx.specsName}/${r.specFile}`),
    runtime: up(ctx.runtimeFromRoot, 2),
    runtimeImports: imports(runtimeImports),
    randomUUID: code.includes('randomUUID('),
    schemaTypes: imports(schemaTypes),
    table: r.table,
    pkColumn: r.pk.column,
    verboseKey: r.verboseKey,
    classKey: r.classKey,
    verboseName: r.verboseName,
    model: r.model,
    record: r.fields.map((f) => ({ name: f.name, type: tsType(f), expr: f.relation ? `row.${f.column}` : convert(asField(f), f.column) })),
    recordColumns: list(r.fields.map((f) => f.column)),
    related,
    shapes,
    writes,
    m2m: r.m2m.map((m) => ({ ...m, pascal: pascalCase(m.name) })),
    relations: relationsQueriesView(r, model),
  };
}

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
      fields: s.fields.map((f) => ({ name: f.name, zod: s.role === 'in' ? zodInput(f) : zodOutput(f) })),
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

/* ------------------------------------------------------ service-level files */

export function settingsView(model: ServiceModel, ctx: RenderContext) {
  return {
    header: header(`${ctx.specsName}/service.yaml`),
    runtime: up(ctx.runtimeFromRoot, 0),
    settings: Object.entries(model.settings).map(([name, value]) => ({ name, value: literal(value) })),
    sqliteFile: str(model.sqliteFile),
    keysDir: str(model.auth.keysDir),
  };
}

export function authView(model: ServiceModel, ctx: RenderContext) {
  const user = model.resources.find((r) => r.model === model.auth.userModel);
  const fields = user?.fields.filter((f) => f.type !== 'password') ?? [];
  const userView = user
    ? {
        table: user.table,
        pk: user.pk.column,
        intKey: user.pk.type === 'integer' || user.pk.type === 'big_integer',
        columns: list(fields.map((f) => f.column)),
        fields: [
          ...fields.map((f) => ({ name: f.name, expr: convert(asField(f), f.column) })),
          ...['is_active', 'is_staff', 'is_superuser'].filter((n) => !fields.some((f) => f.name === n)).map((n) => ({ name: n, expr: n === 'is_active' ? 'true' : 'false' })),
        ],
      }
    : undefined;
  const code = JSON.stringify(userView ?? {});
  const runtimeImports = ['type AuthUser', 'type Db'];
  for (const fn of ['asBool', 'asDate', 'asDateTime', 'asDecimal', 'asJson']) if (code.includes(`${fn}(`)) runtimeImports.push(fn);
  return {
    header: header(`${ctx.specsName}/service.yaml`),
    runtime: up(ctx.runtimeFromRoot, 0),
    runtimeImports: imports(runtimeImports),
    extraClaims: list(model.auth.extraClaims),
    user: userView,
  };
}

export function appView(model: ServiceModel, ctx: RenderContext) {
  const handlers = model.exceptionHandlers.map((h) => `[${BUILTIN_EXCEPTIONS.includes(h.exception) ? h.exception : `hooks.${h.exception}`}, hooks.${h.handler}]`);
  const runtimeImports = ['createApi', 'createServiceContext', 'loadSettings', 'TokenService', 'type Db', 'type KeyPair', 'type Route', 'type ServiceContext', 'type Settings'];
  for (const h of model.exceptionHandlers) if (BUILTIN_EXCEPTIONS.includes(h.exception)) runtimeImports.push(h.exception);
  return {
    header: header(`${ctx.specsName}/service.yaml`),
    runtime: up(ctx.runtimeFromRoot, 0),
    runtimeImports: imports(runtimeImports),
    hooksImport: model.hooks ? `${ctx.specsFromRoot}/${model.hooks.replace(/\.ts$/, '')}` : undefined,
    title: model.title,
    titleLiteral: str(model.title),
    versionLiteral: str(model.version),
    descriptionLiteral: model.description ? str(model.description) : undefined,
    basePath: model.basePath,
    exceptionHandlers: handlers.join(', '),
    views: model.views,
    resources: model.resources.map((r) => ({ routesFn: `${camelCase(r.moduleName)}Routes`, moduleName: r.moduleName })),
  };
}


const CREATEUSER_FIELDS = ['username', 'email', 'password', 'is_active', 'is_staff', 'is_superuser'];

export function mainView(model: ServiceModel, ctx: RenderContext) {
  const user = model.resources.find((r) => r.model === model.auth.userModel);
  const createUser =
    user && CREATEUSER_FIELDS.every((n) => user.fields.some((f) => f.name === n))
      ? { table: user.table, pk: user.pk.column, autoNow: user.fields.filter((f) => f.autoNowAdd || f.autoNow).map((f) => f.column) }
      : undefined;
  const runtimeImports = ['ConfigurationError', 'connect', 'type Db', 'loadKeys', 'loadSettings', 'migrateLatest'];
  if (createUser) runtimeImports.push('hashPassword', ...(createUser.autoNow.length ? ['now'] : []));
  return {
    header: header(`${ctx.specsName}/service.yaml`),
    runtime: up(ctx.runtimeFromRoot, 0),
    runtimeImports: imports(runtimeImports),
    title: model.title,
    basePath: model.basePath,
    createUser,
  };
}
