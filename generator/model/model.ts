/**
 * The intermediate model: everything the templates print, derived once from the validated specs.
 * Nothing downstream of `buildModel` reads the raw YAML again.
 */
import type { LookupPlan, ResourceFilters } from './filter-plans';
import type { HookRef } from '../validate/hook-refs';
import type { SourceRef } from '../load/load';
import type { AccountKind, ListItemType, OPERATIONS, SettingName } from '../validate/meta-schema';

export type FieldType =
  | 'integer'
  | 'big_integer'
  | 'float'
  | 'decimal'
  | 'string'
  | 'text'
  | 'boolean'
  | 'date'
  | 'datetime'
  | 'uuid'
  | 'email'
  | 'url'
  | 'json'
  | 'list'
  | 'password'
  | 'foreign_key';

export type OnDelete = 'cascade' | 'set_null' | 'protect';

/** Where something was written in the specs (for diagnostics of later stages); the load stage defines it. */
export type { SourceRef };

/** A column-backed field (every field but many-to-many). */
export interface Field {
  name: string;
  column: string;
  type: FieldType;
  primaryKey: boolean;
  /** Database-generated key (the implicit `id`, or an integer primary key). */
  autoIncrement: boolean;
  nullable: boolean;
  blank: boolean;
  unique: boolean;
  /** A unique field compared without ASCII case (`ignore_case`): `Alice` and `alice` clash. */
  ignoreCase: boolean;
  index: boolean;
  hasDefault: boolean;
  default: unknown;
  autoNowAdd: boolean;
  autoNow: boolean;
  maxLength?: number;
  maxDigits?: number;
  decimalPlaces?: number;
  choices?: (string | number)[];
  /** `list` fields: the type of every item (`of`) and the most items a value holds; `maxLength` and `choices` apply to each item. */
  list?: { of: ListItemType; maxItems?: number };
  description?: string;
  /** For foreign keys: the target model, its primary key column, and the delete rule. */
  relation?: { target: string; targetTable: string; targetPk: Field; onDelete: OnDelete };
  renamedFrom?: string;
  source: SourceRef;
}

export interface ManyToMany {
  name: string;
  target: string;
  targetTable: string;
  targetPk: Field;
  joinTable: string;
  ownColumn: string;
  otherColumn: string;
  description?: string;
  source: SourceRef;
}

/** A relation seen from its target: the rows of another resource whose foreign key (or many-to-many) points here. */
export interface ReverseRelation {
  /** The `reverse_name` of the relation field. */
  name: string;
  /** The model holding the relation (e.g. `Widget`). */
  from: string;
  fromTable: string;
  kind: 'foreign_key' | 'many_to_many';
  /** The foreign key on `from` (kind foreign_key). */
  field?: Field;
  /** The many-to-many field on `from` (kind many_to_many). */
  m2m?: ManyToMany;
  /** Position of the `reverse_name`. */
  source: SourceRef;
}

/** What a list orders by: a column of the resource's table, or (with hops) of a row its foreign keys lead to. */
export interface OrderingColumn {
  column: string;
  hops?: { from: string; table: string; key: string }[];
}

export interface OrderingField extends OrderingColumn {
  name: string;
}

/** A composite index of a resource's table. */
export interface Index {
  name: string;
  columns: string[];
  unique: boolean;
  source: SourceRef;
}

/** The JSON value kinds a schema field can carry. */
export type ValueKind =
  'int' | 'bigint' | 'float' | 'decimal' | 'str' | 'email' | 'url' | 'uuid' | 'bool' | 'date' | 'datetime' | 'json' | 'list';

export type SchemaRole = 'in' | 'out' | 'detail' | 'update';

export interface SchemaField {
  name: string;
  /**
   * `value`: a column value; `foreign_key`: the related primary key; `many_to_many`: a list of related keys;
   * `nested_one` / `nested_many`: the related record(s) with `nested` fields; `reverse`: the keys of
   * the rows whose relation points here, `nested_reverse`: those rows with `nested` fields (both
   * at most `limit` per item); `nested_write` (input schemas): the children of a reverse foreign
   * key, written with the record (`write`).
   */
  kind: 'value' | 'foreign_key' | 'many_to_many' | 'nested_one' | 'nested_many' | 'reverse' | 'nested_reverse' | 'nested_write';
  /** The model field behind it (column field or many-to-many). */
  field?: Field;
  m2m?: ManyToMany;
  /** The reverse relation behind a `reverse` / `nested_reverse` field. */
  reverse?: ReverseRelation;
  /** Reverse relations: the most children one item carries, in the children's default order (else by key). */
  limit?: number;
  /** The value kind of a `value` / `foreign_key` (the related key) / `many_to_many` item, or of each item of a list field. */
  value: ValueKind;
  /** A `list` field's value: an array of `value` items, each with `maxLength`, `choices` and `bounds`. */
  list?: { maxItems?: number };
  /** Input schemas: the client must send it. */
  required: boolean;
  nullable: boolean;
  maxLength?: number;
  choices?: (string | number)[];
  /** Integer bounds for ints (32-bit for integer, safe range for big integer). */
  bounds?: { min: number; max: number };
  decimal?: { maxDigits: number; decimalPlaces: number };
  description?: string;
  /** Input schemas: the value used when the client omits the field. */
  defaultValue?: { value: unknown };
  /** A computed output field (`customs`): the hook computing its value from the record. */
  compute?: string;
  nested?: { target: string; fields: SchemaField[] };
  /** A `nested_write` field: how its children are written. */
  write?: NestedWrite;
}

/**
 * A nested write (`- lines: {write: replace}` in CreateSerializer or UpdateSerializer): the children
 * of a reverse foreign key, sent as a list in the parent's body and written in the parent's
 * transaction, each through the child resource's own create, update or delete (its input rules,
 * lifecycle hooks, object permission and roles).
 */
export interface NestedWrite {
  /** The reverse relation's name: the key of the list in the body and in the response. */
  name: string;
  /** The reverse relation (kind foreign_key): the child model and its foreign key to the parent. */
  relation: ReverseRelation;
  /**
   * `create`: a create's children, each created; in an update, items naming a child's key update it
   * and the others create one, and the children not named are deleted (`replace`) or kept (`merge`).
   */
  mode: 'create' | 'replace' | 'merge';
  /** The child resource. */
  child: Resource;
  /** One item of the list: the child's create fields without the foreign key (and, in an update, its optional key first). */
  item: SchemaModel;
  /** The most items one request may send in the list (`max_items`, default 100): more is a 422. */
  maxItems: number;
}

export interface SchemaModel {
  /** Component name in OpenAPI and the exported constant, e.g. `ArticleOut`. */
  name: string;
  role: SchemaRole;
  source: 'serializer' | 'serializer_class' | 'manual' | 'auto';
  fields: SchemaField[];
}

export type OperationKind = (typeof OPERATIONS)[number];

/** The collection path, the item path that follows SVC_APPEND_SLASH, or the item path that always ends with a slash. */
export type { PathKind } from '@svcgen/runtime/catalogue';
import type { PathKind } from '@svcgen/runtime/catalogue';

/** A rate limit: requests per period, counted per caller under `name` (the table for a viewset's, the operation id for an operation's). */
export interface RateLimit {
  rate: string;
  scope: 'user' | 'address';
  name: string;
}

/**
 * Soft delete (`soft_delete`, ninja-aio-crud's `SoftDeleteViewSetMixin`): DELETE stamps `field`
 * instead of removing the row, every route hides stamped rows, and two routes of its own bring a
 * row back or remove it for good.
 */
export interface SoftDelete {
  /** The nullable datetime field that marks a deleted row. */
  field: Field;
  /** `POST /{base}/{pk}/restore/`: the delete operation's authenticators and roles. */
  restore: SoftDeleteRoute;
  /** `DELETE /{base}/{pk}/hard/`, for the roles `hard_delete_roles` names; absent without them. */
  hardDelete?: SoftDeleteRoute & { roles: string[] };
  /** The columns unique among live rows (unique fields, unique indexes): a restore must not repeat their values. */
  uniques: { fields: string[]; columns: string[] }[];
}

export interface SoftDeleteRoute {
  operationId: string;
  auth: AuthSpec;
  roles?: string[];
  throttles: RateLimit[];
}

/** Resolved authenticators: `null` is public. */
export type AuthSpec = string[] | null;

export interface Operation {
  kind: OperationKind;
  method: 'get' | 'post' | 'patch' | 'delete';
  pathKind: PathKind;
  operationId: string;
  /** The short default of the operation kind (`List all objects.`). */
  summary: string;
  /** The spec's `<kind>_docs`, when given. */
  description?: string;
  status: number;
  /** Whether the operation runs in a transaction (the writes: create, update, delete). */
  transaction: boolean;
  auth: AuthSpec;
  decorators: (string | null)[];
  /** A hook export replacing the generated implementation. */
  override?: string;
  /** `permission_roles`: the caller must hold one of these roles (checked after authentication). */
  roles?: string[];
  /** The viewset's `throttle`, then the operation's own (`operation_throttles`), each with its counter. */
  throttles: RateLimit[];
}

/**
 * A bulk route at `/{base}/bulk/` (`bulk`): the create, update or delete of many items in one
 * request, each item through the single-item operation: its validation, auth, roles, rate limits,
 * override, lifecycle hooks and object permission.
 */
export interface BulkOperation {
  kind: 'create' | 'update' | 'delete';
  method: 'post' | 'patch' | 'delete';
  operationId: string;
  /** The single-item operation each item goes through. */
  operation: Operation;
  /** One transaction for all items (one failing item writes nothing), or one per item, each with its own result. */
  atomic: boolean;
  /** The most items one request may carry (`max_items`, default 100). */
  maxItems: number;
}

/**
 * A custom action: a detail action at `{base}/{pk}/{name}/`, handled by a hook that receives the
 * request and the record, or a list-level one (`detail: false`) at `{base}/{name}/`, whose hook
 * receives the query of the rows the list reads.
 */
export interface Action {
  name: string;
  handler: string;
  detail: boolean;
  /** One route per method; every method but GET runs in a transaction. */
  routes: { method: 'get' | 'post' | 'put' | 'patch' | 'delete'; operationId: string; transaction: boolean }[];
  auth: AuthSpec;
  summary?: string;
  description?: string;
  decorators: (string | null)[];
  response?: SchemaModel;
  /**
   * `paginate` (a list-level GET action): the hook returns a query of the list's rows, answered as
   * this paginator's page of the list's items, in the list's order.
   */
  paginate?: Pagination;
  /** Error statuses the hook answers, with the body it sends (`errors` in the spec). */
  errors: HookErrors;
  /** The viewset's `throttle`, then the action's own. */
  throttles: RateLimit[];
}

/** Status → body of the errors a hook answers itself, documented with the body as example. */
export type HookErrors = Record<string, Record<string, string>>;

/** A custom endpoint (`api_get`, `api_post`, ...) handled by a hook. */
export interface Endpoint {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete' | 'options' | 'head';
  /** Express path, e.g. `/auth/login/`. */
  path: string;
  handler: string;
  operationId: string;
  auth: AuthSpec;
  status: number;
  /** Whether the handler runs in a transaction: every method but GET, HEAD and OPTIONS. */
  transaction: boolean;
  tags: string[];
  summary?: string;
  description?: string;
  decorators: (string | null)[];
  request?: SchemaModel;
  response?: SchemaModel;
  /** Error statuses the hook answers, with the body it sends (`errors` in the spec). */
  errors: HookErrors;
  /** `paginate(<paginator>)`: the handler's list result is paged by this paginator. */
  paginate?: Pagination;
  /** A built-in account endpoint (the service file's `account:` entries): the runtime's handler, not a hook. */
  account?: AccountKind;
}

/** A many-to-many relation's endpoints: `GET` a page of related items, `POST` add/remove. */
export interface Relation {
  relatedName: string;
  /** Normalised URL segment, no slashes. */
  path: string;
  target: string;
  m2m: ManyToMany;
  getAuth: AuthSpec;
  postAuth: AuthSpec;
  add: boolean;
  remove: boolean;
  get: boolean;
  appendSlash: boolean;
  /** Query parameters of the GET: name → value kind and default. */
  filters: { name: string; kind: string; default: unknown }[];
  /** Schema of the related items; `auto` when it is the related resource's schema_out. */
  itemSchema: SchemaModel;
  itemSchemaIsTargetOut: boolean;
  getDecorators: (string | null)[];
  postDecorators: (string | null)[];
  getOperationId: string;
  manageOperationId: string;
  /** Hook replacing the generated GET filters (`<related_name>_query_params_handler`). */
  queryParamsHandler?: string;
  /** Hook resolving a key to the related row (`<related_name>_query_handler`). */
  queryHandler?: string;
}

export interface Pagination {
  class: string;
  builtin: boolean;
  options: { page_size?: number; max_page_size?: number };
}

export interface Resource {
  model: string;
  snake: string;
  table: string;
  verboseName: string;
  verboseNamePlural: string;
  /** 404 key under SVC_NOT_FOUND_ERROR_USE_VERBOSE_NAMES true and false. */
  verboseKey: string;
  classKey: string;
  /** Route segment `{base}`. */
  base: string;
  /** Folder and file stem of the generated module. */
  moduleName: string;
  tag: string;
  specFile: string;
  hooks?: string;
  /** Every hook the resource file names, with its position and module. */
  hookRefs: HookRef[];
  pk: Field;
  /** Column fields in spec order, the primary key first. */
  fields: Field[];
  m2m: ManyToMany[];
  /** Relations of other resources pointing here that name their reverse side (`reverse_name`), in order of resources, then fields. */
  reverse: ReverseRelation[];
  /** Composite indexes (`indexes`), in spec order. */
  indexes: Index[];
  /** `soft_delete`: rows are marked deleted instead of removed; null when off. */
  softDelete: SoftDelete | null;
  schemas: Record<SchemaRole, SchemaModel>;
  /** Whether schema_detail is its own schema (else retrieve answers with schema_out). */
  hasDetail: boolean;
  /**
   * What create and update answer with (`schema_create_out`, `schema_update_out`): schema_out unless
   * the viewset names schema_detail or gives a schema of its own.
   */
  responses: { create: SchemaModel; update: SchemaModel };
  /**
   * Nested writes of create and update (the `nested_write` fields of schema_in and schema_update):
   * their answers add each list of written children to the response schema, under the relation's name.
   */
  nestedWrites: { create: NestedWrite[]; update: NestedWrite[] };
  /**
   * With nested writes, what create (update) answers: its response schema's fields, then each list of
   * children written (`nested_write` fields: the child's create response schema; in an update, a list
   * absent when the body did not send it). Named `<Model>CreateResult` / `<Model>UpdateResult`.
   */
  nestedResults: { create?: SchemaModel; update?: SchemaModel };
  operations: Operation[];
  /** Bulk routes (`bulk`), in the spec's order of operations. */
  bulk: BulkOperation[];
  /** The primary key as a bulk update or delete names a row in its body; null without either. */
  bulkKey: SchemaField | null;
  /** One item of a bulk update: the primary key, then the update schema's fields; null without bulk update. */
  bulkUpdateItem: SchemaModel | null;
  pagination: Pagination | null;
  /** Ordering fields and the default order; a field of a related row (`author__username`) has the foreign key hops to its column. */
  ordering: { fields: OrderingField[]; default: (OrderingColumn & { order: 'asc' | 'desc' })[] };
  requireUpdateFields: boolean;
  errorSchema: SchemaModel | null;
  lifecycle: Partial<
    Record<'before_create' | 'after_create' | 'before_update' | 'after_update' | 'before_delete' | 'after_delete', string>
  >;
  querysetRequest?: string;
  /** `normalize_input`: a hook given the raw body of a create or update, before validation, returning the body to validate. */
  normalizeInput?: string;
  /** The hook narrowing the rows writes look up (`queryset_write`, by default `queryset_request`). */
  querysetWrite?: string;
  /** `has_object_permission`: a hook given the record, before retrieve, update, delete and detail actions. */
  objectPermission?: string;
  actions: Action[];
  endpoints: Endpoint[];
  relations: Relation[];
  /**
   * `expand`: the relations list and retrieve expand when `?expand=` names them, each a
   * `nested_one`, `nested_many` or `nested_reverse` field replacing (or adding) the item's own.
   */
  expand: SchemaField[];
  /** `field_selection`: list and retrieve take `?fields=` naming fields of their read schemas. */
  fieldSelection: boolean;
  /** `require_if_match`: writes to an existing row without `If-Match` are refused (428); see conditional requests. */
  requireIfMatch: boolean;
  /**
   * `extra_fields` (the viewset's, else the service file's): a key of a request body (create, update,
   * bulk item, nested write item, custom endpoint) that is no field is ignored, or refused with a 422.
   */
  extraFields: 'ignore' | 'forbid';
  /** `search_fields`: each field's `icontains` lookup, compiled (through relations for `author__username`); null when none. */
  search: { fields: { name: string; lookup: LookupPlan }[] } | null;
  /** List filters (query_params, filter mixins, relations_filters, match cases) with their lookups compiled; null when none. */
  filters: ResourceFilters | null;
}

export interface ServiceModel {
  title: string;
  version: string;
  description?: string;
  /** OpenAPI `info.license` and `info.contact`, as the service file writes them. */
  license?: { name: string; identifier?: string; url?: string };
  contact?: { name?: string; url?: string; email?: string };
  basePath: string;
  /** `extra_fields`: what the service endpoints' request bodies do with a key that is no field (resources may say otherwise). */
  extraFields: 'ignore' | 'forbid';
  /** Paths (below `basePath`) of the service endpoints that answer with an `access_token`: where a client gets one. */
  tokenPaths: string[];
  settings: Record<SettingName, string | number | boolean>;
  sqliteFile: string;
  /** `profileFields`: user fields beside username and email that the account endpoints' register accepts and `me` answers. */
  /**
   * `cookies`: the account endpoints also keep the tokens in cookies (`auth.cookies` true or `only`);
   * `cookiesOnly`: in the cookies alone, their answers carry no token (`auth.cookies: only`).
   */
  auth: { userModel?: string; keysDir: string; extraClaims: string[]; profileFields: string[]; cookies: boolean; cookiesOnly: boolean };
  hooks?: string;
  /** Every hook the service file names, with its position. */
  hookRefs: HookRef[];
  /** Paginators and authenticators the service hooks module exports for every resource. */
  sharedHooks: string[];
  /** The older `views()` hook: registers routes on the router itself. */
  views?: string;
  exceptionHandlers: { exception: string; handler: string }[];
  endpoints: Endpoint[];
  resources: Resource[];
}
