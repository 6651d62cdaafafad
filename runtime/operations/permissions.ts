/**
 * Declarative permissions of a viewset (ninja-aio-crud's `permission_roles` and
 * `has_object_permission`): roles an operation requires of the authenticated user, checked right
 * after authentication, and the object-permission hook's answer, checked before the operation acts
 * on the record.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { unauthorized, type AuthUser } from '../auth/authenticators';
import { ForbiddenError } from '../core/errors';

/**
 * Whether the user holds a role: `staff` is the `is_staff` flag, `superuser` the `is_superuser`
 * flag (a superuser holds every role, as in Django), any other name an entry of the user's `roles`
 * (a list a custom authenticator or the user model provides).
 */
export function hasRole(user: AuthUser, role: string): boolean {
  if (user.is_superuser === true) return true;
  if (role === 'staff') return user.is_staff === true;
  if (role === 'superuser') return false;
  return Array.isArray(user.roles) && user.roles.includes(role);
}

/** `staff` → `"Role staff is required"`; `[staff, editor]` → `"One of the roles staff, editor is required"`. */
export function rolesMessage(roles: readonly string[]): string {
  return roles.length === 1 ? `Role ${roles[0]} is required` : `One of the roles ${roles.join(', ')} is required`;
}

/**
 * Middleware after authentication: the caller must hold one of `roles`. Without a user (a public
 * operation called without a token) it is a 401; a user holding none of them is a 403.
 */
export function requireRoles(roles: readonly string[]): RequestHandler {
  const message = rolesMessage(roles);
  return (req: Request, _res: Response, next: NextFunction) => {
    const user = req.auth;
    if (!user) throw unauthorized(req);
    if (!roles.some((role) => hasRole(user, role))) throw new ForbiddenError('forbidden', message);
    next();
  };
}

/** The 403 details when the object-permission hook refuses (DRF's message). */
export const OBJECT_PERMISSION_DENIED = 'You do not have permission to perform this action.';

/** Awaits the object-permission hook's answer: anything but `true` is a 403. */
export async function checkObjectPermission(answer: boolean | Promise<boolean>): Promise<void> {
  if ((await answer) !== true) throw new ForbiddenError('forbidden', OBJECT_PERMISSION_DENIED);
}
