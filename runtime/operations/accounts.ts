/**
 * The built-in account endpoints a service file declares (`endpoints: - account: register`, ...):
 * register, login, refresh, logout, me and password change, on the user model `auth.user_model`
 * names. Generated code builds the handlers once per service (`accountHandlers`) from the user
 * table's description, and each account endpoint's route calls one of them.
 *
 * - register normalises the username with NFKC (as Django does: a fullwidth `ａｌｉｃｅ` is `alice`),
 *   applies the credentials policy (422 in the error catalogue's shape), then the error catalogue's friendly checks
 *   (400 {"username": "Username already taken"} / {"email": "Email already registered"}); a
 *   registration that loses a race to another one at the insert gets the same 400 as if it had
 *   come second. It answers tokens for the new, active user.
 * - login looks the NFKC form of the username up; refuses a password bcrypt would cut (422, whether
 *   or not the user exists); is throttled per username and per client address (429 with
 *   `Retry-After`; counted in Redis when `SVC_REDIS_URL` is set, see auth/throttle.ts); and answers
 *   the error catalogue's 401s (`Invalid credentials`, `Account is disabled`).
 * - refresh accepts each refresh token once (auth/tokens.ts, `consumeRefreshToken`), and answers
 *   the catalogue's 401s (`Invalid token type`, `Refresh token expired`, `Invalid refresh token`).
 *   The token it answers carries on the family (`fam`) of the one it replaces; a token spent twice
 *   revokes its whole family, so a thief's chain ends when the owner's reuse is refused.
 * - logout spends a refresh token the same way, so it can no longer be exchanged (204); the access
 *   tokens already issued stay valid until they expire.
 * - logout everywhere (an access token) ends every token of the caller issued until now, as a
 *   password change does (204). A login within that same second waits for the next one, since a
 *   token's `iat` counts whole seconds.
 * - me answers the caller: id, username, email and the profile fields.
 * - password change (an access token) checks the current password, throttled as a login of the
 *   caller's username is, applies the policy to the new one, stores its hash and ends every
 *   token issued before: refresh tokens at their next use, access tokens at their next request (204).
 *
 * Answers that carry tokens, and me's, are `Cache-Control: no-store`.
 *
 * Every 401 carries `WWW-Authenticate: Bearer`, with `error="invalid_token"` and a description
 * when a token was refused.
 *
 * With cookies (the service file's `auth.cookies`), register, login and refresh also set the
 * authentication cookies (auth/cookies.ts) and answer the same body; refresh and logout read the
 * refresh token from its cookie when the body holds none, after the CSRF defence of a write; logout
 * clears the cookies whatever it answers. Without a token in the body or a cookie, both answer the
 * 422 a body without `refresh_token` gets without cookies. With `auth.cookies: only`, register,
 * login and refresh answer `{token_type, expires_in}`: the tokens are in the cookies alone.
 */
import { unauthorized, type AuthUser } from '../auth/authenticators';
import { answerNotKept } from './idempotency';
import {
  checkCsrf,
  clearAuthCookies,
  cookieNames,
  requestCookie,
  requestCookies,
  setAuthCookies,
  unverifiedSubject,
  type CookiePaths,
} from '../auth/cookies';
import { credentialProblems } from '../auth/credentials';
import { hashPassword, passwordFitsBcrypt, passwordProblems, passwordTooLongEntry, verifyPassword } from '../auth/password';
import { loginThrottle } from '../auth/throttle';
import {
  consumeRefreshToken,
  refreshFamily,
  refreshTokenRevoked,
  revokeRefreshFamily,
  revokeUserTokens,
  TokenError,
  type TokenClaims,
} from '../auth/tokens';
import { normalizeUsername } from '../auth/username';
import { now } from '../core/convert';
import { RequestValidationError, SerializeError } from '../core/errors';
import { dialectOf, type Db } from '../db/connection';
import { isConstraintViolation } from '../db/driver-errors';
import { insertReturning } from '../db/inserts';
import type { HookContext, RequestContext } from './context';
import type { RawRequest } from './operation';

/** The user table the account endpoints read and write, as the generator describes the user model. */
export interface AccountTable {
  table: string;
  /** The primary-key column. */
  pk: string;
  /** The username's longest length (the field's `max_length`), checked again after NFKC. */
  usernameMaxLength: number;
  /** Fields beside username and email that registration accepts and `me` answers (`auth.profile_fields`). */
  profileFields: readonly string[];
  /** Values a new account gets: `is_active` true, the other flags false. */
  newAccount: Readonly<Record<string, unknown>>;
  /** Columns set to the current time at registration (auto_now and auto_now_add fields). */
  nowColumns: readonly string[];
  /** Of username and email, those unique whatever their ASCII case (`ignore_case`): registration checks them so. */
  ignoreCase?: readonly ('username' | 'email')[];
}

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
}

/** How the account endpoints treat cookies: none, or the paths the cookies are set on. */
export interface AccountOptions {
  /** Set: the tokens are also kept in cookies (the service file's `auth.cookies`). */
  cookies?: CookiePaths;
  /**
   * With `cookies`, the tokens are kept in the cookies alone (`auth.cookies: only`): register, login
   * and refresh answer `{token_type, expires_in}`, so that no script of the page reads a token.
   */
  cookiesOnly?: boolean;
}

/** What register, login and refresh answer with `auth.cookies: only`: the tokens are in the cookies. */
export interface CookieTokenAnswer {
  token_type: string;
  expires_in: number;
}

type Body = Record<string, any>;

/** The 422 of a body without `refresh_token`, as validation answers it when the field is required. */
function missingRefreshToken(): RequestValidationError {
  return new RequestValidationError([{ type: 'missing', loc: ['body', 'data', 'refresh_token'], msg: 'Field required' }]);
}

/** The handlers of the account endpoints for one user table. */
export function accountHandlers(users: AccountTable, options: AccountOptions = {}) {
  const { table, pk } = users;
  const { cookies } = options;
  const cookiesOnly = cookies !== undefined && options.cookiesOnly === true;

  /** What a client gets for valid credentials: an access token with the extra claims, and a refresh token (also as cookies). */
  async function tokensFor(ctx: RequestContext, user: AuthUser, family?: string): Promise<TokenPair | CookieTokenAnswer> {
    const tokens = ctx.service.tokens;
    // Answers that carry credentials are never stored by a cache (RFC 6749 §5.1).
    ctx.req.res?.setHeader('Cache-Control', 'no-store');
    const [access_token, refresh_token] = await Promise.all([tokens.issueFor(user), tokens.issueRefresh(user.id, family)]);
    const pair = {
      access_token,
      refresh_token,
      token_type: 'bearer',
      expires_in: tokens.accessLifetime,
    };
    if (cookies) {
      const csrf = { key: tokens.csrfKey(), session: String(user.id) };
      setAuthCookies(ctx.req, ctx.service.settings, cookies, { access: pair.access_token, refresh: pair.refresh_token }, csrf);
    }
    return cookiesOnly ? { token_type: pair.token_type, expires_in: pair.expires_in } : pair;
  }

  /** Ends every token of the user issued until now: refresh tokens at their next use, access tokens at their next request. */
  async function endSessions(ctx: RequestContext, key: string | number): Promise<void> {
    const until = await revokeUserTokens(ctx.db, key, ctx.service.settings.SVC_REFRESH_TOKEN_LIFETIME);
    ctx.service.tokens.noteUserTokensEnded(key, until);
  }

  /**
   * The refresh token of a refresh or a logout: the body's, else (with cookies) the cookie's, which
   * only a write passing the CSRF defence may use; neither is the 422 of a missing field.
   */
  function presentedRefreshToken(ctx: HookContext<{ body: Body }>): string {
    const sent = ctx.body.refresh_token;
    if (sent !== undefined) return String(sent);
    const names = cookieNames(ctx.service.settings.SVC_AUTH_COOKIE_SECURE);
    const cookie = cookies ? requestCookie(ctx.req, names.refresh) : undefined;
    if (cookie === undefined) throw missingRefreshToken();
    // The CSRF token must be signed for the user the refresh token names (verified next).
    checkCsrf(ctx.req, ctx.service.trustedOrigins ?? [], names.csrf, {
      key: ctx.service.tokens.csrfKey(),
      session: unverifiedSubject(cookie),
    });
    return cookie;
  }

  /** The error catalogue's friendly answers to a username or an email that is already taken (username first). */
  async function checkAvailable(db: Db, username: string, email: string): Promise<void> {
    if (await taken(db, 'username', username)) throw new SerializeError({ username: 'Username already taken' });
    if (await taken(db, 'email', email)) throw new SerializeError({ email: 'Email already registered' });
  }

  /** Whether a user holds `value` in `column`: exactly, or without ASCII case where the field says so. */
  function taken(db: Db, column: 'username' | 'email', value: string): Promise<unknown> {
    if (!users.ignoreCase?.includes(column)) return db(table).where(column, value).first(pk);
    return db(table)
      .whereRaw(`${dialectOf(db).foldedColumnSql} = ?`, [column, value.replace(/[A-Z]/g, (c) => c.toLowerCase())])
      .first(pk);
  }

  /** The user as tokens see it (the service's user loader: the extra claims' fields converted). */
  async function loaded(ctx: RequestContext, id: unknown): Promise<AuthUser> {
    const user = await ctx.service.loadUser(ctx.db, String(id));
    if (!user) throw new Error(`the user ${String(id)} just written cannot be read back`);
    return user;
  }

  /** A verified refresh token, or the error catalogue's 401s. */
  async function refreshClaims(ctx: RequestContext, token: string): Promise<TokenClaims> {
    let claims: TokenClaims;
    try {
      claims = await ctx.service.tokens.verify(token);
    } catch (err) {
      if (err instanceof TokenError && err.reason === 'expired') {
        throw unauthorized(
          ctx.req,
          { detail: 'Refresh token expired' },
          { error: 'invalid_token', description: 'The refresh token expired' },
        );
      }
      throw invalidRefresh(ctx);
    }
    if (claims.type !== 'refresh') {
      throw unauthorized(
        ctx.req,
        { detail: 'Invalid token type' },
        { error: 'invalid_token', description: 'The token is not a refresh token' },
      );
    }
    return claims;
  }

  /**
   * The claims of a refresh token: the catalogue's 401s for one that is invalid, expired, or ended
   * early (its family revoked, or its user's password changed since it was issued).
   */
  async function liveRefreshClaims(ctx: RequestContext, token: string): Promise<TokenClaims> {
    const claims = await refreshClaims(ctx, token);
    if (await refreshTokenRevoked(ctx.db, claims)) throw invalidRefresh(ctx);
    return claims;
  }

  /**
   * Spends a refresh token: single use, so a second exchange of it, even a concurrent one, is the
   * 401. A token spent twice is a stolen one (or a stolen one was spent first): its whole family is
   * revoked, so the chain the thief holds ends too. Each write commits alone (these operations run
   * no transaction), so the revocation outlives the 401 that follows it.
   */
  async function spend(ctx: RequestContext, token: string, claims: TokenClaims): Promise<void> {
    if (await consumeRefreshToken(ctx.db, token, claims)) return;
    await revokeRefreshFamily(ctx.db, claims, ctx.service.settings.SVC_REFRESH_TOKEN_LIFETIME);
    throw invalidRefresh(ctx);
  }

  function invalidRefresh(ctx: RequestContext) {
    return unauthorized(
      ctx.req,
      { detail: 'Invalid refresh token' },
      { error: 'invalid_token', description: 'The refresh token is invalid' },
    );
  }

  return {
    /**
     * The `optionalBody` of refresh and logout with cookies: a request without a body that carries
     * the refresh cookie is read as `{}`, so a page's bodiless `fetch` refreshes or logs out by the
     * cookie (after the CSRF defence); without the cookie, a missing body stays the 422 of the body.
     * The settings are not at hand here: the cookie under either name (with or without its prefix)
     * counts, and one under the name the settings do not give is then the 422 of the missing field.
     */
    refreshCookieSent(request: RawRequest): boolean {
      if (cookies === undefined || request.headers === undefined) return false;
      const sent = requestCookies({ headers: request.headers });
      return [cookieNames(true).refresh, cookieNames(false).refresh].some((name) => sent[name]);
    },

    async register(ctx: HookContext<{ body: Body }>): Promise<TokenPair | CookieTokenAnswer> {
      // Credentials in the request or the answer: never kept with an Idempotency-Key.
      answerNotKept(ctx.req);
      // Checked, compared and stored in its NFKC form.
      const username = normalizeUsername(String(ctx.body.username));
      const email = String(ctx.body.email);
      const password = String(ctx.body.password);
      const problems = credentialProblems(username, password, { usernameMaxLength: users.usernameMaxLength });
      if (problems.length > 0) throw new RequestValidationError(problems);
      await checkAvailable(ctx.db, username, email);
      // Anti-automation: accounts made per client address are counted, and taken back when none is made.
      const unregister = await loginThrottle(ctx.service).beginRegistration(ctx.req);
      const values: Record<string, unknown> = {
        username,
        email,
        password: await hashPassword(password),
        ...Object.fromEntries(users.profileFields.filter((f) => ctx.body[f] !== undefined).map((f) => [f, ctx.body[f]])),
        ...users.newAccount,
      };
      for (const column of users.nowColumns) values[column] = now();
      let id: unknown;
      try {
        // A savepoint: when a concurrent registration committed the same username or email after the
        // check above, the unique constraint fails here, and the transaction stays usable to look again.
        id = await ctx.db.transaction(async (savepoint) => {
          const [row] = await insertReturning(savepoint, savepoint(table).insert(values), values, [pk]);
          return row[pk];
        });
      } catch (err) {
        await unregister();
        if (!isConstraintViolation(err)) throw err;
        await checkAvailable(ctx.db, username, email);
        throw err;
      }
      return tokensFor(ctx, await loaded(ctx, id));
    },

    async login(ctx: HookContext<{ body: Body }>): Promise<TokenPair | CookieTokenAnswer> {
      // Credentials in the request or the answer: never kept with an Idempotency-Key.
      answerNotKept(ctx.req);
      const { req } = ctx;
      // The form usernames are stored in: `ａｌｉｃｅ` logs in as `alice`, and shares its throttle.
      const username = normalizeUsername(String(ctx.body.username));
      const password = String(ctx.body.password);
      // No stored password is longer (registration refuses it), and bcrypt would compare a prefix:
      // refused before any lookup, so the answer says nothing about the user.
      if (!passwordFitsBcrypt(password)) throw new RequestValidationError([passwordTooLongEntry()]);
      const attempt = await loginThrottle(ctx.service).begin(req, username);
      let row: Record<string, any> | undefined;
      let ok: boolean;
      try {
        row = await ctx.db(table).where({ username }).first(pk, 'password', 'is_active');
        // An unknown user still costs one hash comparison, so timing does not reveal which names exist.
        ok = await verifyPassword(password, row?.password);
      } catch (err) {
        await attempt.abandoned();
        throw err;
      }
      // A failure stays counted against the username and the address.
      if (!row || !ok) throw unauthorized(req, { detail: 'Invalid credentials' });
      const user = await ctx.service.loadUser(ctx.db, String(row[pk]));
      if (!user || !user.is_active) {
        await attempt.abandoned();
        throw unauthorized(req, { detail: 'Account is disabled' });
      }
      await attempt.succeeded();
      await ctx.service.tokens.waitPastUserTokensEnded(ctx.db, user.id);
      return tokensFor(ctx, user);
    },

    async refresh(ctx: HookContext<{ body: Body }>): Promise<TokenPair | CookieTokenAnswer> {
      // Credentials in the request or the answer: never kept with an Idempotency-Key.
      answerNotKept(ctx.req);
      const token = presentedRefreshToken(ctx);
      const claims = await liveRefreshClaims(ctx, token);
      // Refused for an inactive user before it is spent: re-activated, the user refreshes with it.
      const user = await ctx.service.loadUser(ctx.db, claims.sub);
      if (!user || !user.is_active) throw invalidRefresh(ctx);
      await spend(ctx, token, claims);
      // The new refresh token carries on the family of the one it replaces.
      return tokensFor(ctx, user, refreshFamily(claims));
    },

    async logout(ctx: HookContext<{ body: Body }>): Promise<undefined> {
      // Credentials in the request or the answer: never kept with an Idempotency-Key.
      answerNotKept(ctx.req);
      // Cleared whatever the answer: a browser logging out with a spent or expired token is logged out too.
      if (cookies) clearAuthCookies(ctx.req, ctx.service.settings, cookies);
      const token = presentedRefreshToken(ctx);
      await spend(ctx, token, await liveRefreshClaims(ctx, token));
      return undefined;
    },

    async logoutAll(ctx: HookContext): Promise<undefined> {
      // Credentials in the request or the answer: never kept with an Idempotency-Key.
      answerNotKept(ctx.req);
      if (cookies) clearAuthCookies(ctx.req, ctx.service.settings, cookies);
      await endSessions(ctx, (ctx.user as AuthUser)[pk] as string | number);
      return undefined;
    },

    me({ req, user }: RequestContext): Record<string, unknown> {
      req.res?.setHeader('Cache-Control', 'no-store');
      const caller = user as AuthUser;
      return Object.fromEntries(['id', 'username', 'email', ...users.profileFields].map((f) => [f, f === 'id' ? caller[pk] : caller[f]]));
    },

    async changePassword(ctx: HookContext<{ body: Body }>): Promise<undefined> {
      // Credentials in the request or the answer: never kept with an Idempotency-Key.
      answerNotKept(ctx.req);
      const caller = ctx.user as AuthUser;
      const key = caller[pk] as string | number;
      const current = String(ctx.body.current_password);
      const next = String(ctx.body.new_password);
      const problems = passwordProblems(next, ['body', 'data', 'new_password']);
      if (problems.length > 0) throw new RequestValidationError(problems);
      // Guessing the current password with a stolen access token is throttled as logins are.
      const attempt = await loginThrottle(ctx.service).begin(ctx.req, String(caller.username));
      let ok: boolean;
      try {
        const row = await ctx.db(table).where(pk, key).first('password');
        ok = await verifyPassword(current, row?.password);
      } catch (err) {
        await attempt.abandoned();
        throw err;
      }
      if (!ok) throw new SerializeError({ current_password: 'Incorrect password' });
      await attempt.succeeded();
      await ctx
        .db(table)
        .where(pk, key)
        .update({ password: await hashPassword(next) });
      // Every session of the old password ends: its refresh and access tokens are refused from now on.
      await endSessions(ctx, key);
      return undefined;
    },
  };
}

export type AccountHandlers = ReturnType<typeof accountHandlers>;
