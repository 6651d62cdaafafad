/**
 * The routes of a resource's custom actions, one per method: a detail action at
 * `/{base}/{pk}/{name}/` hands the record to the action's hook; a list-level action at
 * `/{base}/{name}/` hands it the query of the rows the list reads.
 */
import type { Action } from '../model';
import { docLine, literal, str } from '../names';
import { aOrAn } from './english';
import { response, type RouteView } from './route';
import { objectPermission } from './operations';
import type { ResourceRoutes } from './routes';

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
      ...(a.detail ? detailParts(a, rs) : listParts(a, rs)),
      summary: str(docLine(a.summary ?? `Run the ${a.name} action on ${target}.`)),
      tags: rs.tag(),
      errors: Object.keys(a.errors).length ? literal(a.errors) : undefined,
      responses: response(200, a.response ? rs.schema(a.response) : undefined),
      errorSchema: rs.errorSchema(),
    }),
  );
}

/** A detail action: the record with the path's key, looked up unfiltered (missing is a 404). */
function detailParts(a: Action, rs: ResourceRoutes) {
  const q = rs.q();
  return {
    path: `'/${rs.r.base}/:pk/${a.name}/'`,
    params: rs.params(),
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
