/**
 * What the spec language means where a viewset leaves something out, and the fixed parts of its
 * routes: the operations each viewset class serves, the key that sets each operation's
 * authentication, an action's methods, a bulk route's method, a soft delete's field. Validation
 * checks specs against these; the model derives its names from them (model/resource-names.ts).
 */
import { OPERATIONS, type ViewsetSpec } from './meta-schema';

/** A CRUD operation a viewset serves. */
type OperationKind = (typeof OPERATIONS)[number];

export type ActionMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export type BulkKind = 'create' | 'update' | 'delete';

/** The method of each bulk route, the single-item operation's. */
export const BULK_METHODS: Record<BulkKind, 'post' | 'patch' | 'delete'> = { create: 'post', update: 'patch', delete: 'delete' };

/** The viewset class when the spec names none. */
export const DEFAULT_VIEWSET_CLASS = 'APIViewSet';

/** The CRUD operations each viewset class serves, in the default behaviours' order. */
export const VIEWSET_OPERATIONS: Record<NonNullable<ViewsetSpec['class']>, readonly OperationKind[]> = {
  APIViewSet: OPERATIONS,
  ReadOnlyViewSet: ['list', 'retrieve'],
  WriteOnlyViewSet: ['create', 'update', 'delete'],
};

/** The viewset key that sets each operation's authentication (else `auth`). */
export const OPERATION_AUTH_KEYS = {
  create: 'post_auth',
  list: 'get_auth',
  retrieve: 'get_auth',
  update: 'patch_auth',
  delete: 'delete_auth',
} as const satisfies Record<OperationKind, keyof ViewsetSpec>;

/** The methods of an action that lists none. */
export const DEFAULT_ACTION_METHODS: readonly ActionMethod[] = ['post'];

/** The field that marks a soft-deleted row when `soft_delete` names none. */
const DEFAULT_SOFT_DELETE_FIELD = 'deleted_at';

/**
 * The field a viewset's `soft_delete` stamps deleted rows with (`deleted_at` unless it names one),
 * or undefined without a soft delete. It takes any value, so that the semantic checks can ask it of
 * a spec the meta-schema has rejected parts of.
 */
export function softDeleteFieldName(softDelete: unknown): string | undefined {
  if (softDelete === true) return DEFAULT_SOFT_DELETE_FIELD;
  if (typeof softDelete !== 'object' || softDelete === null || Array.isArray(softDelete)) return undefined;
  const field: unknown = (softDelete as { field?: unknown }).field;
  return typeof field === 'string' ? field : DEFAULT_SOFT_DELETE_FIELD;
}
