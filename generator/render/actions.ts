/**
 * The routes of a resource's custom actions: one per method, at `/{base}/{pk}/{name}/`, handing the
 * record to the action's hook.
 */
import type { Action } from '../model';
import { docLine, literal, str } from '../names';
import { aOrAn } from './english';
import { response, type RouteView } from './route';
import type { ResourceRoutes } from './routes';

export function actionRoutes(a: Action, rs: ResourceRoutes): RouteView[] {
  const { r } = rs;
  const q = rs.q();
  return a.routes.map(({ method, operationId, transaction }) =>
    rs.route({
      method,
      path: `'/${r.base}/:pk/${a.name}/'`,
      auth: a.auth,
      operationId,
      decorators: a.decorators,
      params: rs.params(),
      transaction,
      status: 200,
      input: '{ params: { pk } }, ctx',
      partial: 'operations/action',
      handle: {
        instance: `${q}.to${r.model}Record(await ${rs.lookup('lockRow')}(ctx, pk, ${q}.RECORD_COLUMNS))`,
        call: rs.hookCall(a.handler, '{ instance }'),
      },
      summary: str(docLine(a.summary ?? `Run the ${a.name} action on ${aOrAn(r.verboseName)}.`)),
      tags: rs.tag(),
      errors: Object.keys(a.errors).length ? literal(a.errors) : undefined,
      responses: response(200, a.response ? rs.schema(a.response) : undefined),
      errorSchema: rs.errorSchema(),
    }),
  );
}
