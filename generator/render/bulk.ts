/**
 * The routes of a resource's bulk operations (`bulk`): `POST`, `PATCH` and `DELETE` at
 * `/{base}/bulk/`, with the single-item operation's auth, roles and rate limits. Their `handle`
 * (`templates/partials/operations/bulk.hbs`) hands each item to `runBulk` with the single-item
 * operation's own code, printed by its partial (`operations/create`, `update`, `delete`).
 */
import type { BulkOperation } from '../model/model';
import { str } from '../model/names';
import { createHandle, deleteHandle, updateHandle } from './operations';
import { response, type RouteView } from './route';
import type { ResourceRoutes } from './resource-routes';

/** How the documentation says what one request does with its items. */
function description(b: BulkOperation): string {
  const limit = `At most ${b.maxItems} item${b.maxItems === 1 ? '' : 's'} per request.`;
  return b.atomic
    ? `${limit} All or nothing: the first invalid or failing item is the answer, and nothing is written.`
    : `${limit} Each item is written or refused on its own: the answer lists a status for each, in order.`;
}

/** The parameter of the item function: a create's body, an update's key and fields, a delete's key. */
function itemParam(b: BulkOperation, rs: ResourceRoutes): string {
  if (b.kind === 'create') return 'data';
  if (b.kind === 'delete') return 'pk';
  const key = rs.r.pk.name;
  return key === 'pk' ? '{ pk, ...data }' : `{ ${key}: pk, ...data }`;
}

export function bulkRoute(b: BulkOperation, rs: ResourceRoutes): RouteView {
  const { r } = rs;
  const o = b.operation;
  const rt = rs.imports.runtime.bind(rs.imports);
  const key = `${r.model}Key`;
  const item = b.kind === 'create' ? rs.schema(r.schemas.in) : b.kind === 'update' ? rs.schema(r.bulkUpdateItem!) : rs.schema(key);
  const answered = b.kind === 'create' ? rs.schema(r.responses.create) : b.kind === 'update' ? rs.schema(r.responses.update) : undefined;
  const deletes = b.kind === 'delete';
  const options = [`item: ${item}`, ...(deletes ? ["at: ['ids']"] : []), `atomic: ${b.atomic}`, `status: ${o.status}`];
  // An atomic request answers the operation's status; any other, 207 with one result per item.
  const responses = b.atomic
    ? { response: answered && `${rt('z')}.array(${answered})` }
    : { responses: response(207, 'Multi-Status: one result per item, in order', `${rt('bulkResultsDoc')}(${answered ?? ''})`) };
  const handles = { create: createHandle, update: updateHandle, delete: deleteHandle };
  return rs.route({
    method: b.method,
    path: `'/${r.base}/bulk/'`,
    auth: o.auth,
    roles: o.roles,
    throttles: o.throttles,
    operationId: b.operationId,
    ifMatch: b.kind === 'create' ? undefined : rs.ifMatch(),
    // The single-item operation's decorators wrap its own view: a bulk request is not one of its requests.
    decorators: [],
    body: deletes ? `${rt('bulkDeleteBody')}(${b.maxItems})` : `${rt('bulkListBody')}(${b.maxItems})`,
    docBody: deletes ? `${rt('bulkDeleteDoc')}(${item}, ${b.maxItems})` : `${rt('bulkListDoc')}(${item}, ${b.maxItems})`,
    transaction: false,
    status: b.atomic ? o.status : 207,
    input: deletes ? '{ body: { ids } }, ctx' : '{ body: items }, ctx',
    partial: 'operations/bulk',
    handle: {
      runBulk: rt('runBulk'),
      items: deletes ? 'ids' : 'items',
      options: `{ ${options.join(', ')} }`,
      param: itemParam(b, rs),
      itemPartial: `operations/${b.kind}`,
      item: handles[b.kind](o, rs),
    },
    kind: `bulk_${b.kind}`,
    description: str(description(b)),
    ...responses,
  });
}
