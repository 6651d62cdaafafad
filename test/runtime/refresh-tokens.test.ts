/**
 * Used refresh tokens in the database, on SQLite and PostgreSQL: the runtime's migration creates
 * the table, a token is consumed once (even by concurrent transactions), expired ids are purged,
 * a token without `jti` is known by its signature, whatever its base64url spelling, and tokens
 * without `exp` or issued in the future are refused.
 */
import { decodeJwt } from 'jose';
import {
  consumeRefreshToken,
  loadSettings,
  migrateLatest,
  migrateRollback,
  TokenError,
  TokenService,
  type Db,
  type TokenClaims,
} from '../../runtime';
import { purgeUsedRefreshTokens, refreshTokenId } from '../../runtime/auth/tokens';
import { USED_REFRESH_TOKENS_TABLE } from '../../runtime/db/migrations';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';
import { signRs256Raw } from '../support/blog-fixtures';
import { testKeys } from '../support/keys';

const { migrations } = require('../../generated/migrations');
/** The blog's migrations, all of which every service database here has had. */
const migrationNames = (migrations as { name: string }[]).map((m) => m.name);
const { DEFAULT_SETTINGS } = require('../../generated/settings');

describe.each(DIALECTS)('used refresh tokens (%s)', (dialect) => {
  let database: TestDatabase;
  let db: Db;
  const tokens = new TokenService(testKeys(), loadSettings(DEFAULT_SETTINGS, {}));

  beforeAll(async () => {
    database = await createDatabase(dialect);
    db = database.db;
    expect(await migrateLatest(db, migrations)).toEqual(migrationNames);
  });
  afterAll(() => database.drop());

  it('the runtime migration creates the table apart from the service migrations, once', async () => {
    expect(await db.schema.hasTable(USED_REFRESH_TOKENS_TABLE)).toBe(true);
    expect(await db('svc_migrations').pluck('name')).toEqual(migrationNames);
    expect(await db('svc_runtime_migrations').pluck('name')).toEqual([
      'runtime_0001_used_refresh_tokens',
      'runtime_0002_token_revocations',
      'runtime_0003_idempotency_keys',
    ]);
    // Nothing pending: nothing applied.
    expect(await migrateLatest(db, migrations)).toEqual([]);
  });

  it('a runtime migration of a newer release (a release rolled back) is left as it is: the service starts', async () => {
    const batch = Number((await db('svc_runtime_migrations').max({ b: 'batch' }))[0].b) + 1;
    await db('svc_runtime_migrations').insert({ name: 'runtime_0099_from_a_newer_release', batch, migration_time: new Date() });
    try {
      expect(await migrateLatest(db, migrations)).toEqual([]);
    } finally {
      await db('svc_runtime_migrations').where({ name: 'runtime_0099_from_a_newer_release' }).delete();
    }
  });

  it('a token is consumed once; its id and expiry are kept', async () => {
    const token = await tokens.issueRefresh(7);
    const claims = await tokens.verify(token);
    expect(await consumeRefreshToken(db, token, claims)).toBe(true);
    expect(await consumeRefreshToken(db, token, claims)).toBe(false);
    const row = await db(USED_REFRESH_TOKENS_TABLE).where({ jti: claims.jti }).first();
    expect(Number(row.expires_at)).toBe(claims.exp);
  });

  it('50 concurrent transactions consuming one token: exactly one succeeds', async () => {
    const token = await tokens.issueRefresh(8);
    const claims = await tokens.verify(token);
    const results = await Promise.all(Array.from({ length: 50 }, () => db.transaction((trx) => consumeRefreshToken(trx, token, claims))));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('a transaction that rolls back leaves the token usable', async () => {
    const token = await tokens.issueRefresh(9);
    const claims = await tokens.verify(token);
    await expect(
      db.transaction(async (trx) => {
        expect(await consumeRefreshToken(trx, token, claims)).toBe(true);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await consumeRefreshToken(db, token, claims)).toBe(true);
  });

  it('purges the ids of expired tokens only', async () => {
    const now = Math.floor(Date.now() / 1000);
    await db(USED_REFRESH_TOKENS_TABLE).insert([
      { jti: 'expired-a', expires_at: now - 10 },
      { jti: 'expired-b', expires_at: now - 1 },
      { jti: 'live', expires_at: now + 100 },
    ]);
    expect(await purgeUsedRefreshTokens(db, now)).toBeGreaterThanOrEqual(2);
    const left = await db(USED_REFRESH_TOKENS_TABLE).whereIn('jti', ['expired-a', 'expired-b', 'live']).pluck('jti');
    expect(left).toEqual(['live']);
  });

  it('a token without jti is known by its signature bytes, whatever their spelling', async () => {
    const iat = Math.floor(Date.now() / 1000);
    const token = signRs256Raw({ sub: '10', iss: 'svc-blog', aud: 'svc-blog-api', iat, exp: iat + 600, type: 'refresh' });
    const claims = await tokens.verify(token);
    expect(claims.jti).toBeUndefined();
    // The last base64url character of a 256-byte signature carries 4 unused bits: flipping them
    // spells the same bytes differently, and the token still verifies.
    const [h, p, s] = token.split('.');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(s[s.length - 1]);
    const respelled = `${h}.${p}.${s.slice(0, -1)}${alphabet[(last & 0b110000) | (~last & 0b001111)]}`;
    expect(respelled).not.toBe(token);
    await expect(tokens.verify(respelled)).resolves.toBeDefined();
    expect(refreshTokenId(respelled, claims)).toBe(refreshTokenId(token, claims));
    expect(await consumeRefreshToken(db, token, claims)).toBe(true);
    expect(await consumeRefreshToken(db, respelled, await tokens.verify(respelled))).toBe(false);
  });

  it('a token without exp is refused by verify, and claims without exp are never kept (they would be kept for good)', async () => {
    const iat = Math.floor(Date.now() / 1000);
    const token = signRs256Raw({ sub: '11', iss: 'svc-blog', aud: 'svc-blog-api', iat, type: 'refresh', jti: 'no-exp' });
    await expect(tokens.verify(token)).rejects.toThrow(TokenError);
    await expect(tokens.verify(token)).rejects.toThrow('token has no expiry');
    const claims = decodeJwt(token) as TokenClaims;
    await expect(consumeRefreshToken(db, token, claims)).rejects.toThrow('token has no expiry');
    expect(await db(USED_REFRESH_TOKENS_TABLE).where({ jti: 'no-exp' }).first()).toBeUndefined();
  });

  it('an iat in the future: refused beyond SVC_JWT_LEEWAY (default 30 s), accepted within it', async () => {
    const now = Math.floor(Date.now() / 1000);
    const sign = (iat: number) => signRs256Raw({ sub: '12', iss: 'svc-blog', aud: 'svc-blog-api', iat, exp: now + 600 });
    expect((await tokens.verify(sign(now + 25))).sub).toBe('12');
    await expect(tokens.verify(sign(now + 45))).rejects.toThrow('token issued in the future');
    const strict = new TokenService(testKeys(), loadSettings(DEFAULT_SETTINGS, { SVC_JWT_LEEWAY: '0' }));
    await expect(strict.verify(sign(now + 5))).rejects.toThrow('token issued in the future');
    expect((await strict.verify(sign(now - 5))).sub).toBe('12');
    expect(() => loadSettings(DEFAULT_SETTINGS, { SVC_JWT_LEEWAY: '-1' })).toThrow(
      'SVC_JWT_LEEWAY must be a non-negative integer, got "-1"',
    );
    expect(() => loadSettings(DEFAULT_SETTINGS, { SVC_ACCESS_TOKEN_LIFETIME: '0' })).toThrow(
      'SVC_ACCESS_TOKEN_LIFETIME must be a positive integer, got "0"',
    );
  });

  it('rolling back the service migrations keeps the runtime table', async () => {
    await migrateRollback(db, migrations);
    expect(await db.schema.hasTable('users')).toBe(false);
    expect(await db.schema.hasTable(USED_REFRESH_TOKENS_TABLE)).toBe(true);
    expect(await migrateLatest(db, migrations)).toEqual(migrationNames);
  });
});
