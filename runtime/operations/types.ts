/**
 * The types the operations share: the service and request contexts, and what the service context
 * holds of other modules (exception handlers, named conflicts, visibility hooks). Kept apart from
 * the modules that implement them, so that those modules and context.ts need not import each other.
 */
import type { Request, RequestHandler } from 'express';
import type { Knex } from 'knex';
import type { AuthContext, Authenticator, AuthUser } from '../auth/authenticators';
import type { LoginThrottle } from '../auth/throttle';
import type { ModelRef } from '../core/errors';
import type { Settings } from '../core/settings';
import type { Db } from '../db/connection';
import type { TransactionGate } from './transactions';

/** Both 404 keys of a model; the setting SVC_NOT_FOUND_ERROR_USE_VERBOSE_NAMES picks one. */
export interface ModelInfo {
  /** Verbose name with spaces replaced by underscores. */
  verboseKey: string;
  /** Class name in snake case. */
  classKey: string;
}

export interface ServiceContext extends AuthContext {
  settings: Settings;
  /** The middleware for an operation's resolved authenticators (`null`: public). */
  auth(authenticators: readonly Authenticator[] | null): RequestHandler;
  /** The 404 key of a model under the current settings. */
  model(model: ModelInfo): ModelRef;
  /** The service's exception handlers (the spec's `exception_handlers`), by the class each answers for. */
  exceptionHandlers: ExceptionHandlers;
  /** The login throttle, made from the settings on first use (`loginThrottle(service)`). */
  loginThrottle?: LoginThrottle;
  /** The transactions of the service's operations, which a shutdown waits for (transactions.ts). */
  transactions: TransactionGate;
  /**
   * The constraints of the service's tables its 409s name (conflicts.ts) when `SVC_NAMED_CONFLICTS`
   * is on; without them, every 409 has the catalogue's details.
   */
  conflicts?: Conflicts;
  /**
   * The `queryset_request` hook of each table whose resource has one: the rows of it a caller may
   * see, which the related keys a write names and the relation endpoints are held to too (visibility.ts).
   */
  visibility?: Readonly<Record<string, Visibility>>;
}

declare global {
  namespace Express {
    interface Request {
      /** The service the request is served by (set before authentication), for decorators and custom code. */
      service: ServiceContext;
    }
  }
}

/** Given to user hooks: the request, the caller, and the database (the operation's transaction when it writes). */
export interface RequestContext {
  req: Request;
  user: AuthUser | undefined;
  db: Db;
  service: ServiceContext;
}

/**
 * What a hook receives: the request context plus the hook's own arguments (for example `values` and
 * `data` before a create, `instance` for an action, `proceed` for an override). Every hook takes
 * this one argument, so a hook may name only the parts it uses.
 */
export type HookContext<Args extends object = object> = RequestContext & Args;

/** A resource's `queryset_request` hook: narrows a query of its table to the rows the caller may see. */
export type Visibility = (ctx: HookContext<{ query: Knex.QueryBuilder }>) => unknown;

/** A unique constraint or index of a table (its primary key too), and the details of its 409. */
export interface UniqueConflict {
  table: string;
  columns: readonly string[];
  /** The constraint's or index's name in the database (`categories_name_unique`, `companies_pkey`). */
  name: string;
  details: string;
}

/** A foreign key that protects its target (`on_delete: protect`), and the details of its 409. */
export interface ProtectConflict {
  /** The table that refers, its column, and the constraint's name. */
  table: string;
  column: string;
  name: string;
  /** The table referred to (by its primary key). */
  target: string;
  details: string;
}

/** The constraints a service names in its 409s. */
export interface Conflicts {
  unique: readonly UniqueConflict[];
  protect: readonly ProtectConflict[];
}

/** What an exception handler answers instead of the default body. */
export interface HandledResponse {
  status: number;
  body: unknown;
}

export type ExceptionHandler<E = any> = (req: Request, error: E) => HandledResponse | Promise<HandledResponse>;

// Exception classes are looked up by constructor; `abstract new` admits every class.
export type ExceptionClass = abstract new (...args: any[]) => unknown;

/** A service's exception handlers, each with the class it answers for. */
export type ExceptionHandlers = ReadonlyArray<readonly [ExceptionClass, ExceptionHandler]>;
