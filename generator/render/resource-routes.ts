/**
 * What the routes of one resource share while its `routes.ts` is rendered (`ResourceRoutes`): the
 * imports, the row lookups, the constants and the expressions every kind of route (operations,
 * bulk, actions, relation endpoints, soft delete) prints, each recorded on first use. In a module
 * of its own, which those kinds import, so that none of them imports routes.ts, which imports them.
 */
import type { KeyKind } from '@svcgen/runtime';
import type { Field, Resource, SchemaModel, ServiceModel } from '../model/model';
import { literal, str } from '../model/names';
import { hookModuleFrom, runtimeFrom, type RenderContext } from './context';
import { Imports } from './imports';
import { columnsOf, rowTypeName, serves } from './queries';
import { RouteFile } from './route';

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

  /** The path parameters of item routes. */
  params(): string {
    return this.schema(`${this.r.model}Params`);
  }

  /**
   * `route`: the resource's route builder, declared once before the routes, giving each route the
   * resource's tag, error schema and names.
   */
  protected override builder(): string {
    const route = this.constant('route', () => {
      const { r } = this;
      const errorSchema = r.errorSchema ? `, errorSchema: ${this.schema(r.errorSchema)}` : '';
      const nouns = `base: ${str(r.base)}, tag: ${str(r.tag)}, one: ${str(r.verboseName)}, many: ${str(r.verboseNamePlural)}`;
      return `${this.imports.runtime('resourceRoute')}(service, { ${nouns}${errorSchema} })`;
    });
    return `${route}(`;
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
    const state =
      this.versioned() && (this.lookups.has('stateETag') || this.lookups.has('lockRow') || this.lookups.has('lockAny'))
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
