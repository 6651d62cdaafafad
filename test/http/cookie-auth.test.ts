/**
 * Cookie authentication of the blog (`auth.cookies: true`, `CookieAuth` beside `JWTAuth` on
 * `/auth/me/` and the article writes): login sets the access, refresh and CSRF cookies with their
 * exact attributes; the access cookie authenticates reads as they are and writes that pass the CSRF
 * defence (the `X-CSRF-Token` header equal to the `csrftoken` cookie, and a page of the service's own
 * origin or of SVC_CORS_ORIGINS); refresh rotates the cookies (the old refresh cookie is refused);
 * logout clears them and spends the refresh token; bearer clients see no change.
 * Real SQLite, PostgreSQL and MySQL, exact status codes and whole bodies.
 */
import request from 'supertest';
import { loadSettings } from '../../runtime';
import { corsSettings } from '../../runtime/http/cors';
import { CSRF_ORIGIN_REFUSED, CSRF_TOKEN_REFUSED } from '../../runtime/auth/cookies';
import { ACCESS_LIFETIME, makeUser, UNAUTHORIZED, type BlogUser } from '../support/blog-fixtures';
import { DIALECTS } from '../support/databases';
import { startBlog, type RunningService } from '../support/services';

const TOKEN_RESPONSE = {
  access_token: expect.any(String),
  refresh_token: expect.any(String),
  token_type: 'bearer',
  expires_in: ACCESS_LIFETIME,
};
const ORIGIN_REFUSED = { error: 'forbidden', details: CSRF_ORIGIN_REFUSED };
const TOKEN_REFUSED = { error: 'forbidden', details: CSRF_TOKEN_REFUSED };
const INVALID_REFRESH = { detail: 'Invalid refresh token' };
const TRUSTED = 'https://app.example.com';
const JWT = '[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+';

/** The cookies of a session as a browser would keep them, and the Cookie header of a request to a path. */
interface Session {
  access: string;
  refresh: string;
  csrf: string;
  setCookie: string[];
}

function setCookiesOf(res: request.Response): string[] {
  const header = res.headers['set-cookie'] as unknown as string[] | undefined;
  return header ?? [];
}

function sessionOf(res: request.Response): Session {
  const setCookie = setCookiesOf(res);
  const value = (name: string) =>
    setCookie
      .find((c) => c.startsWith(`${name}=`))!
      .split(';')[0]
      .slice(name.length + 1);
  return { access: value('__Secure-access_token'), refresh: value('__Secure-refresh_token'), csrf: value('__Host-csrftoken'), setCookie };
}

/** What a browser sends to `/api/...`: the access and CSRF cookies; to `/api/auth/...` the refresh cookie too. */
const apiCookies = (s: Session) => `__Secure-access_token=${s.access}; __Host-csrftoken=${s.csrf}`;
const authCookies = (s: Session) => `__Secure-refresh_token=${s.refresh}; __Secure-access_token=${s.access}; __Host-csrftoken=${s.csrf}`;
/** A CSRF token: a random part and its signature for the session's user. */
const CSRF = '[A-Za-z0-9_-]{43}\\.[A-Za-z0-9_-]{43}';

describe.each(DIALECTS)('cookie authentication of the blog (%s)', (dialect) => {
  let svc: RunningService;
  let alice: BlogUser;
  let bob: BlogUser;
  const api = () => request(svc.app);

  beforeAll(async () => {
    svc = await startBlog(dialect, {}, { cors: corsSettings({ SVC_CORS_ORIGINS: TRUSTED, SVC_CORS_CREDENTIALS: 'true' }) });
    alice = await makeUser(svc, { username: 'alice' });
    bob = await makeUser(svc, { username: 'bob' });
  });
  afterAll(() => svc.close());

  async function login(user: BlogUser = alice): Promise<Session> {
    const res = await api().post('/api/auth/login/').send({ username: user.username, password: user.password });
    expect(res.status).toBe(200);
    return sessionOf(res);
  }

  const article = { title: 'From a browser', content: 'Written with a cookie.' };

  it('login answers the same tokens and sets three cookies with exact attributes', async () => {
    const res = await api().post('/api/auth/login/').send({ username: 'alice', password: alice.password });
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: TOKEN_RESPONSE });
    const cookies = setCookiesOf(res);
    expect(cookies).toHaveLength(3);
    expect(cookies[0]).toMatch(new RegExp(`^__Secure-access_token=${JWT}; Path=/api; Max-Age=900; HttpOnly; Secure; SameSite=Lax$`));
    expect(cookies[1]).toMatch(
      new RegExp(`^__Secure-refresh_token=${JWT}; Path=/api/auth/; Max-Age=604800; HttpOnly; Secure; SameSite=Lax$`),
    );
    expect(cookies[2]).toMatch(new RegExp(`^__Host-csrftoken=${CSRF}; Path=/; Max-Age=604800; Secure; SameSite=Lax$`));
    const session = sessionOf(res);
    expect(session.access).toBe(res.body.access_token);
    expect(session.refresh).toBe(res.body.refresh_token);
  });

  it('register sets the cookies too', async () => {
    const res = await api().post('/api/auth/register/').send({ username: 'carol', email: 'carol@example.com', password: 'pw-123456' });
    expect({ status: res.status, body: res.body }).toEqual({ status: 201, body: TOKEN_RESPONSE });
    expect(setCookiesOf(res).map((c) => c.split('=')[0])).toEqual(['__Secure-access_token', '__Secure-refresh_token', '__Host-csrftoken']);
  });

  it('the access cookie authenticates a read, which needs no CSRF token', async () => {
    const s = await login();
    const me = await api().get('/api/auth/me/').set('Cookie', apiCookies(s));
    expect({ status: me.status, body: me.body }).toEqual({
      status: 200,
      body: { id: alice.id, username: 'alice', email: 'alice@example.com', first_name: '', last_name: '' },
    });
  });

  it('without a cookie or a token, the 401 is unchanged', async () => {
    const me = await api().get('/api/auth/me/');
    expect({ status: me.status, body: me.body, challenge: me.headers['www-authenticate'] }).toEqual({
      status: 401,
      body: UNAUTHORIZED,
      challenge: 'Bearer',
    });
    const bad = await api().get('/api/auth/me/').set('Cookie', 'access_token=not-a-token');
    expect({ status: bad.status, body: bad.body }).toEqual({ status: 401, body: UNAUTHORIZED });
  });

  it('a write with the cookie and no or a wrong X-CSRF-Token is a 403, with the right one a 201', async () => {
    const s = await login();
    const none = await api().post('/api/articles/').set('Cookie', apiCookies(s)).send(article);
    expect({ status: none.status, body: none.body }).toEqual({ status: 403, body: TOKEN_REFUSED });
    const wrong = await api().post('/api/articles/').set('Cookie', apiCookies(s)).set('X-CSRF-Token', 'x'.repeat(43)).send(article);
    expect({ status: wrong.status, body: wrong.body }).toEqual({ status: 403, body: TOKEN_REFUSED });
    const noCookie = await api()
      .post('/api/articles/')
      .set('Cookie', `__Secure-access_token=${s.access}`)
      .set('X-CSRF-Token', s.csrf)
      .send(article);
    expect({ status: noCookie.status, body: noCookie.body }).toEqual({ status: 403, body: TOKEN_REFUSED });
    const ok = await api().post('/api/articles/').set('Cookie', apiCookies(s)).set('X-CSRF-Token', s.csrf).send(article);
    expect({ status: ok.status, author: ok.body.author }).toEqual({ status: 201, author: alice.id });
    const deleted = await api().delete(`/api/articles/${ok.body.id}/`).set('Cookie', apiCookies(s)).set('X-CSRF-Token', s.csrf);
    expect({ status: deleted.status, body: deleted.body }).toEqual({ status: 200, body: { message: 'Article deleted' } });
  });

  it('a write from a page of another site is a 403 even with the token; the own origin and SVC_CORS_ORIGINS pass', async () => {
    const s = await login();
    const write = (headers: Record<string, string>) => {
      let req = api().post('/api/articles/').set('Cookie', apiCookies(s)).set('X-CSRF-Token', s.csrf);
      for (const [name, value] of Object.entries(headers)) req = req.set(name, value);
      return req.send(article);
    };
    const other = await write({ Origin: 'https://evil.example' });
    expect({ status: other.status, body: other.body }).toEqual({ status: 403, body: ORIGIN_REFUSED });
    const sibling = await write({ Host: 'api.example.com', Origin: 'https://www.example.com' });
    expect({ status: sibling.status, body: sibling.body }).toEqual({ status: 403, body: ORIGIN_REFUSED });
    const opaque = await write({ Origin: 'null' });
    expect({ status: opaque.status, body: opaque.body }).toEqual({ status: 403, body: ORIGIN_REFUSED });
    const crossSite = await write({ 'Sec-Fetch-Site': 'cross-site' });
    expect({ status: crossSite.status, body: crossSite.body }).toEqual({ status: 403, body: ORIGIN_REFUSED });
    const own = await write({ Host: 'api.example.com', Origin: 'https://api.example.com', 'Sec-Fetch-Site': 'same-origin' });
    expect(own.status).toBe(201);
    const trusted = await write({ Origin: TRUSTED, 'Sec-Fetch-Site': 'same-site' });
    expect(trusted.status).toBe(201);
  });

  it('refresh reads the refresh cookie, after the CSRF defence, and rotates every cookie; the old refresh cookie is refused', async () => {
    const s = await login();
    const noCsrf = await api().post('/api/auth/refresh/').set('Cookie', authCookies(s)).send({});
    expect({ status: noCsrf.status, body: noCsrf.body }).toEqual({ status: 403, body: TOKEN_REFUSED });
    const res = await api().post('/api/auth/refresh/').set('Cookie', authCookies(s)).set('X-CSRF-Token', s.csrf).send({});
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: TOKEN_RESPONSE });
    const next = sessionOf(res);
    expect([next.access === s.access, next.refresh === s.refresh, next.csrf === s.csrf]).toEqual([false, false, false]);
    const again = await api().post('/api/auth/refresh/').set('Cookie', authCookies(s)).set('X-CSRF-Token', s.csrf).send({});
    expect({ status: again.status, body: again.body }).toEqual({ status: 401, body: INVALID_REFRESH });
    const me = await api().get('/api/auth/me/').set('Cookie', apiCookies(next));
    expect(me.status).toBe(200);
  });

  it('refresh without a token in the body or a cookie is the 422 of a missing field, as without cookies', async () => {
    const res = await api().post('/api/auth/refresh/').send({});
    expect({ status: res.status, body: res.body }).toEqual({
      status: 422,
      body: { detail: [{ type: 'missing', loc: ['body', 'data', 'refresh_token'], msg: 'Field required' }] },
    });
  });

  it('logout clears the three cookies and spends the refresh token', async () => {
    const s = await login();
    const out = await api().post('/api/auth/logout/').set('Cookie', authCookies(s)).set('X-CSRF-Token', s.csrf).send({});
    expect(out.status).toBe(204);
    expect(setCookiesOf(out)).toEqual([
      '__Secure-access_token=; Path=/api; Max-Age=0; HttpOnly; Secure; SameSite=Lax',
      '__Secure-refresh_token=; Path=/api/auth/; Max-Age=0; HttpOnly; Secure; SameSite=Lax',
      '__Host-csrftoken=; Path=/; Max-Age=0; Secure; SameSite=Lax',
    ]);
    const refresh = await api().post('/api/auth/refresh/').send({ refresh_token: s.refresh });
    expect({ status: refresh.status, body: refresh.body }).toEqual({ status: 401, body: INVALID_REFRESH });
  });

  it("refresh and logout by the cookie need no body, as a page's bodiless fetch sends them", async () => {
    const s = await login();
    // No body and no Content-Type: what `fetch(url, {method: 'POST', headers: {'X-CSRF-Token': csrf}})` sends.
    const noCsrf = await api().post('/api/auth/refresh/').set('Cookie', authCookies(s));
    expect({ status: noCsrf.status, body: noCsrf.body, cookies: setCookiesOf(noCsrf) }).toEqual({
      status: 403,
      body: TOKEN_REFUSED,
      cookies: [],
    });
    const refreshed = await api().post('/api/auth/refresh/').set('Cookie', authCookies(s)).set('X-CSRF-Token', s.csrf);
    expect({ status: refreshed.status, body: refreshed.body }).toEqual({ status: 200, body: TOKEN_RESPONSE });
    const next = sessionOf(refreshed);
    expect([next.access === s.access, next.refresh === s.refresh, next.csrf === s.csrf]).toEqual([false, false, false]);
    expect(next.refresh).toBe(refreshed.body.refresh_token);

    const out = await api().post('/api/auth/logout/').set('Cookie', authCookies(next)).set('X-CSRF-Token', next.csrf);
    expect({ status: out.status, body: out.body, cookies: setCookiesOf(out) }).toEqual({
      status: 204,
      body: {},
      cookies: [
        '__Secure-access_token=; Path=/api; Max-Age=0; HttpOnly; Secure; SameSite=Lax',
        '__Secure-refresh_token=; Path=/api/auth/; Max-Age=0; HttpOnly; Secure; SameSite=Lax',
        '__Host-csrftoken=; Path=/; Max-Age=0; Secure; SameSite=Lax',
      ],
    });
    // The refresh cookie is spent: neither the cookie nor the token in a body refreshes any more.
    const byCookie = await api().post('/api/auth/refresh/').set('Cookie', authCookies(next)).set('X-CSRF-Token', next.csrf);
    expect({ status: byCookie.status, body: byCookie.body }).toEqual({ status: 401, body: INVALID_REFRESH });
    const byBody = await api().post('/api/auth/refresh/').send({ refresh_token: next.refresh });
    expect({ status: byBody.status, body: byBody.body }).toEqual({ status: 401, body: INVALID_REFRESH });
  });

  it('without a body and without the refresh cookie, refresh and logout answer the 422 of the missing body, as without cookies', async () => {
    const s = await login();
    const missingBody = { detail: [{ type: 'missing', loc: ['body', 'data'], msg: 'Field required' }] };
    for (const path of ['/api/auth/refresh/', '/api/auth/logout/']) {
      const bare = await api().post(path);
      expect({ path, status: bare.status, body: bare.body }).toEqual({ path, status: 422, body: missingBody });
      // The access cookie alone is not the refresh cookie.
      const accessOnly = await api().post(path).set('Cookie', apiCookies(s)).set('X-CSRF-Token', s.csrf);
      expect({ path, status: accessOnly.status, body: accessOnly.body }).toEqual({ path, status: 422, body: missingBody });
    }
  });

  it('bearer clients are unaffected: no CSRF token needed, and a bearer header wins over the cookie', async () => {
    const bearer = await api().post('/api/articles/').set('Authorization', `Bearer ${bob.token}`).send(article);
    expect({ status: bearer.status, author: bearer.body.author }).toEqual({ status: 201, author: bob.id });
    const s = await login(alice);
    const both = await api().post('/api/articles/').set('Authorization', `Bearer ${bob.token}`).set('Cookie', apiCookies(s)).send(article);
    expect({ status: both.status, author: both.body.author }).toEqual({ status: 201, author: bob.id });
    const badBearer = await api().get('/api/auth/me/').set('Authorization', 'Bearer not-a-token').set('Cookie', apiCookies(s));
    expect({ status: badBearer.status, body: badBearer.body }).toEqual({ status: 401, body: UNAUTHORIZED });
    const refresh = await api().post('/api/auth/refresh/').send({ refresh_token: s.refresh });
    expect({ status: refresh.status, body: refresh.body }).toEqual({ status: 200, body: TOKEN_RESPONSE });
  });

  it('with Secure, only the prefixed cookies count: an unprefixed one (a sibling subdomain can set it) is ignored', async () => {
    const s = await login(alice);
    const bobs = await login(bob);
    const me = await api().get('/api/auth/me/').set('Cookie', `access_token=${s.access}`);
    expect({ status: me.status, body: me.body }).toEqual({ status: 401, body: UNAUTHORIZED });
    // A tossed csrftoken beside the real cookies, echoed in the header: not the CSRF cookie.
    const tossed = await api()
      .post('/api/articles/')
      .set('Cookie', `csrftoken=${bobs.csrf}; __Secure-access_token=${s.access}`)
      .set('X-CSRF-Token', bobs.csrf)
      .send(article);
    expect({ status: tossed.status, body: tossed.body }).toEqual({ status: 403, body: TOKEN_REFUSED });
    const refresh = await api().post('/api/auth/refresh/').set('Cookie', `refresh_token=${s.refresh}`).send({});
    expect({ status: refresh.status, body: refresh.body }).toEqual({
      status: 422,
      body: { detail: [{ type: 'missing', loc: ['body', 'data', 'refresh_token'], msg: 'Field required' }] },
    });
  });

  it("the CSRF token is bound to the session: another account's token, or an unsigned one, with a matching header is a 403", async () => {
    const s = await login(alice);
    const bobs = await login(bob);
    const withCsrf = (cookies: string, csrf: string) =>
      api().post('/api/articles/').set('Cookie', cookies).set('X-CSRF-Token', csrf).send(article);
    const planted = await withCsrf(`__Secure-access_token=${s.access}; __Host-csrftoken=${bobs.csrf}`, bobs.csrf);
    expect({ status: planted.status, body: planted.body }).toEqual({ status: 403, body: TOKEN_REFUSED });
    const random = s.csrf.split('.')[0];
    const unsigned = await withCsrf(`__Secure-access_token=${s.access}; __Host-csrftoken=${random}`, random);
    expect({ status: unsigned.status, body: unsigned.body }).toEqual({ status: 403, body: TOKEN_REFUSED });
    const forged = `${random}.${'A'.repeat(43)}`;
    const badSignature = await withCsrf(`__Secure-access_token=${s.access}; __Host-csrftoken=${forged}`, forged);
    expect({ status: badSignature.status, body: badSignature.body }).toEqual({ status: 403, body: TOKEN_REFUSED });
    // Refresh and logout by the cookie check the token against the refresh token's user.
    for (const path of ['/api/auth/refresh/', '/api/auth/logout/']) {
      const res = await api()
        .post(path)
        .set('Cookie', `__Secure-refresh_token=${s.refresh}; __Host-csrftoken=${bobs.csrf}`)
        .set('X-CSRF-Token', bobs.csrf);
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 403, body: TOKEN_REFUSED });
    }
    const own = await withCsrf(apiCookies(s), s.csrf);
    expect({ status: own.status, author: own.body.author }).toEqual({ status: 201, author: alice.id });
  });

  it('the cookie is documented in OpenAPI beside the bearer token', async () => {
    const doc = (await api().get('/api/openapi.json')).body;
    expect(doc.components.securitySchemes.CookieAuth).toEqual({
      type: 'apiKey',
      in: 'cookie',
      name: '__Secure-access_token',
      description: expect.stringContaining('X-CSRF-Token'),
    });
    expect(doc.paths['/api/auth/me/'].get.security).toEqual([{ BearerAuth: [] }, { CookieAuth: [] }]);
    expect(doc.paths['/api/articles/'].post.security).toEqual([{ BearerAuth: [] }, { CookieAuth: [] }]);
    expect(doc.paths['/api/users/'].get.security).toEqual([{ BearerAuth: [] }]);
  });
});

describe.each(DIALECTS)('cookie attributes from the settings (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startBlog(dialect, { SVC_AUTH_COOKIE_SECURE: false, SVC_AUTH_COOKIE_SAMESITE: 'Strict' });
  });
  afterAll(() => svc.close());

  it('SVC_AUTH_COOKIE_SECURE=false drops Secure and the prefixes, SVC_AUTH_COOKIE_SAMESITE=Strict sets Strict', async () => {
    const user = await makeUser(svc);
    const res = await request(svc.app).post('/api/auth/login/').send({ username: user.username, password: user.password });
    expect(res.status).toBe(200);
    expect(setCookiesOf(res).map((c) => c.split('=')[0])).toEqual(['access_token', 'refresh_token', 'csrftoken']);
    expect(setCookiesOf(res).map((c) => c.split('; ').slice(1).join('; '))).toEqual([
      'Path=/api; Max-Age=900; HttpOnly; SameSite=Strict',
      'Path=/api/auth/; Max-Age=604800; HttpOnly; SameSite=Strict',
      'Path=/; Max-Age=604800; SameSite=Strict',
    ]);
  });

  it("without the prefixes, a csrftoken planted by a sibling subdomain (another account's, matching the header) is a 403", async () => {
    const victim = await makeUser(svc);
    const attacker = await makeUser(svc);
    const cookiesOf = async (user: BlogUser) => {
      const res = await request(svc.app).post('/api/auth/login/').send({ username: user.username, password: user.password });
      return Object.fromEntries(setCookiesOf(res).map((c) => c.split(';')[0].split('=') as [string, string]));
    };
    const v = await cookiesOf(victim);
    const a = await cookiesOf(attacker);
    const write = (csrf: string) =>
      request(svc.app)
        .post('/api/articles/')
        .set('Cookie', `access_token=${v.access_token}; csrftoken=${csrf}`)
        .set('X-CSRF-Token', csrf)
        .send({ title: 'Tossed', content: 'A planted token.' });
    const tossed = await write(a.csrftoken);
    expect({ status: tossed.status, body: tossed.body }).toEqual({ status: 403, body: TOKEN_REFUSED });
    const own = await write(v.csrftoken);
    expect({ status: own.status, author: own.body.author }).toEqual({ status: 201, author: victim.id });
  });
});

describe('the cookie settings', () => {
  it('SVC_AUTH_COOKIE_SAMESITE takes Lax or Strict; SVC_AUTH_COOKIE_SECURE a boolean', () => {
    const defaults = require('../../generated/settings').DEFAULT_SETTINGS;
    expect(loadSettings(defaults, { SVC_AUTH_COOKIE_SAMESITE: 'Strict', SVC_AUTH_COOKIE_SECURE: 'off' })).toMatchObject({
      SVC_AUTH_COOKIE_SAMESITE: 'Strict',
      SVC_AUTH_COOKIE_SECURE: false,
    });
    expect(() => loadSettings(defaults, { SVC_AUTH_COOKIE_SAMESITE: 'None' })).toThrow(
      'SVC_AUTH_COOKIE_SAMESITE must be one of Lax, Strict, got "None"',
    );
  });
});
