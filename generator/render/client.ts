/**
 * View of `client.ts`: a dependency-free, typed client of the service for callers. Its types are
 * plain interfaces printed from the same schema models as the server's Zod schemas
 * (`typescript.ts` beside `zod.ts`), and it has one method per operation, named by the camel case
 * of the operation id: CRUD, actions, relation endpoints and custom endpoints, in the order the
 * server registers them.
 */
import type { Action, BulkOperation, Endpoint, Operation, Pagination, Relation, Resource, SchemaModel, ServiceModel } from '../model/model';
import { camelCase, docLine, pascalCase, str } from '../model/names';
import { header, type RenderContext } from './context';
import { andList, aOrAn } from './english';
import { JSON_VALUE, propertyKey, schemaMembers, tsOutput, tsQueryParam, type InterfaceMember } from './typescript';

interface TypeView {
  doc: string;
  /** `export interface X extends Y {` or `export type X =`. */
  declaration: string;
  /** The members of an interface, or undefined for a type alias. */
  members: InterfaceMember[] | undefined;
  /** The right-hand side of a type alias, or undefined for an interface. */
  alias: string | undefined;
}

interface MethodView {
  doc: string;
  name: string;
  /** `<E extends ...>` of a method generic in its `?expand=`, or empty. */
  typeParams: string;
  params: string;
  returns: string;
  call: string;
}

/** The helper types a client uses, each printed only when a method needs it. */
interface Helpers {
  page: boolean;
  resultsPage: boolean;
  cursorPage: boolean;
  pageNumberQuery: boolean;
  limitOffsetQuery: boolean;
  cursorQuery: boolean;
  m2m: boolean;
  json: boolean;
  bulk: boolean;
  expanded: boolean;
}

/** Names a path parameter cannot take: the method's other parameters and JavaScript's reserved words. */
const TAKEN = new Set([
  ...['body', 'query', 'request'],
  ...['await', 'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete', 'do', 'else', 'enum', 'export'],
  ...['extends', 'false', 'finally', 'for', 'function', 'if', 'implements', 'import', 'in', 'instanceof', 'interface', 'let', 'new'],
  ...['null', 'package', 'private', 'protected', 'public', 'return', 'static', 'super', 'switch', 'this', 'throw', 'true', 'try'],
  ...['typeof', 'var', 'void', 'while', 'with', 'yield'],
]);

function paramName(name: string): string {
  const camel = camelCase(name);
  return camel && !TAKEN.has(camel) ? camel : 'pk';
}

const STATUS_WITHOUT_BODY = 204;

class ClientBuilder {
  readonly types: TypeView[] = [];
  readonly methods: MethodView[] = [];
  readonly helpers: Helpers = {
    page: false,
    resultsPage: false,
    cursorPage: false,
    pageNumberQuery: false,
    limitOffsetQuery: false,
    cursorQuery: false,
    m2m: false,
    json: false,
    bulk: false,
    expanded: false,
  };
  private readonly schemaNames = new Set<string>();

  /** The interface of a schema, declared once; returns its name. */
  schema(s: SchemaModel, doc: string): string {
    if (!this.schemaNames.has(s.name)) {
      this.schemaNames.add(s.name);
      this.types.push({ doc, declaration: `export interface ${s.name} {`, members: schemaMembers(s), alias: undefined });
    }
    return s.name;
  }

  /** `<Model>Expansions`: what `?expand=` shows for each relation, declared once; returns its name. */
  expansions(r: Resource): string {
    const name = `${r.model}Expansions`;
    if (!this.schemaNames.has(name)) {
      this.schemaNames.add(name);
      const members = r.expand.map((f) => ({ doc: undefined, line: `${propertyKey(f.name)}: ${tsOutput(f)};` }));
      this.types.push({
        doc: `What ?expand= shows for each relation of ${aOrAn(r.verboseName)} it names.`,
        declaration: `export interface ${name} {`,
        members,
        alias: undefined,
      });
    }
    this.helpers.expanded = true;
    return name;
  }

  /** The page parameters a paginator reads, as the interfaces a query type extends. */
  pageQueries(p: Pagination | null): string[] {
    if (!p) return [];
    if (p.builtin && p.class === 'CursorPagination') {
      this.helpers.cursorQuery = true;
      return ['CursorQuery'];
    }
    // A custom paginator extends one of the two built-in kinds; the client does not know which.
    const limitOffset = p.class === 'LimitOffsetPagination' || !p.builtin;
    const pageNumber = p.class !== 'LimitOffsetPagination';
    if (pageNumber) this.helpers.pageNumberQuery = true;
    if (limitOffset) this.helpers.limitOffsetQuery = true;
    return [...(pageNumber ? ['PageNumberQuery'] : []), ...(limitOffset ? ['LimitOffsetQuery'] : [])];
  }

  /** What a list of `item` answers under the paginator; `unknown` under a custom one. */
  pageOf(p: Pagination | null, item: string): string {
    if (!p) return `${item}[]`;
    if (!p.builtin) return 'unknown';
    if (p.class === 'PageNumberResultsPagination') {
      this.helpers.resultsPage = true;
      return `ResultsPage<${item}>`;
    }
    if (p.class === 'CursorPagination') {
      this.helpers.cursorPage = true;
      return `CursorPage<${item}>`;
    }
    this.helpers.page = true;
    return `Page<${item}>`;
  }

  /** A query interface of a method, or undefined when the method takes no query parameters. */
  query(name: string, doc: string, bases: string[], members: InterfaceMember[]): string | undefined {
    if (!bases.length && !members.length) return undefined;
    if (!members.length && bases.length === 1) return bases[0];
    if (!members.length) {
      this.types.push({ doc, declaration: `export type ${name} =`, members: undefined, alias: bases.join(' & ') });
      return name;
    }
    const ext = bases.length ? ` extends ${bases.join(', ')}` : '';
    this.types.push({ doc, declaration: `export interface ${name}${ext} {`, members, alias: undefined });
    return name;
  }

  method(m: {
    operationId: string;
    summary: string;
    method: string;
    path: string;
    pathParams: { name: string; type: string }[];
    pathCode: string;
    body?: string;
    query?: string;
    returns: string;
    typeParams?: string;
  }) {
    const params = [
      ...m.pathParams.map((p) => `${p.name}: ${p.type}`),
      ...(m.body ? [`body: ${m.body}`] : []),
      ...(m.query ? [`query: ${m.query} = {}`] : []),
      'request?: RequestOptions',
    ];
    // A path without parameters is a plain string.
    const path = m.pathCode.includes('${') ? m.pathCode : str(m.pathCode.slice(1, -1));
    const init = [`method: '${m.method.toUpperCase()}'`, `path: ${path}`, ...(m.body ? ['body'] : []), ...(m.query ? ['query'] : [])];
    this.methods.push({
      doc: `${docLine(m.summary)} \`${m.method.toUpperCase()} ${m.path}\``,
      name: camelCase(m.operationId),
      typeParams: m.typeParams ?? '',
      params: params.join(', '),
      returns: m.returns,
      call: `send<${m.returns}>({ ${init.join(', ')} }, request)`,
    });
  }
}

/** The primary key as a path parameter: its name and type. */
function pkParam(r: Resource): { name: string; type: string } {
  return { name: paramName(r.pk.name), type: ['integer', 'big_integer'].includes(r.pk.type) ? 'number' : 'string' };
}

const capital = (text: string) => text[0].toUpperCase() + text.slice(1);

/** The doc comment of a resource's schema_out. */
const outDoc = (r: Resource) => `${capital(aOrAn(r.verboseName))} as lists, create and update answer it.`;

const segment = (name: string) => `\${segment(${name})}`;

function operationMethod(o: Operation, r: Resource, b: ClientBuilder) {
  const pk = pkParam(r);
  const itemEnd = o.pathKind === 'itemSlash' ? '/' : '${slash}';
  const pathCode = o.pathKind === 'collection' ? `\`/${r.base}\${slash}\`` : `\`/${r.base}/${segment(pk.name)}${itemEnd}\``;
  const path = o.pathKind === 'collection' ? `/${r.base}/` : `/${r.base}/{${pk.name}}/`;
  const common = { operationId: o.operationId, summary: o.summary, method: o.method, path, pathCode };
  const out = () => b.schema(r.schemas.out, outDoc(r));
  switch (o.kind) {
    case 'create':
      return b.method({
        ...common,
        pathParams: [],
        body: b.schema(r.schemas.in, `The request body that creates ${aOrAn(r.verboseName)}.`),
        returns: nestedResult(r, 'create', b) ?? out(),
      });
    case 'list': {
      const x = expandable(r, b, listQuery(o, r, b), out());
      return b.method({ ...common, pathParams: [], query: x.query, returns: b.pageOf(r.pagination, x.item), typeParams: x.typeParams });
    }
    case 'retrieve': {
      const returns = r.hasDetail ? b.schema(r.schemas.detail, `${capital(aOrAn(r.verboseName))} as retrieve answers it.`) : out();
      const members = r.fieldSelection ? [fieldsMember(r.schemas.detail)] : [];
      const query = b.query(`${pascalCase(o.operationId)}Query`, `Query parameters of ${camelCase(o.operationId)}.`, [], members);
      const x = expandable(r, b, query, returns);
      return b.method({ ...common, pathParams: [pk], query: x.query, returns: x.item, typeParams: x.typeParams });
    }
    case 'update':
      return b.method({
        ...common,
        pathParams: [pk],
        body: b.schema(
          r.schemas.update,
          `The request body that updates ${aOrAn(r.verboseName)}: every field is optional unless the spec requires it.`,
        ),
        returns: nestedResult(r, 'update', b) ?? out(),
      });
    case 'delete':
      // An override may answer with a body of its own instead of 204.
      return b.method({ ...common, pathParams: [pk], returns: o.override ? 'unknown' : 'void' });
  }
}

/**
 * With nested writes, what create (update) answers, after the types it names: the items of its
 * lists (which the request body names) and the children's records.
 */
function nestedResult(r: Resource, kind: 'create' | 'update', b: ClientBuilder): string | undefined {
  const result = r.nestedResults[kind];
  if (!result) return undefined;
  for (const w of r.nestedWrites[kind]) {
    b.schema(w.item, `One ${w.child.verboseName} of the ${w.name} ${aOrAn(r.verboseName)}'s ${kind} writes.`);
    b.schema(w.child.responses.create, outDoc(w.child));
  }
  return b.schema(
    result,
    `What ${kind} answers: ${aOrAn(r.verboseName)} and the ${andList(r.nestedWrites[kind].map((w) => w.name))} it wrote.`,
  );
}

/**
 * A read generic in its `?expand=` when the viewset has `expand`: `E`, the names asked for, makes the
 * item `Expanded<Item, Expansions, E>` (the item itself without any); otherwise the query and item as they are.
 */
function expandable(
  r: Resource,
  b: ClientBuilder,
  query: string | undefined,
  item: string,
): { query?: string; item: string; typeParams?: string } {
  if (!r.expand.length) return { query, item };
  const x = b.expansions(r);
  const expand = '{ expand?: E[] }';
  return {
    query: query ? `${query} & ${expand}` : expand,
    item: `Expanded<${item}, ${x}, E>`,
    typeParams: `<E extends keyof ${x} = never>`,
  };
}

/** A bulk route's method: the list of items (or `{ ids }`), answering their bodies, or a result per item when not atomic. */
function bulkMethod(bulk: BulkOperation, r: Resource, b: ClientBuilder) {
  const common = {
    operationId: bulk.operationId,
    summary: `${capital(bulk.kind)} several ${r.verboseNamePlural}.`,
    method: bulk.method,
    path: `/${r.base}/bulk/`,
    pathCode: `\`/${r.base}/bulk/\``,
    pathParams: [],
  };
  let body: string;
  let item: string;
  if (bulk.kind === 'create') {
    body = `${b.schema(r.schemas.in, `The request body that creates ${aOrAn(r.verboseName)}.`)}[]`;
    item = b.schema(r.responses.create, outDoc(r));
  } else if (bulk.kind === 'update') {
    body = `${b.schema(r.bulkUpdateItem!, `One item of a bulk update: the primary key of ${aOrAn(r.verboseName)}, then the fields to change.`)}[]`;
    item = b.schema(r.responses.update, outDoc(r));
  } else {
    body = `{ ids: ${pkParam(r).type}[] }`;
    item = 'unknown';
  }
  if (!bulk.atomic) b.helpers.bulk = true;
  const returns = bulk.atomic ? (bulk.kind === 'delete' ? 'void' : `${item}[]`) : `BulkResult<${item}>[]`;
  b.method({ ...common, body, returns });
}

/** `ordering?:` of a list's query, declaring the type of its names once. */
function orderingMember(r: Resource, b: ClientBuilder): InterfaceMember {
  const orderingType = `${r.model}Ordering`;
  if (!b.types.some((t) => t.declaration === `export type ${orderingType} =`)) {
    const names = r.ordering.fields.map((f) => f.name);
    b.types.push({
      doc: `A field the ${r.verboseName} list may be ordered by (${names.join(', ')}); \`-\` for descending.`,
      declaration: `export type ${orderingType} =`,
      members: undefined,
      alias: names.flatMap((n) => [str(n), str(`-${n}`)]).join(' | '),
    });
  }
  return {
    doc: 'One field, or several in order of precedence (sent separated by commas).',
    line: `ordering?: ${orderingType} | ${orderingType}[];`,
  };
}

/** `fields?:` of field selection (`?fields=`): names of the fields of `schema` each item keeps. */
function fieldsMember(schema: SchemaModel): InterfaceMember {
  const names = schema.fields.map((f) => str(f.name)).join(' | ');
  return {
    doc: `The fields each ${schema.name} keeps, in the schema's order (sent separated by commas); all when absent.`,
    line: `fields?: (${names})[];`,
  };
}

/** The query type of a list: the filters, the search, the ordering, the field selection and the page parameters. */
function listQuery(o: Operation, r: Resource, b: ClientBuilder): string | undefined {
  const members: InterfaceMember[] = (r.filters?.params ?? []).map((p) => ({
    doc: p.description ? docLine(p.description) : undefined,
    line: `${propertyKey(p.name)}?: ${tsQueryParam(p.type, p.shape)};`,
  }));
  if (r.search) {
    members.push({
      doc: `Words separated by spaces, each in one of ${r.search.fields.map((f) => f.name).join(', ')} (ignoring case).`,
      line: 'search?: string;',
    });
  }
  if (r.ordering.fields.length) members.push(orderingMember(r, b));
  if (r.fieldSelection) members.push(fieldsMember(r.schemas.out));
  const name = `${pascalCase(o.operationId)}Query`;
  return b.query(name, `Query parameters of ${camelCase(o.operationId)}.`, b.pageQueries(r.pagination), members);
}

/** The soft delete's restore (answering with the retrieve shape) and hard delete, when the viewset has them. */
function softDeleteMethods(r: Resource, b: ClientBuilder) {
  const sd = r.softDelete;
  if (!sd) return;
  const pk = pkParam(r);
  const at = (end: string) => ({
    path: `/${r.base}/{${pk.name}}/${end}/`,
    pathCode: `\`/${r.base}/${segment(pk.name)}/${end}/\``,
    pathParams: [pk],
  });
  const returns = r.hasDetail
    ? b.schema(r.schemas.detail, `${capital(aOrAn(r.verboseName))} as retrieve answers it.`)
    : b.schema(r.schemas.out, outDoc(r));
  b.method({
    operationId: sd.restore.operationId,
    summary: 'Restore a soft-deleted object by its primary key.',
    method: 'post',
    ...at('restore'),
    returns,
  });
  if (sd.hardDelete) {
    b.method({
      operationId: sd.hardDelete.operationId,
      summary: 'Delete an object for good by its primary key, soft-deleted or not.',
      method: 'delete',
      ...at('hard'),
      returns: 'void',
    });
  }
}

/**
 * One method per method of an action: a detail action's path takes the key, a list-level one's does
 * not; a paginated one takes its page parameters (and `ordering`, but under CursorPagination) and
 * resolves to the page of the list's items.
 */
function actionMethods(a: Action, r: Resource, b: ClientBuilder) {
  const pk = pkParam(r);
  const at = a.detail
    ? { path: `/${r.base}/{${pk.name}}/${a.name}/`, pathParams: [pk], pathCode: `\`/${r.base}/${segment(pk.name)}/${a.name}/\`` }
    : { path: `/${r.base}/${a.name}/`, pathParams: [], pathCode: `\`/${r.base}/${a.name}/\`` };
  const summary = a.summary ?? `Run the ${a.name} action on ${a.detail ? aOrAn(r.verboseName) : r.verboseNamePlural}.`;
  if (a.paginate) {
    const [{ method, operationId }] = a.routes;
    const cursor = a.paginate.builtin && a.paginate.class === 'CursorPagination';
    const members = r.ordering.fields.length && !cursor ? [orderingMember(r, b)] : [];
    const query = b.query(
      `${pascalCase(operationId)}Query`,
      `Query parameters of ${camelCase(operationId)}.`,
      b.pageQueries(a.paginate),
      members,
    );
    b.method({ operationId, summary, method, ...at, query, returns: b.pageOf(a.paginate, b.schema(r.schemas.out, outDoc(r))) });
    return;
  }
  const returns = a.response ? b.schema(a.response, `Response of the ${a.name} action.`) : 'unknown';
  for (const route of a.routes) b.method({ operationId: route.operationId, summary, method: route.method, ...at, returns });
}

function relationMethods(rel: Relation, r: Resource, model: ServiceModel, b: ClientBuilder) {
  const pk = pkParam(r);
  const target = model.resources.find((x) => x.model === rel.target)!;
  const itemDoc = rel.itemSchemaIsTargetOut ? outDoc(target) : `One of the ${rel.relatedName} of ${aOrAn(r.verboseName)}.`;
  if (rel.get) {
    const item = b.schema(rel.itemSchema, itemDoc);
    const members = rel.filters.map((f) => ({ doc: undefined, line: `${propertyKey(f.name)}?: ${tsQueryParam(f.kind)};` }));
    const query = b.query(
      `${pascalCase(rel.getOperationId)}Query`,
      `Query parameters of ${camelCase(rel.getOperationId)}.`,
      b.pageQueries(r.pagination),
      members,
    );
    b.method({
      operationId: rel.getOperationId,
      summary: `List the ${rel.relatedName} of ${aOrAn(r.verboseName)}.`,
      method: 'get',
      path: `/${r.base}/{${pk.name}}/${rel.path}${rel.appendSlash ? '/' : ''}`,
      pathParams: [pk],
      pathCode: `\`/${r.base}/${segment(pk.name)}/${rel.path}${rel.appendSlash ? '/' : ''}\``,
      query,
      returns: b.pageOf(r.pagination, item),
    });
  }
  if (rel.add || rel.remove) {
    b.helpers.m2m = true;
    const key = pkParam(target).type;
    const body = `${r.model}${pascalCase(rel.relatedName)}Body`;
    b.types.push({
      doc: `Keys of ${rel.relatedName} to ${[rel.add ? 'add' : '', rel.remove ? 'remove' : ''].filter(Boolean).join(' and ')}; a key repeated in one list counts once.`,
      declaration: `export interface ${body} {`,
      members: [
        ...(rel.add ? [{ doc: undefined, line: `add?: ${key}[];` }] : []),
        ...(rel.remove ? [{ doc: undefined, line: `remove?: ${key}[];` }] : []),
      ],
      alias: undefined,
    });
    b.method({
      operationId: rel.manageOperationId,
      summary: `Add or remove ${rel.relatedName} of ${aOrAn(r.verboseName)}.`,
      method: 'post',
      path: `/${r.base}/{${pk.name}}/${rel.path}/`,
      pathParams: [pk],
      pathCode: `\`/${r.base}/${segment(pk.name)}/${rel.path}/\``,
      body,
      returns: 'M2MSchemaOut',
    });
  }
}

/** An endpoint's path with its `:name` parameters as template slots. */
function endpointPath(e: Endpoint): { path: string; pathCode: string; pathParams: { name: string; type: string }[] } {
  const pathParams: { name: string; type: string }[] = [];
  const pathCode = e.path.replace(/:([A-Za-z_$][A-Za-z0-9_$]*)/g, (_, name: string) => {
    const p = { name: paramName(name), type: 'string' };
    pathParams.push(p);
    return segment(p.name);
  });
  return { path: e.path.replace(/:([A-Za-z_$][A-Za-z0-9_$]*)/g, '{$1}'), pathCode: `\`${pathCode}\``, pathParams };
}

function endpointMethod(e: Endpoint, b: ClientBuilder) {
  const body = e.request ? b.schema(e.request, `Request body of ${camelCase(e.operationId)}.`) : undefined;
  const item = e.response ? b.schema(e.response, `Response of ${camelCase(e.operationId)}.`) : 'unknown';
  const query = e.paginate
    ? b.query(`${pascalCase(e.operationId)}Query`, `Query parameters of ${camelCase(e.operationId)}.`, b.pageQueries(e.paginate), [])
    : undefined;
  const returns = e.status === STATUS_WITHOUT_BODY ? 'void' : e.paginate ? b.pageOf(e.paginate, item) : item;
  b.method({ operationId: e.operationId, summary: e.summary ?? e.handler, method: e.method, ...endpointPath(e), body, query, returns });
}

/** The names the client file declares itself, besides the schemas and the types of its methods. */
const OWN_NAMES = [
  'ApiError',
  'BulkResult',
  'Call',
  'Client',
  'ClientOptions',
  'ErrorBody',
  'Expanded',
  'JsonValue',
  'LimitOffsetQuery',
  'M2MSchemaOut',
  'Page',
  'PageNumberQuery',
  'QueryValue',
  'RequestOptions',
  'ResultsPage',
  'Token',
  'ValidationIssue',
];

/**
 * Operation ids and schema names are checked before rendering; what the client adds to them (camel
 * case, its own type names) must not make two of them one. A spec that does stops the build here.
 */
function checkNames(b: ClientBuilder): void {
  const clash = (kind: string, names: string[]) => {
    const seen = new Set<string>();
    for (const name of names) {
      if (seen.has(name)) throw new Error(`client.ts: two ${kind} are named ${name}; rename the schema or the operation in the specs`);
      seen.add(name);
    }
  };
  clash(
    'methods',
    b.methods.map((m) => m.name),
  );
  clash('types', [...OWN_NAMES, ...b.types.map((t) => /^export (?:interface|type) (\w+)/.exec(t.declaration)![1])]);
}

export function clientView(model: ServiceModel, ctx: RenderContext) {
  const b = new ClientBuilder();
  // The service's endpoints first, then each resource's routes: the order the server registers them.
  for (const e of model.endpoints) endpointMethod(e, b);
  for (const r of model.resources) {
    for (const o of r.operations) operationMethod(o, r, b);
    softDeleteMethods(r, b);
    for (const bulk of r.bulk) bulkMethod(bulk, r, b);
    for (const a of r.actions) actionMethods(a, r, b);
    for (const rel of r.relations) relationMethods(rel, r, model, b);
    for (const e of r.endpoints) endpointMethod(e, b);
  }
  b.helpers.json = b.types.some((t) => t.members?.some((m) => new RegExp(`\\b${JSON_VALUE}\\b`).test(m.line)));
  checkNames(b);
  return {
    header: header(`${ctx.specsName}/service.yaml`),
    title: docLine(`${model.title} (version ${model.version})`),
    basePath: model.basePath,
    appendSlash: model.settings.SVC_APPEND_SLASH === true,
    types: b.types,
    helpers: b.helpers,
    methods: b.methods,
  };
}
