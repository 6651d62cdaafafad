/**
 * Security headers through helmet, but the CSPs, written here because helmet joins a policy's
 * directives with `;` where the service sends `; `; and who may read the API's documentation.
 *
 * With `SVC_SECURITY_HEADERS` true (the default), every response the application sends carries:
 * - `X-Content-Type-Options: nosniff`: a browser never reads a JSON answer as a script or a page;
 * - `Referrer-Policy: no-referrer`: the API links nowhere, and Swagger UI calls only its own origin,
 *   so no page of the service has a reason to tell another site where it came from;
 * - `X-Frame-Options: DENY` and the CSP's `frame-ancestors 'none'`: no site may frame a page of the
 *   service (clickjacking of the Swagger UI page);
 * - `Cross-Origin-Opener-Policy: same-origin`: a page of another origin that opens one of the
 *   service's gets no handle on its window;
 * - `Content-Security-Policy: default-src 'none'; frame-ancestors 'none'` on the API's answers (JSON
 *   loads and runs nothing), and on the Swagger UI page (`{base}/docs/`) a policy that lets it run:
 *   scripts, styles, images and calls from its own origin only, its inline `<style>` blocks (two in
 *   the page, one its scripts add) and its one inline `style` attribute by their SHA-256 hashes, images also as `data:` URLs (the icons
 *   of its style sheet). No inline script and no `eval`.
 * `SVC_SECURITY_HEADERS=false` sends none of them (a proxy in front sets its own).
 *
 * `SVC_DOCS` says who may read the OpenAPI document (`{base}/openapi.json`) and Swagger UI
 * (`{base}/docs/`): `public` (the default) anyone; `off` no one (both answer the JSON 404
 * `{"detail": "Not Found"}`); `staff` only a caller with a valid access token of a staff user (the
 * document answers 401 or 403 as a route with `AdminAuth`). A browser cannot send a bearer token
 * when it opens a page, nor Swagger UI when it fetches its document, so with `staff` the Swagger UI
 * page is not served (404): staff read the document with their token (`curl -H 'Authorization:
 * Bearer …'`) and open it in a tool of their own.
 */
import { createHash } from 'node:crypto';
import type { RequestHandler } from 'express';
import helmet from 'helmet';
import { ConfigurationError } from '../core/settings';

/** The policy of the API's answers: they load nothing and may not be framed. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/** The headers every response carries with `SVC_SECURITY_HEADERS` true, but the CSP (helmet sets them). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
});

export const DOCS_ACCESS = ['public', 'off', 'staff'] as const;
export type DocsAccess = (typeof DOCS_ACCESS)[number];

export interface HttpSecuritySettings {
  /** `SVC_SECURITY_HEADERS`: whether responses carry the security headers. */
  headers: boolean;
  /** `SVC_DOCS`: who may read the OpenAPI document and Swagger UI. */
  docs: DocsAccess;
  /**
   * `SVC_PUBLIC_URL`: the service's URL as its clients reach it (`https://api.example.com`, with
   * the path a proxy serves it under, if any), without a trailing slash. The links the service
   * builds (cursor pagination's `next` and `previous`) are this and the request's path and query;
   * unset, they are the path and query alone (a relative reference). Never the request's `Host`.
   */
  publicUrl?: string;
}

/** `SVC_PUBLIC_URL` checked: an http or https URL without query, fragment or credentials; undefined when unset. */
export function publicUrlSetting(value: string | undefined): string | undefined {
  const raw = value?.trim();
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigurationError(`SVC_PUBLIC_URL must be an http or https URL, got "${value}"`);
  }
  if (!/^https?:$/.test(url.protocol) || url.search || url.hash || url.username || url.password || raw.includes('?') || raw.includes('#')) {
    throw new ConfigurationError(`SVC_PUBLIC_URL must be an http or https URL without query, fragment or credentials, got "${value}"`);
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** `SVC_SECURITY_HEADERS`, `SVC_DOCS` and `SVC_PUBLIC_URL`, checked: a bad value is a ConfigurationError at start. */
export function httpSecuritySettings(env: NodeJS.ProcessEnv = process.env): HttpSecuritySettings {
  const rawHeaders = env.SVC_SECURITY_HEADERS?.trim() ?? 'true';
  let headers: boolean;
  if (/^(true|1|yes|on)$/i.test(rawHeaders)) headers = true;
  else if (/^(false|0|no|off)$/i.test(rawHeaders)) headers = false;
  else throw new ConfigurationError(`SVC_SECURITY_HEADERS must be true or false, got "${env.SVC_SECURITY_HEADERS}"`);
  const docs = (env.SVC_DOCS?.trim().toLowerCase() || 'public') as DocsAccess;
  if (!DOCS_ACCESS.includes(docs)) throw new ConfigurationError(`SVC_DOCS must be one of ${DOCS_ACCESS.join(', ')}, got "${env.SVC_DOCS}"`);
  const publicUrl = publicUrlSetting(env.SVC_PUBLIC_URL);
  return publicUrl === undefined ? { headers, docs } : { headers, docs, publicUrl };
}

/**
 * The middleware that sets the security headers (helmet, with only `SECURITY_HEADERS` on) and the
 * API's CSP. The CSP is set here, not by helmet: helmet joins a policy's directives with `;` alone,
 * and the service sends them joined with `; ` (as the Swagger UI page's policy, `docsPagePolicy`).
 */
export function securityHeaders(): RequestHandler {
  const headers = helmet({
    contentSecurityPolicy: false,
    crossOriginEmbedderPolicy: false,
    crossOriginOpenerPolicy: { policy: 'same-origin' },
    crossOriginResourcePolicy: false,
    originAgentCluster: false,
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: false,
    xContentTypeOptions: true,
    xDnsPrefetchControl: false,
    xDownloadOptions: false,
    xFrameOptions: { action: 'deny' },
    xPermittedCrossDomainPolicies: false,
    // The application disables Express's X-Powered-By itself.
    xPoweredBy: false,
    xXssProtection: false,
  });
  return (req, res, next) => {
    res.setHeader('content-security-policy', API_CSP);
    headers(req, res, next);
  };
}

/**
 * The `<style>` elements Swagger UI's scripts add to the page: the logo of its top bar
 * (swagger-ui-standalone-preset.js of swagger-ui-dist 5). A test holds that the script still has it.
 */
export const SWAGGER_UI_SCRIPT_STYLES: readonly string[] = ['.logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}'];

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * The CSP of a Swagger UI page: what `html` holds inline (its `<style>` blocks, its `style`
 * attributes) allowed by hash, everything else from the page's own origin. Inline scripts are
 * refused: the page has none (swagger-ui-express serves its start-up as `swagger-ui-init.js`).
 */
export function docsPagePolicy(html: string): string {
  const styles = [...[...html.matchAll(/<style[^>]*>([\s\S]*?)<\/style>/gi)].map((m) => m[1]), ...SWAGGER_UI_SCRIPT_STYLES].map(sha256);
  const attributes = [...html.matchAll(/\sstyle="([^"]*)"/gi)].map((m) => sha256(m[1]));
  const unique = (values: string[]) => [...new Set(values)].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self' ${unique(styles)}`.trimEnd(),
    attributes.length ? `style-src-attr 'unsafe-hashes' ${unique(attributes)}` : "style-src-attr 'none'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
