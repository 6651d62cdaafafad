/**
 * Cookie authentication for browsers: the account endpoints of a service with `auth.cookies` set
 * keep the tokens in cookies, and the built-in `CookieAuth` authenticator reads the access token
 * from its cookie, refusing a write that does not pass the CSRF defence.
 *
 * Three cookies, set together at login, registration and refresh, cleared together at logout:
 * - `access_token`: the access token; `HttpOnly`, `Path` the service's base path, `Max-Age`
 *   `SVC_ACCESS_TOKEN_LIFETIME`;
 * - `refresh_token`: the refresh token; `HttpOnly`, `Path` the account routes that read it (refresh
 *   and logout), so no other request carries it, `Max-Age` `SVC_REFRESH_TOKEN_LIFETIME`;
 * - `csrftoken`: a random value the page's script reads (not `HttpOnly`) and echoes in the
 *   `X-CSRF-Token` header of its writes, `Path=/` so that a page anywhere on the site can read it,
 *   `Max-Age` `SVC_REFRESH_TOKEN_LIFETIME`.
 * Each is `Secure` unless `SVC_AUTH_COOKIE_SECURE` is false, and `SameSite` `SVC_AUTH_COOKIE_SAMESITE`
 * (`Lax` or `Strict`).
 *
 * The CSRF defence of a write (any method but GET, HEAD and OPTIONS) authenticated by a cookie is
 * two checks, both required:
 * 1. origin: a request a browser marks as coming from a page (`Origin`, else `Sec-Fetch-Site`) must
 *    come from the service's own origin (the `Origin`'s host is the request's `Host`) or one listed
 *    in `SVC_CORS_ORIGINS`; a `cross-site` fetch without `Origin` is refused too;
 * 2. double submit: `X-CSRF-Token` must equal the `csrftoken` cookie (compared in constant time).
 *    Another site can make the browser send the cookies, but cannot read them to write the header.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { ForbiddenError } from '../core/errors';
import type { Settings } from '../core/settings';

export const ACCESS_COOKIE = 'access_token';
export const REFRESH_COOKIE = 'refresh_token';
export const CSRF_COOKIE = 'csrftoken';
export const CSRF_HEADER = 'X-CSRF-Token';

/** Where the cookies are sent: the API's base path, and the account routes that read the refresh token. */
export interface CookiePaths {
  /** The base path of the API (`/` without one). */
  path: string;
  /** The longest path both the refresh and the logout route lie under. */
  refreshPath: string;
}

/** The request's cookies by name (the first of a repeated name); values are taken as sent, unquoted. */
export function requestCookies(req: Pick<Request, 'headers'>): Record<string, string> {
  const header = req.headers.cookie;
  const cookies: Record<string, string> = {};
  if (!header) return cookies;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    const name = pair.slice(0, eq).trim();
    let value = pair.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (name && !(name in cookies)) cookies[name] = value;
  }
  return cookies;
}

/** One cookie of the request, or undefined. */
export function requestCookie(req: Pick<Request, 'headers'>, name: string): string | undefined {
  return requestCookies(req)[name] || undefined;
}

function setCookie(settings: Settings, name: string, value: string, attributes: { path: string; maxAge: number; httpOnly: boolean }): string {
  const parts = [`${name}=${value}`, `Path=${attributes.path}`, `Max-Age=${attributes.maxAge}`];
  if (attributes.httpOnly) parts.push('HttpOnly');
  if (settings.SVC_AUTH_COOKIE_SECURE) parts.push('Secure');
  parts.push(`SameSite=${settings.SVC_AUTH_COOKIE_SAMESITE}`);
  return parts.join('; ');
}

function appendCookies(res: Response | undefined, cookies: string[]): void {
  if (!res) return;
  const previous = res.getHeader('Set-Cookie');
  const before = previous === undefined ? [] : Array.isArray(previous) ? previous : [String(previous)];
  res.setHeader('Set-Cookie', [...before, ...cookies]);
}

/** Sets the three cookies of a session: the access and refresh tokens given, and a new CSRF token. */
export function setAuthCookies(req: Request, settings: Settings, paths: CookiePaths, tokens: { access: string; refresh: string }): void {
  const csrf = randomBytes(32).toString('base64url');
  appendCookies(req.res, [
    setCookie(settings, ACCESS_COOKIE, tokens.access, { path: paths.path, maxAge: settings.SVC_ACCESS_TOKEN_LIFETIME, httpOnly: true }),
    setCookie(settings, REFRESH_COOKIE, tokens.refresh, { path: paths.refreshPath, maxAge: settings.SVC_REFRESH_TOKEN_LIFETIME, httpOnly: true }),
    setCookie(settings, CSRF_COOKIE, csrf, { path: '/', maxAge: settings.SVC_REFRESH_TOKEN_LIFETIME, httpOnly: false }),
  ]);
}

/** Clears the three cookies (each with the attributes it was set with, and `Max-Age=0`). */
export function clearAuthCookies(req: Request, settings: Settings, paths: CookiePaths): void {
  appendCookies(req.res, [
    setCookie(settings, ACCESS_COOKIE, '', { path: paths.path, maxAge: 0, httpOnly: true }),
    setCookie(settings, REFRESH_COOKIE, '', { path: paths.refreshPath, maxAge: 0, httpOnly: true }),
    setCookie(settings, CSRF_COOKIE, '', { path: '/', maxAge: 0, httpOnly: false }),
  ]);
}

/** Methods that change nothing, which never need the CSRF defence. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

export const CSRF_ORIGIN_REFUSED = 'CSRF check failed: the request comes from another site';
export const CSRF_TOKEN_REFUSED = `CSRF check failed: the ${CSRF_HEADER} header is missing or does not match the ${CSRF_COOKIE} cookie`;

function sameDigest(a: string, b: string): boolean {
  // Digests of equal length, so that the comparison takes the same time whatever the lengths sent.
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db) && a.length === b.length;
}

/** Whether a page at `origin` may write with the cookies: the service's own origin, or a trusted one. */
function originAllowed(req: Request, origin: string, trusted: readonly string[]): boolean {
  if (trusted.includes(origin.toLowerCase())) return true;
  let host: string;
  try {
    host = new URL(origin).host;
  } catch {
    return false;
  }
  return host !== '' && host === req.headers.host?.toLowerCase();
}

/**
 * Throws the 403 of a write authenticated by a cookie that fails the CSRF defence; safe methods
 * pass. `trusted` are the origins of `SVC_CORS_ORIGINS` (`*` trusts none: it is no list of sites).
 */
export function checkCsrf(req: Request, trusted: readonly string[]): void {
  if (SAFE_METHODS.has(req.method)) return;
  const origin = req.headers.origin;
  if (origin !== undefined) {
    if (!originAllowed(req, origin, trusted)) throw new ForbiddenError('forbidden', CSRF_ORIGIN_REFUSED);
  } else if (req.headers['sec-fetch-site'] === 'cross-site') {
    throw new ForbiddenError('forbidden', CSRF_ORIGIN_REFUSED);
  }
  const sent = req.headers[CSRF_HEADER.toLowerCase()];
  const cookie = requestCookie(req, CSRF_COOKIE);
  if (typeof sent !== 'string' || !sent || cookie === undefined || !sameDigest(sent, cookie)) {
    throw new ForbiddenError('forbidden', CSRF_TOKEN_REFUSED);
  }
}
