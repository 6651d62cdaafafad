/**
 * The built-in account endpoints a service file declares (`endpoints: - account: register`, ...):
 * register, login, refresh, logout, me and password change, on the user model `auth.user_model`
 * names. Generated code builds the handlers once per service (`accountHandlers`) from the user
 * table's description, and each account endpoint's route calls one of them.
 *
 * - register normalises the username with NFKC (as Django does: a fullwidth `ａｌｉｃｅ` is `alice`),
 *   applies the credentials policy (422 in the seed's shape), then the seed's friendly checks
 *   (400 {"username": "Username already taken"} / {"email": "Email already registered"}); a
 *   registration that loses a race to another one at the insert gets the same 400 as if it had
 *   come second. It answers tokens for the new, active user.
 * - login looks the NFKC form of the username up; refuses a password bcrypt would cut (422, whether
 *   or not the user exists); is throttled per username and per client address (429 with
 *   `Retry-After`; counted in Redis when `SVC_REDIS_URL` is set, see auth/throttle.ts); and answers
 *   the seed's 401s (`Invalid credentials`, `Account is disabled`).
 * - refresh accepts each refresh token once (auth/tokens.ts, `consumeRefreshToken`), and answers
 *   the seed's 401s (`Invalid token type`, `Refresh token expired`, `Invalid refresh token`).
 * - logout spends a refresh token the same way, so it can no longer be exchanged (204); the access
 *   tokens already issued stay valid until they expire.
 * - me answers the caller: id, username, email and the profile fields.
 * - password change (an access token) checks the current password, throttled as a login of the
 *   caller's username is, applies the policy to the new one and stores its hash (204).
 *
 * Every 401 carries `WWW-Authenticate: Bearer`, with `error="invalid_token"` and a description
 * when a token was refused.
 *
 * With cookies (the service file's `auth.cookies`), register, login and refresh also set the
 * authentication cookies (auth/cookies.ts) and answer the same body; refresh and logout read the
 * refresh token from its cookie when the body holds none, after the CSRF defence of a write; logout
 * clears the cookies whatever it answers. Without a token in the body or a cookie, both answer the
 * 422 a body without `refresh_token` gets without cookies.
 */
import { unauthorized, type AuthUser } from '../auth/authenticators';
import { answerNotKept } from './idempotency';
import { checkCsrf, clearAuthCookies, REFRESH_COOKIE, requestCookie, setAuthCookies, type CookiePaths } from '../auth/cookies';
import { credentialProblems } from '../auth/credentials';
import { hashPassword, passwordFitsBcrypt, passwordProblems, passwordTooLongEntry, verifyPassword } from '../auth/password';
import { loginThrottle } from '../auth/throttle';
import { consumeRefreshToken, TokenError, type TokenClaims } from '../auth/tokens';
import { normalizeUsername } from '../auth/username';
import { now } from '../core/convert';
import { RequestValidationError, SerializeError } from '../core/errors';
import type { Db } from '../db/connection';
import { isConstraintViolation } from '../db/driver-errors';
import type { HookContext, RequestContext } from './context';

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

  /** What a client gets for valid credentials: an access token with the extra claims, and a refresh token (also as cookies). */
  function tokensFor(ctx: RequestContext, user: AuthUser): TokenPair {
    const tokens = ctx.service.tokens;
    const pair = {
      access_token: tokens.issueFor(user),
      refresh_token: tokens.issueRefresh(user.id),
      token_type: 'bearer',
      expires_in: tokens.accessLifetime,
    };
    if (cookies) setAuthCookies(ctx.req, ctx.service.settings, cookies, { access: pair.access_token, refresh: pair.refresh_token });
    return pair;
  }

  /**
   * The refresh token of a refresh or a logout: the body's, else (with cookies) the cookie's, which
   * only a write passing the CSRF defence may use; neither is the 422 of a missing field.
   */
  function presentedRefreshToken(ctx: HookContext<{ body: Body }>): string {
    const sent = ctx.body.refresh_token;
    if (sent !== undefined) return String(sent);
    const cookie = cookies ? requestCookie(ctx.req, REFRESH_COOKIE) : undefined;
    if (cookie === undefined) throw missingRefreshToken();
    checkCsrf(ctx.req, ctx.service.trustedOrigins ?? []);
    return cookie;
  }

  /** The seed's friendly answers to a username or an email that is already taken (username first). */
  async function checkAvailable(db: Db, username: string, email: string): Promise<void> {
    if (await db(table).where({ username }).first(pk)) throw new SerializeError({ username: 'Username already taken' });
    if (await db(table).where({ email }).first(pk)) throw new SerializeError({ email: 'Email already registered' });
  }

  /** The user as tokens see it (the service's user loader: the extra claims' fields converted). */
  async function loaded(ctx: RequestContext, id: unknown): Promise<AuthUser> {
    const user = await ctx.service.loadUser(ctx.db, String(id));
    if (!user) throw new Error(`the user ${String(id)} just written cannot be read back`);
    return user;
  }

  /** A verified refresh token, or the seed's 401s. */
  function refreshClaims(ctx: RequestContext, token: string): TokenClaims {
    let claims: TokenClaims;
    try {
      claims = ctx.service.tokens.verify(token);
    } catch (err) {
      if (err instanceof TokenError && err.reason === 'expired') {
        throw unauthorized(ctx.req, { detail: 'Refresh token expired' }, { error: 'invalid_token', description: 'The refresh token expired' });
      }
      throw invalidRefresh(ctx);
    }
    if (claims.type !== 'refresh') {
      throw unauthorized(ctx.req, { detail: 'Invalid token type' }, { error: 'invalid_token', description: 'The token is not a refresh token' });
    }
    return claims;
  }

  function invalidRefresh(ctx: RequestContext) {
    return unauthorized(ctx.req, { detail: 'Invalid refresh token' }, { error: 'invalid_token', description: 'The refresh token is invalid' });
  }

  return {
    async register(ctx: HookContext<{ body: Body }>): Promise<TokenPair> {
      // Credentials in the request or the answer: never kept with an Idempotency-Key.
      answerNotKept(ctx.req);
      // Checked, compared and stored in its NFKC form.
      const username = normalizeUsername(String(ctx.body.username));
      const email = String(ctx.body.email);
      const password = String(ctx.body.password);
      const problems = credentialProblems(username, password, { usernameMaxLength: users.usernameMaxLength });
      if (problems.length > 0) throw new RequestValidationError(problems);
      await checkAvailable(ctx.db, username, email);
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
          const [row] = await savepoint(table).insert(values).returning(pk);
          return row[pk];
        });
      } catch (err) {
        if (!isConstraintViolation(err)) throw err;
        await checkAvailable(ctx.db, username, email);
        throw err;
      }
      return tokensFor(ctx, await loaded(ctx, id));
    },

    async login(ctx: HookContext<{ body: Body }>): Promise<TokenPair> {
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
      return tokensFor(ctx, user);
    },

    async refresh(ctx: HookContext<{ body: Body }>): Promise<TokenPair> {
      // Credentials in the request or the answer: never kept with an Idempotency-Key.
      answerNotKept(ctx.req);
      const token = presentedRefreshToken(ctx);
      const claims = refreshClaims(ctx, token);
      // Single use: a second exchange of the same token, even a concurrent one, is refused.
      if (!(await consumeRefreshToken(ctx.db, token, claims))) throw invalidRefresh(ctx);
      const user = await ctx.service.loadUser(ctx.db, claims.sub);
      if (!user || !user.is_active) throw invalidRefresh(ctx);
      return tokensFor(ctx, user);
    },

    async logout(ctx: HookContext<{ body: Body }>): Promise<undefined> {
      // Credentials in the request or the answer: never kept with an Idempotency-Key.
      answerNotKept(ctx.req);
      // Cleared whatever the answer: a browser logging out with a spent or expired token is logged out too.
      if (cookies) clearAuthCookies(ctx.req, ctx.service.settings, cookies);
      const token = presentedRefreshToken(ctx);
      const claims = refreshClaims(ctx, token);
      if (!(await consumeRefreshToken(ctx.db, token, claims))) throw invalidRefresh(ctx);
      return undefined;
    },

    me({ user }: RequestContext): Record<string, unknown> {
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
      await ctx.db(table).where(pk, key).update({ password: await hashPassword(next) });
      return undefined;
    },
  };
}

export type AccountHandlers = ReturnType<typeof accountHandlers>;
