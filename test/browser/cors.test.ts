/**
 * CORS in a real headless Chromium: a page served on another origin calls the blog with fetch.
 * From an origin in SVC_CORS_ORIGINS, the list, a JSON login and a bearer `GET /auth/me/` succeed
 * (the last two after a preflight); from an origin not listed each fails with "Failed to fetch".
 *
 * The page is served at http://127.0.0.1:P (allowed) and, by the same server, http://localhost:P
 * (another origin: not allowed); the blog at http://127.0.0.1:Q.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../support/browser';
import request from 'supertest';
import { corsSettings } from '../../runtime/http/cors';
import { DIALECTS } from '../support/databases';
import { startBlog, type RunningService } from '../support/services';

jest.setTimeout(120_000);

async function listen(server: http.Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return (server.address() as AddressInfo).port;
}

/** What the page's script reports for each call: the status and body, or the error's message. */
type Outcome = { status: number; body: unknown } | { error: string };

/** Runs in the page: list, login, me, one after the other, through fetch. */
async function callBlog({ api, username, password }: { api: string; username: string; password: string }): Promise<Outcome[]> {
  const call = async (path: string, init?: RequestInit): Promise<Outcome> => {
    try {
      const res = await fetch(api + path, init);
      return { status: res.status, body: await res.json() };
    } catch (err) {
      return { error: (err as Error).message };
    }
  };
  const list = await call('/api/articles/');
  const login = await call('/api/auth/login/', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username, password }),
  });
  const token = 'status' in login ? (login.body as { access_token?: string }).access_token : undefined;
  const me = await call('/api/auth/me/', { headers: { Authorization: `Bearer ${token ?? 'none'}` } });
  return [list, login, me];
}

describe.each(DIALECTS)('a page on another origin calling the blog (%s)', (dialect) => {
  let pages: http.Server;
  let pagePort: number;
  let svc: RunningService;
  let server: http.Server;
  let api: string;
  let browser: Browser;

  beforeAll(async () => {
    pages = http.createServer((_req, res) =>
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>client</title>'),
    );
    pagePort = await listen(pages);
    svc = await startBlog(dialect, {}, { cors: corsSettings({ SVC_CORS_ORIGINS: `http://127.0.0.1:${pagePort}` }) });
    const reg = await request(svc.app)
      .post('/api/auth/register/')
      .send({ username: 'browser', email: 'browser@example.com', password: 'pw-123456' });
    expect(reg.status).toBe(201);
    server = http.createServer(svc.app);
    api = `http://127.0.0.1:${await listen(server)}`;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
    await new Promise((resolve) => pages?.close(resolve));
    await svc?.close();
  });

  async function fromPage(origin: string): Promise<Outcome[]> {
    const page = await browser.newPage();
    try {
      await page.goto(`${origin}/`);
      return await page.evaluate(callBlog, { api, username: 'browser', password: 'pw-123456' });
    } finally {
      await page.close();
    }
  }

  it('succeeds from an allowed origin: list, JSON login, bearer /auth/me/', async () => {
    const [list, login, me] = await fromPage(`http://127.0.0.1:${pagePort}`);
    expect(list).toEqual({ status: 200, body: { count: 0, items: [] } });
    expect(login).toMatchObject({ status: 200, body: { access_token: expect.any(String), refresh_token: expect.any(String) } });
    expect(me).toEqual({ status: 200, body: { id: 1, username: 'browser', email: 'browser@example.com', first_name: '', last_name: '' } });
  });

  it('fails with "Failed to fetch" from an origin not listed', async () => {
    const outcomes = await fromPage(`http://localhost:${pagePort}`);
    expect(outcomes).toEqual([{ error: 'Failed to fetch' }, { error: 'Failed to fetch' }, { error: 'Failed to fetch' }]);
  });
});
