/**
 * The contract of @svcgen/runtime: every name generated code and hooks may use, and nothing else.
 * Generated code imports only these names (the generator emits no other), and the hooks a user
 * writes are typed against them; everything else in the runtime's folders is internal and may
 * change in any release. A name joins this list when generated code or a documented hook needs it.
 * Layers, from the request down: http → operations → auth → query → validation → db → core.
 */

// The libraries generated code and hooks see through the runtime.
export type { Knex } from 'knex';
export { z } from './core/zod';

// http: the service's command line, application, server and routes.
export { runMain, type ServiceMain, type UserTable } from './http/main';
export { createApi, type Service, type ServiceOptions } from './http/app';
export { startServer, type RunningServer, type ServeOptions } from './http/server';
export {
  expressHandler,
  operationRoute,
  resourceRoute,
  type CrudRoute,
  type Decorator,
  type Method,
  type OperationDoc,
  type OperationRoute,
  type ResourceDoc,
  type ResourceOperationRoute,
  type Route,
  type RouteDoc,
  type View,
} from './http/routes';
export { GenericMessageSchema } from './http/openapi';
export { createLogger, type Logger } from './http/logging';
export type { CorsSettings } from './http/cors';
export type { HttpSecuritySettings } from './http/security-headers';
export type { Metrics } from './http/metrics';

// operations: what a route does, and what its hooks receive.
export {
  createServiceContext,
  rowLookup,
  withArgs,
  type HookContext,
  type InsertOptions,
  type InsertReference,
  type ModelInfo,
  type RequestContext,
  type ServiceContext,
} from './operations/context';
export { JsonResponse, type Operation } from './operations/operation';
export { etagOf, keyFromPath, keyFromResult } from './operations/conditional';
export type { ExceptionClass, ExceptionHandler, HandledResponse } from './operations/exceptions';
export { bulkDeleteBody, bulkDeleteDoc, bulkListBody, bulkListDoc, bulkResultsDoc, runBulk } from './operations/bulk';
export {
  applyRelationFilters,
  foundRow,
  m2mBodySchema,
  M2MSchemaOut,
  manageRelation,
  relatedRows,
  type RelationSpec,
} from './operations/m2m';
export { markDeleted, restoreRow, type SoftDeleteSpec } from './operations/soft-delete';
export { deleteRow, type Conflicts, type ProtectConflict, type UniqueConflict } from './operations/conflicts';
export { checkObjectPermission } from './operations/permissions';
export { missingRelatedKeys, relatedExists, visibleOnly, type Visibility } from './operations/visibility';
export { checkCaller, childKeys, writeChildren, type ChildWrites, type NestedMode, type NestedWriteSpec } from './operations/nested';
export { rateLimit } from './operations/rate-limit';
export type { ComputeArgs } from './operations/computed';
export { accountHandlers, type AccountHandlers, type AccountTable, type CookieTokenAnswer, type TokenPair } from './operations/accounts';

// auth: authenticators, tokens, passwords, usernames, the login throttle.
export {
  AdminAuth,
  bearerToken,
  CookieAuth,
  JWTAuth,
  SuperuserAuth,
  unauthorized,
  type Authenticator,
  type AuthUser,
} from './auth/authenticators';
export {
  ACCESS_COOKIE,
  checkCsrf,
  clearAuthCookies,
  cookieNames,
  CSRF_COOKIE,
  CSRF_HEADER,
  newCsrfToken,
  REFRESH_COOKIE,
  requestCookie,
  setAuthCookies,
  type CookieNames,
  type CookiePaths,
  type CsrfBinding,
} from './auth/cookies';
export { consumeRefreshToken, generateKeyPair, TokenError, TokenService, type KeyPair, type TokenClaims } from './auth/tokens';
export { hashPassword, passwordFitsBcrypt, passwordProblems, passwordTooLongEntry, verifyPassword } from './auth/password';
export { normalizeUsername, usernameProblems } from './auth/username';
export { credentialProblems } from './auth/credentials';
export { LoginThrottle, loginThrottle, setLoginThrottle } from './auth/throttle';

// query: lists, pagination, filters, search, ordering, field selection.
export {
  CursorPagination,
  LimitOffsetPagination,
  listAll,
  listSource,
  PageNumberPagination,
  PageNumberResultsPagination,
  paginate,
  type Cursor,
  type ListSource,
} from './query/pagination';
export { actionQuery, orderingParam, querySource, type KeyKind, type OrderTerm } from './query/list';
export { applyMixins, escapeLike, lookupMixin, matchCaseMixin, pickFilters, queryParam, settleHook, type Lookup } from './query/filters';
export { applySearch, searchParam } from './query/search';
export { fieldsParam, selectShape } from './query/fields-selection';
export { expandParam, expandShape, withExpanded, type Expander } from './query/expand';

// validation: the request parts' types.
export { dateInput, dateTimeInput, decimalInput, intInput, jsonInput, listInput, urlInput, uuidInput } from './validation/fields';
export { fromString, intFromString } from './validation/query-params';
export { validateData } from './validation/validate';

// db: connections, rows, migrations.
export { connect, selectByKey, writeReturning, type Db } from './db/connection';
export { insertReturning } from './db/inserts';
export {
  exists,
  loadForeign,
  loadManyToMany,
  loadRelations,
  type RelationLoad,
  type RelationsLoaded,
  loadReverse,
  missingKeys,
  related,
  setRelated,
  shapeRows,
  withoutUndefined,
  type ColumnOf,
  type ForeignSpec,
  type ManyToManySpec,
  type ReverseSpec,
  type Row,
  type StateRelations,
} from './db/rows';
export {
  createFoldedUnique,
  createSearchIndex,
  dropFoldedUnique,
  dropSearchIndex,
  listColumnType,
  listDefault,
  migrateLatest,
  migrateRollback,
  renameForeignKey,
  renameSearchIndex,
  UnknownMigrationsError,
  type Migration,
  type MigrateOptions,
  type UnknownMigrationsPolicy,
} from './db/migrations';
export { isConstraintViolation } from './db/driver-errors';

// core: errors, settings, conversions, the 32-bit integer range.
export {
  ApiException,
  AuthError,
  BaseException,
  ForbiddenError,
  HttpError,
  IntegrityError,
  MultipleObjectsError,
  NotFoundError,
  PreconditionFailedError,
  PreconditionRequiredError,
  RequestValidationError,
  SerializeError,
  ServiceUnavailableError,
  TooManyRequestsError,
  ValidationError,
  type ValidationEntry,
} from './core/errors';
export { ConfigurationError, loadSettings, withSettingDefaults, type Settings } from './core/settings';
export { asBool, asDate, asDateTime, asDecimal, asJson, asList, now, toDb } from './core/convert';
export { INT32 } from './core/catalogue';
