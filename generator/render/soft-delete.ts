/**
 * The routes soft delete adds to a resource (`soft_delete` of its viewset): `POST /{base}/{pk}/restore/`
 * brings a soft-deleted row back and answers with the retrieve shape; `DELETE /{base}/{pk}/hard/`,
 * for the roles `hard_delete_roles` names, removes a row for good, deleted or not. The delete
 * operation itself stamps the row (operations.ts).
 */
import type { SoftDelete } from '../model/model';
import { literal, str } from '../model/names';
import { restoreConflictMessage } from '@svcgen/runtime/soft-delete';
import { lifecycle, objectPermission, reread } from './operations';
import type { RouteView } from './route';
import type { ResourceRoutes } from './resource-routes';

export function softDeleteRoutes(sd: SoftDelete, rs: ResourceRoutes): RouteView[] {
  return [restoreRoute(sd, rs), ...(sd.hardDelete ? [hardDeleteRoute(sd, rs)] : [])];
}

function restoreRoute(sd: SoftDelete, rs: ResourceRoutes): RouteView {
  const { r } = rs;
  const q = rs.q();
  const detail = r.schemas.detail;
  const [first] = sd.uniques;
  return rs.route({
    method: 'post',
    path: `'/${r.base}/:pk/restore/'`,
    auth: sd.restore.auth,
    roles: sd.restore.roles,
    throttles: sd.restore.throttles,
    operationId: sd.restore.operationId,
    decorators: [],
    params: rs.params(),
    transaction: true,
    status: 200,
    input: '{ params: { pk } }, ctx',
    partial: 'operations/restore',
    handle: {
      // Only a soft-deleted row can be restored: a live or missing one is a 404.
      row: `await ${rs.lookup('lockDeleted')}(ctx, pk, ${q}.RECORD_COLUMNS)`,
      objectPermission: objectPermission(rs, 'restore', `${q}.to${r.model}Record(row)`),
      restore: `${rs.imports.runtime('restoreRow')}(ctx.db, ${q}.SOFT_DELETE, row)`,
      reread: reread(rs, detail, 'pk'),
    },
    kind: 'restore',
    description: str(`A ${r.verboseName} that is not deleted is a 404.`),
    errors: first ? literal({ 409: { error: 'conflict', details: restoreConflictMessage(r.verboseName, first.fields) } }) : undefined,
    response: rs.schema(detail),
  });
}

function hardDeleteRoute(sd: SoftDelete, rs: ResourceRoutes): RouteView {
  const { r } = rs;
  const q = rs.q();
  const hard = sd.hardDelete!;
  const key = `instance.${r.pk.name}`;
  return rs.route({
    method: 'delete',
    path: `'/${r.base}/:pk/hard/'`,
    auth: hard.auth,
    roles: hard.roles,
    throttles: hard.throttles,
    operationId: hard.operationId,
    ifMatch: rs.ifMatch(),
    decorators: [],
    params: rs.params(),
    transaction: true,
    status: 204,
    input: '{ params: { pk } }, ctx',
    // The delete's own code with no override to hand it to.
    partial: 'operations/delete',
    handle: {
      // Live or soft-deleted: both are removed.
      instance: `${q}.to${r.model}Record(await ${rs.lookup('lockAny')}(ctx, pk, ${q}.RECORD_COLUMNS))`,
      objectPermission: objectPermission(rs, 'hard_delete'),
      beforeDelete: lifecycle(rs, 'before_delete', '{ instance }'),
      remove: `${rs.imports.runtime('deleteRow')}(ctx, ${q}.TABLE, ${q}.PK, ${key})`,
      afterDelete: lifecycle(rs, 'after_delete', '{ instance }'),
    },
    kind: 'hard_delete',
  });
}
