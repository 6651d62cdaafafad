/**
 * The routes of a resource's operations (create, list, retrieve, update, delete), one builder per
 * kind, each naming the partial that prints its `handle` (`templates/partials/operations/<kind>.hbs`).
 * An operation with an override hands the generated implementation to it as `proceed`.
 */
import { GENERIC_SUMMARIES } from '@svcgen/runtime/catalogue';
import type { Field, Operation, OperationKind, OrderingField, SchemaModel } from '../model/model';
import { camelCase, docLine, literal, pascalCase, str } from '../model/names';
import { response, type RouteSpec, type RouteView } from './route';
import {
  columnsOf,
  createReadsStateRelations,
  insertChecksReferences,
  relatedKeyChecks,
  retrieveReadsRelations,
  stateRelationsOf,
  valuesAreAsync,
} from './queries';
import { expandableName } from './schemas';
import type { ResourceRoutes } from './resource-routes';

/** What an operation's builder decides; the rest comes from the operation. */
type OwnSpec = Pick<
  RouteSpec,
  | 'params'
  | 'query'
  | 'body'
  | 'optionalBody'
  | 'normalize'
  | 'input'
  | 'partial'
  | 'handle'
  | 'response'
  | 'responses'
  | 'etag'
  | 'ifMatch'
>;

function route(o: Operation, rs: ResourceRoutes, own: OwnSpec): RouteView {
  return rs.route({
    crud: o.kind,
    method: o.method,
    auth: o.auth,
    roles: o.roles,
    throttles: o.throttles,
    operationId: o.operationId,
    decorators: o.decorators,
    status: o.status,
    transaction: o.transaction,
    kind: o.kind,
    summary: o.summary === GENERIC_SUMMARIES[o.kind] ? undefined : str(docLine(o.summary)),
    description: o.description === undefined ? undefined : str(o.description),
    ...own,
  });
}

/** The `normalize_input` hook of a create or update, given the body as received, before validation. */
function normalizeInput(rs: ResourceRoutes, operation: 'create' | 'update'): string | undefined {
  const hook = rs.r.normalizeInput;
  return hook ? `(body) => ${rs.hookRef(hook)}({ body, operation: '${operation}' })` : undefined;
}

/** A lifecycle hook's call, when the spec names one. */
export function lifecycle(rs: ResourceRoutes, hook: keyof ResourceRoutes['r']['lifecycle'], args: string): string | undefined {
  const name = rs.r.lifecycle[hook];
  return name ? rs.hookCall(name, args) : undefined;
}

/** The calls that replace the many-to-many rows a body names, for the row with key `pk`. */
function relatedSetters(rs: ResourceRoutes, s: SchemaModel, pk: string): string[] {
  const q = rs.q();
  return s.fields.filter((f) => f.m2m).map((f) => `${q}.set${pascalCase(f.m2m!.name)}Keys(ctx.db, ${pk}, data.${f.name})`);
}

/** The written row read back by key alone, shaped into the operation's response schema. */
export function reread(rs: ResourceRoutes, s: SchemaModel, key: string): string {
  const q = rs.q();
  return `${q}.shape${s.name}(ctx.db, [await ${rs.lookup('findRow')}(ctx, ${key}, ${q}.${columnsOf(rs.r, s)})])`;
}

/**
 * The lists of children a create (update) writes after the record, each through the child
 * resource's writes (`<child module>Writes(service)`, built once before the routes as
 * `<relation>Writer`: the relation is often named like the child's module, `items` of table `items`,
 * and a constant named like the import would shadow it).
 */
function nestedWrites(rs: ResourceRoutes, kind: 'create' | 'update', parent: string) {
  const writes = rs.r.nestedWrites[kind];
  if (writes.length === 0) return undefined;
  const writeChildren = rs.imports.runtime('writeChildren');
  return writes.map((w) => {
    const child = w.child;
    const fn = rs.imports.value(`../${child.moduleName}/routes`, `${camelCase(child.moduleName)}Writes`);
    const writer = rs.constant(`${camelCase(w.name)}Writer`, () => `${fn}(service)`);
    const spec = `{ at: ['body', 'data', ${str(w.name)}], mode: '${w.mode}', key: ${str(child.pk.name)}, names: ${literal({ child: child.verboseName, parent: rs.r.verboseName })}, writes: ${writer} }`;
    const call = `await ${writeChildren}(ctx, ${parent}, data.${w.name}${kind === 'create' ? ' ?? []' : ''}, ${spec})`;
    // An update leaves the children alone when its body has no list.
    return { name: w.name, write: kind === 'create' ? call : `data.${w.name} === undefined ? undefined : ${call}` };
  });
}

/**
 * What the create's insert checks and reads besides its row (`insertRow`'s options): the foreign
 * keys its body names, when it checks them itself; the relations of its ETag's state, when nothing
 * after the insert writes them.
 */
function insertOptions(rs: ResourceRoutes, checksReferences: boolean): string | undefined {
  const q = rs.q();
  const options = [
    ...(checksReferences ? [`references: ${q}.insertReferences(data)`] : []),
    ...(createReadsStateRelations(rs.r) ? [`relations: ${q}.${stateRelationsOf(rs.r)}`] : []),
  ];
  return options.length > 0 ? `{ ${options.join(', ')} }` : undefined;
}

/** What `operations/create` prints: one create of `data`, answering the created row (a bulk create runs it per item). */
export function createHandle(o: Operation, rs: ResourceRoutes): object {
  const { r } = rs;
  const setRelated = relatedSetters(rs, r.schemas.in, 'pk');
  const nested = nestedWrites(rs, 'create', 'pk');
  // The foreign keys the body names are checked by the insert itself, else each before it.
  const insertChecks = insertChecksReferences(r.schemas.in);
  return {
    override: o.override ? rs.hookCall(o.override, '{ data, proceed }') : undefined,
    awaitValues: valuesAreAsync(r.schemas.in),
    beforeCreate: lifecycle(rs, 'before_create', '{ values, data }'),
    insertRow: rs.lookup('insertRow'),
    columns: `${rs.q()}.${columnsOf(r, r.responses.create)}`,
    checkRelated: relatedKeyChecks(r.schemas.in).length > 0 && !insertChecks,
    insertOptions: insertOptions(rs, insertChecks),
    setRelated,
    nested,
    usesKey: setRelated.length > 0 || (nested?.length ?? 0) > 0,
    // The row the insert answered, shaped once the relations and children the body names are written.
    shape: `${rs.q()}.shape${r.responses.create.name}(ctx.db, [row])`,
    afterCreate: lifecycle(rs, 'after_create', '{ result: created }'),
  };
}

function createRoute(o: Operation, rs: ResourceRoutes): RouteView {
  const { r } = rs;
  return route(o, rs, {
    body: rs.schema(r.schemas.in),
    normalize: normalizeInput(rs, 'create'),
    input: '{ body: data }, ctx',
    partial: 'operations/create',
    handle: createHandle(o, rs),
    // The created row's key is read from the answer, when it names it.
    etag: r.responses.create.fields.some((f) => f.name === r.pk.name)
      ? rs.stateETag(
          () => `${rs.imports.runtime('keyFromResult')}(${str(r.pk.name)})`,
          r.nestedResults.create ?? r.responses.create,
          o.override,
        )
      : undefined,
    response: rs.schema(r.nestedResults.create ?? r.responses.create),
  });
}

/** `fieldsParam([...])`: the `?fields=` of a read schema. */
function fieldsParam(rs: ResourceRoutes, schema: SchemaModel): string {
  return `${rs.imports.runtime('fieldsParam')}(${literal(schema.fields.map((f) => f.name))})`;
}

/** `expandParam([...])`: the `?expand=` of a viewset with `expand`. */
function expandParam(rs: ResourceRoutes): string {
  return `${rs.imports.runtime('expandParam')}(${literal(rs.r.expand.map((f) => f.name))})`;
}

/**
 * A shaping function, with the relations `?expand=` names expanded when the viewset has `expand`,
 * narrowed to `?fields=` (and the expanded relations) when it has field selection.
 */
function selected(rs: ResourceRoutes, shape: string, fields: string, expand: string): string {
  const { r } = rs;
  const expanded = r.expand.length ? `${rs.imports.runtime('expandShape')}(${shape}, ${rs.q()}.EXPANSIONS, ${expand})` : shape;
  if (!r.fieldSelection) return expanded;
  const selection = r.expand.length ? `${rs.imports.runtime('withExpanded')}(${fields}, ${expand})` : fields;
  return `${rs.imports.runtime('selectShape')}(${expanded}, ${selection})`;
}

/** The response schema of list items or the retrieve: `<Schema>Expandable` when the viewset has `expand`. */
function readSchema(rs: ResourceRoutes, s: SchemaModel): string {
  return rs.schema(rs.r.expand.length ? expandableName(s) : s.name);
}

/** What `orderingParam` maps an ordering name to: the column, or a related row's column with the hops to it. */
function orderingTarget(f: OrderingField): string {
  return f.hops ? literal({ column: f.column, hops: f.hops }) : str(f.column);
}

/** `orderingParam({...})`: the `?ordering=` of a viewset with `ordering_fields`. */
export function orderingParam(rs: ResourceRoutes): string {
  const allowed = rs.r.ordering.fields.map((f) => `${f.name}: ${orderingTarget(f)}`).join(', ');
  return `${rs.imports.runtime('orderingParam')}({ ${allowed} })`;
}

/** The list's order without `?ordering=`: `default_ordering` as a constant, or `[]` (by primary key). */
export function defaultOrdering(rs: ResourceRoutes): string {
  const { r } = rs;
  if (!r.ordering.default.length) return '[]';
  return rs.constant(
    'defaultOrdering',
    () =>
      `[${r.ordering.default.map((t) => `{ column: ${str(t.column)}, order: '${t.order}'${t.hops ? `, hops: ${literal(t.hops)}` : ''} }`).join(', ')}]`,
    `${rs.imports.runtimeType('OrderTerm')}[]`,
  );
}

/** The validated query of the list: page parameters, filters and `ordering`. */
function listQuery(rs: ResourceRoutes): string {
  const { r } = rs;
  return rs.constant('ListQuery', () => {
    let schema = rs.pageQuery();
    // Filter parameters (query_params, relations_filters, match cases) come from the resource's filters.ts.
    if (r.filters) schema += `.extend(${rs.filtering()}.FILTER_QUERY.shape)`;
    if (r.ordering.fields.length) schema += `.extend({ ordering: ${orderingParam(rs)} })`;
    if (r.search) schema += `.extend({ search: ${rs.imports.runtime('searchParam')}(${literal(r.search.fields.map((f) => f.name))}) })`;
    if (r.fieldSelection) schema += `.extend({ fields: ${fieldsParam(rs, r.schemas.out)} })`;
    if (r.expand.length) schema += `.extend({ expand: ${expandParam(rs)} })`;
    return schema;
  });
}

/** After the queryset hook: the query_params_handler hook with the generated mixins, or the mixins in order. */
function applyFilters(rs: ResourceRoutes): string | undefined {
  const { filters } = rs.r;
  if (!filters) return undefined;
  const filtering = rs.filtering();
  if (!filters.handler) return `${filtering}.applyFilters(query, ${filtering}.filtersOf(params));`;
  const call = rs.hookCall(filters.handler, `{ query, filters: ${filtering}.filtersOf(params), mixins: ${filtering}.MIXINS }`);
  return `await ${rs.imports.runtime('settleHook')}(${call});`;
}

/** The fields a list may be ordered by, its primary key first: the keys of a cursor over it. */
export function orderingKeyFields(r: ResourceRoutes['r']): Field[] {
  const columns = new Set([r.pk.column, ...[...r.ordering.fields, ...r.ordering.default].filter((t) => !t.hops).map((t) => t.column)]);
  return r.fields.filter((f) => columns.has(f.column));
}

function listRoute(o: Operation, rs: ResourceRoutes): RouteView {
  const { r } = rs;
  const q = rs.q();
  const query = listQuery(rs);
  const byDefault = defaultOrdering(rs);
  const usesParams =
    r.pagination !== null ||
    r.ordering.fields.length > 0 ||
    r.filters !== null ||
    r.search !== null ||
    r.fieldSelection ||
    r.expand.length > 0 ||
    o.override !== undefined;
  return route(o, rs, {
    query,
    input: usesParams ? '{ query: params }, ctx' : '_input, ctx',
    partial: 'operations/list',
    etag: "'body'",
    handle: {
      override: o.override ? rs.hookCall(o.override, '{ params, proceed }') : undefined,
      queryset: rs.lookup('queryset'),
      applyFilters: applyFilters(rs),
      applySearch: r.search
        ? `${rs.imports.runtime('applySearch')}(query, ${rs.constant('searchFields', () => literal(r.search!.fields.map((f) => f.lookup)), `${rs.imports.runtimeType('Lookup')}[]`)}, params.search);`
        : undefined,
      querySource: rs.imports.runtime('querySource'),
      ordering: r.ordering.fields.length ? `params.ordering ?? ${byDefault}` : byDefault,
      shape: selected(rs, `${q}.shape${r.schemas.out.name}`, 'params.fields', 'params.expand'),
      kinds: rs.cursorPaged() ? rs.keyKinds('keyKinds', orderingKeyFields(r)) : undefined,
      page: rs.page('source'),
    },
    response: rs.listResponse(readSchema(rs, r.schemas.out)),
  });
}

function retrieveRoute(o: Operation, rs: ResourceRoutes): RouteView {
  const { r } = rs;
  const q = rs.q();
  const params = [...(r.fieldSelection ? ['fields'] : []), ...(r.expand.length ? ['expand'] : [])];
  const members = [
    ...(r.fieldSelection ? [`fields: ${fieldsParam(rs, r.schemas.detail)}`] : []),
    ...(r.expand.length ? [`expand: ${expandParam(rs)}`] : []),
  ];
  const query = params.length
    ? rs.constant('RetrieveQuery', () => `${rs.imports.runtime('z')}.object({ ${members.join(', ')} })`)
    : undefined;
  const shape = selected(rs, `${q}.shape${r.schemas.detail.name}`, 'fields', 'expand');
  // The row is read with the related records its representation nests, where they can be joined.
  const relations = retrieveReadsRelations(r) ? `, ${q}.${stateRelationsOf(r)}` : '';
  return route(o, rs, {
    params: rs.params(),
    query,
    input: query ? `{ params: { pk }, query: { ${params.join(', ')} } }, ctx` : '{ params: { pk } }, ctx',
    partial: 'operations/retrieve',
    etag: "'body'",
    handle: r.objectPermission
      ? {
          // The record the hook receives is read once, and shaped into the response.
          visible: `${rs.lookup('findVisible')}(ctx, pk, ${q}.RECORD_COLUMNS${relations})`,
          objectPermission: objectPermission(rs, 'retrieve', `${q}.to${r.model}Record(row)`),
          override: o.override ? rs.hookCall(o.override, '{ pk, proceed }') : undefined,
          read: `${shape}(ctx.db, [row])`,
        }
      : {
          override: o.override ? rs.hookCall(o.override, '{ pk, proceed }') : undefined,
          read: `${shape}(ctx.db, [await ${rs.lookup('findVisible')}(ctx, pk, ${q}.${columnsOf(r, r.schemas.detail)}${relations})])`,
        },
    response: readSchema(rs, r.schemas.detail),
  });
}

/** The object-permission hook's check of `instance` before operation `kind`, when the viewset names one. */
export function objectPermission(rs: ResourceRoutes, kind: string, instance = 'instance'): string | undefined {
  const hook = rs.r.objectPermission;
  if (!hook) return undefined;
  const value = instance === 'instance' ? 'instance' : `instance: ${instance}`;
  return `${rs.imports.runtime('checkObjectPermission')}(${rs.hookCall(hook, `{ ${value}, operation: '${kind}' }`)})`;
}

/** The record an update or delete changes, among those writes see, locked until the write commits. */
function instance(rs: ResourceRoutes): string {
  const q = rs.q();
  return `${q}.to${rs.r.model}Record(await ${rs.lookup('lockRow')}(ctx, pk, ${q}.RECORD_COLUMNS))`;
}

/** What `operations/update` prints: one update of the row with key `pk` by `data` (a bulk update runs it per item). */
export function updateHandle(o: Operation, rs: ResourceRoutes): object {
  const { r } = rs;
  const key = `instance.${r.pk.name}`;
  return {
    noFieldsError: r.requireUpdateFields ? rs.imports.runtime('SerializeError') : undefined,
    instance: instance(rs),
    objectPermission: objectPermission(rs, 'update'),
    override: o.override ? rs.hookCall(o.override, '{ pk, data, instance, proceed }') : undefined,
    awaitValues: valuesAreAsync(r.schemas.update),
    beforeUpdate: lifecycle(rs, 'before_update', '{ values, data, instance }'),
    checkRelated: relatedKeyChecks(r.schemas.update).length > 0,
    key,
    setRelated: relatedSetters(rs, r.schemas.update, key),
    nested: nestedWrites(rs, 'update', key),
    reread: reread(rs, r.responses.update, key),
    afterUpdate: lifecycle(rs, 'after_update', '{ result: updated }'),
  };
}

function updateRoute(o: Operation, rs: ResourceRoutes): RouteView {
  const { r } = rs;
  return route(o, rs, {
    params: rs.params(),
    body: rs.schema(r.schemas.update),
    optionalBody: true,
    normalize: normalizeInput(rs, 'update'),
    input: '{ params: { pk }, body: data }, ctx',
    partial: 'operations/update',
    handle: updateHandle(o, rs),
    etag: rs.stateETag(() => rs.imports.runtime('keyFromPath'), r.nestedResults.update ?? r.responses.update, o.override),
    ifMatch: rs.ifMatch(),
    response: rs.schema(r.nestedResults.update ?? r.responses.update),
  });
}

/** What `operations/delete` prints: one delete of the row with key `pk` (a bulk delete runs it per item). */
export function deleteHandle(o: Operation, rs: ResourceRoutes): object {
  const q = rs.q();
  const key = `instance.${rs.r.pk.name}`;
  return {
    instance: instance(rs),
    objectPermission: objectPermission(rs, 'delete'),
    override: o.override ? rs.hookCall(o.override, '{ pk, instance, proceed }') : undefined,
    beforeDelete: lifecycle(rs, 'before_delete', '{ instance }'),
    // With soft delete, the row is stamped deleted and stays.
    remove: rs.r.softDelete
      ? `${rs.imports.runtime('markDeleted')}(ctx.db, ${q}.SOFT_DELETE, ${key})`
      : `${rs.imports.runtime('deleteRow')}(ctx, ${q}.TABLE, ${q}.PK, ${key})`,
    afterDelete: lifecycle(rs, 'after_delete', '{ instance }'),
  };
}

function deleteRoute(o: Operation, rs: ResourceRoutes): RouteView {
  return route(o, rs, {
    params: rs.params(),
    input: '{ params: { pk } }, ctx',
    partial: 'operations/delete',
    handle: deleteHandle(o, rs),
    ifMatch: rs.ifMatch(),
    // An override may answer with a body instead of 204.
    responses: o.override ? `${response(200, 'OK (the override answers with a body)')}, ${response(204, 'No Content')}` : undefined,
  });
}

const BUILDERS: Record<OperationKind, (o: Operation, rs: ResourceRoutes) => RouteView> = {
  create: createRoute,
  list: listRoute,
  retrieve: retrieveRoute,
  update: updateRoute,
  delete: deleteRoute,
};

export function operationRoute(o: Operation, rs: ResourceRoutes): RouteView {
  return BUILDERS[o.kind](o, rs);
}
