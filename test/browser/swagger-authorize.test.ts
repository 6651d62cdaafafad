/**
 * Swagger UI in a real headless Chromium: entering `Bearer <ACCESS_TOKEN>` in Authorize makes
 * "Try it out" on a protected endpoint succeed, and without it the same call is a 401; all of it
 * under the page's Content-Security-Policy, which the browser reports no violation of.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser';
import request from 'supertest';
import { startBlog, type RunningService } from '../support/services';

jest.setTimeout(120_000);

describe('Swagger UI Authorize flow', () => {
  let svc: RunningService;
  let server: Server;
  let base: string;
  let browser: Browser;
  let token: string;

  beforeAll(async () => {
    svc = await startBlog('sqlite');
    const reg = await request(svc.app)
      .post('/api/auth/register/')
      .send({ username: 'swagger', email: 'swagger@example.com', password: 'pw-123456' });
    expect(reg.status).toBe(201);
    token = reg.body.access_token;
    server = svc.app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
    await svc?.close();
  });

  async function tryMe(page: Page): Promise<string> {
    const op = page.locator('#operations-auth-me');
    await op.locator('.opblock-summary').first().click();
    await op.locator('button.try-out__btn').click();
    await op.locator('button.execute').click();
    const status = op.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor();
    return (await status.innerText()).trim();
  }

  it('calls a protected endpoint after Authorize with "Bearer <ACCESS_TOKEN>"', async () => {
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    await page.exposeFunction('reportViolation', (text: string) => violations.push(text));
    await page.addInitScript(
      "document.addEventListener('securitypolicyviolation', (e) => window.reportViolation(e.violatedDirective + ' ' + e.blockedURI))",
    );
    const response = await page.goto(`${base}/api/docs/`);
    const csp = response?.headers()['content-security-policy'] ?? '';
    expect(csp).toMatch(/^default-src 'none'; script-src 'self'; style-src 'self' 'sha256-/);
    expect(csp).not.toMatch(/unsafe-eval|unsafe-inline/);
    expect(csp).toContain("frame-ancestors 'none'");
    await page.locator('#operations-auth-me').waitFor();

    expect(await tryMe(page)).toBe('401');

    await page.locator('button.authorize').first().click();
    // The blog's document has two schemes (BearerAuth, and CookieAuth for browsers): the bearer one's form.
    const bearer = page.locator('.modal-ux form').filter({ hasText: 'BearerAuth' });
    await bearer.locator('input[type=text]').fill(`Bearer ${token}`);
    await bearer.locator('.auth-btn-wrapper button.authorize').click();
    await page.locator('.modal-ux button.btn-done').first().click();

    await page.locator('#operations-auth-me button.execute').click();
    const body = page.locator('#operations-auth-me .live-responses-table .response .response-col_description .microlight').first();
    await page.locator('#operations-auth-me .live-responses-table .response .response-col_status', { hasText: /^\s*200\s*$/ }).waitFor();
    expect(JSON.parse(await body.innerText())).toEqual({
      id: 1,
      username: 'swagger',
      email: 'swagger@example.com',
      first_name: '',
      last_name: '',
    });
    expect(violations).toEqual([]);
    await page.close();
  });
});
