/**
 * JWT access and refresh tokens, signed RS256 with an RSA private key and verified with the
 * public key, through jose. Only RS256 is accepted: the token's own `alg` header is never trusted.
 * Written here is only what jose's checks lack: a required `exp`, a non-empty `sub`, a leeway for
 * `iat` alone, and the cache that spares a token's RSA check on every request.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Db } from '../db/connection';
import { insertReturning } from '../db/inserts';
import { TOKEN_REVOCATIONS_TABLE, USED_REFRESH_TOKENS_TABLE } from '../db/migrations';
import { ConfigurationError, type Settings } from '../core/settings';

// jose is an ES module only. This CommonJS code requires it, which Node does from 20.19 on, rather
// than importing it: projects type-check these sources with `module: node16`, which refuses that.
const jose: typeof import('jose', { with: { 'resolution-mode': 'import' } }) = require('jose');

export interface KeyPair {
  privateKey: string;
  publicKey: string;
}

export interface KeyOptions {
  privateKeyFile?: string;
  publicKeyFile?: string;
  /** Where a development pair is generated and reused when no files are given. */
  devKeysDir: string;
  production: boolean;
  warn?: (message: string) => void;
}

/**
 * Keys from `SVC_JWT_PRIVATE_KEY_FILE` / `SVC_JWT_PUBLIC_KEY_FILE`; without them, outside production,
 * a 2048-bit pair generated once into `devKeysDir` and reused. In production, missing keys stop the start.
 */
export async function loadKeys(options: KeyOptions): Promise<KeyPair> {
  const { privateKeyFile, publicKeyFile } = options;
  if (privateKeyFile || publicKeyFile) {
    if (!privateKeyFile || !publicKeyFile) {
      throw new ConfigurationError('set both SVC_JWT_PRIVATE_KEY_FILE and SVC_JWT_PUBLIC_KEY_FILE, or neither');
    }
    return checkKeyPair(
      {
        privateKey: readKeyFile('SVC_JWT_PRIVATE_KEY_FILE', privateKeyFile),
        publicKey: readKeyFile('SVC_JWT_PUBLIC_KEY_FILE', publicKeyFile),
      },
      [`SVC_JWT_PRIVATE_KEY_FILE (${privateKeyFile})`, `SVC_JWT_PUBLIC_KEY_FILE (${publicKeyFile})`],
    );
  }
  if (options.production) {
    throw new ConfigurationError(
      'NODE_ENV is production but no JWT keys are configured: set SVC_JWT_PRIVATE_KEY_FILE and SVC_JWT_PUBLIC_KEY_FILE to PEM files',
    );
  }
  const privatePath = path.join(options.devKeysDir, 'jwt-private.pem');
  const publicPath = path.join(options.devKeysDir, 'jwt-public.pem');
  if (fs.existsSync(privatePath) && fs.existsSync(publicPath)) {
    return checkKeyPair(
      { privateKey: readKeyFile('the development key', privatePath), publicKey: readKeyFile('the development key', publicPath) },
      [privatePath, publicPath],
    );
  }
  const pair = generateKeyPair();
  fs.mkdirSync(options.devKeysDir, { recursive: true });
  fs.writeFileSync(privatePath, pair.privateKey, { mode: 0o600 });
  fs.writeFileSync(publicPath, pair.publicKey);
  (options.warn ?? console.warn)(
    `generated a development RSA key pair in ${options.devKeysDir}; set SVC_JWT_PRIVATE_KEY_FILE and SVC_JWT_PUBLIC_KEY_FILE in production`,
  );
  return pair;
}

/** A key file's text; a file that cannot be read is a configuration error naming the setting and the path. */
function readKeyFile(setting: string, file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (err) {
    // Node's "ENOENT: no such file or directory, open '<file>'", without the path said already.
    throw new ConfigurationError(`${setting}: cannot read ${file}: ${oneLine(err).replace(/, \w+ '.*'$/, '')}`);
  }
}

function oneLine(err: unknown): string {
  // Duck-typed: errors of Node's own modules may come from another realm (a test's VM context).
  const message = typeof (err as { message?: unknown } | null)?.message === 'string' ? (err as { message: string }).message : String(err);
  return message.split('\n')[0].trim() || 'unknown error';
}

/**
 * The keys checked as a pair, as the service will use them: each parses (PEM or DER-in-PEM), each
 * is an RSA key, the private one really is private, and a probe token signed RS256 with the
 * private key verifies with the public one, both through jose as the service will sign and verify. Keys of two different pairs would start a service whose every
 * token is refused, a public key in place of the private one a service whose every login fails:
 * either is a configuration error at start, naming the files (`names`), in one line.
 */
export async function checkKeyPair(
  keys: KeyPair,
  names: readonly [string, string] = ['the private key', 'the public key'],
): Promise<KeyPair> {
  const [privateName, publicName] = names;
  let privateKey: crypto.KeyObject;
  let publicKey: crypto.KeyObject;
  try {
    privateKey = crypto.createPrivateKey(keys.privateKey);
  } catch (err) {
    const hint = isPublicKey(keys.privateKey) ? ' (it holds a public key)' : '';
    throw new ConfigurationError(`${privateName} is not a PEM private key${hint}: ${oneLine(err)}`);
  }
  try {
    publicKey = crypto.createPublicKey(keys.publicKey);
  } catch (err) {
    throw new ConfigurationError(`${publicName} is not a PEM public key: ${oneLine(err)}`);
  }
  for (const [name, key] of [
    [privateName, privateKey],
    [publicName, publicKey],
  ] as const) {
    if (key.asymmetricKeyType !== 'rsa')
      throw new ConfigurationError(`${name} is a ${key.asymmetricKeyType ?? 'non-RSA'} key; RS256 needs an RSA key`);
  }
  let probe: string;
  try {
    probe = await new jose.SignJWT({ probe: crypto.randomUUID() }).setProtectedHeader({ alg: 'RS256' }).sign(privateKey);
  } catch (err) {
    throw new ConfigurationError(`${privateName} cannot sign RS256: ${oneLine(err)}`);
  }
  try {
    await jose.jwtVerify(probe, publicKey, { algorithms: ['RS256'] });
  } catch {
    throw new ConfigurationError(
      `${privateName} and ${publicName} are not a pair: a probe signed with the private key does not verify with the public key`,
    );
  }
  return keys;
}

function isPublicKey(text: string): boolean {
  try {
    crypto.createPublicKey(text);
    return true;
  } catch {
    return false;
  }
}

export function generateKeyPair(): KeyPair {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKey, publicKey };
}

/** How many tokens that passed every check a `TokenService` keeps (see `verifiedTokens`). */
export const VERIFIED_TOKENS_KEPT = 1000;

/** How often, at most, a process reads again whether a user's tokens were ended (`userTokensEndedFor`). */
export const USER_REVOCATIONS_READ_EVERY_MS = 1000;
/** How many users' answers a process keeps. */
const USER_REVOCATIONS_KEPT = 10_000;

/** The longest token kept: 1,000 of them hold at most 4 MB. */
export const VERIFIED_TOKEN_MAX_LENGTH = 4096;

/** The claims of a verified token: the registered ones, and any other a token carries. */
export interface TokenClaims {
  sub: string;
  iss?: string;
  aud?: string | string[];
  exp?: number;
  nbf?: number;
  iat?: number;
  jti?: string;
  type?: string;
  [claim: string]: any;
}

export type TokenFailure = 'expired' | 'invalid';

export class TokenError extends Error {
  constructor(
    readonly reason: TokenFailure,
    message: string,
  ) {
    super(message);
    this.name = 'TokenError';
  }
}

export class TokenService {
  /** The keys parsed once: given as PEM text, they would be parsed again for every token signed or verified. */
  private readonly privateKey: crypto.KeyObject;
  private readonly publicKey: crypto.KeyObject;
  /** Whether the public key is an RSA key: RS256 verifies with nothing else. */
  private readonly rsaKey: boolean;
  /**
   * The last tokens, by their exact text, that passed every check of `verify`, with their `exp`:
   * for the same text and key the signature check always gives the same answer, and a client
   * sends its access token with every request until it expires, so the signature check (an RSA
   * verification: a sixth of the CPU of a create) is made once per token. Of the checks against
   * the clock only expiry can turn (`nbf` and `iat` only pass more as time goes on): it runs on
   * every request, on claims decoded anew each time; a refused token is never kept.
   */
  private readonly verifiedTokens = new Map<string, number>();

  /**
   * @param extraClaims user fields copied into every access token `issueFor` signs (the service
   *   file's `auth.extra_claims`).
   */
  constructor(
    private readonly keys: KeyPair,
    private readonly settings: Settings,
    readonly extraClaims: readonly string[] = [],
  ) {
    this.privateKey = crypto.createPrivateKey(keys.privateKey);
    this.publicKey = crypto.createPublicKey(keys.publicKey);
    this.rsaKey = this.publicKey.asymmetricKeyType === 'rsa';
  }

  /** The key of the CSRF tokens' signatures, derived once from the signing key (`csrfKey`). */
  private csrfSecret?: Buffer;

  /**
   * Per user (`sub`), the second up to which their tokens were ended (a password change, a logout
   * everywhere; -1: never),
   * as last read from the database and when: read at most once a second per user and process, so
   * an access token is refused within a second of the change on every instance, and within the
   * request on the instance that made it (`noteUserTokensEnded`).
   */
  private readonly userTokensEnded = new Map<string, { until: number; readAt: number }>();

  /** Whether the tokens of `claims`' user issued at its `iat` were ended since (a password change). */
  async userTokensEndedFor(db: Db, claims: TokenClaims): Promise<boolean> {
    const iat = typeof claims.iat === 'number' ? claims.iat : 0;
    return iat <= (await this.userTokensEndedUntil(db, claims.sub));
  }

  /** The second up to which `sub`'s tokens were ended (-1: never), read at most once a second. */
  private async userTokensEndedUntil(db: Db, sub: string): Promise<number> {
    const now = Date.now();
    let known = this.userTokensEnded.get(sub);
    if (!known || now - known.readAt >= USER_REVOCATIONS_READ_EVERY_MS) {
      const row = (await db(TOKEN_REVOCATIONS_TABLE).select('issued_before').where('key', `user:${sub}`).first()) as
        { issued_before: number | string } | undefined;
      known = { until: row ? Number(row.issued_before) : -1, readAt: now };
      if (this.userTokensEnded.size >= USER_REVOCATIONS_KEPT)
        this.userTokensEnded.delete(this.userTokensEnded.keys().next().value as string);
      this.userTokensEnded.delete(sub);
      this.userTokensEnded.set(sub, known);
    }
    return known.until;
  }

  /**
   * Waits, when the user's tokens were ended within this very second (a password change, a logout
   * everywhere), for the next second: a token's `iat` counts whole seconds, so one issued now would
   * be refused with the ended ones. At most a second, once, right after such a change.
   */
  async waitPastUserTokensEnded(db: Db, userId: string | number): Promise<void> {
    const wait = Math.min(1000, ((await this.userTokensEndedUntil(db, String(userId))) + 1) * 1000 - Date.now());
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }

  /** What this process knows at once of a user whose tokens were just ended up to `until` (seconds). */
  noteUserTokensEnded(userId: string | number, until: number): void {
    this.userTokensEnded.set(String(userId), { until, readAt: Date.now() });
  }

  /**
   * The key that signs the CSRF tokens of cookie authentication (auth/cookies.ts): derived from the
   * private signing key with HKDF-SHA256 under its own label, so there is no other secret to
   * configure, and neither the key nor a token signature reveals anything of the signing key.
   */
  csrfKey(): Buffer {
    this.csrfSecret ??= Buffer.from(crypto.hkdfSync('sha256', Buffer.from(this.keys.privateKey), 'svcgen', 'csrftoken signature v1', 32));
    return this.csrfSecret;
  }

  /** An access token for a user, with the configured extra claims taken from the user's fields. */
  issueFor(user: { id: string | number } & Record<string, unknown>): Promise<string> {
    return this.issueAccess(user.id, Object.fromEntries(this.extraClaims.map((name) => [name, user[name]])));
  }

  get accessLifetime(): number {
    return this.settings.SVC_ACCESS_TOKEN_LIFETIME;
  }

  /** An access token: sub, iss, aud, iat, exp, a unique jti and the optional extra claims. */
  issueAccess(userId: string | number, extraClaims: Record<string, unknown> = {}): Promise<string> {
    const { sub: _s, iss: _i, aud: _a, iat: _t, exp: _e, type: _y, jti: _j, ...extra } = extraClaims;
    return this.sign(extra, crypto.randomUUID(), userId, this.settings.SVC_ACCESS_TOKEN_LIFETIME);
  }

  /**
   * A refresh token: `type: "refresh"` and no extra claims. Its `jti` names its family (the refresh
   * tokens one login led to, each exchanged for the next: a new family unless `family` is given)
   * before a dot, then the token itself: `<family>.<id>`.
   */
  issueRefresh(userId: string | number, family: string = crypto.randomUUID()): Promise<string> {
    return this.sign(
      { type: 'refresh' },
      `${family}.${crypto.randomBytes(16).toString('base64url')}`,
      userId,
      this.settings.SVC_REFRESH_TOKEN_LIFETIME,
    );
  }

  /** `claims` signed RS256, with `jti`, `sub`, `iss`, `aud` (those configured), `iat` now and `exp` `lifetime` seconds later. */
  private sign(claims: Record<string, unknown>, jti: string, userId: string | number, lifetime: number): Promise<string> {
    const iat = Math.floor(Date.now() / 1000);
    const jwt = new jose.SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT' })
      .setIssuedAt(iat)
      .setExpirationTime(iat + lifetime);
    const { SVC_JWT_ISSUER: issuer, SVC_JWT_AUDIENCE: audience } = this.settings;
    if (audience) jwt.setAudience(audience);
    if (issuer) jwt.setIssuer(issuer);
    return jwt.setSubject(String(userId)).setJti(jti).sign(this.privateKey);
  }

  /**
   * Signature (RS256 only), issuer, audience, a numeric `exp` that has not passed (a token without
   * one would never expire: refused, as Django's simplejwt does), an `nbf`, when present, that has
   * passed, an `iat`, when present, no more than `SVC_JWT_LEEWAY` seconds in the future, and a
   * non-empty `sub`. The leeway is for `iat` only: expiry is exact, by this server's clock.
   * jose's `jwtVerify` checks the form, the algorithm, the signature and the registered claims;
   * `sub` and the bound on `iat` are checked here. A token that passed once (see `verifiedTokens`)
   * has its claims decoded again and only its expiry checked.
   */
  async verify(token: string): Promise<TokenClaims> {
    const now = Math.floor(Date.now() / 1000);
    if (typeof token !== 'string') throw new TokenError('invalid', 'jwt malformed');
    const exp = this.verifiedTokens.get(token);
    if (exp !== undefined) {
      if (now >= exp) throw new TokenError('expired', 'token expired');
      return jose.decodeJwt(token) as TokenClaims;
    }
    if (!this.rsaKey) throw new TokenError('invalid', 'the public key is not an RSA key');
    const { SVC_JWT_ISSUER: issuer, SVC_JWT_AUDIENCE: audience } = this.settings;
    let payload: TokenClaims;
    try {
      ({ payload } = await jose.jwtVerify<TokenClaims>(token, this.publicKey, {
        algorithms: ['RS256'],
        issuer: issuer || undefined,
        audience: audience || undefined,
        requiredClaims: ['exp'],
        currentDate: new Date(now * 1000),
      }));
    } catch (err) {
      throw tokenErrorOf(err);
    }
    if (typeof payload.sub !== 'string' || payload.sub === '') throw new TokenError('invalid', 'token has no subject');
    if (typeof payload.iat === 'number' && payload.iat > now + this.settings.SVC_JWT_LEEWAY) {
      throw new TokenError('invalid', 'token issued in the future');
    }
    this.remember(token, payload.exp!);
    return payload;
  }

  /**
   * Adds `token` to `verifiedTokens`, the oldest going first beyond `VERIFIED_TOKENS_KEPT`; one
   * longer than `VERIFIED_TOKEN_MAX_LENGTH` is not kept. What is kept is a copy of the text: the
   * token as received is a slice of the request's header, and would keep all of it.
   */
  private remember(token: string, exp: number): void {
    if (token.length > VERIFIED_TOKEN_MAX_LENGTH) return;
    if (this.verifiedTokens.size >= VERIFIED_TOKENS_KEPT) this.verifiedTokens.delete(this.verifiedTokens.keys().next().value as string);
    this.verifiedTokens.set(Buffer.from(token, 'latin1').toString('latin1'), exp);
  }

  /** An access token: valid and not a refresh token. */
  async verifyAccess(token: string): Promise<TokenClaims> {
    const claims = await this.verify(token);
    if (claims.type !== undefined) throw new TokenError('invalid', 'not an access token');
    return claims;
  }
}

/** The TokenError of a refusal of jose's `jwtVerify`: `expired` for an expiry that passed, `invalid` for anything else. */
function tokenErrorOf(err: unknown): TokenError {
  if (err instanceof jose.errors.JWTExpired) return new TokenError('expired', 'token expired');
  if (err instanceof jose.errors.JWTClaimValidationFailed && err.claim === 'exp' && err.reason === 'missing') {
    return new TokenError('invalid', 'token has no expiry');
  }
  if (err instanceof jose.errors.JWSSignatureVerificationFailed) return new TokenError('invalid', 'invalid signature');
  return new TokenError('invalid', err instanceof Error ? err.message : 'invalid token');
}

/**
 * The id a used refresh token is remembered by: its `jti`; for a token without one (this runtime
 * always sets it, but any token signed with the key verifies) a digest of its signature bytes,
 * decoded, so that another base64url spelling of the same signature is the same token.
 */
export function refreshTokenId(token: string, claims: TokenClaims): string {
  if (typeof claims.jti === 'string' && claims.jti.length > 0 && claims.jti.length <= 64) return claims.jti;
  const signature = Buffer.from(token.split('.')[2] ?? '', 'base64url');
  return `sig:${crypto.createHash('sha256').update(signature).digest('base64url')}`;
}

/** How often, at most, a process deletes the ids of refresh tokens that have expired. */
export const USED_REFRESH_TOKENS_PURGE_INTERVAL_MS = 60_000;
let nextPurgeAt = 0;

/** Deletes the ids of used refresh tokens that expired before `nowSeconds`; returns how many. */
export async function purgeUsedRefreshTokens(db: Db, nowSeconds = Math.floor(Date.now() / 1000)): Promise<number> {
  await db(TOKEN_REVOCATIONS_TABLE).where('expires_at', '<', nowSeconds).delete();
  return db(USED_REFRESH_TOKENS_TABLE).where('expires_at', '<', nowSeconds).delete();
}

/**
 * Marks a verified refresh token as used: true the first time, false ever after. The id is kept in
 * the database (`svc_used_refresh_tokens`, created by the runtime's migrations) until the token
 * expires, so the answer holds across restarts and between instances sharing the database. One
 * insert arbitrated by the primary key (`ON CONFLICT DO NOTHING`): of concurrent uses of one token,
 * exactly one inserts the row; the others wait for its transaction and then insert nothing (or, if
 * it rolls back, one of them gets it). The transaction stays usable either way. At most once a
 * minute per process the ids of expired tokens are deleted first. Claims without a numeric `exp`
 * (which `verify` refuses) throw a TokenError.
 */
export async function consumeRefreshToken(db: Db, token: string, claims: TokenClaims): Promise<boolean> {
  const now = Date.now();
  if (now >= nextPurgeAt) {
    nextPurgeAt = now + USED_REFRESH_TOKENS_PURGE_INTERVAL_MS;
    await purgeUsedRefreshTokens(db, Math.floor(now / 1000));
  }
  // `verify` refuses a token without a numeric `exp` (one would never expire); its id is kept until then.
  const exp = claims.exp;
  if (typeof exp !== 'number' || !Number.isFinite(exp)) throw new TokenError('invalid', 'token has no expiry');
  const expiresAt = Math.min(Math.ceil(exp), Number.MAX_SAFE_INTEGER);
  const row = { jti: refreshTokenId(token, claims), expires_at: expiresAt };
  const inserted = await insertReturning(db, db(USED_REFRESH_TOKENS_TABLE).insert(row).onConflict('jti').ignore(), row, ['jti']);
  return inserted.length === 1;
}

/** The family of a refresh token: its `jti` before the dot, when it has one (tokens of earlier releases have none). */
export function refreshFamily(claims: TokenClaims): string | undefined {
  const jti = claims.jti;
  if (typeof jti !== 'string' || jti.length > 64) return undefined;
  const dot = jti.indexOf('.');
  return dot > 0 ? jti.slice(0, dot) : undefined;
}

/** The revocation keys a refresh token is held to: its family's, and its user's. */
function revocationKeys(claims: TokenClaims): string[] {
  const fam = refreshFamily(claims);
  return [...(fam ? [`fam:${fam}`] : []), `user:${claims.sub}`];
}

/**
 * Whether a verified refresh token was ended before it expired: its family revoked (a token of it
 * was used twice), or every token of its user (the password changed) issued at or before it. One
 * primary-key lookup; an `iat`-less token counts as issued at the start of time.
 */
export async function refreshTokenRevoked(db: Db, claims: TokenClaims): Promise<boolean> {
  const iat = typeof claims.iat === 'number' ? claims.iat : 0;
  const rows: { issued_before: number | string }[] = await db(TOKEN_REVOCATIONS_TABLE)
    .select('issued_before')
    .whereIn('key', revocationKeys(claims));
  return rows.some((r) => iat <= Number(r.issued_before));
}

/**
 * Ends refresh tokens before they expire: those of `key` issued up to `until` (seconds; this second
 * included). The row is kept until every token it ends has expired (`lifetime` seconds after
 * `until`); a later revocation of the same key moves both forward.
 */
async function revokeRefreshTokens(db: Db, key: string, until: number, lifetime: number): Promise<void> {
  await db(TOKEN_REVOCATIONS_TABLE)
    .insert({ key, issued_before: until, expires_at: until + lifetime })
    .onConflict('key')
    .merge(['issued_before', 'expires_at']);
}

/**
 * Ends every token of a user issued up to now, this second included (a password change): refresh
 * tokens at their next use, access tokens at their next request (`TokenService.userTokensEndedFor`).
 * Returns that second.
 */
export async function revokeUserTokens(db: Db, userId: string | number, lifetime: number): Promise<number> {
  const now = Math.floor(Date.now() / 1000);
  await revokeRefreshTokens(db, `user:${String(userId)}`, now, lifetime);
  return now;
}

/**
 * Ends a refresh token's whole family, for as long as any of its tokens can live: a token of it was
 * used twice, so one of the two holders is a thief, and neither chain goes on (RFC 9700 §4.14.2).
 * A token without a family (issued by an earlier release) has nothing to end.
 */
export async function revokeRefreshFamily(db: Db, claims: TokenClaims, lifetime: number): Promise<void> {
  const fam = refreshFamily(claims);
  if (!fam) return;
  const now = Math.floor(Date.now() / 1000);
  await revokeRefreshTokens(db, `fam:${fam}`, now + lifetime, lifetime);
}
