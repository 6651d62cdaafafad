/**
 * Authentication of the blog: the four auth endpoints (seed "Authentication endpoints of the sample
 * application" + Behaviors, contract "Authentication endpoints"), the token claims and verification
 * rules, every kind of refused token, the roles, per-operation auth resolution (NOT_SET vs null,
 * fallback to `auth`) and the `security` markers of the OpenAPI document.
 * Real SQLite and PostgreSQL, exact status codes and whole bodies.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import bcrypt from 'bcrypt';
import { jwtVerify } from 'jose';
import request from 'supertest';
import { parse as parseYaml } from 'yaml';
import {
  ACCESS_LIFETIME,
  accessClaims,
  AUDIENCE,
  BCRYPT_HASH,
  decodeToken,
  hs256WithPublicKey,
  ISSUER,
  makeArticle,
  makeCategory,
  makeTag,
  makeUser,
  nowSeconds,
  otherKeyToken,
  REFRESH_LIFETIME,
  signRs256,
  signRs256Raw,
  STAFF_REQUIRED,
  UNAUTHORIZED,
  unique,
  unsignedToken,
  type BlogUser,
} from '../support/blog-fixtures';
import { DIALECTS } from '../support/databases';
import { testKeys } from '../support/keys';
import { startBlog, type RunningService } from '../support/services';

const TOKEN_RESPONSE = {
  access_token: expect.any(String),
  refresh_token: expect.any(String),
  token_type: 'bearer',
  expires_in: ACCESS_LIFETIME,
};
const INVALID_CREDENTIALS = { detail: 'Invalid credentials' };
const ACCOUNT_DISABLED = { detail: 'Account is disabled' };
const INVALID_TOKEN_TYPE = { detail: 'Invalid token type' };
const REFRESH_EXPIRED = { detail: 'Refresh token expired' };
const INVALID_REFRESH = { detail: 'Invalid refresh token' };

/** `jti` is a registered claim (RFC 7519 §4.1.7), not an "extra claim": allowed, never required. */
function withoutJti(payload: Record<string, unknown>): Record<string, unknown> {
  const { jti, ...rest } = payload;
  if (jti !== undefined) expect(typeof jti).toBe('string');
  return rest;
}

describe.each(DIALECTS)('blog authentication (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startBlog(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(svc.errors).toEqual([]));

  const api = () => request(svc.app);
  const db = () => svc.database.db;

  async function userRow(username: string): Promise<Record<string, unknown> | undefined> {
    return db()('users').where({ username }).first();
  }

  async function userCount(): Promise<number> {
    const [row] = await db()('users').count({ n: '*' });
    return Number(row.n);
  }

  function registerBody(overrides: Record<string, unknown> = {}) {
    const username = unique('reg');
    return {
      username,
      email: `${username}@example.com`,
      password: 's3cret-Passw0rd',
      first_name: 'Ada',
      last_name: 'Lovelace',
      ...overrides,
    };
  }

  describe('POST /api/auth/register/', () => {
    it('creates an active, non-staff user with a bcrypt-hashed password and answers 201 TokenResponse', async () => {
      const body = registerBody();
      const before = nowSeconds();
      const res = await api().post('/api/auth/register/').send(body);
      const after = nowSeconds();
      expect(res.status).toBe(201);
      expect(res.body).toEqual(TOKEN_RESPONSE);

      const row = await userRow(body.username);
      expect(row).toBeDefined();
      expect({
        username: row!.username,
        email: row!.email,
        first_name: row!.first_name,
        last_name: row!.last_name,
        is_active: Boolean(row!.is_active),
        is_staff: Boolean(row!.is_staff),
        is_superuser: Boolean(row!.is_superuser),
      }).toEqual({
        username: body.username,
        email: body.email,
        first_name: 'Ada',
        last_name: 'Lovelace',
        is_active: true,
        is_staff: false,
        is_superuser: false,
      });
      expect(row!.password).toMatch(BCRYPT_HASH);
      expect(row!.password).toMatch(/^\$2b\$/);
      expect(row!.password).not.toContain(body.password);
      expect(await bcrypt.compare(body.password, String(row!.password))).toBe(true);

      const access = decodeToken(res.body.access_token).payload;
      expect(access.sub).toBe(String(row!.id));
      expect(access.iat).toBeGreaterThanOrEqual(before);
      expect(access.iat).toBeLessThanOrEqual(after);

      const me = await api().get('/api/auth/me/').set('Authorization', `Bearer ${res.body.access_token}`);
      expect(me.status).toBe(200);
      expect(me.body).toEqual({
        id: Number(row!.id),
        username: body.username,
        email: body.email,
        first_name: 'Ada',
        last_name: 'Lovelace',
      });
    });

    it('defaults first_name and last_name to ""', async () => {
      const { first_name: _f, last_name: _l, ...body } = registerBody();
      const res = await api().post('/api/auth/register/').send(body);
      expect(res.status).toBe(201);
      expect(res.body).toEqual(TOKEN_RESPONSE);
      const row = await userRow(body.username);
      expect([row!.first_name, row!.last_name]).toEqual(['', '']);
    });

    it('answers 400 {"username": "Username already taken"} for an existing username, creating nothing', async () => {
      const existing = await makeUser(svc);
      const count = await userCount();
      const res = await api()
        .post('/api/auth/register/')
        .send(registerBody({ username: existing.username, email: `${unique('fresh')}@example.com` }));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ username: 'Username already taken' });
      expect(await userCount()).toBe(count);
    });

    it('answers 400 {"email": "Email already registered"} for an existing email, creating nothing', async () => {
      const existing = await makeUser(svc);
      const count = await userCount();
      const body = registerBody({ email: existing.email });
      const res = await api().post('/api/auth/register/').send(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ email: 'Email already registered' });
      expect(await userCount()).toBe(count);
      expect(await userRow(body.username)).toBeUndefined();
    });

    it('answers 422 in the seed shape for a body that fails validation, creating nothing', async () => {
      const count = await userCount();
      const missing = await api()
        .post('/api/auth/register/')
        .send({ username: unique('reg') });
      expect(missing.status).toBe(422);
      expect(missing.body).toEqual({
        detail: [
          { type: 'missing', loc: ['body', 'data', 'email'], msg: 'Field required' },
          { type: 'missing', loc: ['body', 'data', 'password'], msg: 'Field required' },
        ],
      });

      const badEmail = await api()
        .post('/api/auth/register/')
        .send(registerBody({ email: 'not-an-email' }));
      expect(badEmail.status).toBe(422);
      expect(badEmail.body).toEqual({
        detail: [{ type: 'value_error', loc: ['body', 'data', 'email'], msg: 'value is not a valid email address' }],
      });

      const tooLong = await api()
        .post('/api/auth/register/')
        .send(registerBody({ username: 'u'.repeat(151) }));
      expect(tooLong.status).toBe(422);
      expect(tooLong.body).toEqual({
        detail: [{ type: 'string_too_long', loc: ['body', 'data', 'username'], msg: 'String should have at most 150 characters' }],
      });

      const wrongType = await api()
        .post('/api/auth/register/')
        .send(registerBody({ password: 12345678 }));
      expect(wrongType.status).toBe(422);
      expect(wrongType.body).toEqual({
        detail: [{ type: 'string_type', loc: ['body', 'data', 'password'], msg: 'Input should be a valid string' }],
      });

      expect(await userCount()).toBe(count);
    });
  });

  describe('POST /api/auth/login/', () => {
    it('answers 200 TokenResponse for the right password', async () => {
      const user = await makeUser(svc, { password: 'pa55word!' });
      const res = await api().post('/api/auth/login/').send({ username: user.username, password: 'pa55word!' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(TOKEN_RESPONSE);
      expect(decodeToken(res.body.access_token).payload.sub).toBe(String(user.id));
      expect(decodeToken(res.body.refresh_token).payload.sub).toBe(String(user.id));
    });

    it('answers 401 {"detail": "Invalid credentials"} for an unknown user', async () => {
      const res = await api()
        .post('/api/auth/login/')
        .send({ username: unique('ghost'), password: 'whatever' });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(INVALID_CREDENTIALS);
    });

    it('answers 401 {"detail": "Invalid credentials"} for a wrong password', async () => {
      const user = await makeUser(svc, { password: 'pa55word!' });
      const res = await api().post('/api/auth/login/').send({ username: user.username, password: 'pa55word?' });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(INVALID_CREDENTIALS);
    });

    it('answers 401 {"detail": "Account is disabled"} for an inactive user', async () => {
      const user = await makeUser(svc, { password: 'pa55word!', is_active: false });
      const res = await api().post('/api/auth/login/').send({ username: user.username, password: 'pa55word!' });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(ACCOUNT_DISABLED);
    });

    it('answers 422 for a body that fails validation', async () => {
      const res = await api().post('/api/auth/login/').send({ username: 42 });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        detail: [
          { type: 'string_type', loc: ['body', 'data', 'username'], msg: 'Input should be a valid string' },
          { type: 'missing', loc: ['body', 'data', 'password'], msg: 'Field required' },
        ],
      });
    });
  });

  describe('POST /api/auth/refresh/', () => {
    async function login(user: BlogUser): Promise<{ access_token: string; refresh_token: string }> {
      const res = await api().post('/api/auth/login/').send({ username: user.username, password: user.password });
      expect(res.status).toBe(200);
      return res.body;
    }

    it('answers 200 with a new access token and a new refresh token, both usable', async () => {
      const user = await makeUser(svc);
      // A refresh token issued a minute ago (signed with the service's key), so "new" cannot
      // depend on the second the test happens to run in.
      const iat = nowSeconds() - 60;
      const presented = signRs256({ sub: String(user.id), iss: ISSUER, aud: AUDIENCE, iat, exp: iat + REFRESH_LIFETIME, type: 'refresh' });
      const res = await api().post('/api/auth/refresh/').send({ refresh_token: presented });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(TOKEN_RESPONSE);
      expect(res.body.refresh_token).not.toBe(presented);
      expect(decodeToken(res.body.refresh_token).payload.iat).toBeGreaterThan(iat);

      const me = await api().get('/api/auth/me/').set('Authorization', `Bearer ${res.body.access_token}`);
      expect(me.status).toBe(200);
      expect(me.body).toEqual({ id: user.id, username: user.username, email: user.email, first_name: '', last_name: '' });

      const again = await api().post('/api/auth/refresh/').send({ refresh_token: res.body.refresh_token });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(TOKEN_RESPONSE);
    });

    it('returns tokens different from the ones presented even within the second they were issued', async () => {
      const user = await makeUser(svc);
      // Retry until login and refresh fall in the same second (almost always the first try), so
      // the verdict never depends on timing: within one second, "new" tokens must still be new.
      let first: { access_token: string; refresh_token: string } | undefined;
      let second: { access_token: string; refresh_token: string } | undefined;
      for (let attempt = 0; attempt < 5; attempt++) {
        first = await login(user);
        const res = await api().post('/api/auth/refresh/').send({ refresh_token: first.refresh_token });
        expect(res.status).toBe(200);
        second = res.body;
        if (decodeToken(second!.refresh_token).payload.iat === decodeToken(first.refresh_token).payload.iat) break;
      }
      expect(second!.refresh_token).not.toBe(first!.refresh_token);
      expect(second!.access_token).not.toBe(first!.access_token);
    });

    it('answers 401 {"detail": "Invalid token type"} for an access token', async () => {
      const user = await makeUser(svc);
      const tokens = await login(user);
      const res = await api().post('/api/auth/refresh/').send({ refresh_token: tokens.access_token });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(INVALID_TOKEN_TYPE);
    });

    it('answers 401 {"detail": "Refresh token expired"} for an expired refresh token', async () => {
      const user = await makeUser(svc);
      const iat = nowSeconds() - REFRESH_LIFETIME - 120;
      const expired = signRs256({ sub: String(user.id), iss: ISSUER, aud: AUDIENCE, iat, exp: iat + REFRESH_LIFETIME, type: 'refresh' });
      const res = await api().post('/api/auth/refresh/').send({ refresh_token: expired });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(REFRESH_EXPIRED);
    });

    const invalidRefreshTokens: [string, (id: number) => string][] = [
      ['garbage', () => 'not-a-jwt'],
      ['three garbage segments', () => 'abc.def.ghi'],
      ['signed with another key', (id) => otherKeyToken(accessClaims(id, { type: 'refresh', exp: nowSeconds() + REFRESH_LIFETIME }))],
      ['a wrong issuer', (id) => signRs256(accessClaims(id, { type: 'refresh', iss: 'someone-else' }))],
      ['a wrong audience', (id) => signRs256(accessClaims(id, { type: 'refresh', aud: 'another-api' }))],
      ['alg none', (id) => unsignedToken(accessClaims(id, { type: 'refresh' }))],
      ['HS256 with the public key as secret', (id) => hs256WithPublicKey(accessClaims(id, { type: 'refresh' }))],
      ['no sub', (id) => signRs256(accessClaims(id, { type: 'refresh', sub: undefined }))],
      ['no exp', (id) => signRs256Raw(accessClaims(id, { type: 'refresh', exp: undefined }))],
      [
        'an iat 60 s in the future',
        (id) => signRs256Raw(accessClaims(id, { type: 'refresh', iat: nowSeconds() + 60, exp: nowSeconds() + REFRESH_LIFETIME })),
      ],
    ];

    it.each(invalidRefreshTokens)('answers 401 {"detail": "Invalid refresh token"} for a token with %s', async (_kind, make) => {
      const user = await makeUser(svc);
      const res = await api()
        .post('/api/auth/refresh/')
        .send({ refresh_token: make(user.id) });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(INVALID_REFRESH);
    });

    it('answers 401 {"detail": "Invalid refresh token"} for the refresh token of an inactive or deleted user', async () => {
      const inactive = await makeUser(svc);
      const deleted = await makeUser(svc);
      const inactiveTokens = await login(inactive);
      const deletedTokens = await login(deleted);
      await db()('users').where('id', inactive.id).update({ is_active: false });
      await db()('users').where('id', deleted.id).delete();
      for (const tokens of [inactiveTokens, deletedTokens]) {
        const res = await api().post('/api/auth/refresh/').send({ refresh_token: tokens.refresh_token });
        expect(res.status).toBe(401);
        expect(res.body).toEqual(INVALID_REFRESH);
      }
    });

    it('answers 422 for a body that fails validation', async () => {
      const res = await api().post('/api/auth/refresh/').send({});
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [{ type: 'missing', loc: ['body', 'data', 'refresh_token'], msg: 'Field required' }] });
    });
  });

  describe('GET /api/auth/me/', () => {
    it('answers 200 UserResponse for the caller, never the password', async () => {
      const user = await makeUser(svc, { first_name: 'Grace', last_name: 'Hopper' });
      const res = await api().get('/api/auth/me/').set('Authorization', user.bearer);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: user.id, username: user.username, email: user.email, first_name: 'Grace', last_name: 'Hopper' });
    });

    it('answers 401 {"detail": "Unauthorized"} without a token', async () => {
      const res = await api().get('/api/auth/me/');
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });
  });

  describe('token claims', () => {
    it('access token: RS256, sub = user id string, iss, aud, iat, exp = iat + 900, username/email/is_staff, no type', async () => {
      for (const is_staff of [false, true]) {
        const user = await makeUser(svc, { is_staff });
        const before = nowSeconds();
        const res = await api().post('/api/auth/login/').send({ username: user.username, password: user.password });
        const after = nowSeconds();
        expect(res.status).toBe(200);
        const { header, payload } = decodeToken(res.body.access_token);
        expect(header).toEqual({ alg: 'RS256', typ: 'JWT' });
        const iat = payload.iat as number;
        expect(iat).toBeGreaterThanOrEqual(before);
        expect(iat).toBeLessThanOrEqual(after);
        expect(withoutJti(payload)).toEqual({
          sub: String(user.id),
          iss: ISSUER,
          aud: AUDIENCE,
          iat,
          exp: iat + 900,
          username: user.username,
          email: user.email,
          is_staff,
        });
        // Verifies with the public key, RS256 only, with the configured issuer and audience.
        await expect(
          jwtVerify(res.body.access_token, crypto.createPublicKey(testKeys().publicKey), {
            algorithms: ['RS256'],
            issuer: ISSUER,
            audience: AUDIENCE,
          }),
        ).resolves.toBeDefined();
      }
    });

    it('refresh token: RS256, sub, iss, aud, iat, exp = iat + 604800, type "refresh", no extra claims', async () => {
      const user = await makeUser(svc, { is_staff: true });
      const before = nowSeconds();
      const res = await api().post('/api/auth/login/').send({ username: user.username, password: user.password });
      const after = nowSeconds();
      expect(res.status).toBe(200);
      const { header, payload } = decodeToken(res.body.refresh_token);
      expect(header).toEqual({ alg: 'RS256', typ: 'JWT' });
      const iat = payload.iat as number;
      expect(iat).toBeGreaterThanOrEqual(before);
      expect(iat).toBeLessThanOrEqual(after);
      expect(withoutJti(payload)).toEqual({ sub: String(user.id), iss: ISSUER, aud: AUDIENCE, iat, exp: iat + 604800, type: 'refresh' });
      await expect(
        jwtVerify(res.body.refresh_token, crypto.createPublicKey(testKeys().publicKey), {
          algorithms: ['RS256'],
          issuer: ISSUER,
          audience: AUDIENCE,
        }),
      ).resolves.toBeDefined();
    });

    it('register and refresh issue the same claim sets as login', async () => {
      const body = registerBody();
      const reg = await api().post('/api/auth/register/').send(body);
      expect(reg.status).toBe(201);
      const row = await userRow(body.username);
      const access = decodeToken(reg.body.access_token).payload;
      expect(withoutJti(access)).toEqual({
        sub: String(row!.id),
        iss: ISSUER,
        aud: AUDIENCE,
        iat: access.iat,
        exp: (access.iat as number) + ACCESS_LIFETIME,
        username: body.username,
        email: body.email,
        is_staff: false,
      });
      const refresh = decodeToken(reg.body.refresh_token).payload;
      expect(withoutJti(refresh)).toEqual({
        sub: String(row!.id),
        iss: ISSUER,
        aud: AUDIENCE,
        iat: refresh.iat,
        exp: (refresh.iat as number) + REFRESH_LIFETIME,
        type: 'refresh',
      });

      const res = await api().post('/api/auth/refresh/').send({ refresh_token: reg.body.refresh_token });
      expect(res.status).toBe(200);
      const newAccess = decodeToken(res.body.access_token).payload;
      expect(withoutJti(newAccess)).toEqual({
        sub: String(row!.id),
        iss: ISSUER,
        aud: AUDIENCE,
        iat: newAccess.iat,
        exp: (newAccess.iat as number) + ACCESS_LIFETIME,
        username: body.username,
        email: body.email,
        is_staff: false,
      });
      const newRefresh = decodeToken(res.body.refresh_token).payload;
      expect(withoutJti(newRefresh)).toEqual({
        sub: String(row!.id),
        iss: ISSUER,
        aud: AUDIENCE,
        iat: newRefresh.iat,
        exp: (newRefresh.iat as number) + REFRESH_LIFETIME,
        type: 'refresh',
      });
    });
  });

  describe('refused tokens on protected and public endpoints', () => {
    type Make = (user: BlogUser) => string | Promise<string>;
    const refused: [string, Make][] = [
      ['alg none', (u) => unsignedToken(accessClaims(u.id))],
      ['HS256 signed with the public key PEM as secret', (u) => hs256WithPublicKey(accessClaims(u.id))],
      ['signed with a key the service does not trust', (u) => otherKeyToken(accessClaims(u.id))],
      ['expired', (u) => signRs256(accessClaims(u.id, { iat: nowSeconds() - 2000, exp: nowSeconds() - 1000 }))],
      ['a wrong issuer', (u) => signRs256(accessClaims(u.id, { iss: 'evil-issuer' }))],
      ['a wrong audience', (u) => signRs256(accessClaims(u.id, { aud: 'another-api' }))],
      ['no issuer', (u) => signRs256(accessClaims(u.id, { iss: undefined }))],
      ['no audience', (u) => signRs256(accessClaims(u.id, { aud: undefined }))],
      ['no sub', (u) => signRs256(accessClaims(u.id, { sub: undefined }))],
      ['an empty sub', (u) => signRs256(accessClaims(u.id, { sub: '' }))],
      ['a sub naming no user', () => signRs256(accessClaims(2147483000))],
      ['a non-numeric sub', () => signRs256(accessClaims('admin'))],
      [
        'a tampered payload',
        (u) => {
          const [h, , s] = u.token.split('.');
          return `${h}.${Buffer.from(JSON.stringify(accessClaims(u.id, { is_staff: true }))).toString('base64url')}.${s}`;
        },
      ],
      ['a refresh token used as access token', (u) => svc.context.tokens.issueRefresh(u.id)],
      ['no exp (it would never expire)', (u) => signRs256Raw(accessClaims(u.id, { exp: undefined }))],
      ['an exp of null', (u) => signRs256Raw(accessClaims(u.id, { exp: null }))],
      ['an iat 60 s in the future (leeway 30 s)', (u) => signRs256Raw(accessClaims(u.id, { iat: nowSeconds() + 60 }))],
      [
        'an iat a year in the future',
        (u) => signRs256Raw(accessClaims(u.id, { iat: nowSeconds() + 31_536_000, exp: nowSeconds() + 31_536_900 })),
      ],
      ['an iat that is not a number', (u) => signRs256Raw(accessClaims(u.id, { iat: 'yesterday' }))],
      [
        'the token of an inactive user',
        async (u) => {
          await db()('users').where('id', u.id).update({ is_active: false });
          return u.token;
        },
      ],
      [
        'the token of a deleted user',
        async (u) => {
          await db()('users').where('id', u.id).delete();
          return u.token;
        },
      ],
      ['garbage', () => 'garbage'],
    ];
    const endpoints = ['/api/auth/me/', '/api/users/', '/api/categories/'];
    const cases = refused.flatMap(([kind, make]) => endpoints.map((endpoint) => [kind, endpoint, make] as const));

    it.each(cases)('a token with %s on GET %s → 401 {"detail": "Unauthorized"}', async (_kind, endpoint, make) => {
      const user = await makeUser(svc, { is_staff: true });
      const token = await make(user);
      const res = await api().get(endpoint).set('Authorization', `Bearer ${token}`);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it.each(['/api/auth/me/', '/api/users/'])('a missing or malformed Authorization header on GET %s → 401', async (endpoint) => {
      const user = await makeUser(svc);
      for (const header of [
        undefined,
        'Bearer',
        'Bearer ',
        `Token ${user.token}`,
        `Basic ${Buffer.from('a:b').toString('base64')}`,
        user.token,
      ]) {
        const req = api().get(endpoint);
        if (header !== undefined) req.set('Authorization', header);
        const res = await req;
        expect(res.status).toBe(401);
        expect(res.body).toEqual(UNAUTHORIZED);
      }
    });

    it('a token issued up to SVC_JWT_LEEWAY (30) seconds in the future is accepted, as an access and as a refresh token', async () => {
      const user = await makeUser(svc, { is_staff: true });
      const ahead = signRs256Raw(accessClaims(user.id, { iat: nowSeconds() + 20 }));
      for (const endpoint of endpoints) {
        const res = await api().get(endpoint).set('Authorization', `Bearer ${ahead}`);
        expect(res.status).toBe(200);
      }
      const refresh = signRs256Raw(
        accessClaims(user.id, { type: 'refresh', iat: nowSeconds() + 20, exp: nowSeconds() + REFRESH_LIFETIME }),
      );
      const res = await api().post('/api/auth/refresh/').send({ refresh_token: refresh });
      expect([res.status, res.body]).toEqual([200, TOKEN_RESPONSE]);
    });

    it('SVC_JWT_LEEWAY=0 allows no iat in the future; a larger one allows more', async () => {
      for (const [leeway, ahead, status] of [
        [0, 5, 401],
        [0, 0, 200],
        [120, 100, 200],
        [120, 150, 401],
      ] as const) {
        const own = await startBlog(dialect, { SVC_JWT_LEEWAY: leeway });
        try {
          const user = await makeUser(own);
          const token = signRs256Raw(accessClaims(user.id, { iat: nowSeconds() + ahead }));
          const res = await request(own.app).get('/api/auth/me/').set('Authorization', `Bearer ${token}`);
          expect({ leeway, ahead, status: res.status }).toEqual({ leeway, ahead, status });
          if (status === 401) expect(res.body).toEqual(UNAUTHORIZED);
          expect(own.errors).toEqual([]);
        } finally {
          await own.close();
        }
      }
    });

    it('the same user with a well-formed token is accepted on each of these endpoints', async () => {
      const user = await makeUser(svc, { is_staff: true });
      const handmade = signRs256(accessClaims(user.id));
      for (const token of [user.token, handmade]) {
        for (const endpoint of endpoints) {
          const res = await api().get(endpoint).set('Authorization', `Bearer ${token}`);
          expect(res.status).toBe(200);
        }
      }
    });
  });

  describe('roles', () => {
    function userOut(row: Record<string, unknown>) {
      return {
        id: Number(row.id),
        username: row.username,
        email: row.email,
        first_name: row.first_name,
        last_name: row.last_name,
        bio: row.bio,
        avatar: row.avatar,
      };
    }

    it('users list needs JWTAuth: any active user gets 200 and no password', async () => {
      const caller = await makeUser(svc);
      const res = await api().get('/api/users/').set('Authorization', caller.bearer);
      expect(res.status).toBe(200);
      const rows = await db()('users')
        .select('id', 'username', 'email', 'first_name', 'last_name', 'bio', 'avatar')
        .orderBy('id')
        .limit(100);
      expect(res.body).toEqual({ items: rows.map(userOut), count: await userCount() });
      expect(JSON.stringify(res.body)).not.toContain('password');
      expect(JSON.stringify(res.body)).not.toContain('$2b$');
    });

    it('users retrieve needs JWTAuth: 200 UserOut without the password; 401 without a token', async () => {
      const caller = await makeUser(svc);
      const target = await makeUser(svc, { first_name: 'Alan', last_name: 'Turing' });
      const res = await api().get(`/api/users/${target.id}/`).set('Authorization', caller.bearer);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: target.id,
        username: target.username,
        email: target.email,
        first_name: 'Alan',
        last_name: 'Turing',
        bio: '',
        avatar: '',
      });
      const anonymous = await api().get(`/api/users/${target.id}/`);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual(UNAUTHORIZED);
    });

    it('users create needs AdminAuth: 401 without a token, 403 for a non-staff user, creating nothing', async () => {
      const plain = await makeUser(svc);
      const body = { username: unique('new'), email: `${unique('new')}@example.com`, password: 'Secret-123' };
      const count = await userCount();
      const anonymous = await api().post('/api/users/').send(body);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual(UNAUTHORIZED);
      const forbidden = await api().post('/api/users/').set('Authorization', plain.bearer).send(body);
      expect(forbidden.status).toBe(403);
      expect(forbidden.body).toEqual(STAFF_REQUIRED);
      expect(await userCount()).toBe(count);
    });

    it('users create by staff: 201 UserOut without the password; the stored password is a bcrypt hash that logs in', async () => {
      const staff = await makeUser(svc, { is_staff: true });
      const username = unique('created');
      const body = {
        username,
        email: `${username}@example.com`,
        password: 'Secret-123',
        first_name: 'New',
        last_name: 'User',
        bio: 'Hello',
      };
      const res = await api().post('/api/users/').set('Authorization', staff.bearer).send(body);
      expect(res.status).toBe(201);
      const row = await userRow(username);
      expect(res.body).toEqual({
        id: Number(row!.id),
        username,
        email: body.email,
        first_name: 'New',
        last_name: 'User',
        bio: 'Hello',
        avatar: '',
      });
      expect(row!.password).toMatch(BCRYPT_HASH);
      expect(await bcrypt.compare('Secret-123', String(row!.password))).toBe(true);
      expect(Boolean(row!.is_active)).toBe(true);
      const login = await api().post('/api/auth/login/').send({ username, password: 'Secret-123' });
      expect(login.status).toBe(200);
      expect(login.body).toEqual(TOKEN_RESPONSE);
    });

    it('users update and delete fall back to auth [AdminAuth]: 401 / 403 / staff allowed', async () => {
      const plain = await makeUser(svc);
      const staff = await makeUser(svc, { is_staff: true });
      const target = await makeUser(svc);

      const patchAnon = await api().patch(`/api/users/${target.id}/`).send({ bio: 'x' });
      expect(patchAnon.status).toBe(401);
      expect(patchAnon.body).toEqual(UNAUTHORIZED);
      const patchPlain = await api().patch(`/api/users/${target.id}/`).set('Authorization', plain.bearer).send({ bio: 'x' });
      expect(patchPlain.status).toBe(403);
      expect(patchPlain.body).toEqual(STAFF_REQUIRED);
      // Not even one's own account: update is AdminAuth.
      const patchSelf = await api().patch(`/api/users/${target.id}/`).set('Authorization', target.bearer).send({ bio: 'x' });
      expect(patchSelf.status).toBe(403);
      expect(patchSelf.body).toEqual(STAFF_REQUIRED);
      const patchStaff = await api().patch(`/api/users/${target.id}/`).set('Authorization', staff.bearer).send({ bio: 'Edited' });
      expect(patchStaff.status).toBe(200);
      expect(patchStaff.body).toEqual({
        id: target.id,
        username: target.username,
        email: target.email,
        first_name: '',
        last_name: '',
        bio: 'Edited',
        avatar: '',
      });

      const delAnon = await api().delete(`/api/users/${target.id}/`);
      expect(delAnon.status).toBe(401);
      expect(delAnon.body).toEqual(UNAUTHORIZED);
      const delPlain = await api().delete(`/api/users/${target.id}/`).set('Authorization', plain.bearer);
      expect(delPlain.status).toBe(403);
      expect(delPlain.body).toEqual(STAFF_REQUIRED);
      expect(await userRow(target.username)).toBeDefined();
      const delStaff = await api().delete(`/api/users/${target.id}/`).set('Authorization', staff.bearer);
      expect(delStaff.status).toBe(204);
      expect(delStaff.text).toBe('');
      expect(await userRow(target.username)).toBeUndefined();
    });

    it('an inactive staff user is refused (401), not treated as staff', async () => {
      const staff = await makeUser(svc, { is_staff: true, is_active: false });
      const res = await api()
        .post('/api/categories/')
        .set('Authorization', staff.bearer)
        .send({ name: unique('cat') });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });
  });

  describe('per-operation auth resolution', () => {
    it('categories get_auth null: list and retrieve are public; a valid token is accepted, an invalid one is a 401', async () => {
      const name = unique('Public ');
      const id = await makeCategory(db(), name, 'desc');
      const user = await makeUser(svc);
      for (const headers of [{}, { Authorization: user.bearer }]) {
        const list = await api().get('/api/categories/').set(headers);
        expect(list.status).toBe(200);
        expect(list.body.items).toContainEqual({ id, name, description: 'desc' });
        const one = await api().get(`/api/categories/${id}/`).set(headers);
        expect(one.status).toBe(200);
        expect(one.body).toEqual({ id, name, description: 'desc' });
      }
      const invalid = await api()
        .get(`/api/categories/${id}/`)
        .set('Authorization', `Bearer ${otherKeyToken(accessClaims(user.id))}`);
      expect(invalid.status).toBe(401);
      expect(invalid.body).toEqual(UNAUTHORIZED);
    });

    it('users get_auth [JWTAuth]: list and retrieve without a token are 401', async () => {
      const target = await makeUser(svc);
      for (const url of ['/api/users/', `/api/users/${target.id}/`]) {
        const res = await api().get(url);
        expect(res.status).toBe(401);
        expect(res.body).toEqual(UNAUTHORIZED);
      }
    });

    it('categories and tags create/update/delete fall back to auth [AdminAuth]', async () => {
      const plain = await makeUser(svc);
      const staff = await makeUser(svc, { is_staff: true });
      for (const [base, make] of [
        ['categories', () => makeCategory(db())],
        ['tags', () => makeTag(db())],
      ] as const) {
        const id = await make();
        const name = unique('N');
        const ops = [
          () => api().post(`/api/${base}/`).send({ name }),
          () => api().patch(`/api/${base}/${id}/`).send({ name }),
          () => api().delete(`/api/${base}/${id}/`),
        ];
        for (const op of ops) {
          const anonymous = await op();
          expect(anonymous.status).toBe(401);
          expect(anonymous.body).toEqual(UNAUTHORIZED);
          const forbidden = await op().set('Authorization', plain.bearer);
          expect(forbidden.status).toBe(403);
          expect(forbidden.body).toEqual(STAFF_REQUIRED);
        }
        const created = await ops[0]().set('Authorization', staff.bearer);
        expect(created.status).toBe(201);
        expect(created.body).toEqual(
          base === 'categories' ? { id: expect.any(Number), name, description: '' } : { id: expect.any(Number), name },
        );
        const renamed = unique('R');
        const updated = await api().patch(`/api/${base}/${id}/`).set('Authorization', staff.bearer).send({ name: renamed });
        expect(updated.status).toBe(200);
        expect(updated.body).toEqual(base === 'categories' ? { id, name: renamed, description: '' } : { id, name: renamed });
        const deleted = await ops[2]().set('Authorization', staff.bearer);
        expect(deleted.status).toBe(204);
      }
    });

    it('articles: reads public (get_auth null), create/update/delete fall back to auth [JWTAuth]', async () => {
      const author = await makeUser(svc);
      const id = await makeArticle(db(), { author_id: author.id });
      expect((await api().get('/api/articles/')).status).toBe(200);
      expect((await api().get(`/api/articles/${id}/`)).status).toBe(200);
      for (const res of [
        await api().post('/api/articles/').send({ title: 'T', content: 'C' }),
        await api().patch(`/api/articles/${id}/`).send({ title: 'T' }),
        await api().delete(`/api/articles/${id}/`),
      ]) {
        expect(res.status).toBe(401);
        expect(res.body).toEqual(UNAUTHORIZED);
      }
      // JWTAuth, not AdminAuth: a plain user may create.
      const created = await api().post('/api/articles/').set('Authorization', author.bearer).send({ title: 'T', content: 'C' });
      expect(created.status).toBe(201);
    });
  });

  describe('OpenAPI security', () => {
    type AuthValue = string[] | null;
    const SPECS = path.join(__dirname, '..', '..', 'specs');

    /**
     * The resolved auth of every operation, from the YAML specs by the seed's rules: a per-operation
     * attribute overrides `auth` when it is present (NOT_SET = absent); null is public; a relation's
     * own auth (and its per-method override) overrides `m2m_auth`; an action falls back to `auth`.
     */
    function resolvedFromSpecs(): Map<string, AuthValue> {
      const out = new Map<string, AuthValue>();
      const pick = (obj: Record<string, unknown>, key: string, fallback: AuthValue): AuthValue =>
        key in obj ? (obj[key] as AuthValue) : fallback;
      const service = parseYaml(fs.readFileSync(path.join(SPECS, 'service.yaml'), 'utf8'));
      for (const endpoint of service.endpoints ?? []) out.set(endpoint.handler, pick(endpoint, 'auth', null));
      for (const file of fs.readdirSync(path.join(SPECS, 'resources'))) {
        const spec = parseYaml(fs.readFileSync(path.join(SPECS, 'resources', file), 'utf8'));
        const one = spec.verbose_name as string;
        const many = spec.verbose_name_plural as string;
        const vs = (spec.viewset ?? {}) as Record<string, unknown>;
        const base = pick(vs, 'auth', null);
        out.set(`list_${many}`, pick(vs, 'get_auth', base));
        out.set(`retrieve_${one}`, pick(vs, 'get_auth', base));
        out.set(`create_${one}`, pick(vs, 'post_auth', base));
        out.set(`update_${one}`, pick(vs, 'patch_auth', base));
        out.set(`delete_${one}`, pick(vs, 'delete_auth', base));
        for (const [name, action] of Object.entries((vs.actions ?? {}) as Record<string, Record<string, unknown>>)) {
          // A list-level action is named after the collection (`feed_articles`), a detail one after the record.
          out.set(`${name}_${action.detail === false ? many : one}`, pick(action, 'auth', base));
        }
        const m2mBase = pick(vs, 'm2m_auth', null);
        for (const rel of (vs.m2m_relations ?? []) as Record<string, unknown>[]) {
          const relPath = String(rel.path).replace(/^\/+|\/+$/g, '');
          const relAuth = pick(rel, 'auth', m2mBase);
          out.set(`get_${one}_${relPath}`, pick(rel, 'get_auth', relAuth));
          out.set(`manage_${one}_${relPath}`, pick(rel, 'post_auth', relAuth));
        }
      }
      return out;
    }

    const EXPECTED_SECURED = [
      'me',
      'create_article',
      'update_article',
      'delete_article',
      'publish_article',
      'manage_article_tags',
      'create_category',
      'update_category',
      'delete_category',
      'create_tag',
      'update_tag',
      'delete_tag',
      'list_users',
      'retrieve_user',
      'create_user',
      'update_user',
      'delete_user',
    ].sort();
    const EXPECTED_PUBLIC = [
      'register',
      'login',
      'refresh',
      'logout',
      'list_articles',
      'retrieve_article',
      'feed_articles',
      'get_article_tags',
      'list_categories',
      'retrieve_category',
      'list_tags',
      'retrieve_tag',
    ].sort();
    /** The secured operations that also take the access-token cookie (CookieAuth, test/http/cookie-auth.test.ts). */
    const WITH_COOKIE = new Set(['me', 'create_article', 'update_article', 'delete_article', 'publish_article']);

    async function operations(): Promise<{ method: string; path: string; op: Record<string, any> }[]> {
      const res = await api().get('/api/openapi.json');
      expect(res.status).toBe(200);
      const out: { method: string; path: string; op: Record<string, any> }[] = [];
      for (const [p, item] of Object.entries(res.body.paths as Record<string, Record<string, any>>)) {
        for (const [method, op] of Object.entries(item)) out.push({ method, path: p, op });
      }
      return out;
    }

    it('the specs resolve to the expected secured and public operations', () => {
      const resolved = resolvedFromSpecs();
      expect(
        [...resolved]
          .filter(([, a]) => a !== null)
          .map(([id]) => id)
          .sort(),
      ).toEqual(EXPECTED_SECURED);
      expect(
        [...resolved]
          .filter(([, a]) => a === null)
          .map(([id]) => id)
          .sort(),
      ).toEqual(EXPECTED_PUBLIC);
    });

    it('marks security exactly on the protected operations, with the bearer scheme', async () => {
      const res = await api().get('/api/openapi.json');
      // The seed's HTTP bearer scheme, documented either as `http`/`bearer` or as the Authorization
      // header (the form whose Authorize box takes `Bearer <ACCESS_TOKEN>` as typed).
      const schemes = res.body.components.securitySchemes as Record<string, Record<string, unknown>>;
      expect(Object.keys(schemes)).toEqual(['BearerAuth', 'CookieAuth']);
      const { description: _d, bearerFormat: _b, ...scheme } = schemes.BearerAuth;
      expect([
        { type: 'http', scheme: 'bearer' },
        { type: 'apiKey', in: 'header', name: 'Authorization' },
      ]).toContainEqual(scheme);
      const ops = await operations();
      // Beside the generated operations, the service's public health routes.
      expect(ops.map((o) => o.op.operationId).sort()).toEqual(
        [...EXPECTED_SECURED, ...EXPECTED_PUBLIC, 'health_live', 'health_ready'].sort(),
      );
      expect(
        ops
          .filter((o) => required(o.op))
          .map((o) => o.op.operationId)
          .sort(),
      ).toEqual(EXPECTED_SECURED);
      for (const o of ops.filter((x) => required(x.op))) {
        const expected = WITH_COOKIE.has(o.op.operationId) ? [{ BearerAuth: [] }, { CookieAuth: [] }] : [{ BearerAuth: [] }];
        expect({ op: o.op.operationId, security: o.op.security }).toEqual({ op: o.op.operationId, security: expected });
      }
      // Public operations read a token when one is sent: the optional-token form, no requirement or the bearer scheme.
      for (const o of ops.filter((x) => !required(x.op))) {
        // The health routes read no token at all.
        const expected = o.op.operationId.startsWith('health_') ? [] : [{}, { BearerAuth: [] }];
        expect({ op: o.op.operationId, security: o.op.security }).toEqual({ op: o.op.operationId, security: expected });
      }
    });

    /** Whether the document requires a token: a security list without the empty (anonymous) alternative. */
    function required(op: { security?: Record<string, unknown>[] }): boolean {
      return (
        op.security !== undefined && op.security.length > 0 && !op.security.some((alternative) => Object.keys(alternative).length === 0)
      );
    }

    it('every operation marked secured answers 401 without a token, and no public one does', async () => {
      const author = await makeUser(svc);
      const ids: Record<string, number> = {
        articles: await makeArticle(db(), { author_id: author.id }),
        categories: await makeCategory(db()),
        tags: await makeTag(db()),
        users: author.id,
      };
      for (const { method, path: p, op } of await operations()) {
        const resource = p.split('/')[2];
        const url = p.replace('{pk}', String(ids[resource] ?? 1));
        const res = await (api() as any)[method](url).send(method === 'get' || method === 'delete' ? undefined : {});
        if (required(op)) {
          expect({ op: op.operationId, status: res.status, body: res.body }).toEqual({
            op: op.operationId,
            status: 401,
            body: UNAUTHORIZED,
          });
        } else {
          expect({ op: op.operationId, unauthorized: res.status === 401 }).toEqual({ op: op.operationId, unauthorized: false });
        }
      }
    });
  });
});
