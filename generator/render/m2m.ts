/**
 * Many-to-many relation endpoints: the routes (`GET` a page of related records, `POST` to add and
 * remove relations), on the relation constants of queries.ts (`relationsQueriesView`).
 */
import { INT32 } from '@svcgen/runtime/catalogue';
import type { Relation, Resource } from '../model/model';
import { camelCase, docLine, literal, pascalCase, str } from '../model/names';
import { aOrAn } from './english';
import type { Imports } from './imports';
import type { RouteView } from './route';
import { relationConst } from './queries';
import type { ResourceRoutes } from './resource-routes';

/**
 * A query-string parameter's Zod schema: typed from its spec, `null` default = optional. A default
 * is given as the query string would carry it (`prefault`), so it is parsed like a client's value.
 */
function queryParamZod(kind: string, defaultValue: unknown, imports: Imports): string {
  const z = () => imports.runtime('z');
  const fromString = () => imports.runtime('fromString');
  const base: Record<string, () => string> = {
    str: () => `${z()}.string()`,
    int: () => `${fromString()}.int()`,
    float: () => `${fromString()}.float()`,
    bool: () => `${fromString()}.bool()`,
    date: () => `${fromString()}.date()`,
    datetime: () => `${fromString()}.datetime()`,
    uuid: () => `${z()}.uuid()`,
    decimal: () => `${fromString()}.float()`,
  };
  const expr = (base[kind] ?? base.str)();
  return defaultValue === null || defaultValue === undefined ? `${expr}.optional()` : `${expr}.prefault(${literal(String(defaultValue))})`;
}

/** The Zod schema of a related key in a POST body. */
function keySchema(target: Resource, imports: Imports): string {
  const pk = target.pk;
  if (pk.type === 'integer') return `${imports.runtime('intInput')}(${INT32.min}, ${INT32.max})`;
  if (pk.type === 'big_integer') return `${imports.runtime('intInput')}(${Number.MIN_SAFE_INTEGER}, ${Number.MAX_SAFE_INTEGER})`;
  if (pk.type === 'uuid') return `${imports.runtime('uuidInput')}()`;
  const z = imports.runtime('z');
  return pk.maxLength ? `${z}.string().min(1).max(${pk.maxLength})` : `${z}.string().min(1)`;
}

/** The listed items: the related resource's schema_out, or the relation's own item schema. */
function items(rel: Relation, rs: ResourceRoutes) {
  const q = rs.q();
  if (!rel.itemSchemaIsTargetOut) {
    return {
      columns: `${q}.${rel.relatedName.toUpperCase()}_ITEM_COLUMNS`,
      shape: `${q}.shape${rel.itemSchema.name}`,
      schema: rs.schema(rel.itemSchema),
    };
  }
  const target = rs.model.resources.find((x) => x.model === rel.target)!;
  if (target === rs.r) return { columns: `${q}.OUT_COLUMNS`, shape: `${q}.shape${rel.itemSchema.name}`, schema: rs.schema(rel.itemSchema) };
  const queries = rs.imports.namespace(`../${target.moduleName}/queries`, `${camelCase(target.moduleName)}Queries`);
  return {
    columns: `${queries}.OUT_COLUMNS`,
    shape: `${queries}.shape${rel.itemSchema.name}`,
    schema: rs.imports.value(`../${target.moduleName}/schemas`, rel.itemSchema.name),
  };
}

/** `GET /{base}/{pk}/{path}`: a page of the related records the relation's filters select. */
function listRoute(rel: Relation, rs: ResourceRoutes): RouteView {
  const { r, imports } = rs;
  const q = rs.q();
  const target = rs.model.resources.find((x) => x.model === rel.target)!;
  const spec = `${q}.${relationConst(rel)}`;
  const query = rs.constant(`${pascalCase(rel.relatedName)}Query`, () => {
    const params = rel.filters.map((f) => `${f.name}: ${queryParamZod(f.kind, f.default, imports)}`).join(', ');
    return params ? `${rs.pageQuery()}.extend({ ${params} })` : rs.pageQuery();
  });
  const filter = rel.queryParamsHandler
    ? `await ${imports.runtime('settleHook')}(${rs.hookCall(rel.queryParamsHandler, '{ query, filters: params }')});`
    : `${imports.runtime('applyRelationFilters')}(query, ${spec}.table, params, { ${rel.filters
        .flatMap((f) => {
          const field = target.fields.find((x) => x.name === f.name);
          return field ? [`${f.name}: { column: ${str(field.column)}, match: '${f.kind === 'str' ? 'contains' : 'exact'}' }`] : [];
        })
        .join(', ')} });`;
  const item = items(rel, rs);
  return rs.route({
    method: 'get',
    path: `'/${r.base}/:pk/${rel.path}${rel.appendSlash ? '/' : ''}'`,
    auth: rel.getAuth,
    operationId: rel.getOperationId,
    decorators: rel.getDecorators,
    params: rs.params(),
    query,
    transaction: false,
    status: 200,
    input: '{ params: { pk }, query: params }, ctx',
    partial: 'operations/relation-list',
    handle: {
      owner: `await ${rs.lookup('findVisible')}(ctx, pk, [${q}.PK])`,
      rows: `${imports.runtime('relatedRows')}(ctx.db, ${spec}, owner[${q}.PK])`,
      // The related records the caller may see, when the related resource narrows them (queryset_request).
      filter: target.querysetRequest ? `await ${imports.runtime('visibleOnly')}(ctx, ${spec}.table, query);\n${filter}` : filter,
      querySource: imports.runtime('querySource'),
      columns: item.columns,
      pk: `${spec}.pk`,
      shape: item.shape,
      kinds: rs.cursorPaged() ? rs.keyKinds(`${camelCase(rel.relatedName)}KeyKinds`, [target.pk]) : undefined,
      page: rs.page('source'),
    },
    summary: str(docLine(`List the ${rel.relatedName} of ${aOrAn(r.verboseName)}.`)),
    response: rs.listResponse(item.schema),
  });
}

/** `POST /{base}/{pk}/{path}/`: adds and removes relations. */
function manageRoute(rel: Relation, rs: ResourceRoutes): RouteView {
  const { r, imports } = rs;
  const q = rs.q();
  const target = rs.model.resources.find((x) => x.model === rel.target)!;
  const pascal = pascalCase(rel.relatedName);
  const body = rs.constant(
    `${pascal}Body`,
    () =>
      `${imports.runtime('m2mBodySchema')}(${keySchema(target, imports)}, { add: ${rel.add}, remove: ${rel.remove} }, '${r.model}${pascal}Body')`,
  );
  // A key names a related record when the query handler finds it (or it exists), and the related
  // resource's queryset_request lets the caller see it: a hidden record is "not found" as a missing one.
  const handled = rel.queryHandler
    ? `${imports.runtime('foundRow')}(await ${rs.hookCall(rel.queryHandler, '{ pk: key, instance: owner }')})`
    : undefined;
  const visible = target.querysetRequest
    ? `(await ${imports.runtime('relatedExists')}(ctx, ${q}.${relationConst(rel)}.table, ${q}.${relationConst(rel)}.pk, key))`
    : undefined;
  const resolve = handled && visible ? `${handled} && ${visible}` : (handled ?? visible);
  return rs.route({
    method: 'post',
    path: `'/${r.base}/:pk/${rel.path}/'`,
    auth: rel.postAuth,
    operationId: rel.manageOperationId,
    ifMatch: rs.ifMatch(),
    decorators: rel.postDecorators,
    params: rs.params(),
    body,
    transaction: true,
    status: 200,
    input: '{ params: { pk }, body }, ctx',
    partial: 'operations/relation-manage',
    handle: {
      owner: `await ${rs.lookup('lockRow')}(ctx, pk, [${q}.PK])`,
      resolve,
      manage: `${imports.runtime('manageRelation')}(ctx.db, ${q}.${relationConst(rel)}, owner[${q}.PK], body${resolve ? ', resolve' : ''})`,
    },
    summary: str(docLine(`Add or remove ${rel.relatedName} of ${aOrAn(r.verboseName)}.`)),
    response: imports.runtime('M2MSchemaOut'),
  });
}

export function relationRoutes(rel: Relation, rs: ResourceRoutes): RouteView[] {
  return [...(rel.get ? [listRoute(rel, rs)] : []), ...(rel.add || rel.remove ? [manageRoute(rel, rs)] : [])];
}
