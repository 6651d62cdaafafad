/**
 * View of a resource's `routes.ts`: the routes of its operations, bulk operations, actions, relation
 * endpoints and custom endpoints, in that order, after the constants they share and the row lookups they use.
 */
import type { Field, Resource, SchemaModel, ServiceModel } from '../model/model';
import type { KeyKind } from '@svcgen/runtime';
import { camelCase, literal, str } from '../model/names';
import { header, hookModuleFrom, runtimeFrom, type RenderContext } from './context';
import { actionRoutes } from './actions';
import { bulkRoute } from './bulk';
import { endpointRoute } from './endpoints';
import { Imports } from './imports';
import { relationRoutes } from './m2m';
import { createHandle, deleteHandle, operationRoute, updateHandle } from './operations';
import { aOrAn } from './english';
import { columnsOf, rowTypeName, serves } from './queries';
import { softDeleteRoutes } from './soft-delete';
import { RouteFile } from './route';

/** The row lookups `rowLookup` builds, in the order the routes file names them. */
const LOOKUPS = ['queryset', 'findVisible', 'findRow', 'insertRow', 'lockRow', 'lockDeleted', 'lockAny', 'stateETag'] as const;
export type Lookup = (typeof LOOKUPS)[number];

/** What the routes of one resource share, each recorded on first use. */
export class ResourceRoutes extends RouteFile {
  private readonly lookups = new Set<Lookup>();

  constructor(
    readonly r: Resource,
    readonly model: ServiceModel,
    ctx: RenderContext,
    imports = new Imports(runtimeFrom(ctx, 2)),
  ) {
    super(
      imports,
      {
        imports,
        own: r.hooks ? hookModuleFrom(ctx, r.hooks, 2) : undefined,
        service: model.hooks ? hookModuleFrom(ctx, model.hooks, 2) : undefined,
        shared: new Set(model.sharedHooks),
      },
      './schemas',
    );
  }

  /** The resource's queries module. */
  q(): string {
    return this.imports.namespace('./queries', 'q');
  }

  /** The resource's filters module. */
  filtering(): string {
    return this.imports.namespace('./filters', 'filtering');
  }

  /** One of the row lookups of the resource. */
  lookup(name: Lookup): string {
    this.lookups.add(name);
    return name;
  }

  /**
   * Whether the resource has ETags of its rows' states: the hash of the detail representation its
   * retrieve sends, so only a resource that serves a retrieve has them.
   */
  versioned(): boolean {
    return serves(this.r, 'retrieve');
  }

  /** How a write holding a row (`lockRow`, `lockAny`) treats `If-Match`: checked, or required; none without ETags. */
  ifMatch(): 'optional' | 'required' | undefined {
    return this.versioned() ? (this.r.requireIfMatch ? 'required' : 'optional') : undefined;
  }

  /**
   * The ETag of a write's answer: the state of the row whose key `key` (code: a function of the input
   * and the result) finds, or, when the write answers with `answer` (its response schema) unless an
   * `override` replaces it, and that is the detail representation, the hash of the answer itself.
   */
  stateETag(key: () => string, answer: SchemaModel, override: string | undefined): string | undefined {
    if (!this.versioned()) return undefined;
    const answerIsState = override === undefined && answer.name === this.r.schemas.detail.name ? ', answerIsState: true' : '';
    return `{ state: ${this.lookup('stateETag')}, key: ${key()}${answerIsState} }`;
  }

  /** `'/'` when SVC_APPEND_SLASH is on: the end of collection and retrieve paths. */
  slash(): string {
    return this.constant('slash', () => "service.settings.SVC_APPEND_SLASH ? '/' : ''");
  }

  /** The path parameters of item routes. */
  params(): string {
    return this.schema(`${this.r.model}Params`);
  }

  errorSchema(): string {
    return this.r.errorSchema ? this.schema(this.r.errorSchema) : this.imports.runtime('GenericMessageSchema');
  }

  tag(): string {
    return str(this.r.tag);
  }

  /** The resource's paginator: lists and relation listings are paged with it. */
  private paginatorConst(): string {
    return this.constant('paginator', () => this.newPaginator(this.r.pagination!));
  }

  /** The query parameters of a list: the paginator's, or none. */
  pageQuery(): string {
    return this.r.pagination ? `${this.paginatorConst()}.querySchema` : `${this.imports.runtime('z')}.object({})`;
  }

  /** What a list answers, from `source` and the validated `params`: a page, or every item. */
  page(source: string): string {
    return this.r.pagination
      ? `${this.imports.runtime('paginate')}(${this.paginatorConst()}, ${source}, params, ctx.req)`
      : `${this.imports.runtime('listAll')}(${source})`;
  }

  /** Whether the resource's lists are read by position (CursorPagination): their sources then carry the key kinds. */
  cursorPaged(): boolean {
    const p = this.r.pagination;
    return p !== null && p.builtin && p.class === 'CursorPagination';
  }

  /**
   * The `kinds` a cursor-paged list's source checks cursors with, as a constant named `name`: the
   * value kind of each column in `fields` (the primary key and the ordering fields).
   */
  keyKinds(name: string, fields: readonly Field[]): string {
    const kinds = Object.fromEntries(fields.map((f) => [f.column, keyKind(f)]));
    return this.constant(name, () => literal(kinds), `Record<string, ${this.imports.runtimeType('KeyKind')}>`);
  }

  /** The documented response of a list of `item`. */
  listResponse(item: string): string {
    return this.r.pagination ? `${this.paginatorConst()}.responseSchema(${item})` : `${this.imports.runtime('z')}.array(${item})`;
  }

  /** The `rowLookup` declaration, when a route uses one of its lookups. */
  rowLookup() {
    if (this.lookups.size === 0) return undefined;
    const reads = this.lookups.has('queryset') || this.lookups.has('findVisible');
    const narrow = reads && this.r.querysetRequest ? `(ctx, query) => ${this.hookCall(this.r.querysetRequest, '{ query }')}` : undefined;
    const writes = this.lookups.has('lockRow') || this.lookups.has('lockDeleted') || this.lookups.has('lockAny');
    const narrowWrites = writes && this.r.querysetWrite ? `(ctx, query) => ${this.hookCall(this.r.querysetWrite, '{ query }')}` : undefined;
    // The state an ETag hashes: what the retrieve sends for a row, read by key alone.
    const q = this.q();
    const detail = this.r.schemas.detail;
    const state = this.versioned() && (this.lookups.has('stateETag') || this.lookups.has('lockRow') || this.lookups.has('lockAny'))
      ? `{ columns: ${q}.${columnsOf(this.r, detail)}, shape: ${q}.shape${detail.name} }`
      : undefined;
    return {
      rowLookup: this.imports.runtime('rowLookup'),
      q: this.q(),
      row: rowTypeName(this.r),
      names: LOOKUPS.filter((name) => this.lookups.has(name)).join(', '),
      narrow,
      narrowWrites,
      softDelete: this.r.softDelete !== null,
      state,
      requireIfMatch: state !== undefined && this.r.requireIfMatch,
    };
  }
}

/** The JSON kind of a column's values in a cursor (a foreign key's: its target key's). */
function keyKind(f: Field): KeyKind {
  switch (f.type) {
    case 'integer':
      return 'int';
    case 'big_integer':
      return 'bigint';
    case 'float':
      return 'float';
    case 'decimal':
      return 'decimal';
    case 'boolean':
      return 'bool';
    case 'date':
      return 'date';
    case 'datetime':
      return 'datetime';
    case 'uuid':
      return 'uuid';
    case 'foreign_key':
      return keyKind(f.relation!.targetPk);
    default:
      // Strings of every kind; json is refused as an ordering field of a cursor-paged list (validate).
      return 'str';
  }
}

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
