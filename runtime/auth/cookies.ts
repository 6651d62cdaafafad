/**
 * Cookie authentication for browsers: the account endpoints of a service with `auth.cookies` set
 * keep the tokens in cookies, and the built-in `CookieAuth` authenticator reads the access token
 * from its cookie, refusing a write that does not pass the CSRF defence.
 *
 * Three cookies, set together at login, registration and refresh, cleared together at logout:
 * - `__Secure-access_token`: the access token; `HttpOnly`, `Path` the service's base path, `Max-Age`
 *   `SVC_ACCESS_TOKEN_LIFETIME`;
 * - `__Secure-refresh_token`: the refresh token; `HttpOnly`, `Path` the account routes that read it
 *   (refresh and logout), so no other request carries it, `Max-Age` `SVC_REFRESH_TOKEN_LIFETIME`;
 * - `__Host-csrftoken`: the CSRF token the page's script reads (not `HttpOnly`) and echoes in the
 *   `X-CSRF-Token` header of its writes, `Path=/` so that a page anywhere on the site can read it,
 *   `Max-Age` `SVC_REFRESH_TOKEN_LIFETIME`.
 * Each is `Secure` unless `SVC_AUTH_COOKIE_SECURE` is false, and `SameSite` `SVC_AUTH_COOKIE_SAMESITE`
 * (`Lax` or `Strict`). The prefixes are the strongest the attributes allow (`cookieNames`): a browser
 * keeps a `__Host-` cookie only if it is `Secure`, has `Path=/` and no `Domain`, a `__Secure-` one
 * only if it is `Secure`, and neither can be set by a sibling subdomain or over plain http; with
 * `SVC_AUTH_COOKIE_SECURE` false the cookies are not `Secure`, so they carry no prefix (a browser
 * would refuse them) and are named without it.
 *
 * The CSRF token is bound to the session (OWASP's signed double-submit cookie):
 * `<random>.<HMAC-SHA256(key, random + "." + user id)>`, the key derived from the signing key
 * (`TokenService.csrfKey`), the user id the `sub` of the request's token. A token planted by a
 * sibling subdomain (cookie tossing), even one the service issued to another account, does not
 * verify for the victim's session.
 *
 * The CSRF defence of a write (any method but GET, HEAD and OPTIONS) authenticated by a cookie is
 * two checks, both required:
 * 1. origin: a request a browser marks as coming from a page (`Origin`, else `Sec-Fetch-Site`) must
 *    come from the service's own origin (the `Origin`'s host is the request's `Host`) or one listed
 *    in `SVC_CORS_ORIGINS`; a `cross-site` fetch without `Origin` is refused too;
 * 2. signed double submit: `X-CSRF-Token` must equal the CSRF cookie (compared in constant time),
 *    and the cookie's signature must verify for the session's user. Another site can make the
 *    browser send the cookies, but cannot read them to write the header, nor sign a token.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { ForbiddenError } from '../core/errors';
import type { Settings } from '../core/settings';

/** The cookies' names without their prefixes (`cookieNames` gives the names set and read). */
export const ACCESS_COOKIE = 'access_token';
export const REFRESH_COOKIE = 'refresh_token';
export const CSRF_COOKIE = 'csrftoken';
export const CSRF_HEADER = 'X-CSRF-Token';

/** The names of the three cookies under the settings. */
export interface CookieNames {
  access: string;
  refresh: string;
  csrf: string;
}

/**
 * The cookies' names: with `Secure` (`SVC_AUTH_COOKIE_SECURE`, the default), the strongest prefix
 * each one's attributes allow: `__Host-` for the CSRF cookie (`Path=/`, no `Domain`), `__Secure-`
 * for the access and refresh cookies (narrower paths); without `Secure`, no prefix.
 */
export function cookieNames(secure: boolean | undefined): CookieNames {
  return secure === false
    ? { access: ACCESS_COOKIE, refresh: REFRESH_COOKIE, csrf: CSRF_COOKIE }
    : { access: `__Secure-${ACCESS_COOKIE}`, refresh: `__Secure-${REFRESH_COOKIE}`, csrf: `__Host-${CSRF_COOKIE}` };
}

/** What binds a CSRF token to its session: the key that signs it and the session's user id. */
export interface CsrfBinding {
  /** `TokenService.csrfKey()`: derived from the signing key. */
  key: Buffer;
  /** The `sub` of the session's tokens. */
  session: string;
}

function csrfSignature(binding: CsrfBinding, random: string): string {
  return createHmac('sha256', binding.key).update(`${random}.${binding.session}`).digest('base64url');
}

/** A new CSRF token bound to the session: `<random>.<signature>`. */
export function newCsrfToken(binding: CsrfBinding): string {
  const random = randomBytes(32).toString('base64url');
  return `${random}.${csrfSignature(binding, random)}`;
}

/** Whether a CSRF token was signed for this session (compared in constant time). */
function csrfTokenValid(token: string, binding: CsrfBinding): boolean {
  const dot = token.indexOf('.');
  if (dot <= 0) return false;
  return sameDigest(token.slice(dot + 1), csrfSignature(binding, token.slice(0, dot)));
}

/**
 * The `sub` a token names, read without verifying it (the CSRF check of a refresh or a logout by the
 * cookie runs before the refresh token is verified, which refuses a forged one anyway); undefined
 * when the token has no readable `sub`.
 */
export function unverifiedSubject(token: string): string | undefined {
  const payload = token.split('.')[1];
  if (!payload) return undefined;
  try {
    const sub = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))?.sub;
    return typeof sub === 'string' ? sub : undefined;
  } catch {
    return undefined;
  }
}

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

function setCookie(
  settings: Settings,
  name: string,
  value: string,
  attributes: { path: string; maxAge: number; httpOnly: boolean },
): string {
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

/** Sets the three cookies of a session: the access and refresh tokens given, and a new CSRF token bound to it. */
export function setAuthCookies(
  req: Request,
  settings: Settings,
  paths: CookiePaths,
  tokens: { access: string; refresh: string },
  csrf: CsrfBinding,
): void {
  const names = cookieNames(settings.SVC_AUTH_COOKIE_SECURE);
  appendCookies(req.res, [
    setCookie(settings, names.access, tokens.access, { path: paths.path, maxAge: settings.SVC_ACCESS_TOKEN_LIFETIME, httpOnly: true }),
    setCookie(settings, names.refresh, tokens.refresh, {
      path: paths.refreshPath,
      maxAge: settings.SVC_REFRESH_TOKEN_LIFETIME,
      httpOnly: true,
    }),
    setCookie(settings, names.csrf, newCsrfToken(csrf), { path: '/', maxAge: settings.SVC_REFRESH_TOKEN_LIFETIME, httpOnly: false }),
  ]);
}

/** Clears the three cookies (each with the attributes it was set with, and `Max-Age=0`). */
export function clearAuthCookies(req: Request, settings: Settings, paths: CookiePaths): void {
  const names = cookieNames(settings.SVC_AUTH_COOKIE_SECURE);
  appendCookies(req.res, [
    setCookie(settings, names.access, '', { path: paths.path, maxAge: 0, httpOnly: true }),
    setCookie(settings, names.refresh, '', { path: paths.refreshPath, maxAge: 0, httpOnly: true }),
    setCookie(settings, names.csrf, '', { path: '/', maxAge: 0, httpOnly: false }),
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
 * pass. `trusted` are the origins of `SVC_CORS_ORIGINS` (`*` trusts none: it is no list of sites);
 * `csrfCookie` the CSRF cookie's name (`cookieNames`); `binding` the session the token must be
 * signed for (a token without a session to verify against is refused).
 */
export function checkCsrf(
  req: Request,
  trusted: readonly string[],
  csrfCookie: string,
  binding: Partial<CsrfBinding> & { key: Buffer },
): void {
  if (SAFE_METHODS.has(req.method)) return;
  const origin = req.headers.origin;
  if (origin !== undefined) {
    if (!originAllowed(req, origin, trusted)) throw new ForbiddenError('forbidden', CSRF_ORIGIN_REFUSED);
  } else if (req.headers['sec-fetch-site'] === 'cross-site') {
    throw new ForbiddenError('forbidden', CSRF_ORIGIN_REFUSED);
  }
  const sent = req.headers[CSRF_HEADER.toLowerCase()];
  const cookie = requestCookie(req, csrfCookie);
  const { key, session } = binding;
  if (
    typeof sent !== 'string' ||
    !sent ||
    cookie === undefined ||
    !sameDigest(sent, cookie) ||
    session === undefined ||
    !csrfTokenValid(cookie, { key, session })
  ) {
    throw new ForbiddenError('forbidden', CSRF_TOKEN_REFUSED);
  }
}
