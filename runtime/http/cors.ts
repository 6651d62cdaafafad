/**
 * Cross-origin requests (CORS) through the `cors` package, for browsers on other origins calling the API.
 *
 * Off unless `SVC_CORS_ORIGINS` lists origins (`https://app.example.com,http://localhost:3000`, or
 * `*` for any). For a request whose `Origin` is listed:
 * - a preflight (`OPTIONS` with `Access-Control-Request-Method`) is answered 204 at once, before any
 *   route or authentication, with `Access-Control-Allow-Origin`, `-Allow-Methods`
 *   (`SVC_CORS_METHODS`), `-Allow-Headers` (`SVC_CORS_HEADERS`), `-Max-Age` (`SVC_CORS_MAX_AGE`
 *   seconds) and, with `SVC_CORS_CREDENTIALS=true`, `-Allow-Credentials: true`;
 * - any other request is served as usual, with `Access-Control-Allow-Origin`,
 *   `Access-Control-Expose-Headers` (`SVC_CORS_EXPOSE_HEADERS`) and the credentials header.
 * A request from an origin not listed gets no `Access-Control-*` header (its preflight goes on to
 * the routes: 405, as without CORS), so the browser refuses the answer to the page.
 */
import corsMiddleware from 'cors';
import type { RequestHandler } from 'express';
import { ConfigurationError } from '../core/settings';

export interface CorsSettings {
  /** Allowed origins (`scheme://host[:port]`, lower case); `['*']` for any; empty: CORS off. */
  origins: readonly string[];
  methods: readonly string[];
  headers: readonly string[];
  exposeHeaders: readonly string[];
  credentials: boolean;
  /** Seconds a browser may cache a preflight's answer. */
  maxAge: number;
}

export const DEFAULT_CORS: CorsSettings = Object.freeze({
  origins: [],
  methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
  // If-Match and If-None-Match: conditional requests (operations/conditional.ts), whose ETag is exposed;
  // X-CSRF-Token: the double-submit token of writes authenticated by a cookie (auth/cookies.ts);
  // Idempotency-Key: a POST's retry key, whose replayed answers say Idempotent-Replayed (operations/idempotency.ts).
  headers: ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-Match', 'If-None-Match', 'X-CSRF-Token', 'X-Request-Id'],
  exposeHeaders: ['ETag', 'Idempotent-Replayed', 'Retry-After', 'WWW-Authenticate', 'X-Commit-Position', 'X-Request-Id'],
  credentials: false,
  maxAge: 600,
});

const ORIGIN = /^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$|^https?:\/\/\[[0-9a-f:.]+\](:\d{1,5})?$/;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function list(env: NodeJS.ProcessEnv, name: string, fallback: readonly string[]): string[] {
  const raw = env[name];
  if (raw === undefined) return [...fallback];
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function tokens(env: NodeJS.ProcessEnv, name: string, fallback: readonly string[]): string[] {
  const values = list(env, name, fallback);
  const bad = values.find((v) => !TOKEN.test(v));
  if (bad !== undefined) throw new ConfigurationError(`${name} must be a comma-separated list of names, got "${bad}"`);
  return values;
}

/** The `SVC_CORS_*` variables, checked: a bad value is a ConfigurationError at start. */
export function corsSettings(env: NodeJS.ProcessEnv = process.env): CorsSettings {
  const origins = list(env, 'SVC_CORS_ORIGINS', []).map((o) => o.toLowerCase().replace(/\/$/, ''));
  for (const origin of origins) {
    if (origin !== '*' && !ORIGIN.test(origin)) {
      throw new ConfigurationError(
        `SVC_CORS_ORIGINS must list origins like https://app.example.com (scheme, host, optional port), got "${origin}"`,
      );
    }
  }
  if (origins.includes('*') && origins.length > 1)
    throw new ConfigurationError('SVC_CORS_ORIGINS: "*" cannot be combined with other origins');
  const rawCredentials = env.SVC_CORS_CREDENTIALS?.trim() ?? 'false';
  let credentials: boolean;
  if (/^(true|1|yes|on)$/i.test(rawCredentials)) credentials = true;
  else if (/^(false|0|no|off)$/i.test(rawCredentials)) credentials = false;
  else throw new ConfigurationError(`SVC_CORS_CREDENTIALS must be true or false, got "${env.SVC_CORS_CREDENTIALS}"`);
  if (credentials && origins.includes('*')) {
    throw new ConfigurationError('SVC_CORS_CREDENTIALS=true needs the origins listed: "*" would let every site send credentials');
  }
  const rawMaxAge = env.SVC_CORS_MAX_AGE?.trim() ?? String(DEFAULT_CORS.maxAge);
  if (!/^\d{1,9}$/.test(rawMaxAge))
    throw new ConfigurationError(`SVC_CORS_MAX_AGE must be a number of seconds, got "${env.SVC_CORS_MAX_AGE}"`);
  return {
    origins,
    methods: tokens(env, 'SVC_CORS_METHODS', DEFAULT_CORS.methods).map((m) => m.toUpperCase()),
    headers: tokens(env, 'SVC_CORS_HEADERS', DEFAULT_CORS.headers),
    exposeHeaders: tokens(env, 'SVC_CORS_EXPOSE_HEADERS', DEFAULT_CORS.exposeHeaders),
    credentials,
    maxAge: Number(rawMaxAge),
  };
}

/**
 * The CORS middleware (the `cors` package), or undefined when no origin is allowed. Header values
 * are joined once, here, with `, `. Which origins are listed, and which requests are preflights, is
 * told before `cors` runs, so that an origin not listed gets no `Access-Control-*` header (but
 * `Vary: Origin`) and goes on as without CORS, an `OPTIONS` without `Access-Control-Request-Method`
 * is served as any request, and a preflight's 204 has no `Content-Length` (which a 204 must not have).
 */
export function cors(settings: CorsSettings): RequestHandler | undefined {
  if (settings.origins.length === 0) return undefined;
  const any = settings.origins[0] === '*';
  const allowed = new Set(settings.origins);
  // `*`, or the request's own origin echoed (with `Vary: Origin`).
  const origin = any ? '*' : true;
  const credentials = settings.credentials;
  const preflight = corsMiddleware({
    origin,
    credentials,
    methods: settings.methods.join(', '),
    // An empty list: no Access-Control-Allow-Headers (`cors` would echo the request's headers for none).
    allowedHeaders: settings.headers.length > 0 ? settings.headers.join(', ') : [],
    maxAge: settings.maxAge,
    preflightContinue: true,
  });
  const actual = corsMiddleware({
    origin,
    credentials,
    // What `cors` would add to an OPTIONS request that is not a preflight: nothing but the exposed headers.
    methods: '',
    allowedHeaders: [],
    exposedHeaders: settings.exposeHeaders.length > 0 ? settings.exposeHeaders.join(', ') : undefined,
    preflightContinue: true,
  });
  const answerPreflight = (res: Parameters<RequestHandler>[1]) => {
    res.statusCode = 204;
    res.end();
  };
  return (req, res, next) => {
    if (!any) res.vary('Origin');
    const from = req.headers.origin;
    if (from === undefined || !(any || allowed.has(from.toLowerCase()))) return next();
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined)
      preflight(req, res, () => answerPreflight(res));
    else actual(req, res, next);
  };
}
