/**
 * Nested writes: the children of a parent record (the rows whose foreign key points to it), sent as
 * a list in the parent's create or update body and written in the parent's transaction, each
 * through the child resource's own create, update or delete (`ChildWrites`, generated in the
 * child's routes module), so its lifecycle hooks, object permission and roles apply. Any failure
 * (a refused child, a 409, a hook's exception) rolls back the parent with every child.
 */
import { unauthorized } from '../auth/authenticators';
import { ForbiddenError, RequestValidationError, type ValidationEntry } from '../core/errors';
import type { Db } from '../db/connection';
import type { RequestContext } from './context';
import { hasRole, rolesMessage } from './permissions';

/** A child's key, as its primary key's values compare. */
type Key = string | number;

/** What a child resource's writes module offers a parent's nested write. */
export interface ChildWrites<Item, Out> {
  /** Creates a child of `parent` from `item` (the child's create body without the foreign key). */
  create(item: Item, parent: Key, ctx: RequestContext): Promise<Out>;
  /** Updates the child with key `pk` by `item` (nested writes of updates). */
  update?(pk: Key, item: Item, ctx: RequestContext): Promise<Out>;
  /** Deletes the child with key `pk` (a `replace`). */
  remove?(pk: Key, ctx: RequestContext): Promise<void>;
  /** The keys of `parent`'s children, in key order (nested writes of updates). */
  children?(db: Db, parent: Key): Promise<Key[]>;
}

/** The keys of the rows of `table` whose foreign key `column` is `parent` (live rows only, with soft delete), in key order. */
export async function childKeys(db: Db, table: string, pk: string, column: string, parent: Key, softDelete?: string): Promise<Key[]> {
  const query = db(table).select(pk).where(column, parent).orderBy(pk);
  if (softDelete) query.whereNull(softDelete);
  const rows: Record<string, Key>[] = await query;
  return rows.map((row) => row[pk]);
}

/** The write a nested write of this mode needs: generated for every mode the spec uses. */
function needed<T>(write: T | undefined, name: string): T {
  if (write === undefined) throw new Error(`This nested write needs the child's ${name}`);
  return write;
}

/**
 * How a list of children is written: `create` (a create: each item is a new child); in an update,
 * an item naming a child's key updates it, one without creates a child, and the children the list
 * does not name are deleted (`replace`) or kept (`merge`).
 */
export type NestedMode = 'create' | 'replace' | 'merge';

export interface NestedWriteSpec<Item, Out> {
  /** Where the list is in the request (`['body', 'data', 'lines']`): the location of an item's error. */
  at: (string | number)[];
  mode: NestedMode;
  /** The key field of an update's items (`id`). */
  key: string;
  /** `A line of this order` … : the child and parent as an error message names them. */
  names: { child: string; parent: string };
  writes: ChildWrites<Item, Out>;
}

/**
 * Writes `items` as the children of `parent` and answers what each write answered, in the items'
 * order. Before any child is written, every key an update's items name must be one of the parent's
 * children, and named once: otherwise a 422 locating each offending key, e.g.
 * `["body", "data", "lines", 2, "id"]`. A replace deletes the children not named before writing the others.
 */
export async function writeChildren<Item extends object, Out>(
  ctx: RequestContext,
  parent: Key,
  items: readonly Item[] | undefined,
  spec: NestedWriteSpec<Item, Out>,
): Promise<Out[]> {
  const list = items ?? [];
  const { writes } = spec;
  if (spec.mode === 'create') {
    const created: Out[] = [];
    for (const item of list) created.push(await writes.create(item, parent, ctx));
    return created;
  }
  const children = needed(writes.children, 'children');
  const update = needed(writes.update, 'update');
  const existing = new Set((await children(ctx.db, parent)).map(String));
  const named = new Set<string>();
  const errors: ValidationEntry[] = [];
  const keys = list.map((item, index) => {
    const key = (item as Record<string, unknown>)[spec.key] as Key | undefined;
    if (key === undefined) return undefined;
    const loc = [...spec.at, index, spec.key];
    if (!existing.has(String(key)))
      errors.push({ type: 'not_a_child', loc, msg: `No ${spec.names.child} of this ${spec.names.parent} has this key` });
    else if (named.has(String(key)))
      errors.push({ type: 'duplicate_key', loc, msg: `The ${spec.names.child} with this key is listed twice` });
    named.add(String(key));
    return key;
  });
  if (errors.length) throw new RequestValidationError(errors);
  if (spec.mode === 'replace') {
    const remove = needed(writes.remove, 'remove');
    for (const key of await children(ctx.db, parent)) if (!named.has(String(key))) await remove(key, ctx);
  }
  const written: Out[] = [];
  for (const [index, item] of list.entries()) {
    const key = keys[index];
    // The child's update reads the fields of its update schema only: the key stays out of its values.
    written.push(key === undefined ? await writes.create(item, parent, ctx) : await update(key, item, ctx));
  }
  return written;
}

/**
 * The caller may run a child's operation: with `authenticated`, a user must be signed in (401);
 * with `roles` (the child operation's `permission_roles`), the user must hold one of them (403).
 * A nested write runs after the parent's authentication, so the child's authenticators are not
 * run again: only whether they found a caller.
 */
export function checkCaller(ctx: RequestContext, rule: { authenticated: boolean; roles?: readonly string[] }): void {
  const user = ctx.user;
  if (!user) {
    if (rule.authenticated || rule.roles) throw unauthorized(ctx.req);
    return;
  }
  if (rule.roles && !rule.roles.some((role) => hasRole(user, role))) throw new ForbiddenError('forbidden', rolesMessage(rule.roles));
}
