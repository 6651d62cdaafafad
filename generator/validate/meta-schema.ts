/**
 * The JSON meta-schema of the spec language (JSON Schema draft-07, checked with ajv), and the TypeScript types of a spec
 * document derived from it (`ResourceSpec`, `ServiceSpec`), so the two cannot disagree.
 *
 * It describes the shape of a service file and of a resource file. Rules of meaning (a relation to
 * an unknown resource, a schema field the resource lacks, a default of the wrong type, names that
 * clash between files, ...) live in `checks/` and the model's `check-model.ts`.
 */
import type { FromSchema } from 'json-schema-to-ts';
import { ACCOUNT_ENDPOINTS, BUILTIN_AUTHENTICATORS, FILTER_MIXINS, LIST_ITEM_TYPES, type AccountEndpoint } from '@svcgen/runtime/catalogue';

const identifier = { type: 'string', pattern: '^[a-z][a-z0-9_]*$', maxLength: 63 } as const;
const className = { type: 'string', pattern: '^[A-Z][A-Za-z0-9]*$', maxLength: 63 } as const;
const exportName = { type: 'string', pattern: '^[A-Za-z_$][A-Za-z0-9_$]*$' } as const;
const modulePath = { type: 'string', pattern: '^[A-Za-z0-9_./-]+\\.ts$' } as const;
const fieldTypes = [
  'integer',
  'big_integer',
  'float',
  'decimal',
  'string',
  'text',
  'boolean',
  'date',
  'datetime',
  'uuid',
  'email',
  'url',
  'json',
  'list',
  'password',
  'foreign_key',
  'many_to_many',
] as const;
export const FIELD_TYPES: readonly string[] = fieldTypes;
export { LIST_ITEM_TYPES, type ListItemType } from '@svcgen/runtime/catalogue';

/** Type names usable in `optionals` and in manual schemas (the default behaviours' Python-style names). */
export const VALUE_TYPES = ['str', 'int', 'float', 'bool', 'date', 'datetime', 'uuid', 'decimal', 'email', 'url', 'dict', 'list'] as const;

/** `[JWTAuth]`, `null` (public) or `NOT_SET` (inherit). Custom authenticators are hook exports. */
const authList = {
  anyOf: [{ type: 'null' }, { const: 'NOT_SET' }, { type: 'array', items: exportName, uniqueItems: true }],
} as const;

const decoratorList = { type: 'array', items: { anyOf: [exportName, { type: 'null' }] } } as const;

/** `[name, default]` pairs of query parameters: `{title: [str, null]}` or `{title: {type: str, default: null}}`. */
const paramType = {
  anyOf: [
    { type: 'array', items: [{ enum: VALUE_TYPES }], minItems: 1, maxItems: 2, additionalItems: true },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type'],
      properties: { type: { enum: VALUE_TYPES }, default: true, description: { type: 'string' } },
    },
  ],
} as const;
/** `date_compare_attr`: the operator suffix DateFilterViewSetMixin appends to each date field (absent: an exact match). */
const DATE_COMPARE_ATTRS = ['__exact', '__gt', '__gte', '__lt', '__lte'] as const;

const paramMap = { type: 'object', propertyNames: identifier, additionalProperties: paramType } as const;

const lookupMap = { type: 'object', propertyNames: { type: 'string', pattern: '^[a-z][a-z0-9_]*$' } } as const;
/** `{and: [...]}`, `{or: [...]}`, `{not: ...}` or a map of lookups to values; `inner` is a nested expression. */
function queryExprOf<Inner>(inner: Inner) {
  return {
    $id: 'queryExpr',
    anyOf: [
      {
        type: 'object',
        additionalProperties: false,
        required: ['and'],
        properties: { and: { type: 'array', minItems: 1, items: inner } },
      },
      {
        type: 'object',
        additionalProperties: false,
        required: ['or'],
        properties: { or: { type: 'array', minItems: 1, items: inner } },
      },
      { type: 'object', additionalProperties: false, required: ['not'], properties: { not: inner } },
      lookupMap,
    ],
  } as const;
}

const queryExpr = queryExprOf({ $ref: 'queryExpr' } as const);
/**
 * The same schema for deriving types: TypeScript cannot derive a recursive type from a schema, so
 * the expressions nested in and/or/not are typed as unknown (build-filters.ts walks them).
 */
// eslint-disable-next-line @typescript-eslint/no-unused-vars -- only its type is read (`Derive`)
const queryExprForTypes = queryExprOf({} as const);

const schemaFieldEntry = {
  anyOf: [
    identifier,
    {
      type: 'object',
      minProperties: 1,
      maxProperties: 1,
      propertyNames: identifier,
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        properties: {
          /** Read sections: the related record's fields shown. */
          fields: { type: 'array', items: identifier, minItems: 1, uniqueItems: true },
          /** Reverse relations and many-to-many records: the most one item carries (default DEFAULT_REVERSE_LIMIT). */
          limit: { type: 'integer', minimum: 1, maximum: 1000 },
          /** Input sections: a reverse relation's children written with the parent (nested writes). */
          write: { enum: ['create', 'replace', 'merge'] },
          /** Nested writes only: the most items one request may send in the list (default DEFAULT_NESTED_MAX_ITEMS). */
          max_items: { type: 'integer', minimum: 1, maximum: 1000 },
        },
      },
    },
  ],
} as const;

/** `?expand=`: relation name → how an expanded item shows it. */
const expandSpec = {
  type: 'object',
  propertyNames: identifier,
  minProperties: 1,
  additionalProperties: {
    type: 'object',
    additionalProperties: false,
    required: ['fields'],
    properties: {
      fields: { type: 'array', items: identifier, minItems: 1, uniqueItems: true },
      limit: { type: 'integer', minimum: 1, maximum: 1000 },
    },
  },
} as const;

/** A serializer section: ReadSerializer, DetailSerializer, CreateSerializer, UpdateSerializer. */
const serializerSection = {
  type: 'object',
  additionalProperties: false,
  properties: {
    fields: { type: 'array', items: schemaFieldEntry },
    excludes: { type: 'array', items: identifier, uniqueItems: true },
    optionals: {
      type: 'array',
      items: { type: 'array', items: [identifier, { enum: VALUE_TYPES }], minItems: 2, maxItems: 2 },
    },
    /** Computed output fields (ninja-aio-crud's `customs`): `[name, type, hook]`, the hook computing the value of each row. */
    customs: {
      type: 'array',
      items: { type: 'array', items: [identifier, { enum: VALUE_TYPES }, exportName], minItems: 3, maxItems: 3 },
    },
  },
} as const;

/** A manual schema: `{name?, fields: {field: type | {type, required, nullable}}}`. */
const manualSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['fields'],
  properties: {
    name: className,
    fields: {
      type: 'object',
      propertyNames: identifier,
      minProperties: 1,
      additionalProperties: {
        anyOf: [
          { enum: VALUE_TYPES },
          {
            type: 'object',
            additionalProperties: false,
            required: ['type'],
            properties: {
              type: { enum: VALUE_TYPES },
              required: { type: 'boolean' },
              nullable: { type: 'boolean' },
              max_length: { type: 'integer', minimum: 1 },
              default: true,
              description: { type: 'string' },
            },
          },
        ],
      },
    },
  },
} as const;

const paginationClass = {
  anyOf: [
    { type: 'null' },
    exportName,
    {
      type: 'object',
      additionalProperties: false,
      required: ['class'],
      properties: {
        class: exportName,
        page_size: { type: 'integer', minimum: 1 },
        max_page_size: { type: 'integer', minimum: 1 },
      },
    },
  ],
} as const;

const fieldSpec = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: {
    type: { enum: fieldTypes },
    primary_key: { type: 'boolean' },
    max_length: { type: 'integer', minimum: 1, maximum: 10485760 },
    /** `list` fields: the type of each item, and how many items a value may hold. */
    of: { enum: LIST_ITEM_TYPES },
    max_items: { type: 'integer', minimum: 1, maximum: 10000 },
    max_digits: { type: 'integer', minimum: 1, maximum: 1000 },
    decimal_places: { type: 'integer', minimum: 0, maximum: 1000 },
    null: { type: 'boolean' },
    blank: { type: 'boolean' },
    unique: { type: 'boolean' },
    ignore_case: { type: 'boolean' },
    db_index: { type: 'boolean' },
    default: true,
    auto_now_add: { type: 'boolean' },
    auto_now: { type: 'boolean' },
    choices: { type: 'array', minItems: 1, uniqueItems: true, items: { type: ['string', 'integer'] } },
    to: className,
    on_delete: { enum: ['cascade', 'set_null', 'protect'] },
    reverse_name: identifier,
    description: { type: 'string' },
    renamed_from: identifier,
  },
} as const;

const m2mRelation = {
  type: 'object',
  additionalProperties: false,
  required: ['model', 'related_name'],
  properties: {
    model: className,
    related_name: identifier,
    path: { type: 'string', pattern: '^/?([a-z0-9_-]+)?$' },
    auth: authList,
    get_auth: authList,
    post_auth: authList,
    query_handler: exportName,
    query_params_handler: exportName,
    add: { type: 'boolean' },
    remove: { type: 'boolean' },
    get: { type: 'boolean' },
    filters: paramMap,
    related_schema: manualSchema,
    serializer_class: { $ref: 'serializerClass' },
    append_slash: { type: 'boolean' },
    get_decorators: decoratorList,
    post_decorators: decoratorList,
  },
} as const;

const serializerClass = {
  $id: 'serializerClass',
  type: 'object',
  additionalProperties: false,
  required: ['Meta'],
  properties: {
    Meta: {
      type: 'object',
      additionalProperties: false,
      required: ['model'],
      properties: {
        model: className,
        schema_in: serializerSection,
        schema_out: serializerSection,
        schema_detail: serializerSection,
        schema_update: serializerSection,
      },
    },
  },
} as const;

/** The CRUD operations of a viewset, in the default behaviours' order. */
export const OPERATIONS = ['create', 'list', 'retrieve', 'update', 'delete'] as const;

/**
 * Error responses a hook answers besides the ones the runtime documents by itself: status → the body
 * it sends, documented as that status's example (`429: {detail: Too many attempts.}`).
 */
const hookErrors = {
  type: 'object',
  propertyNames: { type: 'string', pattern: '^[45][0-9][0-9]$' },
  additionalProperties: { type: 'object', additionalProperties: { type: 'string' } },
} as const;

/** A throttle's rate: requests per period (`100/minute`). */
export const RATE_PATTERN = '^[1-9][0-9]*/(s|second|m|minute|h|hour|d|day)$';

/** A rate limit (`throttle`): `{rate: 100/minute, scope: user}`; scope `user` (default) or `address`. */
const throttleSpec = {
  type: 'object',
  additionalProperties: false,
  required: ['rate'],
  properties: {
    rate: { type: 'string', pattern: RATE_PATTERN },
    scope: { enum: ['user', 'address'] },
  },
} as const;

const customAction = {
  type: 'object',
  additionalProperties: false,
  required: ['handler'],
  properties: {
    handler: exportName,
    detail: { type: 'boolean' },
    methods: { type: 'array', items: { enum: ['get', 'post', 'put', 'patch', 'delete'] }, minItems: 1 },
    auth: authList,
    response: { anyOf: [manualSchema, { const: 'schema_out' }, { const: 'schema_detail' }, { type: 'null' }] },
    /** A list-level GET action answering a page of the list's items, paged by this paginator. */
    paginate: paginationClass,
    summary: { type: 'string' },
    description: { type: 'string' },
    decorators: decoratorList,
    errors: hookErrors,
    throttle: throttleSpec,
  },
} as const;

/**
 * Bulk routes at `/{base}/bulk/` (`bulk`): the operations they serve, whether one failing item
 * fails the whole request (`atomic`, default true), and the most items one request may carry.
 */
const bulkSpec = {
  type: 'object',
  additionalProperties: false,
  required: ['operations'],
  properties: {
    operations: { type: 'array', items: { enum: ['create', 'update', 'delete'] }, minItems: 1, uniqueItems: true },
    atomic: { type: 'boolean' },
    max_items: { type: 'integer', minimum: 1, maximum: 1000 },
  },
} as const;

/** Roles an operation requires (`permission_roles`): `staff`, `superuser`, or a name in the user's `roles`. */
const roleList = { type: 'array', items: identifier, minItems: 1, uniqueItems: true } as const;

/**
 * Soft delete (ninja-aio-crud's `SoftDeleteViewSetMixin`): `true`, or the datetime field that marks a
 * deleted row (`field`, default `deleted_at`) and the roles that may remove a row for good.
 */
const softDeleteSpec = {
  anyOf: [
    { type: 'boolean' },
    {
      type: 'object',
      additionalProperties: false,
      properties: { field: identifier, hard_delete_roles: roleList },
    },
  ],
} as const;

const customEndpoint = {
  type: 'object',
  additionalProperties: false,
  required: ['method', 'path', 'handler'],
  properties: {
    method: { enum: ['api_get', 'api_post', 'api_put', 'api_patch', 'api_delete', 'api_options', 'api_head'] },
    path: { type: 'string', pattern: '^/[A-Za-z0-9_/{}.-]*$' },
    handler: exportName,
    auth: authList,
    request: manualSchema,
    response: { anyOf: [manualSchema, { type: 'null' }] },
    status: { type: 'integer', minimum: 100, maximum: 599 },
    tags: { type: 'array', items: { type: 'string' } },
    summary: { type: 'string' },
    description: { type: 'string' },
    decorators: decoratorList,
    errors: hookErrors,
    paginate: paginationClass,
  },
} as const;

/** The built-in account endpoints (runtime/operations/accounts.ts), by the name an `account:` entry gives. */
export const ACCOUNT_KINDS = ACCOUNT_ENDPOINTS;
export type AccountKind = AccountEndpoint;

/**
 * A built-in account endpoint of the service file: `{account: login}`. Method, schemas, status and
 * errors are the built-in's; the path (`/auth/<account>/`), the operation id (`handler`), `auth`,
 * tags, summary and description may be written.
 */
const accountEndpoint = {
  type: 'object',
  additionalProperties: false,
  required: ['account'],
  properties: {
    account: { enum: ACCOUNT_KINDS },
    path: customEndpoint.properties.path,
    handler: exportName,
    auth: authList,
    tags: { type: 'array', items: { type: 'string' } },
    summary: { type: 'string' },
    description: { type: 'string' },
  },
} as const;

/** One case of a match-case filter: the lookups a true (or false) parameter applies. */
const matchCase = {
  type: 'object',
  additionalProperties: false,
  required: ['query_filter'],
  properties: { query_filter: { $ref: 'queryExpr' }, include: { type: 'boolean' } },
} as const;

export const viewsetSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    class: { enum: ['APIViewSet', 'ReadOnlyViewSet', 'WriteOnlyViewSet'] },
    serializer_class: { $ref: 'serializerClass' },
    schema_in: manualSchema,
    schema_out: manualSchema,
    schema_detail: manualSchema,
    schema_update: manualSchema,
    schema_create_out: { anyOf: [manualSchema, { enum: ['schema_out', 'schema_detail'] }] },
    schema_update_out: { anyOf: [manualSchema, { enum: ['schema_out', 'schema_detail'] }] },
    pagination_class: paginationClass,
    query_params: paramMap,
    query_params_handler: exportName,
    queryset_request: exportName,
    normalize_input: exportName,
    queryset_write: exportName,
    disable: { type: 'array', items: { enum: [...OPERATIONS, 'all'] }, uniqueItems: true },
    api_route_path: { type: 'string', pattern: '^/?[a-z0-9_-]*(/[a-z0-9_-]+)*/?$' },
    list_docs: { type: 'string' },
    create_docs: { type: 'string' },
    retrieve_docs: { type: 'string' },
    update_docs: { type: 'string' },
    delete_docs: { type: 'string' },
    m2m_relations: { type: 'array', items: m2mRelation },
    m2m_auth: authList,
    extra_decorators: {
      type: 'object',
      additionalProperties: false,
      properties: { create: decoratorList, list: decoratorList, retrieve: decoratorList, update: decoratorList, delete: decoratorList },
    },
    model_verbose_name: { type: 'string' },
    model_verbose_name_plural: { type: 'string' },
    ordering_fields: { type: 'array', items: identifier, uniqueItems: true },
    search_fields: { type: 'array', items: identifier, minItems: 1, uniqueItems: true },
    field_selection: { type: 'boolean' },
    expand: expandSpec,
    require_if_match: { type: 'boolean' },
    /** Request body keys that are not fields: ignored (the default), or refused with a 422 (`forbid`). */
    extra_fields: { enum: ['ignore', 'forbid'] },
    soft_delete: softDeleteSpec,
    default_ordering: { type: 'string', pattern: '^-?[a-z][a-z0-9_]*(,-?[a-z][a-z0-9_]*)*$' },
    require_update_fields: { type: 'boolean' },
    error_schema: manualSchema,
    auth: authList,
    get_auth: authList,
    post_auth: authList,
    patch_auth: authList,
    delete_auth: authList,
    filter_mixins: { type: 'array', uniqueItems: true, items: { enum: FILTER_MIXINS } },
    date_compare_attr: { enum: DATE_COMPARE_ATTRS },
    relations_filters: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['query_param', 'query_filter', 'filter_type'],
        properties: { query_param: identifier, query_filter: { type: 'string' }, filter_type: paramType },
      },
    },
    filters_match_cases: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['query_param', 'cases'],
        properties: {
          query_param: identifier,
          cases: {
            type: 'object',
            additionalProperties: false,
            required: ['true', 'false'],
            properties: { true: matchCase, false: matchCase },
          },
        },
      },
    },
    permission_roles: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(OPERATIONS.map((op) => [op, roleList])) as Record<(typeof OPERATIONS)[number], typeof roleList>,
    },
    has_object_permission: exportName,
    bulk: bulkSpec,
    throttle: throttleSpec,
    operation_throttles: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(OPERATIONS.map((op) => [op, throttleSpec])) as Record<
        (typeof OPERATIONS)[number],
        typeof throttleSpec
      >,
    },
    overrides: {
      type: 'object',
      additionalProperties: false,
      properties: { create: exportName, list: exportName, retrieve: exportName, update: exportName, delete: exportName },
    },
    lifecycle: {
      type: 'object',
      additionalProperties: false,
      properties: {
        before_create: exportName,
        after_create: exportName,
        before_update: exportName,
        after_update: exportName,
        before_delete: exportName,
        after_delete: exportName,
      },
    },
    actions: { type: 'object', propertyNames: { type: 'string', pattern: '^[a-z][a-z0-9_-]*$' }, additionalProperties: customAction },
    endpoints: { type: 'array', items: customEndpoint },
  },
} as const;

/** A composite index: `[field, field]`, or `{fields: [...], unique: true, name: ...}`. */
const indexFields = { type: 'array', items: identifier, minItems: 1, uniqueItems: true } as const;
const indexSpec = {
  anyOf: [
    indexFields,
    {
      type: 'object',
      additionalProperties: false,
      required: ['fields'],
      properties: { fields: indexFields, unique: { type: 'boolean' }, name: identifier },
    },
  ],
} as const;

export const resourceSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['model', 'fields'],
  properties: {
    model: className,
    table: identifier,
    verbose_name: { type: 'string', pattern: '^[a-z][a-z0-9 ]*$' },
    verbose_name_plural: { type: 'string', pattern: '^[a-z][a-z0-9 ]*$' },
    hooks: modulePath,
    fields: { type: 'object', propertyNames: identifier, minProperties: 1, additionalProperties: fieldSpec },
    indexes: { type: 'array', items: indexSpec },
    serializer: {
      type: 'object',
      additionalProperties: false,
      properties: {
        ReadSerializer: serializerSection,
        DetailSerializer: serializerSection,
        CreateSerializer: serializerSection,
        UpdateSerializer: serializerSection,
      },
    },
    viewset: viewsetSchema,
  },
} as const;

export { SETTINGS, type SettingName } from '@svcgen/runtime/catalogue';
import { SETTINGS } from '@svcgen/runtime/catalogue';

export const serviceSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'version'],
  properties: {
    title: { type: 'string', minLength: 1 },
    version: { type: 'string', minLength: 1 },
    description: { type: 'string' },
    license: {
      type: 'object',
      additionalProperties: false,
      required: ['name'],
      properties: {
        name: { type: 'string', minLength: 1 },
        identifier: { type: 'string', minLength: 1 },
        url: { type: 'string', minLength: 1 },
      },
    },
    contact: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: {
        name: { type: 'string', minLength: 1 },
        url: { type: 'string', minLength: 1 },
        email: { type: 'string', minLength: 1 },
      },
    },
    base_path: { type: 'string', pattern: '^(/[a-z0-9_-]+)*$' },
    /** Request body keys that are not fields, for every resource whose viewset does not say: ignored (the default), or refused (`forbid`). */
    extra_fields: { enum: ['ignore', 'forbid'] },
    hooks: modulePath,
    views: exportName,
    database: {
      type: 'object',
      additionalProperties: false,
      properties: { sqlite_file: { type: 'string', minLength: 1 } },
    },
    settings: {
      type: 'object',
      additionalProperties: false,
      // `default` is an annotation here: the model fills in defaults (see SETTINGS).
      properties: SETTINGS,
    },
    auth: {
      type: 'object',
      additionalProperties: false,
      properties: {
        user_model: className,
        keys_dir: { type: 'string', minLength: 1 },
        extra_claims: { type: 'array', items: identifier },
        authenticators: { type: 'array', items: exportName },
        /** User fields beside username and email that the account endpoints' register accepts and `me` answers. */
        profile_fields: { type: 'array', items: identifier, uniqueItems: true },
        /**
         * The account endpoints also keep the tokens in cookies, which the built-in CookieAuth reads;
         * `only`: in the cookies alone, the answers' bodies carry no token.
         */
        cookies: { anyOf: [{ type: 'boolean' }, { const: 'only' }] },
        /**
         * The authenticators of every write of a resource (create, update, delete and what follows
         * them, a relation's add/remove, an action or endpoint that does not only read) whose spec
         * leaves them NOT_SET, which the default behaviours make public. Built-in ones only: it applies to every
         * resource. `svcgen init` writes `[JWTAuth]`; absent, writes left NOT_SET stay public.
         */
        default_write_auth: { type: 'array', items: { enum: BUILTIN_AUTHENTICATORS }, minItems: 1, uniqueItems: true },
      },
    },
    exception_handlers: { type: 'object', propertyNames: exportName, additionalProperties: exportName },
    paginators: { type: 'array', items: exportName },
    endpoints: { type: 'array', items: { anyOf: [accountEndpoint, customEndpoint] } },
  },
} as const;

export const sharedSchemas = [queryExpr, serializerClass];

/** The meta-schema's options for deriving types: shared schemas by `$id`, defaults not filled in. */
type Derive = { references: [typeof queryExprForTypes, typeof serializerClass]; keepDefaultedPropertiesOptional: true };

/** A resource file as the meta-schema accepts it. */
export type ResourceSpec = FromSchema<typeof resourceSchema, Derive>;
/** A service file as the meta-schema accepts it. */
export type ServiceDocument = FromSchema<typeof serviceSchema, Derive>;
/** An `account:` entry of the service's endpoints, as written. */
export type AccountEndpointSpec = Extract<NonNullable<ServiceDocument['endpoints']>[number], { account: unknown }>;
/**
 * A service file as the later stages read it: validation has written each `account:` entry out as
 * the custom endpoint it stands for (validate/accounts.ts), keeping `account` to tell it apart.
 */
export type ServiceSpec = Omit<ServiceDocument, 'endpoints'> & { endpoints?: ServiceEndpointSpec[] };
export type ServiceEndpointSpec = EndpointSpec & { account?: AccountKind };

/* The parts of a spec document the model builder reads, named. */
export type FieldSpec = ResourceSpec['fields'][string];
export type ViewsetSpec = NonNullable<ResourceSpec['viewset']>;
export type SerializerSectionSpec = NonNullable<NonNullable<ResourceSpec['serializer']>['ReadSerializer']>;
export type ManualSchemaSpec = NonNullable<ViewsetSpec['schema_in']>;
export type ManualFieldSpec = ManualSchemaSpec['fields'][string];
export type SerializerClassSpec = NonNullable<ViewsetSpec['serializer_class']>;
export type RelationSpec = NonNullable<ViewsetSpec['m2m_relations']>[number];
export type ActionSpec = NonNullable<ViewsetSpec['actions']>[string];
export type ThrottleSpec = NonNullable<ViewsetSpec['throttle']>;
export type SoftDeleteSpec = NonNullable<ViewsetSpec['soft_delete']>;
export type BulkSpec = NonNullable<ViewsetSpec['bulk']>;
export type EndpointSpec = NonNullable<ViewsetSpec['endpoints']>[number];
export type AuthListSpec = ViewsetSpec['auth'];
export type PaginationSpec = ViewsetSpec['pagination_class'];
export type ParamSpec = NonNullable<ViewsetSpec['query_params']>[string];
export type RelationFilterSpec = NonNullable<ViewsetSpec['relations_filters']>[number];
export type MatchCaseFilterSpec = NonNullable<ViewsetSpec['filters_match_cases']>[number];
