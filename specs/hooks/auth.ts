// The blog's authentication endpoints: register, login, refresh and me.
// User-owned: `svcgen build` never touches this file; specs/service.yaml names these handlers.
import {
  AuthError,
  hashPassword,
  now,
  SerializeError,
  TokenError,
  verifyPassword,
  type AuthUser,
  type HookContext,
  type RequestContext,
  type TokenClaims,
} from '../../runtime';
import type { LoginSchema, RefreshSchema, RegisterSchema, TokenResponse, UserResponse } from '../../generated/endpoints';

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

export async function register(ctx: HookContext<{ body: RegisterSchema }>): Promise<TokenResponse> {
  const { body } = ctx;
  if (await ctx.db('users').where({ username: body.username }).first('id')) {
    throw new SerializeError({ username: 'Username already taken' });
  }
  if (await ctx.db('users').where({ email: body.email }).first('id')) {
    throw new SerializeError({ email: 'Email already registered' });
  }
  const [row] = await ctx
    .db('users')
    .insert({
      username: body.username,
      email: body.email,
      password: await hashPassword(body.password),
      first_name: body.first_name,
      last_name: body.last_name,
      is_active: true,
      is_staff: false,
      is_superuser: false,
      date_joined: now(),
    })
    .returning('id');
  return tokensFor(ctx, { id: row.id, username: body.username, email: body.email, is_staff: false });
}

export async function login(ctx: HookContext<{ body: LoginSchema }>): Promise<TokenResponse> {
  const { body } = ctx;
  const user = await ctx.db('users').where({ username: body.username }).first();
  // An unknown user still costs one hash comparison, so timing does not reveal which names exist.
  const ok = await verifyPassword(body.password, user?.password);
  if (!user || !ok) throw new AuthError({ detail: 'Invalid credentials' });
  if (!user.is_active) throw new AuthError({ detail: 'Account is disabled' });
  return tokensFor(ctx, { id: user.id, username: user.username, email: user.email, is_staff: Boolean(user.is_staff) });
}

export async function refresh(ctx: HookContext<{ body: RefreshSchema }>): Promise<TokenResponse> {
  const { body } = ctx;
  let claims: TokenClaims;
  try {
    claims = ctx.service.tokens.verify(body.refresh_token);
  } catch (err) {
    if (err instanceof TokenError && err.reason === 'expired') throw new AuthError({ detail: 'Refresh token expired' });
    throw new AuthError({ detail: 'Invalid refresh token' });
  }
  if (claims.type !== 'refresh') throw new AuthError({ detail: 'Invalid token type' });
  const user = await ctx.service.loadUser(ctx.db, claims.sub);
  if (!user || !user.is_active) throw new AuthError({ detail: 'Invalid refresh token' });
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
