/**
 * Cookie authentication in a real headless Chromium. One server on http://127.0.0.1:P serves the
 * blog and, at `/app/`, a page of the same origin; a second server on port Q serves pages of other
 * origins: http://localhost:Q (another site) and http://127.0.0.1:Q (the same site, another origin).
 *
 * - The same-origin page logs in with fetch: the browser keeps the HttpOnly cookies (the page's
 *   script sees only `__Host-csrftoken`), reads `/auth/me/` with them, and writes with `X-CSRF-Token`
 *   (without it, 403).
 * - The page of another site cannot write with the cookie: its JSON write fails its preflight, and
 *   a bodiless `no-cors` POST reaches the API without the cookie (SameSite=Lax): 401.
 * - The page of the same site gets the cookie sent (SameSite does not tell ports apart) and can even
 *   read `__Host-csrftoken`; the origin check refuses its write: 403.
 * The API's own log of requests shows what reached it, with or without the cookie; the article the
 * other pages tried to publish stays a draft.
 *
 * The cookies keep their `Secure` attribute and their `__Host-` and `__Secure-` prefixes: Chromium
 * stores Secure cookies set over http://127.0.0.1 and http://localhost, which it counts as
 * potentially trustworthy origins.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { CSRF_ORIGIN_REFUSED, CSRF_TOKEN_REFUSED } from '../../runtime/auth/cookies';
import { makeArticle, makeUser, type BlogUser } from '../support/blog-fixtures';
import { DIALECTS } from '../support/databases';
import { startBlog, type RunningService } from '../support/services';

jest.setTimeout(120_000);

async function listen(server: http.Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return (server.address() as AddressInfo).port;
}

/** A request that reached the API: its method, path, whether it carried the access cookie, and the answer. */
interface Arrival {
  method: string;
  path: string;
  cookie: boolean;
  status: number;
  body: string;
}

type Outcome = { status: number; body: unknown };

/** Runs in the same-origin page: login, me, a write without and with X-CSRF-Token, a publish. */
async function sameOriginSession({ username, password }: { username: string; password: string }) {
  const call = async (path: string, init: RequestInit = {}): Promise<Outcome> => {
    const res = await fetch(path, init);
    return { status: res.status, body: res.status === 204 ? null : await res.json() };
  };
  const json = { 'Content-Type': 'application/json' };
  const login = await call('/api/auth/login/', { method: 'POST', headers: json, body: JSON.stringify({ username, password }) });
  // The cookies the page's script can read (test code is compiled without the DOM's types).
  const cookies = (globalThis as unknown as { document: { cookie: string } }).document.cookie;
  const visible = cookies.split('; ').map((c) => c.split('=')[0]);
  const csrf = /(?:^|; )__Host-csrftoken=([^;]*)/.exec(cookies)?.[1] ?? '';
  const me = await call('/api/auth/me/');
  const article = JSON.stringify({ title: 'From the page', content: 'Written with the cookie.' });
  const withoutToken = await call('/api/articles/', { method: 'POST', headers: json, body: article });
  const created = await call('/api/articles/', { method: 'POST', headers: { ...json, 'X-CSRF-Token': csrf }, body: article });
  const published = await call(`/api/articles/${(created.body as { id: number }).id}/publish/`, {
    method: 'POST',
    headers: { 'X-CSRF-Token': csrf },
  });
  return { login: login.status, visible, me, withoutToken, created: created.status, published };
}

/** Runs in a page of another origin: a JSON publish with a CSRF header (needs a preflight), then a bodiless no-cors one. */
async function foreignPublish({ api, articleId }: { api: string; articleId: number }) {
  const url = `${api}/api/articles/${articleId}/publish/`;
  const cookies = (globalThis as unknown as { document: { cookie: string } }).document.cookie;
  const csrf = /(?:^|; )__Host-csrftoken=([^;]*)/.exec(cookies)?.[1];
  let cors: string;
  try {
    const res = await fetch(url, {
      method: 'POST',
      credentials: 'include',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf ?? 'guess' },
      body: '{}',
    });
    cors = `status ${res.status}`;
  } catch (err) {
    cors = (err as Error).message;
  }
  const opaque = await fetch(url, { method: 'POST', mode: 'no-cors', credentials: 'include' });
  return { readsCsrfCookie: csrf !== undefined, cors, noCorsType: opaque.type };
}

/**
 * Runs in the same-origin page: the example of docs/reference/spec/authentication.md ("Cookie authentication") as
 * written, each fetch's answer kept, with a bodiless refresh by the cookie before the logout.
 */
async function documentedExample({ username, password }: { username: string; password: string }) {
  const outcome = async (res: Response): Promise<Outcome> => ({ status: res.status, body: res.status === 204 ? null : await res.json() });
  const document = (globalThis as unknown as { document: { cookie: string } }).document;
  const login = await fetch('/api/auth/login/', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  const refreshToken = ((await login.clone().json()) as { refresh_token: string }).refresh_token;
  let csrf = /(?:^|; )__Host-csrftoken=([^;]*)/.exec(document.cookie)?.[1] ?? '';
  const me = await fetch('/api/auth/me/'); // a read: the cookie is enough
  const created = await fetch('/api/articles/', {
    // a write: the cookie and the header
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrf },
    body: JSON.stringify({ title: 'From the page', content: 'Written with the cookie.' }),
  });
  const refreshed = await fetch('/api/auth/refresh/', { method: 'POST', headers: { 'X-CSRF-Token': csrf } });
  const rotated = ((await refreshed.clone().json()) as { refresh_token: string }).refresh_token;
  csrf = /(?:^|; )__Host-csrftoken=([^;]*)/.exec(document.cookie)?.[1] ?? '';
  const logout = await fetch('/api/auth/logout/', { method: 'POST', headers: { 'X-CSRF-Token': csrf } });
  const cookiesAfter = document.cookie;
  const meAfter = await fetch('/api/auth/me/');
  // The refresh tokens are spent: the first by the refresh, the rotated one by the logout.
  const spend = (token: string) =>
    fetch('/api/auth/refresh/', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ refresh_token: token }),
    });
  return {
    login: login.status,
    me: (await outcome(me)).status,
    created: created.status,
    refreshed: await outcome(refreshed),
    logout: await outcome(logout),
    cookiesAfter,
    meAfter: await outcome(meAfter),
    firstAgain: await outcome(await spend(refreshToken)),
    rotatedAgain: await outcome(await spend(rotated)),
  };
}

describe.each(DIALECTS)('cookie authentication in Chromium (%s)', (dialect) => {
  let svc: RunningService;
  let alice: BlogUser;
  let draft: number;
  let api: string;
  let apiServer: http.Server;
  let pages: http.Server;
  let pagePort: number;
  let browser: Browser;
  const arrivals: Arrival[] = [];

  beforeAll(async () => {
    svc = await startBlog(dialect);
    // Staff: a publish that passed authentication would succeed, so only the CSRF defence stops it.
    alice = await makeUser(svc, { username: 'alice', is_staff: true });
    draft = await makeArticle(svc.database.db, { author_id: alice.id, title: 'A draft', is_published: false });
    apiServer = http.createServer((req, res) => {
      if (req.url === '/app/') {
        res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>blog</title>');
        return;
      }
      const cookie = /(?:^|; )__Secure-access_token=/.test(req.headers.cookie ?? '');
      let body = '';
      const end = res.end.bind(res) as (...args: unknown[]) => http.ServerResponse;
      res.end = ((...args: unknown[]) => {
        if (args[0] !== undefined && typeof args[0] !== 'function') body = String(args[0]);
        return end(...args);
      }) as typeof res.end;
      res.on('finish', () => arrivals.push({ method: req.method!, path: req.url!, cookie, status: res.statusCode, body }));
      svc.app(req, res);
    });
    api = `http://127.0.0.1:${await listen(apiServer)}`;
    pages = http.createServer((_req, res) =>
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>elsewhere</title>'),
    );
    pagePort = await listen(pages);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => apiServer?.close(resolve));
    await new Promise((resolve) => pages?.close(resolve));
    await svc?.close();
  });

  it('the documented example runs as written: login, me, a write, a bodiless refresh and logout by the cookies', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${api}/app/`);
      arrivals.length = 0;
      const run = await page.evaluate(documentedExample, { username: 'alice', password: alice.password });
      const invalid = { status: 401, body: { detail: 'Invalid refresh token' } };
      expect(run).toEqual({
        login: 200,
        me: 200,
        created: 201,
        refreshed: {
          status: 200,
          body: { access_token: expect.any(String), refresh_token: expect.any(String), token_type: 'bearer', expires_in: 900 },
        },
        logout: { status: 204, body: null },
        cookiesAfter: '',
        meAfter: { status: 401, body: { detail: 'Unauthorized' } },
        firstAgain: invalid,
        rotatedAgain: invalid,
      });
      expect(await context.cookies()).toEqual([]);
      // The refresh and the logout went without a body, as the page sent them.
      expect(
        arrivals.filter((a) => a.path === '/api/auth/refresh/' || a.path === '/api/auth/logout/').map((a) => [a.path, a.cookie, a.status]),
      ).toEqual([
        ['/api/auth/refresh/', true, 200],
        ['/api/auth/logout/', true, 204],
        ['/api/auth/refresh/', false, 401],
        ['/api/auth/refresh/', false, 401],
      ]);
    } finally {
      await context.close();
    }
  });

  it('a page of the same origin logs in, reads and writes with the cookies; other sites and origins cannot write', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${api}/app/`);
      const session = await page.evaluate(sameOriginSession, { username: 'alice', password: alice.password });
      expect(session).toEqual({
        login: 200,
        visible: ['__Host-csrftoken'],
        me: { status: 200, body: { id: alice.id, username: 'alice', email: 'alice@example.com', first_name: '', last_name: '' } },
        withoutToken: { status: 403, body: { error: 'forbidden', details: CSRF_TOKEN_REFUSED } },
        created: 201,
        published: { status: 200, body: { published: true } },
      });
      const kept = (await context.cookies()).map((c) => [c.name, c.domain, c.path, c.httpOnly, c.secure, c.sameSite]);
      expect(kept.sort()).toEqual([
        ['__Host-csrftoken', '127.0.0.1', '/', false, true, 'Lax'],
        ['__Secure-access_token', '127.0.0.1', '/api', true, true, 'Lax'],
        ['__Secure-refresh_token', '127.0.0.1', '/api/auth/', true, true, 'Lax'],
      ]);

      // Another site (localhost is not 127.0.0.1): the browser does not send the cookie.
      arrivals.length = 0;
      const otherSite = await context.newPage();
      await otherSite.goto(`http://localhost:${pagePort}/`);
      expect(await otherSite.evaluate(foreignPublish, { api, articleId: draft })).toEqual({
        readsCsrfCookie: false,
        cors: 'Failed to fetch',
        noCorsType: 'opaque',
      });
      expect(arrivals.filter((a) => a.method === 'POST')).toEqual([
        {
          method: 'POST',
          path: `/api/articles/${draft}/publish/`,
          cookie: false,
          status: 401,
          body: JSON.stringify({ detail: 'Unauthorized' }),
        },
      ]);

      // The same site on another port: the cookie is sent and csrftoken readable; the origin check refuses.
      arrivals.length = 0;
      const sameSite = await context.newPage();
      await sameSite.goto(`http://127.0.0.1:${pagePort}/`);
      expect(await sameSite.evaluate(foreignPublish, { api, articleId: draft })).toEqual({
        readsCsrfCookie: true,
        cors: 'Failed to fetch',
        noCorsType: 'opaque',
      });
      expect(arrivals.filter((a) => a.method === 'POST')).toEqual([
        {
          method: 'POST',
          path: `/api/articles/${draft}/publish/`,
          cookie: true,
          status: 403,
          body: JSON.stringify({ error: 'forbidden', details: CSRF_ORIGIN_REFUSED }),
        },
      ]);

      const row = await svc.database.db('articles').where({ id: draft }).first('is_published');
      expect(Boolean(row.is_published)).toBe(false);
    } finally {
      await context.close();
    }
  });
});
