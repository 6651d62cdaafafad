/**
 * Authenticators and the per-operation auth middleware.
 *
 * An authenticator answers with the authenticated user (success), `null` (authentication failed:
 * 401) or throws ForbiddenError (a permission check returned false: 403). In a list, the first
 * authenticator that succeeds wins.
 */
import type { Request, RequestHandler } from 'express';
import type { BuiltinAuthenticator } from './catalogue';
import type { Db } from './db';
import { AuthError, ForbiddenError } from './errors';
import type { TokenClaims, TokenService } from './tokens';

/** The authenticated user as handlers see it (`req.auth`): the user's row, password excluded. */
export interface AuthUser {
  id: string | number;
  is_active: boolean;
  is_staff: boolean;
  is_superuser: boolean;
  [field: string]: unknown;
}

declare global {
  namespace Express {
    interface Request {
      /** The authenticated user, or undefined on a public endpoint called without a token. */
      auth?: AuthUser;
      /** The verified token claims of the authenticated request. */
      claims?: TokenClaims;
      /** Anything a custom authenticator attaches (for example custom claims). */
      authInfo?: Record<string, unknown>;
    }
  }
}

/** What authenticators may use: the database, the token service and the user loader. */
export interface AuthContext {
  db: Db;
  tokens: TokenService;
  /** The active user with this id, or undefined. */
  loadUser(db: Db, sub: string): Promise<AuthUser | undefined>;
}

export interface Authenticator {
  readonly name: string;
  authenticate(req: Request, ctx: AuthContext): Promise<AuthUser | null>;
}

export function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : '';
}

async function userFromToken(req: Request, ctx: AuthContext): Promise<AuthUser | null> {
  const token = bearerToken(req);
  if (!token) return null;
  let claims: TokenClaims;
  try {
    claims = ctx.tokens.verifyAccess(token);
  } catch {
    return null;
  }
  const user = await ctx.loadUser(ctx.db, claims.sub);
  if (!user || !user.is_active) return null;
  req.claims = claims;
  return user;
}

/** A valid access token for an active user. */
export const JWTAuth: Authenticator = { name: 'JWTAuth', authenticate: userFromToken };

/** JWTAuth plus the user's is_staff flag. */
export const AdminAuth: Authenticator = {
  name: 'AdminAuth',
  async authenticate(req, ctx) {
    const user = await userFromToken(req, ctx);
    if (user && !user.is_staff) throw new ForbiddenError('forbidden', 'Staff privileges required');
    return user;
  },
};

/** JWTAuth plus the user's is_superuser flag. */
export const SuperuserAuth: Authenticator = {
  name: 'SuperuserAuth',
  async authenticate(req, ctx) {
    const user = await userFromToken(req, ctx);
    if (user && !user.is_superuser) throw new ForbiddenError('forbidden', 'Superuser privileges required');
    return user;
  },
};

/**
 * Middleware for an operation's resolved auth. `null` is a public endpoint: a token sent anyway is
 * still read (an invalid one is a 401) so that rules such as visibility can see the caller.
 */
export function requireAuth(authenticators: readonly Authenticator[] | null, ctx: () => AuthContext): RequestHandler {
  if (authenticators === null) {
    return async (req, _res, next) => {
      if (req.headers.authorization === undefined) return next();
      const user = await userFromToken(req, ctx());
      if (!user) throw new AuthError({ detail: 'Unauthorized' }, 401);
      req.auth = user;
      next();
    };
  }
  return async (req, _res, next) => {
    let forbidden: ForbiddenError | undefined;
    for (const authenticator of authenticators) {
      try {
        const user = await authenticator.authenticate(req, ctx());
        if (user) {
          req.auth = user;
          return next();
        }
      } catch (err) {
        if (!(err instanceof ForbiddenError)) throw err;
        forbidden ??= err;
      }
    }
    throw forbidden ?? new AuthError({ detail: 'Unauthorized' }, 401);
  };
}

/** The built-in authenticators by the names specs use (the catalogue's list, checked here). */
export const BUILTIN_AUTHENTICATOR_IMPLEMENTATIONS = { JWTAuth, AdminAuth, SuperuserAuth } satisfies Record<BuiltinAuthenticator, Authenticator>;
