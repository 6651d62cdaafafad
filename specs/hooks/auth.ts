// The blog's authentication endpoints: register, login, refresh and me.
// User-owned: `svcgen build` never touches this file; specs/service.yaml names these handlers.
//
// - register normalises the username with NFKC (as Django does: a fullwidth `ａｌｉｃｅ` is `alice`),
//   applies the credentials policy (hooks/credentials.ts: 422 in the seed's shape), then
//   the seed's friendly checks (400 {"username": "Username already taken"} / {"email": "Email
//   already registered"}); a registration that loses a race to another one at the insert gets the
//   same 400 as if it had come second.
// - login looks the NFKC form of the username up (and throttles it); it refuses a password bcrypt would cut (422, whether or not the user exists), is throttled
//   per username and per client address (429, runtime/auth/throttle.ts), and answers the seed's 401s.
// - refresh accepts each refresh token once (runtime/auth/tokens.ts, consumeRefreshToken).
// - every 401 carries `WWW-Authenticate: Bearer`, with `error="invalid_token"` and a description
//   when a token was refused.
import {
  consumeRefreshToken,
  hashPassword,
  isConstraintViolation,
  loginThrottle,
  normalizeUsername,
  now,
  passwordFitsBcrypt,
  passwordTooLongEntry,
  RequestValidationError,
  SerializeError,
  TokenError,
  unauthorized,
  verifyPassword,
  type AuthUser,
  type Db,
  type HookContext,
  type RequestContext,
  type TokenClaims,
} from '@svcgen/runtime';
import type { LoginSchema, RefreshSchema, RegisterSchema, TokenResponse, UserResponse } from '../../generated/endpoints';
import { credentialProblems } from './credentials';

interface TokenSubject {
  id: number;
  username: string;
  email: string;
  is_staff: boolean;
}

/** An access token carrying the extra claims of service.yaml (username, email, is_staff), and a refresh token. */
function tokensFor(ctx: RequestContext, user: TokenSubject): TokenResponse {
  const tokens = ctx.service.tokens;
  return {
    access_token: tokens.issueFor({ ...user }),
    refresh_token: tokens.issueRefresh(user.id),
    token_type: 'bearer',
    expires_in: tokens.accessLifetime,
  };
}

/** The seed's friendly answers to a username or an email that is already taken (username first). */
async function checkAvailable(db: Db, body: RegisterSchema): Promise<void> {
  if (await db('users').where({ username: body.username }).first('id')) {
    throw new SerializeError({ username: 'Username already taken' });
  }
  if (await db('users').where({ email: body.email }).first('id')) {
    throw new SerializeError({ email: 'Email already registered' });
  }
}

export async function register(ctx: HookContext<{ body: RegisterSchema }>): Promise<TokenResponse> {
  // Checked, compared and stored in its NFKC form.
  const body = { ...ctx.body, username: normalizeUsername(ctx.body.username) };
  const problems = credentialProblems(body.username, body.password);
  if (problems.length > 0) throw new RequestValidationError(problems);
  await checkAvailable(ctx.db, body);
  const values = {
    username: body.username,
    email: body.email,
    password: await hashPassword(body.password),
    first_name: body.first_name,
    last_name: body.last_name,
    is_active: true,
    is_staff: false,
    is_superuser: false,
    date_joined: now(),
  };
  let id: number;
  try {
    // A savepoint: when a concurrent registration committed the same username or email after the
    // check above, the unique constraint fails here, and the transaction stays usable to look again.
    id = await ctx.db.transaction(async (savepoint) => {
      const [row] = await savepoint('users').insert(values).returning('id');
      return Number(row.id);
    });
  } catch (err) {
    if (!isConstraintViolation(err)) throw err;
    await checkAvailable(ctx.db, body);
    throw err;
  }
  return tokensFor(ctx, { id, username: body.username, email: body.email, is_staff: false });
}

export async function login(ctx: HookContext<{ body: LoginSchema }>): Promise<TokenResponse> {
  const { req } = ctx;
  // The form usernames are stored in: `ａｌｉｃｅ` logs in as `alice`, and shares its throttle.
  const body = { ...ctx.body, username: normalizeUsername(ctx.body.username) };
  // No stored password is longer (registration refuses it), and bcrypt would compare a prefix:
  // refused before any lookup, so the answer says nothing about the user.
  if (!passwordFitsBcrypt(body.password)) throw new RequestValidationError([passwordTooLongEntry()]);
  const attempt = await loginThrottle(ctx.service).begin(req, body.username);
  let user: Record<string, any> | undefined;
  let ok: boolean;
  try {
    user = await ctx.db('users').where({ username: body.username }).first();
    // An unknown user still costs one hash comparison, so timing does not reveal which names exist.
    ok = await verifyPassword(body.password, user?.password);
  } catch (err) {
    await attempt.abandoned();
    throw err;
  }
  // A failure stays counted against the username and the address.
  if (!user || !ok) throw unauthorized(req, { detail: 'Invalid credentials' });
  if (!user.is_active) {
    await attempt.abandoned();
    throw unauthorized(req, { detail: 'Account is disabled' });
  }
  await attempt.succeeded();
  return tokensFor(ctx, { id: user.id, username: user.username, email: user.email, is_staff: Boolean(user.is_staff) });
}

export async function refresh(ctx: HookContext<{ body: RefreshSchema }>): Promise<TokenResponse> {
  const { body, req } = ctx;
  const invalid = () => unauthorized(req, { detail: 'Invalid refresh token' }, { error: 'invalid_token', description: 'The refresh token is invalid' });
  let claims: TokenClaims;
  try {
    claims = ctx.service.tokens.verify(body.refresh_token);
  } catch (err) {
    if (err instanceof TokenError && err.reason === 'expired') {
      throw unauthorized(req, { detail: 'Refresh token expired' }, { error: 'invalid_token', description: 'The refresh token expired' });
    }
    throw invalid();
  }
  if (claims.type !== 'refresh') {
    throw unauthorized(req, { detail: 'Invalid token type' }, { error: 'invalid_token', description: 'The token is not a refresh token' });
  }
  // Single use: a second exchange of the same token, even a concurrent one, is refused.
  if (!(await consumeRefreshToken(ctx.db, body.refresh_token, claims))) throw invalid();
  const user = await ctx.service.loadUser(ctx.db, claims.sub);
  if (!user || !user.is_active) throw invalid();
  return tokensFor(ctx, { id: Number(user.id), username: String(user.username), email: String(user.email), is_staff: user.is_staff });
}

export function me({ user: caller }: RequestContext): UserResponse {
  const user = caller as AuthUser;
  return {
    id: Number(user.id),
    username: String(user.username),
    email: String(user.email),
    first_name: String(user.first_name),
    last_name: String(user.last_name),
  };
}
