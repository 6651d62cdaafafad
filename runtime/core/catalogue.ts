/**
 * The built-in names of the spec language: what a spec may name without a hooks module because the
 * runtime provides it. The generator's meta-schema, model and renderer read these lists, and the
 * runtime declares its implementations against them (`satisfies Record<…>` where they are defined),
 * so a name cannot be added on one side only. Beside them, the range of a 32-bit integer column,
 * which the generated schemas and the runtime's filters and cursors both hold values to.
 */

/** Authenticators a spec's `auth` lists may name (custom ones are hook exports). */
export const BUILTIN_AUTHENTICATORS = ['JWTAuth', 'AdminAuth', 'SuperuserAuth', 'CookieAuth'] as const;
export type BuiltinAuthenticator = (typeof BUILTIN_AUTHENTICATORS)[number];

/** Paginators `pagination_class` and `paginate` may name (custom ones are hook exports). */
export const BUILTIN_PAGINATORS = [
  'PageNumberPagination',
  'LimitOffsetPagination',
  'PageNumberResultsPagination',
  'CursorPagination',
] as const;
export type BuiltinPaginator = (typeof BUILTIN_PAGINATORS)[number];

/** Mixins of `filter_mixins` that apply one lookup per query parameter of a value type. */
export const TYPE_FILTER_MIXINS = [
  'IcontainsFilterViewSetMixin',
  'BooleanFilterViewSetMixin',
  'NumericFilterViewSetMixin',
  'DateFilterViewSetMixin',
  'GreaterDateFilterViewSetMixin',
  'LessDateFilterViewSetMixin',
  'GreaterEqualDateFilterViewSetMixin',
  'LessEqualDateFilterViewSetMixin',
] as const;
export type TypeFilterMixin = (typeof TYPE_FILTER_MIXINS)[number];

/** Every mixin `filter_mixins` may name. */
export const FILTER_MIXINS = [...TYPE_FILTER_MIXINS, 'RelationFilterViewSetMixin', 'MatchCaseFilterViewSetMixin'] as const;
export type FilterMixinName = (typeof FILTER_MIXINS)[number];

/** Exception classes `exception_handlers` may name without a hooks module. */
export const BUILTIN_EXCEPTIONS = [
  'ApiException',
  'BaseException',
  'SerializeError',
  'AuthError',
  'ForbiddenError',
  'NotFoundError',
  'MultipleObjectsError',
  'HttpError',
  'RequestValidationError',
  'ValidationError',
  'IntegrityError',
  'ServiceUnavailableError',
  'TooManyRequestsError',
] as const;
export type BuiltinException = (typeof BUILTIN_EXCEPTIONS)[number];

/** What the items of a `list` field may be (the field's `of`). */
export const LIST_ITEM_TYPES = ['string', 'integer', 'big_integer', 'float', 'boolean', 'uuid', 'date'] as const;
export type ListItemType = (typeof LIST_ITEM_TYPES)[number];

/** Operators a lookup may end with (`title__icontains`); `overlap` applies to list fields only. */
export const LOOKUP_OPERATORS = [
  'exact',
  'iexact',
  'contains',
  'icontains',
  'startswith',
  'istartswith',
  'endswith',
  'gt',
  'gte',
  'lt',
  'lte',
  'in',
  'isnull',
  'range',
  'overlap',
] as const;
export type LookupOperator = (typeof LOOKUP_OPERATORS)[number];

export const isBuiltinAuthenticator = (name: string): name is BuiltinAuthenticator =>
  (BUILTIN_AUTHENTICATORS as readonly string[]).includes(name);
export const isBuiltinPaginator = (name: string): name is BuiltinPaginator => (BUILTIN_PAGINATORS as readonly string[]).includes(name);
export const isBuiltinException = (name: string): name is BuiltinException => (BUILTIN_EXCEPTIONS as readonly string[]).includes(name);
export const isLookupOperator = (name: string): name is LookupOperator => (LOOKUP_OPERATORS as readonly string[]).includes(name);

/**
 * The range of a 32-bit integer column (an `integer` field or key): the bounds of the generated
 * schemas' integer inputs and path keys, of `queryParam('int', INT32)` and of cursor keys.
 */
export const INT32 = { min: -2147483648, max: 2147483647 } as const;

/** Built-in account endpoints a service file's `endpoints` may declare (`- account: login`), handled by the runtime. */
export const ACCOUNT_ENDPOINTS = ['register', 'login', 'refresh', 'logout', 'logout_all', 'me', 'password'] as const;
export type AccountEndpoint = (typeof ACCOUNT_ENDPOINTS)[number];

/** The detail of the 429 a throttled login (or password change) answers. */
export const TOO_MANY_LOGIN_FAILURES_MESSAGE = 'Too many failed login attempts. Try again later.';

/** The detail of the 429 a throttled registration answers. */
export const TOO_MANY_REGISTRATIONS_MESSAGE = 'Too many accounts registered from this address. Try again later.';

/**
 * The operations the default behaviours document with a generic summary, and that summary: a
 * generated route names its kind, and the runtime documents it so unless the spec gives a summary.
 */
export const GENERIC_SUMMARIES = {
  list: 'List all objects.',
  create: 'Create a new object.',
  retrieve: 'Retrieve a specific object by its primary key.',
  update: 'Update an object by its primary key.',
  delete: 'Delete an object by its primary key.',
  bulk_create: 'Create several objects.',
  bulk_update: 'Update several objects, each named by its primary key.',
  bulk_delete: 'Delete several objects by their primary keys.',
  restore: 'Restore a soft-deleted object by its primary key.',
  hard_delete: 'Delete an object for good by its primary key, soft-deleted or not.',
} as const;
export type GenericOperation = keyof typeof GENERIC_SUMMARIES;

/** Words spelled with a vowel that start with a consonant sound (`a user`, `a one-off`). */
const CONSONANT_SOUND = /^(uni|use|usi|usu|uti|ura|ure|uro|eu|ewe|one|once)/i;
/** Words spelled with a consonant that start with a vowel sound (`an hour`). */
const VOWEL_SOUND = /^(hour|honest|honou?r|heir)/i;

/** The noun with its indefinite article: `an article`, `a user`, `an hour`. */
export function aOrAn(noun: string): string {
  const an = VOWEL_SOUND.test(noun) || (/^[aeiou]/i.test(noun) && !CONSONANT_SOUND.test(noun));
  return `${an ? 'an' : 'a'} ${noun}`;
}

/** How a resource is named in prose: its verbose name and verbose plural name. */
export interface ResourceNouns {
  one: string;
  many: string;
}

/**
 * The MCP tool title of a generic operation, naming its resource: `List articles`, `Create an
 * article`. The OpenAPI summary keeps the default behaviours' words; a tool list needs to tell the tools apart.
 */
export function operationTitle(kind: GenericOperation, { one, many }: ResourceNouns): string {
  const a = aOrAn(one);
  const titles: Record<GenericOperation, string> = {
    list: `List ${many}`,
    create: `Create ${a}`,
    retrieve: `Retrieve ${a}`,
    update: `Update ${a}`,
    delete: `Delete ${a}`,
    bulk_create: `Create several ${many}`,
    bulk_update: `Update several ${many}`,
    bulk_delete: `Delete several ${many}`,
    restore: `Restore a soft-deleted ${one}`,
    hard_delete: `Delete ${a} for good`,
  };
  return titles[kind];
}

/**
 * Where a resource's operation is served: its collection (`/articles/`), an item at the path
 * `SVC_APPEND_SLASH` ends (`/articles/1/`, or `/articles/1`), or an item with the slash always.
 */
export type PathKind = 'collection' | 'item' | 'itemSlash';

/**
 * The five operations of a resource, as the default behaviours serve them: the method, where, the
 * status of a success and whether it runs in a transaction. The generator's model and the runtime's
 * route builder both read this table.
 */
export const CRUD_OPERATIONS = {
  create: { method: 'post', pathKind: 'collection', status: 201, transaction: true },
  list: { method: 'get', pathKind: 'collection', status: 200, transaction: false },
  retrieve: { method: 'get', pathKind: 'item', status: 200, transaction: false },
  update: { method: 'patch', pathKind: 'itemSlash', status: 200, transaction: true },
  delete: { method: 'delete', pathKind: 'itemSlash', status: 204, transaction: true },
} as const satisfies Record<string, { method: string; pathKind: PathKind; status: number; transaction: boolean }>;
export type CrudOperation = keyof typeof CRUD_OPERATIONS;

/**
 * The settings a spec's `settings` may set, as the spec language's JSON schema describes each (its
 * type, bounds and default). The generator validates specs against it; the runtime fills in the
 * defaults a spec leaves out and checks `SVC_*` environment variables by it.
 */
export const SETTINGS = {
  SVC_APPEND_SLASH: { type: 'boolean', default: true },
  SVC_PAGINATION_PER_PAGE: { type: 'integer', minimum: 1, default: 100 },
  SVC_MAX_PER_PAGE_SIZE: { type: 'integer', minimum: 1, default: 100 },
  SVC_PAGINATION_MAX_LIMIT: { type: 'integer', minimum: 1, default: 100 },
  SVC_NOT_FOUND_ERROR_USE_VERBOSE_NAMES: { type: 'boolean', default: true },
  SVC_DEBUG: { type: 'boolean', default: false },
  SVC_NAMED_CONFLICTS: { type: 'boolean', default: false },
  SVC_JWT_ISSUER: { type: 'string', minLength: 1, default: 'svc' },
  SVC_JWT_AUDIENCE: { type: 'string', minLength: 1, default: 'svc-api' },
  SVC_JWT_LEEWAY: { type: 'integer', minimum: 0, default: 30 },
  SVC_ACCESS_TOKEN_LIFETIME: { type: 'integer', minimum: 1, default: 900 },
  SVC_REFRESH_TOKEN_LIFETIME: { type: 'integer', minimum: 1, default: 604800 },
  SVC_SHUTDOWN_TIMEOUT: { type: 'integer', minimum: 1, default: 10 },
  SVC_LOGIN_MAX_FAILURES_PER_USERNAME: { type: 'integer', minimum: 1, default: 5 },
  SVC_LOGIN_MAX_FAILURES_PER_ADDRESS: { type: 'integer', minimum: 1, default: 20 },
  SVC_LOGIN_FAILURES_WINDOW: { type: 'integer', minimum: 1, default: 900 },
  SVC_REGISTRATIONS_PER_ADDRESS: { type: 'integer', minimum: 1, default: 20 },
  SVC_REGISTRATIONS_WINDOW: { type: 'integer', minimum: 1, default: 3600 },
  SVC_AUTH_COOKIE_SECURE: { type: 'boolean', default: true },
  SVC_AUTH_COOKIE_SAMESITE: { enum: ['Lax', 'Strict'], default: 'Lax' },
  SVC_MCP: { type: 'boolean', default: false },
} as const;
export type SettingName = keyof typeof SETTINGS;
