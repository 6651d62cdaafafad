/**
 * The routes of a resource's custom actions, one per method: a detail action at
 * `/{base}/{pk}/{name}/` hands the record to the action's hook; a list-level action at
 * `/{base}/{name}/` hands it the query of the rows the list reads.
 */
import type { Action, Pagination } from '../model/model';
import { camelCase, docLine, literal, pascalCase, str } from '../model/names';
import { aOrAn } from './english';
import type { RouteView } from './route';
import { defaultOrdering, objectPermission, orderingKeyFields, orderingParam } from './operations';
import type { ResourceRoutes } from './resource-routes';

export function actionRoutes(a: Action, rs: ResourceRoutes): RouteView[] {
  const { r } = rs;
  const target = a.detail ? aOrAn(r.verboseName) : r.verboseNamePlural;
  return a.routes.map(({ method, operationId, transaction }) =>
    rs.route({
      method,
      auth: a.auth,
      throttles: a.throttles,
      operationId,
      decorators: a.decorators,
      transaction,
      status: 200,
      partial: 'operations/action',
      response: a.response ? rs.schema(a.response) : undefined,
      ...(a.detail ? detailParts(a, rs) : a.paginate ? pagedParts(a, a.paginate, operationId, rs) : listParts(a, rs)),
      summary: str(docLine(a.summary ?? `Run the ${a.name} action on ${target}.`)),
      description: a.description === undefined ? undefined : str(a.description),
      errors: Object.keys(a.errors).length ? literal(a.errors) : undefined,
    }),
  );
}

/** A detail action: the record with the path's key among those writes see (hidden or missing is a 404). */
function detailParts(a: Action, rs: ResourceRoutes) {
  const q = rs.q();
  return {
    path: `'/${rs.r.base}/:pk/${a.name}/'`,
    params: rs.params(),
    ifMatch: rs.ifMatch(),
    input: '{ params: { pk } }, ctx',
    handle: {
      own: 'instance',
      get: `${q}.to${rs.r.model}Record(await ${rs.lookup('lockRow')}(ctx, pk, ${q}.RECORD_COLUMNS))`,
      objectPermission: objectPermission(rs, a.name),
      call: rs.hookCall(a.handler, '{ instance }'),
    },
  };
}

/** A list-level action: the query of the rows the list reads (narrowed by queryset_request). */
function listParts(a: Action, rs: ResourceRoutes) {
  return {
    path: `'/${rs.r.base}/${a.name}/'`,
    input: '_input, ctx',
    handle: {
      own: '{ query }',
      get: `await ${rs.lookup('queryset')}(ctx)`,
      call: rs.hookCall(a.handler, '{ query }'),
    },
  };
}

/**
 * A paginated list-level action (`paginate`, GET alone): the hook narrows the list's query, and the
 * answer is the paginator's page of the list's items, read as the list reads them (its order with
 * the primary key as tie-break, its read schema). Its query is the paginator's parameters and, but
 * under CursorPagination, the list's `ordering`; a cursor-paged action reads in `default_ordering`.
 */
function pagedParts(a: Action, p: Pagination, operationId: string, rs: ResourceRoutes) {
  const { r } = rs;
  const q = rs.q();
  const cursor = p.builtin && p.class === 'CursorPagination';
  const paginator = rs.constant(`${camelCase(operationId)}Paginator`, () => rs.newPaginator(p));
  const ordered = r.ordering.fields.length > 0 && !cursor;
  const query = rs.constant(`${pascalCase(operationId)}Query`, () =>
    ordered ? `${paginator}.querySchema.extend({ ordering: ${orderingParam(rs)} })` : `${paginator}.querySchema`,
  );
  const byDefault = defaultOrdering(rs);
  return {
    path: `'/${r.base}/${a.name}/'`,
    query,
    input: '{ query: params }, ctx',
    partial: 'operations/paged-action',
    handle: {
      queryset: rs.lookup('queryset'),
      actionQuery: rs.imports.runtime('actionQuery'),
      call: rs.hookCall(a.handler, '{ query }'),
      querySource: rs.imports.runtime('querySource'),
      ordering: ordered ? `params.ordering ?? ${byDefault}` : byDefault,
      shape: `${q}.shape${r.schemas.out.name}`,
      kinds: cursor ? rs.keyKinds('keyKinds', orderingKeyFields(r)) : undefined,
      page: `${rs.imports.runtime('paginate')}(${paginator}, source, params, ctx.req)`,
    },
    response: `${paginator}.responseSchema(${rs.schema(r.schemas.out)})`,
  };
}
