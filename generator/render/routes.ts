/**
 * View of a resource's `routes.ts`: the routes of its operations, bulk operations, actions, relation
 * endpoints and custom endpoints, in that order, after the constants they share and the row lookups they use.
 */
import type { Resource, ServiceModel } from '../model/model';
import { camelCase, literal, str } from '../model/names';
import { header, type RenderContext } from './context';
import { actionRoutes } from './actions';
import { bulkRoute } from './bulk';
import { endpointRoute } from './endpoints';
import { Imports } from './imports';
import { relationRoutes } from './m2m';
import { createHandle, deleteHandle, operationRoute, updateHandle } from './operations';
import { aOrAn } from './english';
import { softDeleteRoutes } from './soft-delete';
import { ResourceRoutes } from './resource-routes';

/**
 * The writes of a resource that other resources' nested writes run (`<module>Writes`): its create,
 * update and delete as its routes run them, without a request's `If-Match` (the parent's, which
 * names the parent's state, not a child's).
 */
class ChildWritesFile extends ResourceRoutes {
  override versioned(): boolean {
    return false;
  }
}

/** The type of a key of `r` in its record: `OrderLineRecord['id']`. */
const keyType = (rs: ResourceRoutes) => `${rs.q()}.${rs.r.model}Record[${str(rs.r.pk.name)}]`;

/** The view of `<module>Writes`, when a nested write of another resource writes this one's rows; undefined otherwise. */
function childWritesView(r: Resource, model: ServiceModel, ctx: RenderContext, imports: Imports) {
  const writes = model.resources.flatMap((x) => [...x.nestedWrites.create, ...x.nestedWrites.update]).filter((w) => w.child === r);
  if (writes.length === 0) return undefined;
  const fk = writes[0].relation.field!;
  const updates = writes.some((w) => w.mode !== 'create');
  const ws = new ChildWritesFile(r, model, ctx, imports);
  const op = (kind: 'create' | 'update' | 'delete') => r.operations.find((o) => o.kind === kind)!;
  const caller = (kind: 'create' | 'update' | 'delete') => {
    const o = op(kind);
    if (o.auth === null && !o.roles) return undefined;
    const rule = o.roles ? `{ authenticated: ${o.auth !== null}, roles: ${literal(o.roles)} }` : '{ authenticated: true }';
    return `${imports.runtime('checkCaller')}(ctx, ${rule})`;
  };
  imports.runtimeType('RequestContext');
  const q = ws.q();
  const inSchema = imports.type('./schemas', r.schemas.in.name);
  const view = {
    fn: `${camelCase(r.moduleName)}Writes`,
    aVerboseName: aOrAn(r.verboseName),
    create: {
      params: `item: Omit<${inSchema}, ${str(fk.name)}>, parent: ${inSchema}[${str(fk.name)}], ctx: ${imports.runtimeType('RequestContext')}`,
      caller: caller('create'),
      data: `const data: ${inSchema} = { ...item, ${fk.name}: parent };`,
      handle: createHandle(op('create'), ws),
    },
    update: updates
      ? {
          params: `pk: ${keyType(ws)}, data: ${imports.type('./schemas', r.schemas.update.name)}, ctx: ${imports.runtimeType('RequestContext')}`,
          caller: caller('update'),
          handle: updateHandle(op('update'), ws),
        }
      : undefined,
    remove: writes.some((w) => w.mode === 'replace')
      ? {
          params: `pk: ${keyType(ws)}, ctx: ${imports.runtimeType('RequestContext')}`,
          caller: caller('delete'),
          handle: deleteHandle(op('delete'), ws),
        }
      : undefined,
    children: updates
      ? `(db: ${imports.runtimeType('Db')}, parent: ${keyType(ws)}) => ${imports.runtime('childKeys')}(db, ${q}.TABLE, ${q}.PK, ${str(fk.column)}, parent${r.softDelete ? `, ${q}.SOFT_DELETE.column` : ''})`
      : undefined,
  };
  return { ...view, constants: ws.constantViews(), rowLookup: ws.rowLookup() };
}

export function routesView(r: Resource, model: ServiceModel, ctx: RenderContext) {
  const rs = new ResourceRoutes(r, model, ctx);
  const routes = [
    ...r.operations.map((o) => operationRoute(o, rs)),
    ...(r.softDelete ? softDeleteRoutes(r.softDelete, rs) : []),
    ...r.bulk.map((b) => bulkRoute(b, rs)),
    ...r.actions.flatMap((a) => actionRoutes(a, rs)),
    ...r.relations.flatMap((rel) => relationRoutes(rel, rs)),
    ...r.endpoints.map((e) => endpointRoute(e, rs)),
  ];
  const rowLookup = rs.rowLookup();
  const writes = childWritesView(r, model, ctx, rs.imports);
  return {
    writes,
    header: header(`${ctx.specsName}/${r.specFile}`),
    verboseName: r.verboseName,
    routesFn: `${camelCase(r.moduleName)}Routes`,
    constants: rs.constantViews(),
    rowLookup,
    routes,
    imports: rs.imports.print(),
  };
}
