/**
 * The blog's credentials, on SQLite and PostgreSQL: the username and password policy of
 * registration (and of staff creating users), passwords bcrypt would cut, single-use refresh
 * tokens, `WWW-Authenticate` on every 401, staff deactivating and re-activating users, throttled
 * failed logins (in memory, and shared through Redis), and registrations racing for one username
 * or email. Real databases and a real Redis; exact status codes, whole bodies, the headers.
 */
import * as crypto from 'node:crypto';
import Redis from 'ioredis';
import request from 'supertest';
import { loginThrottle, type LoginThrottle } from '../../runtime';
import {
  accessClaims,
  AUDIENCE,
  ISSUER,
  makeUser,
  nowSeconds,
  REFRESH_LIFETIME,
  signRs256,
  signRs256Raw,
  STAFF_REQUIRED,
  UNAUTHORIZED,
  unique,
} from '../support/blog-fixtures';
import { DIALECTS } from '../support/databases';
import { testKeys } from '../support/keys';
import { startBlog, type RunningService } from '../support/services';

const { createService } = require('../../generated/app');

const REDIS_URL = process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

const TOKEN_RESPONSE = { access_token: expect.any(String), refresh_token: expect.any(String), token_type: 'bearer', expires_in: 900 };
const INVALID_CREDENTIALS = { detail: 'Invalid credentials' };
const ACCOUNT_DISABLED = { detail: 'Account is disabled' };
const INVALID_REFRESH = { detail: 'Invalid refresh token' };
const TOO_MANY = { detail: 'Too many failed login attempts. Try again later.' };
const USERNAME_TAKEN = { username: 'Username already taken' };
const EMAIL_TAKEN = { email: 'Email already registered' };

const BEARER = 'Bearer';
const ACCESS_INVALID = 'Bearer error="invalid_token", error_description="The access token is invalid"';
const ACCESS_EXPIRED = 'Bearer error="invalid_token", error_description="The access token expired"';
const REFRESH_INVALID = 'Bearer error="invalid_token", error_description="The refresh token is invalid"';
const REFRESH_EXPIRED = 'Bearer error="invalid_token", error_description="The refresh token expired"';
const NOT_REFRESH = 'Bearer error="invalid_token", error_description="The token is not a refresh token"';

const USERNAME = ['body', 'data', 'username'];
const PASSWORD = ['body', 'data', 'password'];
const invalid = (...entries: { type: string; loc: string[]; msg: string }[]) => ({ detail: entries });
const PASSWORD_TOO_SHORT = { type: 'string_too_short', loc: PASSWORD, msg: 'String should have at least 8 characters' };
const PASSWORD_TOO_MANY_BYTES = { type: 'string_too_long', loc: PASSWORD, msg: 'String should have at most 72 bytes in UTF-8' };
const PASSWORD_TOO_MANY_CHARACTERS = { type: 'string_too_long', loc: PASSWORD, msg: 'String should have at most 72 characters' };
const USERNAME_EMPTY = { type: 'string_too_short', loc: USERNAME, msg: 'String should have at least 1 character' };
const USERNAME_CHARACTERS = {
  type: 'string_pattern_mismatch',
  loc: USERNAME,
  msg: 'String should contain only letters, digits and @ . + - _ characters',
};

describe.each(DIALECTS)('blog credentials (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    // Failures per address are tested on services of their own; here only usernames are limited.
    svc = await startBlog(dialect, { SVC_LOGIN_MAX_FAILURES_PER_ADDRESS: 100_000 });
  });
  afterAll(() => svc.close());
  afterEach(() => expect(svc.errors).toEqual([]));

  const api = () => request(svc.app);
  const db = () => svc.database.db;
  const userCount = async () => Number((await db()('users').count({ n: '*' }))[0].n);

  function registerBody(overrides: Record<string, unknown> = {}) {
    const username = unique('cred');
    return { username, email: `${username}@example.com`, password: 'long enough', ...overrides };
  }

  const login = (username: string, password: string) => api().post('/api/auth/login/').send({ username, password });

  describe('the credentials policy at registration', () => {
    const refused: [string, Record<string, unknown>, object][] = [
      ['an empty username', { username: '' }, invalid(USERNAME_EMPTY)],
      ['an empty password', { password: '' }, invalid(PASSWORD_TOO_SHORT)],
      ['both empty', { username: '', password: '' }, invalid(USERNAME_EMPTY, PASSWORD_TOO_SHORT)],
      ['a password of 7 characters', { password: 'seven77' }, invalid(PASSWORD_TOO_SHORT)],
      ['a username with a space', { username: 'ada lovelace' }, invalid(USERNAME_CHARACTERS)],
      ['a username with a slash', { username: 'ada/x' }, invalid(USERNAME_CHARACTERS)],
      ['a username with markup', { username: '<ada>' }, invalid(USERNAME_CHARACTERS)],
      ['a password of 73 characters', { password: 'a'.repeat(73) }, invalid(PASSWORD_TOO_MANY_CHARACTERS)],
      ['a password of 25 characters and 75 bytes', { password: '€'.repeat(25) }, invalid(PASSWORD_TOO_MANY_BYTES)],
    ];

    it.each(refused)('%s → 422 in the seed shape, creating nothing', async (_what, overrides, body) => {
      const count = await userCount();
      const res = await api().post('/api/auth/register/').send(registerBody(overrides));
      expect(res.status).toBe(422);
      expect(res.body).toEqual(body);
      expect(await userCount()).toBe(count);
    });

    it('accepts Unicode letters and digits with @ . + - _, and a password of exactly 8 characters', async () => {
      const username = `Zoë.Ü-名_+@${process.pid}${unique('')}`;
      const res = await api()
        .post('/api/auth/register/')
        .send(registerBody({ username, password: '12345678' }));
      expect(res.status).toBe(201);
      expect(res.body).toEqual(TOKEN_RESPONSE);
      expect((await login(username, '12345678')).status).toBe(200);
    });

    it('a password of 72 bytes is kept whole: another one sharing its first 72 bytes cannot log in', async () => {
      const body = registerBody({ password: '€'.repeat(24) });
      expect((await api().post('/api/auth/register/').send(body)).status).toBe(201);
      expect((await login(body.username, body.password)).status).toBe(200);
      const longer = await login(body.username, `${body.password}x`);
      expect(longer.status).toBe(422);
      expect(longer.body).toEqual(invalid(PASSWORD_TOO_MANY_BYTES));
      const shorter = await login(body.username, '€'.repeat(23));
      expect(shorter.status).toBe(401);
      expect(shorter.body).toEqual(INVALID_CREDENTIALS);
    });

    it('login answers an over-long password alike whether the user exists or not', async () => {
      const user = await makeUser(svc);
      for (const [password, body] of [
        ['b'.repeat(73), invalid(PASSWORD_TOO_MANY_CHARACTERS)],
        ['€'.repeat(25), invalid(PASSWORD_TOO_MANY_BYTES)],
      ] as const) {
        const known = await login(user.username, password);
        const unknown = await login(unique('ghost'), password);
        expect([known.status, known.body]).toEqual([422, body]);
        expect([unknown.status, unknown.body]).toEqual([422, body]);
      }
    });

    it('staff creating a user through POST /users/ go through the same policy', async () => {
      const staff = await makeUser(svc, { is_staff: true });
      const post = (overrides: Record<string, unknown>) =>
        api().post('/api/users/').set('Authorization', staff.bearer).send(registerBody(overrides));
      const count = await userCount();
      for (const [overrides, body] of [
        [{ username: '' }, invalid(USERNAME_EMPTY)],
        [{ username: 'two words' }, invalid(USERNAME_CHARACTERS)],
        [{ password: 'short' }, invalid(PASSWORD_TOO_SHORT)],
        [{ password: '€'.repeat(25) }, invalid(PASSWORD_TOO_MANY_BYTES)],
        [{ password: 'a'.repeat(73) }, invalid(PASSWORD_TOO_MANY_CHARACTERS)],
      ] as const) {
        const res = await post(overrides);
        expect([res.status, res.body]).toEqual([422, body]);
      }
      expect(await userCount()).toBe(count);
      const created = await post({});
      expect(created.status).toBe(201);
    });
  });

  describe('usernames are normalised with NFKC (as Django does) before the rule, the uniqueness check and storing', () => {
    /** The fullwidth form of every ASCII character of `text` (`alice` → `ａｌｉｃｅ`); NFKC maps it back. */
    const fullwidth = (text: string) => text.replace(/[!-~]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0));
    const stored = async (id: number) => (await db()('users').where({ id }).first('username')).username;

    it('a fullwidth look-alike of a registered name is "Username already taken", creating nothing', async () => {
      const body = registerBody();
      expect((await api().post('/api/auth/register/').send(body)).status).toBe(201);
      const count = await userCount();
      const lookalike = fullwidth(body.username);
      expect(lookalike).not.toBe(body.username);
      const res = await api()
        .post('/api/auth/register/')
        .send(registerBody({ username: lookalike }));
      expect([res.status, res.body]).toEqual([400, USERNAME_TAKEN]);
      // A ligature and a compatibility digit: "ﬁ" is "fi", "①" is "1".
      const base = unique('fi');
      expect(
        (
          await api()
            .post('/api/auth/register/')
            .send(registerBody({ username: `${base}1` }))
        ).status,
      ).toBe(201);
      const ligature = await api()
        .post('/api/auth/register/')
        .send(registerBody({ username: `ﬁ${base.slice(2)}①` }));
      expect([ligature.status, ligature.body]).toEqual([400, USERNAME_TAKEN]);
      expect(await userCount()).toBe(count + 1);
    });

    it('what is stored, and claimed in the token, is the normalised name; both spellings log in as that user', async () => {
      const name = unique('wide');
      const res = await api()
        .post('/api/auth/register/')
        .send(registerBody({ username: fullwidth(name) }));
      expect([res.status, res.body]).toEqual([201, TOKEN_RESPONSE]);
      const claims = JSON.parse(Buffer.from(res.body.access_token.split('.')[1], 'base64url').toString());
      expect(claims.username).toBe(name);
      const row = await db()('users').where({ username: name }).first('id');
      expect(row).toBeDefined();
      expect(await stored(Number(row.id))).toBe(name);
      for (const spelling of [name, fullwidth(name)]) {
        const ok = await login(spelling, 'long enough');
        expect([ok.status, ok.body]).toEqual([200, TOKEN_RESPONSE]);
        expect(JSON.parse(Buffer.from(ok.body.access_token.split('.')[1], 'base64url').toString()).sub).toBe(String(row.id));
      }
    });

    it('login normalises too: ａｌｉｃｅ logs in as alice, and a wrong password counts against the same name', async () => {
      const user = await makeUser(svc);
      const ok = await login(fullwidth(user.username), user.password);
      expect([ok.status, ok.body]).toEqual([200, TOKEN_RESPONSE]);
      for (let i = 0; i < 5; i++) {
        const spelling = i % 2 ? user.username : fullwidth(user.username);
        expect([(await login(spelling, 'wrong')).status]).toEqual([401]);
      }
      const throttled = await login(user.username, user.password);
      expect([throttled.status, throttled.body]).toEqual([429, TOO_MANY]);
    });

    it('the rule applies to the normalised name: NFKC may lengthen it past 150 characters, or turn it into a space', async () => {
      const count = await userCount();
      // "㎒" is "MHz": 51 characters sent, 153 after NFKC.
      const long = await api()
        .post('/api/auth/register/')
        .send(registerBody({ username: '㎒'.repeat(51) }));
      expect([long.status, long.body]).toEqual([
        422,
        invalid({ type: 'string_too_long', loc: USERNAME, msg: 'String should have at most 150 characters' }),
      ]);
      // An ideographic space is a space after NFKC.
      const spaced = await api()
        .post('/api/auth/register/')
        .send(registerBody({ username: `ada\u3000${unique('')}` }));
      expect([spaced.status, spaced.body]).toEqual([422, invalid(USERNAME_CHARACTERS)]);
      expect(await userCount()).toBe(count);
      const fifty = await api()
        .post('/api/auth/register/')
        .send(registerBody({ username: `${'㎒'.repeat(45)}${unique('')}`.slice(0, 50) }));
      expect(fifty.status).toBe(201);
    });

    it('staff creating a user through POST /users/: stored normalised; a look-alike of a taken name is refused as the name itself', async () => {
      const staff = await makeUser(svc, { is_staff: true });
      const post = (overrides: Record<string, unknown>) =>
        api().post('/api/users/').set('Authorization', staff.bearer).send(registerBody(overrides));
      const name = unique('staffmade');
      const created = await post({ username: fullwidth(name) });
      expect(created.status).toBe(201);
      expect(created.body.username).toBe(name);
      expect(await stored(created.body.id)).toBe(name);
      const count = await userCount();
      const same = await post({ username: name });
      const lookalike = await post({ username: fullwidth(name) });
      expect([same.status, same.body]).toEqual([409, { error: 'conflict', details: 'The request violates a database constraint.' }]);
      expect([lookalike.status, lookalike.body]).toEqual([same.status, same.body]);
      expect(await userCount()).toBe(count);
    });
  });

  describe('single-use refresh tokens', () => {
    async function tokens(username: string, password: string): Promise<{ access_token: string; refresh_token: string }> {
      const res = await login(username, password);
      expect(res.status).toBe(200);
      return res.body;
    }

    it('a second use of a refresh token is 401 {"detail": "Invalid refresh token"}; the new one works once', async () => {
      const user = await makeUser(svc);
      const first = await tokens(user.username, user.password);
      const exchanged = await api().post('/api/auth/refresh/').send({ refresh_token: first.refresh_token });
      expect(exchanged.status).toBe(200);
      expect(exchanged.body).toEqual(TOKEN_RESPONSE);
      const next = await api().post('/api/auth/refresh/').send({ refresh_token: exchanged.body.refresh_token });
      expect(next.status).toBe(200);
      const nextAgain = await api().post('/api/auth/refresh/').send({ refresh_token: exchanged.body.refresh_token });
      expect([nextAgain.status, nextAgain.body]).toEqual([401, INVALID_REFRESH]);
      expect(nextAgain.headers['www-authenticate']).toBe(REFRESH_INVALID);
    });

    it('a reused refresh token revokes its family: the chain a thief refreshed on ends too (RFC 9700 §4.14.2)', async () => {
      const user = await makeUser(svc);
      const stolen = await tokens(user.username, user.password);
      // The thief exchanges the stolen token first, and holds the next one of the family.
      const thief = await api().post('/api/auth/refresh/').send({ refresh_token: stolen.refresh_token });
      expect(thief.status).toBe(200);
      // The owner's client uses the same token: refused, and the family is revoked.
      const owner = await api().post('/api/auth/refresh/').send({ refresh_token: stolen.refresh_token });
      expect([owner.status, owner.body]).toEqual([401, INVALID_REFRESH]);
      const chain = await api().post('/api/auth/refresh/').send({ refresh_token: thief.body.refresh_token });
      expect([chain.status, chain.body]).toEqual([401, INVALID_REFRESH]);
      // Another login is another family: the owner logs in again and refreshes.
      const again = await tokens(user.username, user.password);
      expect((await api().post('/api/auth/refresh/').send({ refresh_token: again.refresh_token })).status).toBe(200);
    });

    it('answers that carry tokens, and /auth/me/, are Cache-Control: no-store', async () => {
      const user = await makeUser(svc);
      const logged = await login(user.username, user.password);
      const refreshed = await api().post('/api/auth/refresh/').send({ refresh_token: logged.body.refresh_token });
      const registered = await api().post('/api/auth/register/').send(registerBody());
      const me = await api().get('/api/auth/me/').set('Authorization', `Bearer ${logged.body.access_token}`);
      expect([logged, refreshed, registered, me].map((r) => [r.status, r.headers['cache-control']])).toEqual([
        [200, 'no-store'],
        [200, 'no-store'],
        [201, 'no-store'],
        [200, 'no-store'],
      ]);
    });

    it('a token without jti is single-use too', async () => {
      const user = await makeUser(svc);
      const iat = nowSeconds() - 60;
      const token = signRs256({ sub: String(user.id), iss: ISSUER, aud: AUDIENCE, iat, exp: iat + REFRESH_LIFETIME, type: 'refresh' });
      expect((await api().post('/api/auth/refresh/').send({ refresh_token: token })).status).toBe(200);
      const again = await api().post('/api/auth/refresh/').send({ refresh_token: token });
      expect([again.status, again.body]).toEqual([401, INVALID_REFRESH]);
    });

    it('holds for another instance of the service on the same database (and so across a restart)', async () => {
      const user = await makeUser(svc);
      const { refresh_token } = await tokens(user.username, user.password);
      expect((await api().post('/api/auth/refresh/').send({ refresh_token })).status).toBe(200);
      const other = createService({ db: db(), keys: testKeys(), settings: svc.settings });
      const res = await request(other.app).post('/api/auth/refresh/').send({ refresh_token });
      expect([res.status, res.body]).toEqual([401, INVALID_REFRESH]);
    });

    it('50 concurrent exchanges of one refresh token: exactly one 200, the others 401 "Invalid refresh token"', async () => {
      const user = await makeUser(svc);
      const { refresh_token } = await tokens(user.username, user.password);
      const answers = await Promise.all(Array.from({ length: 50 }, () => api().post('/api/auth/refresh/').send({ refresh_token })));
      expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
      const refused = answers.filter((r) => r.status !== 200);
      expect(refused).toHaveLength(49);
      for (const r of refused) expect([r.status, r.body]).toEqual([401, INVALID_REFRESH]);
    });
  });

  describe('WWW-Authenticate on 401s', () => {
    it('without a token, or with another scheme: Bearer, and the seed body', async () => {
      for (const header of [undefined, 'Basic YTpi', 'Bearer', 'Bearer ']) {
        const req = api().get('/api/auth/me/');
        if (header !== undefined) req.set('Authorization', header);
        const res = await req;
        expect([res.status, res.body, res.headers['www-authenticate']]).toEqual([401, UNAUTHORIZED, BEARER]);
      }
    });

    it('an expired access token tells its expiry in the header only; garbage, another key, an inactive user: invalid_token', async () => {
      const user = await makeUser(svc);
      const inactive = await makeUser(svc, { is_active: false });
      const expired = signRs256(accessClaims(user.id, { iat: nowSeconds() - 2000, exp: nowSeconds() - 1000 }));
      const cases: [string, string][] = [
        [expired, ACCESS_EXPIRED],
        ['garbage', ACCESS_INVALID],
        [signRs256(accessClaims(user.id, { aud: 'another-api' })), ACCESS_INVALID],
        [inactive.token, ACCESS_INVALID],
        [await svc.context.tokens.issueRefresh(user.id), ACCESS_INVALID],
        [signRs256Raw(accessClaims(user.id, { exp: undefined })), ACCESS_INVALID],
        [signRs256Raw(accessClaims(user.id, { iat: nowSeconds() + 3600 })), ACCESS_INVALID],
      ];
      // A protected endpoint, and a public one that reads the token it is sent.
      for (const endpoint of ['/api/auth/me/', '/api/categories/']) {
        for (const [token, challenge] of cases) {
          const res = await api().get(endpoint).set('Authorization', `Bearer ${token}`);
          expect({ endpoint, status: res.status, body: res.body, challenge: res.headers['www-authenticate'] }).toEqual({
            endpoint,
            status: 401,
            body: UNAUTHORIZED,
            challenge,
          });
        }
      }
    });

    it('a token accepted before is refused once it expires, or once its user is deactivated', async () => {
      const user = await makeUser(svc);
      const token = signRs256(accessClaims(user.id, { exp: nowSeconds() + 60 }));
      for (let i = 0; i < 2; i++) expect((await api().get('/api/auth/me/').set('Authorization', `Bearer ${token}`)).status).toBe(200);
      const later = Date.now() + 61_000;
      const clock = jest.spyOn(Date, 'now').mockReturnValue(later);
      try {
        const res = await api().get('/api/auth/me/').set('Authorization', `Bearer ${token}`);
        expect([res.status, res.body, res.headers['www-authenticate']]).toEqual([401, UNAUTHORIZED, ACCESS_EXPIRED]);
      } finally {
        clock.mockRestore();
      }
      expect((await api().get('/api/auth/me/').set('Authorization', `Bearer ${token}`)).status).toBe(200);
      await db()('users').where({ id: user.id }).update({ is_active: false });
      const res = await api().get('/api/auth/me/').set('Authorization', `Bearer ${token}`);
      expect([res.status, res.body, res.headers['www-authenticate']]).toEqual([401, UNAUTHORIZED, ACCESS_INVALID]);
    });

    it('answers that are not 401 carry no challenge', async () => {
      const user = await makeUser(svc);
      const ok = await api().get('/api/auth/me/').set('Authorization', user.bearer);
      expect(ok.status).toBe(200);
      expect(ok.headers['www-authenticate']).toBeUndefined();
      const forbidden = await api()
        .post('/api/categories/')
        .set('Authorization', user.bearer)
        .send({ name: unique('c') });
      expect([forbidden.status, forbidden.body]).toEqual([403, STAFF_REQUIRED]);
      expect(forbidden.headers['www-authenticate']).toBeUndefined();
    });

    it('login and refresh 401s carry the challenge too', async () => {
      const user = await makeUser(svc);
      const disabled = await makeUser(svc, { is_active: false });
      const wrong = await login(user.username, 'not the password');
      expect([wrong.status, wrong.body, wrong.headers['www-authenticate']]).toEqual([401, INVALID_CREDENTIALS, BEARER]);
      const off = await login(disabled.username, disabled.password);
      expect([off.status, off.body, off.headers['www-authenticate']]).toEqual([401, ACCOUNT_DISABLED, BEARER]);

      const iat = nowSeconds() - REFRESH_LIFETIME - 120;
      const expired = signRs256({ sub: String(user.id), iss: ISSUER, aud: AUDIENCE, iat, exp: iat + REFRESH_LIFETIME, type: 'refresh' });
      const cases: [string, object, string][] = [
        [expired, { detail: 'Refresh token expired' }, REFRESH_EXPIRED],
        ['garbage', INVALID_REFRESH, REFRESH_INVALID],
        [user.token, { detail: 'Invalid token type' }, NOT_REFRESH],
        [
          signRs256Raw({ sub: String(user.id), iss: ISSUER, aud: AUDIENCE, iat: nowSeconds(), type: 'refresh' }),
          INVALID_REFRESH,
          REFRESH_INVALID,
        ],
        [
          signRs256Raw({
            sub: String(user.id),
            iss: ISSUER,
            aud: AUDIENCE,
            iat: nowSeconds() + 3600,
            exp: nowSeconds() + REFRESH_LIFETIME,
            type: 'refresh',
          }),
          INVALID_REFRESH,
          REFRESH_INVALID,
        ],
      ];
      for (const [token, body, challenge] of cases) {
        const res = await api().post('/api/auth/refresh/').send({ refresh_token: token });
        expect([res.status, res.body, res.headers['www-authenticate']]).toEqual([401, body, challenge]);
      }
    });
  });

  describe('staff deactivate and re-activate users', () => {
    const isActive = async (id: number) => Boolean((await db()('users').where({ id }).first('is_active')).is_active);

    it('PATCH {"is_active": false} by staff: the user is refused everywhere; {"is_active": true} lets them back', async () => {
      const staff = await makeUser(svc, { is_staff: true });
      const target = await makeUser(svc);
      const before = await login(target.username, target.password);
      expect(before.status).toBe(200);

      const off = await api().patch(`/api/users/${target.id}/`).set('Authorization', staff.bearer).send({ is_active: false });
      expect(off.status).toBe(200);
      expect(off.body).toEqual({
        id: target.id,
        username: target.username,
        email: target.email,
        first_name: '',
        last_name: '',
        bio: '',
        avatar: '',
      });
      expect(await isActive(target.id)).toBe(false);

      for (const token of [target.token, before.body.access_token]) {
        const me = await api().get('/api/auth/me/').set('Authorization', `Bearer ${token}`);
        expect([me.status, me.body, me.headers['www-authenticate']]).toEqual([401, UNAUTHORIZED, ACCESS_INVALID]);
      }
      const loginOff = await login(target.username, target.password);
      expect([loginOff.status, loginOff.body]).toEqual([401, ACCOUNT_DISABLED]);
      const refreshOff = await api().post('/api/auth/refresh/').send({ refresh_token: before.body.refresh_token });
      expect([refreshOff.status, refreshOff.body]).toEqual([401, INVALID_REFRESH]);

      const on = await api().patch(`/api/users/${target.id}/`).set('Authorization', staff.bearer).send({ is_active: true });
      expect(on.status).toBe(200);
      expect(await isActive(target.id)).toBe(true);
      expect((await api().get('/api/auth/me/').set('Authorization', target.bearer)).status).toBe(200);
      expect((await login(target.username, target.password)).status).toBe(200);
      // The refresh token refused while the account was off was not consumed by that refusal.
      expect((await api().post('/api/auth/refresh/').send({ refresh_token: before.body.refresh_token })).status).toBe(200);
    });

    it('a user who is not staff cannot change is_active, not even their own: 403, nothing changes', async () => {
      const plain = await makeUser(svc);
      const other = await makeUser(svc);
      for (const id of [plain.id, other.id]) {
        const res = await api().patch(`/api/users/${id}/`).set('Authorization', plain.bearer).send({ is_active: false });
        expect([res.status, res.body]).toEqual([403, STAFF_REQUIRED]);
        expect(await isActive(id)).toBe(true);
      }
    });

    it('is_active must be a boolean: 422', async () => {
      const staff = await makeUser(svc, { is_staff: true });
      const target = await makeUser(svc);
      const res = await api().patch(`/api/users/${target.id}/`).set('Authorization', staff.bearer).send({ is_active: 'no' });
      expect(res.status).toBe(422);
      expect(res.body).toEqual(invalid({ type: 'bool_type', loc: ['body', 'data', 'is_active'], msg: 'Input should be a valid boolean' }));
      expect(await isActive(target.id)).toBe(true);
    });
  });

  describe('failed logins are throttled per username', () => {
    function expectThrottled(res: request.Response, windowSeconds = 900) {
      expect(res.status).toBe(429);
      expect(res.body).toEqual(TOO_MANY);
      const retryAfter = Number(res.headers['retry-after']);
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
    }

    it('after 5 failures the 6th attempt is a 429 with Retry-After, even with the right password; other users are not affected', async () => {
      const user = await makeUser(svc);
      for (let i = 0; i < 5; i++) {
        const res = await login(user.username, `wrong ${i}`);
        expect([res.status, res.body]).toEqual([401, INVALID_CREDENTIALS]);
      }
      expectThrottled(await login(user.username, user.password));
      expectThrottled(await login(user.username, 'wrong again'));
      const other = await makeUser(svc);
      expect((await login(other.username, other.password)).status).toBe(200);
    });

    it('an unknown username is throttled alike', async () => {
      const ghost = unique('ghost');
      for (let i = 0; i < 5; i++) expect((await login(ghost, 'whatever')).status).toBe(401);
      expectThrottled(await login(ghost, 'whatever'));
    });

    it("a successful login resets the username's failures", async () => {
      const user = await makeUser(svc);
      for (let i = 0; i < 4; i++) expect((await login(user.username, 'wrong')).status).toBe(401);
      expect((await login(user.username, user.password)).status).toBe(200);
      for (let i = 0; i < 5; i++) expect((await login(user.username, 'wrong')).status).toBe(401);
      expectThrottled(await login(user.username, user.password));
    });

    it('the right password of a disabled account is not a failure', async () => {
      const user = await makeUser(svc, { is_active: false });
      for (let i = 0; i < 8; i++) {
        const res = await login(user.username, user.password);
        expect([res.status, res.body]).toEqual([401, ACCOUNT_DISABLED]);
      }
    });

    it('20 concurrent wrong passwords for one username: exactly 5 are checked (401), 15 are 429', async () => {
      const user = await makeUser(svc);
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => login(user.username, `wrong ${i}`)));
      expect(answers.filter((r) => r.status === 401)).toHaveLength(5);
      const throttled = answers.filter((r) => r.status !== 401);
      expect(throttled).toHaveLength(15);
      for (const res of throttled) expectThrottled(res);
    });
  });

  describe('failed logins do not lock a user out: they are counted per username and client address', () => {
    it('behind a trusted proxy (SVC_TRUST_PROXY), the owner logs in from another address while a guesser is throttled', async () => {
      process.env.SVC_TRUST_PROXY = 'loopback';
      const own = await startBlog(dialect).finally(() => delete process.env.SVC_TRUST_PROXY);
      try {
        const user = await makeUser(own);
        const from = (address: string, password: string) =>
          request(own.app).post('/api/auth/login/').set('X-Forwarded-For', address).send({ username: user.username, password });
        for (let i = 0; i < 5; i++) expect((await from('203.0.113.7', `wrong ${i}`)).status).toBe(401);
        expect([(await from('203.0.113.7', user.password)).status]).toEqual([429]);
        const owner = await from('198.51.100.20', user.password);
        expect([owner.status, owner.body]).toEqual([200, TOKEN_RESPONSE]);
        // The guesser's window is untouched by the owner's success.
        expect((await from('203.0.113.7', user.password)).status).toBe(429);
        expect(own.errors).toEqual([]);
      } finally {
        await own.close();
      }
    });

    it('without SVC_TRUST_PROXY, X-Forwarded-For is not read: a client cannot pick its own address', async () => {
      const user = await makeUser(svc);
      const from = (address: string, password: string) =>
        api().post('/api/auth/login/').set('X-Forwarded-For', address).send({ username: user.username, password });
      for (let i = 0; i < 5; i++) expect((await from(`203.0.113.${i}`, `wrong ${i}`)).status).toBe(401);
      expect((await from('203.0.113.99', user.password)).status).toBe(429);
    });
  });

  describe('failed logins are throttled per client address', () => {
    it("after the address's failures any username is a 429, and the window ends", async () => {
      const own = await startBlog(dialect, { SVC_LOGIN_MAX_FAILURES_PER_ADDRESS: 3, SVC_LOGIN_FAILURES_WINDOW: 2 });
      try {
        const fresh = await makeUser(own);
        const post = (username: string, password: string) => request(own.app).post('/api/auth/login/').send({ username, password });
        for (let i = 0; i < 3; i++) expect((await post(unique('spray'), 'whatever')).status).toBe(401);
        for (const [username, password] of [
          [unique('spray'), 'whatever'],
          [fresh.username, fresh.password],
        ]) {
          const res = await post(username, password);
          expect([res.status, res.body]).toEqual([429, TOO_MANY]);
          expect(['1', '2']).toContain(res.headers['retry-after']);
        }
        await new Promise((resolve) => setTimeout(resolve, 2100));
        expect((await post(fresh.username, fresh.password)).status).toBe(200);
        expect(own.errors).toEqual([]);
      } finally {
        await own.close();
      }
    });
  });

  describe('registration is throttled per client address', () => {
    it('past SVC_REGISTRATIONS_PER_ADDRESS accounts in the window, a 429 with Retry-After; refused registrations do not count', async () => {
      const own = await startBlog(dialect, { SVC_REGISTRATIONS_PER_ADDRESS: 2 });
      try {
        const register = (overrides: Record<string, unknown> = {}) =>
          request(own.app).post('/api/auth/register/').send(registerBody(overrides));
        const taken = await makeUser(own);
        // A registration that makes no account (a taken username) is not counted.
        expect((await register({ username: taken.username })).status).toBe(400);
        expect((await register()).status).toBe(201);
        expect((await register()).status).toBe(201);
        const third = await register();
        expect([third.status, third.body]).toEqual([429, { detail: 'Too many accounts registered from this address. Try again later.' }]);
        expect(Number(third.headers['retry-after'])).toBeGreaterThan(3590);
        expect(own.errors).toEqual([]);
      } finally {
        await loginThrottle(own.context).close();
        await own.close();
      }
    });
  });

  describe('failed logins throttled through Redis (SVC_REDIS_URL)', () => {
    it('two instances share the counters under svc:<audience>:login:', async () => {
      const audience = `svc-test-${crypto.randomBytes(6).toString('hex')}`;
      const prefix = `svc:${audience}:login:`;
      const admin = new Redis(REDIS_URL);
      const own = await startBlog(dialect, { SVC_JWT_AUDIENCE: audience, SVC_LOGIN_MAX_FAILURES_PER_USERNAME: 3 });
      const throttles: LoginThrottle[] = [];
      const saved = process.env.SVC_REDIS_URL;
      process.env.SVC_REDIS_URL = REDIS_URL;
      try {
        const second = createService({ db: own.database.db, keys: testKeys(), settings: own.settings });
        throttles.push(loginThrottle(own.context), loginThrottle(second.context));
        const user = await makeUser(own);
        const apps = [own.app, second.app];
        for (let i = 0; i < 3; i++) {
          const res = await request(apps[i % 2])
            .post('/api/auth/login/')
            .send({ username: user.username, password: 'wrong' });
          expect([res.status, res.body]).toEqual([401, INVALID_CREDENTIALS]);
        }
        for (const app of apps) {
          const res = await request(app).post('/api/auth/login/').send({ username: user.username, password: user.password });
          expect([res.status, res.body]).toEqual([429, TOO_MANY]);
          expect(Number(res.headers['retry-after'])).toBeGreaterThan(890);
        }
        const keys = (await admin.keys(`${prefix}*`)).sort();
        expect(keys).toHaveLength(3);
        expect(keys[0]).toMatch(/^svc:svc-test-[0-9a-f]+:login:addr:/);
        expect(keys[1]).toMatch(/^svc:svc-test-[0-9a-f]+:login:user-day:/);
        expect(keys[2]).toMatch(/^svc:svc-test-[0-9a-f]+:login:user:/);
        expect(await admin.mget(keys[1], keys[2])).toEqual(['3', '3']);
        expect(own.errors).toEqual([]);
      } finally {
        if (saved === undefined) delete process.env.SVC_REDIS_URL;
        else process.env.SVC_REDIS_URL = saved;
        for (const t of throttles) await t.close();
        const keys = await admin.keys(`${prefix}*`);
        if (keys.length) await admin.del(...keys);
        await admin.quit();
        await own.close();
      }
    });
  });

  describe('registrations racing for one username or email', () => {
    it('50 concurrent registrations of one username: one 201, 49 × 400 {"username": "Username already taken"}', async () => {
      const username = unique('race');
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          api()
            .post('/api/auth/register/')
            .send(registerBody({ username, email: `${username}.${i}@example.com` })),
        ),
      );
      expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
      const lost = answers.filter((r) => r.status !== 201);
      expect(lost).toHaveLength(49);
      for (const res of lost) expect([res.status, res.body]).toEqual([400, USERNAME_TAKEN]);
      expect(Number((await db()('users').where({ username }).count({ n: '*' }))[0].n)).toBe(1);
    });

    it('50 concurrent registrations of one email: one 201, 49 × 400 {"email": "Email already registered"}', async () => {
      const email = `${unique('race')}@example.com`;
      const answers = await Promise.all(Array.from({ length: 50 }, () => api().post('/api/auth/register/').send(registerBody({ email }))));
      expect(answers.filter((r) => r.status === 201)).toHaveLength(1);
      const lost = answers.filter((r) => r.status !== 201);
      expect(lost).toHaveLength(49);
      for (const res of lost) expect([res.status, res.body]).toEqual([400, EMAIL_TAKEN]);
      expect(Number((await db()('users').where({ email }).count({ n: '*' }))[0].n)).toBe(1);
    });
  });
});
