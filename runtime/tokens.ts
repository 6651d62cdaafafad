/**
 * JWT access and refresh tokens, signed RS256 with an RSA private key and verified with the
 * public key. Only RS256 is accepted: the token's own `alg` header is never trusted.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import jwt from 'jsonwebtoken';
import { ConfigurationError, type Settings } from './settings';

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
export function loadKeys(options: KeyOptions): KeyPair {
  const { privateKeyFile, publicKeyFile } = options;
  if (privateKeyFile || publicKeyFile) {
    if (!privateKeyFile || !publicKeyFile) {
      throw new ConfigurationError('set both SVC_JWT_PRIVATE_KEY_FILE and SVC_JWT_PUBLIC_KEY_FILE, or neither');
    }
    return { privateKey: fs.readFileSync(privateKeyFile, 'utf8'), publicKey: fs.readFileSync(publicKeyFile, 'utf8') };
  }
  if (options.production) {
    throw new ConfigurationError(
      'NODE_ENV is production but no JWT keys are configured: set SVC_JWT_PRIVATE_KEY_FILE and SVC_JWT_PUBLIC_KEY_FILE to PEM files',
    );
  }
  const privatePath = path.join(options.devKeysDir, 'jwt-private.pem');
  const publicPath = path.join(options.devKeysDir, 'jwt-public.pem');
  if (fs.existsSync(privatePath) && fs.existsSync(publicPath)) {
    return { privateKey: fs.readFileSync(privatePath, 'utf8'), publicKey: fs.readFileSync(publicPath, 'utf8') };
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

export function generateKeyPair(): KeyPair {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKey, publicKey };
}

export interface TokenClaims extends jwt.JwtPayload {
  sub: string;
  type?: string;
}

export type TokenFailure = 'expired' | 'invalid';

export class TokenError extends Error {
  constructor(readonly reason: TokenFailure, message: string) {
    super(message);
    this.name = 'TokenError';
  }
}

export class TokenService {
  /**
   * @param extraClaims user fields copied into every access token `issueFor` signs (the service
   *   file's `auth.extra_claims`).
   */
  constructor(
    private readonly keys: KeyPair,
    private readonly settings: Settings,
    readonly extraClaims: readonly string[] = [],
  ) {}

  /** An access token for a user, with the configured extra claims taken from the user's fields. */
  issueFor(user: { id: string | number } & Record<string, unknown>): string {
    return this.issueAccess(user.id, Object.fromEntries(this.extraClaims.map((name) => [name, user[name]])));
  }

  get accessLifetime(): number {
    return this.settings.SVC_ACCESS_TOKEN_LIFETIME;
  }

  /** An access token: sub, iss, aud, iat, exp, a unique jti and the optional extra claims. */
  issueAccess(userId: string | number, extraClaims: Record<string, unknown> = {}): string {
    const { sub: _s, iss: _i, aud: _a, iat: _t, exp: _e, type: _y, jti: _j, ...extra } = extraClaims;
    return jwt.sign(extra, this.keys.privateKey, {
      algorithm: 'RS256',
      jwtid: crypto.randomUUID(),
      subject: String(userId),
      issuer: this.settings.SVC_JWT_ISSUER,
      audience: this.settings.SVC_JWT_AUDIENCE,
      expiresIn: this.settings.SVC_ACCESS_TOKEN_LIFETIME,
    });
  }

  /** A refresh token: `type: "refresh"` and no extra claims. */
  issueRefresh(userId: string | number): string {
    return jwt.sign({ type: 'refresh' }, this.keys.privateKey, {
      algorithm: 'RS256',
      jwtid: crypto.randomUUID(),
      subject: String(userId),
      issuer: this.settings.SVC_JWT_ISSUER,
      audience: this.settings.SVC_JWT_AUDIENCE,
      expiresIn: this.settings.SVC_REFRESH_TOKEN_LIFETIME,
    });
  }

  /** Signature (RS256 only), issuer, audience, expiry and a non-empty `sub`. */
  verify(token: string): TokenClaims {
    let payload: string | jwt.JwtPayload;
    try {
      payload = jwt.verify(token, this.keys.publicKey, {
        algorithms: ['RS256'],
        issuer: this.settings.SVC_JWT_ISSUER,
        audience: this.settings.SVC_JWT_AUDIENCE,
      });
    } catch (err) {
      if (err instanceof jwt.TokenExpiredError) throw new TokenError('expired', 'token expired');
      throw new TokenError('invalid', err instanceof Error ? err.message : 'invalid token');
    }
    if (typeof payload !== 'object' || typeof payload.sub !== 'string' || payload.sub === '') {
      throw new TokenError('invalid', 'token has no subject');
    }
    return payload as TokenClaims;
  }

  /** An access token: valid and not a refresh token. */
  verifyAccess(token: string): TokenClaims {
    const claims = this.verify(token);
    if (claims.type !== undefined) throw new TokenError('invalid', 'not an access token');
    return claims;
  }
}
