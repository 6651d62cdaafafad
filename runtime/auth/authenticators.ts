/**
 * Authenticators and the per-operation auth middleware.
 *
 * An authenticator answers with the authenticated user (success), `null` (authentication failed:
 * 401) or throws ForbiddenError (a permission check returned false: 403). In a list, the first
 * authenticator that succeeds wins.
 *
 * Every 401 of the middleware carries a `WWW-Authenticate: Bearer` challenge (RFC 6750 §3):
 * without a bearer token, `Bearer` alone; with one that was refused, `error="invalid_token"` and
 * an `error_description` that tells an expired token from any other refusal. The body stays the
 * error catalogue's `{"detail": "Unauthorized"}` in every case.
 */
import type { NextFunction, Request, RequestHandler } from 'express';
import type { BuiltinAuthenticator } from '../core/catalogue';
import type { Db } from '../db/connection';
import { AuthError, ForbiddenError, type ErrorBody } from '../core/errors';
import { checkCsrf, cookieNames, requestCookie } from './cookies';
import { TokenError, type TokenClaims, type TokenService } from './tokens';
import type { Settings } from '../core/settings';

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
      /** Why a built-in authenticator refused the request's bearer token, for the challenge of its 401. */
      bearerRefusal?: BearerChallenge;
    }
  }
}

/** What authenticators may use: the database, the token service and the user loader. */
export interface AuthContext {
  db: Db;
  tokens: TokenService;
  /** The active user with this id, or undefined. */
  loadUser(db: Db, sub: string): Promise<AuthUser | undefined>;
  /**
   * Origins besides the service's own whose pages may write with the authentication cookies
   * (`CookieAuth`): those of `SVC_CORS_ORIGINS`, set when the API is created.
   */
  trustedOrigins?: readonly string[];
  /** The settings; `CookieAuth` reads `SVC_AUTH_COOKIE_SECURE` to know its cookies' names (absent: `Secure`). */
  settings?: Settings;
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

/** The parameters of a `WWW-Authenticate: Bearer` challenge (RFC 6750 §3). */
export interface BearerChallenge {
  error?: 'invalid_request' | 'invalid_token' | 'insufficient_scope';
  description?: string;
}

/** Descriptions of the challenges the runtime sends. */
export const ACCESS_TOKEN_EXPIRED = 'The access token expired';
export const ACCESS_TOKEN_INVALID = 'The access token is invalid';

/** The value of a `WWW-Authenticate` header: `Bearer`, then the challenge's parameters. */
export function bearerChallenge(challenge: BearerChallenge = {}): string {
  const params: string[] = [];
  // Quoted strings of RFC 7235: a description never holds `"` or `\` (RFC 6750 §3 excludes them).
  if (challenge.error) params.push(`error="${challenge.error}"`);
  if (challenge.description) params.push(`error_description="${challenge.description.replace(/["\\]/g, '')}"`);
  return params.length ? `Bearer ${params.join(', ')}` : 'Bearer';
}

/**
 * A 401 with a `WWW-Authenticate` challenge: the header is set on the response at once (the error
 * middleware keeps it), the body is the one given (default `{"detail": "Unauthorized"}`). Throw it.
 */
export function unauthorized(req: Request, body: ErrorBody = { detail: 'Unauthorized' }, challenge: BearerChallenge = {}): AuthError {
  req.res?.setHeader('WWW-Authenticate', bearerChallenge(challenge));
  return new AuthError(body, 401);
}

/** The challenge of a request's 401: what the built-in authenticators found wrong with its token. */
export function challengeFor(req: Request): BearerChallenge {
  const refused = req.bearerRefusal;
  if (refused) return refused;
  // A header that is not a bearer token (another scheme, `Bearer` alone) carries no token to refuse.
  return bearerToken(req) ? { error: 'invalid_token', description: ACCESS_TOKEN_INVALID } : {};
}

/**
 * The active user an access token names, or null. A refused bearer token leaves its reason for the
 * challenge of the 401 (`req.bearerRefusal`); a refused cookie leaves none (the request sent no bearer token).
 */
async function userOfAccessToken(req: Request, ctx: AuthContext, token: string, bearer: boolean): Promise<AuthUser | null> {
  let claims: TokenClaims;
  try {
    claims = await ctx.tokens.verifyAccess(token);
  } catch (err) {
    const expired = err instanceof TokenError && err.reason === 'expired';
    if (bearer) req.bearerRefusal = { error: 'invalid_token', description: expired ? ACCESS_TOKEN_EXPIRED : ACCESS_TOKEN_INVALID };
    return null;
  }
  // A user that was deactivated or deleted, or whose tokens were ended since this one was issued
  // (a password change): the token no longer authenticates anyone.
  const user = await ctx.loadUser(ctx.db, claims.sub);
  if (!user || !user.is_active || (await ctx.tokens.userTokensEndedFor(ctx.db, claims))) {
    if (bearer) req.bearerRefusal = { error: 'invalid_token', description: ACCESS_TOKEN_INVALID };
    return null;
  }
  req.claims = claims;
  return user;
}

async function userFromToken(req: Request, ctx: AuthContext): Promise<AuthUser | null> {
  const token = bearerToken(req);
  return token ? userOfAccessToken(req, ctx, token, true) : null;
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
 * A valid access token in the access cookie (`__Secure-access_token`, auth/cookies.ts), for browsers. A request with
 * an `Authorization` header is left to the bearer authenticators: listed beside JWTAuth, a bearer
 * token wins. A write (not GET, HEAD or OPTIONS) must pass the CSRF defence, else 403.
 */
export const CookieAuth: Authenticator = {
  name: 'CookieAuth',
  async authenticate(req, ctx) {
    if (req.headers.authorization !== undefined) return null;
    const names = cookieNames(ctx.settings?.SVC_AUTH_COOKIE_SECURE);
    const token = requestCookie(req, names.access);
    if (!token) return null;
    const user = await userOfAccessToken(req, ctx, token, false);
    // The CSRF token must be signed for the user the access token names.
    if (user) checkCsrf(req, ctx.trustedOrigins ?? [], names.csrf, { key: ctx.tokens.csrfKey(), session: req.claims!.sub });
    return user;
  },
};

/**
 * Middleware for an operation's resolved auth. `null` is a public endpoint: a token sent anyway is
 * still read (an invalid one is a 401) so that rules such as visibility can see the caller.
 */
export function requireAuth(authenticators: readonly Authenticator[] | null, ctx: () => AuthContext): RequestHandler {
  if (authenticators === null) {
    const withToken = async (req: Request, next: NextFunction) => {
      const user = await userFromToken(req, ctx());
      if (!user) throw unauthorized(req, { detail: 'Unauthorized' }, challengeFor(req));
      req.auth = user;
      next();
    };
    // Without a token, on at once: no promise for the anonymous reads that public routes mostly serve.
    return (req, _res, next) => (req.headers.authorization === undefined ? next() : withToken(req, next));
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
    throw forbidden ?? unauthorized(req, { detail: 'Unauthorized' }, challengeFor(req));
  };
}

/** The built-in authenticators by the names specs use (the catalogue's list, checked here). */
export const BUILTIN_AUTHENTICATOR_IMPLEMENTATIONS = { JWTAuth, AdminAuth, SuperuserAuth, CookieAuth } satisfies Record<
  BuiltinAuthenticator,
  Authenticator
>;
