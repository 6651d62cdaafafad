/**
 * The Express application of a generated service: request ids and logs, CORS, metrics, body
 * parsing, routes, OpenAPI and Swagger UI, the JSON 404/405 fallback and the one error middleware
 * that renders every failure.
 */
import express, { type Express, type Request } from 'express';
import swaggerUi from 'swagger-ui-express';
import { jsonBody } from './body';
import { cors, corsSettings, type CorsSettings } from './cors';
import type { Db } from '../db/connection';
import { databaseOf } from '../db/database';
import { buildOpenApi, type ApiInfo } from './openapi';
import { documentConditionalRequests } from './openapi-conditional';
import { createLogger, logRequestError, requestLogging, type Logger } from './logging';
import { createMetrics, metricsEnabled, metricsHandler, type Metrics } from './metrics';
import { OutageMonitor } from '../db/outage';
import type { ExceptionHandlers } from '../operations/exceptions';
import { errorMiddleware } from './error-middleware';
import { healthRoutes } from './health';
import { COMMIT_POSITION_HEADER, fallback, orderRoutes, type Method, type Route } from './routes';
import { replicasOf } from '../db/replicas';
import { ConfigurationError, trustProxySetting, type Settings } from '../core/settings';
import { sendJson, sendJsonText } from './send';
import { MAX_URL_LENGTH } from './server';
import { docsPagePolicy, httpSecuritySettings, securityHeaders, type HttpSecuritySettings } from './security-headers';
import { AdminAuth } from '../auth/authenticators';
import { mcpRoute, mcpTools, requestInProcess } from './mcp';
import type { ServiceContext } from '../operations/context';
import type { KeyPair } from '../auth/tokens';

/** What a generated service's `createService` is given: the database and keys, and what overrides the settings' defaults. */
export interface ServiceOptions {
  db: Db;
  keys: KeyPair;
  /** Defaults to the spec's settings with `SVC_*` environment variables applied. */
  settings?: Settings;
  /** Request logs, and errors with their request's id; defaults to `createLogger()` (`SVC_LOG_LEVEL`, `NODE_ENV`). */
  logger?: Logger;
  /** Takes over the logging of unhandled errors and database outages from `logger`. */
  logError?: (error: unknown) => void;
  /** Defaults to the `SVC_CORS_*` variables: no cross-origin access unless `SVC_CORS_ORIGINS` lists origins. */
  cors?: CorsSettings;
  /** Served at `/metrics`; `false` serves none. Defaults to the database's and the requests' when `SVC_METRICS` is true. */
  metrics?: Metrics | false;
  /** Defaults to `SVC_SECURITY_HEADERS` and `SVC_DOCS`: security headers on, the docs public. */
  security?: HttpSecuritySettings;
}

/** What a generated service's `createService` answers: the Express app and the service's context. */
export interface Service {
  app: Express;
  context: ServiceContext;
}

export interface ApiOptions extends ApiInfo {
  settings: Settings;
  db: Db;
  routes: readonly Route[];
  /** The service's exception handlers (`ServiceContext.exceptionHandlers`), for the error middleware. */
  exceptionHandlers?: ExceptionHandlers;
  /** The older `views()` hook: registers its own routes on the API router (after the generated ones). */
  views?: (router: express.Router) => void;
  /**
   * Request logs, and unhandled errors (500s) and database outages with the id of the request that
   * met them; defaults to `createLogger()` (`SVC_LOG_LEVEL`, `NODE_ENV`).
   */
  logger?: Logger;
  /** Takes over the logging of unhandled errors and outages from `logger` (tests collect them). */
  logError?: (error: unknown) => void;
  /** Defaults to the `SVC_CORS_*` variables (`corsSettings()`): off unless origins are listed. */
  cors?: CorsSettings;
  /** Served at `/metrics`; `false` serves none. Defaults to metrics of `db` when `SVC_METRICS` is true. */
  metrics?: Metrics | false;
  /** Defaults to `SVC_SECURITY_HEADERS` and `SVC_DOCS` (`httpSecuritySettings()`): headers on, docs public. */
  security?: HttpSecuritySettings;
  /** The service context: authenticates the staff who may read the docs with `SVC_DOCS=staff`. */
  context?: ServiceContext;
}

/**
 * Whether a request holds more than one header `name` (in lower case). Node keeps the first
 * `Authorization` or `Host` in `req.headers` and drops the others; the raw headers still hold them all.
 */
function duplicateHeader(rawHeaders: readonly string[], name: string): boolean {
  let seen = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const raw = rawHeaders[i];
    if (raw.length === name.length && raw.toLowerCase() === name) {
      if (seen) return true;
      seen = true;
    }
  }
  return false;
}

/**
 * Where a request no Express route matches but a mounted handler serves (Swagger UI's files) keeps
 * its route label, in `res.locals`.
 */
const ROUTE_LABEL = 'svcRouteLabel';

/** Where the links the service builds start (pagination.ts): `SVC_PUBLIC_URL`, or nothing (a path). */
export const PUBLIC_URL_LOCAL = 'svcPublicUrl';

/** The methods whose routes read a body (body.ts refuses a non-JSON one on POST, PUT and PATCH only). */
const METHODS_WITH_BODY: ReadonlySet<Method> = new Set(['post', 'put', 'patch', 'delete']);

export function createApi(options: ApiOptions): Express {
  const { settings, db, basePath } = options;
  const logger = options.logger ?? createLogger();
  const logError: (error: unknown, req?: Request) => void =
    options.logError ?? ((error, req) => logRequestError(logger, req, error, 'unhandled error'));
  const outage = new OutageMonitor(db, options.logError ?? ((message, req) => logger.error({ reqId: req?.id }, message)));
  const metrics = options.metrics ?? (metricsEnabled() ? createMetrics({ db }) : false);
  const corsConfig = options.cors ?? corsSettings();
  const corsHandler = cors(corsConfig);
  // The pages CookieAuth lets write with the cookies besides the service's own: the listed origins.
  if (options.context) options.context.trustedOrigins = corsConfig.origins.filter((origin) => origin !== '*');
  const security = options.security ?? httpSecuritySettings();
  if (security.docs === 'staff' && !options.context) throw new ConfigurationError('SVC_DOCS=staff needs a service with authentication');
  const app = express();
  const served = orderRoutes([...healthRoutes(db, outage), ...options.routes]);
  // The OpenAPI document, built once: served at /openapi.json, and read for the MCP endpoint's tools.
  let document: unknown;
  const openApiDocument = () => (document ??= documentConditionalRequests(buildOpenApi(options, served), basePath, served));
  const routes = settings.SVC_MCP
    ? orderRoutes([
        ...served,
        mcpRoute({
          name: options.title,
          version: options.version,
          tools: mcpTools(openApiDocument(), served, basePath),
          send: (from, request) => requestInProcess(app, from, request),
          docs: security.docs,
          docsRequest: { method: 'get', url: `${basePath}/openapi.json`, headers: {} },
        }),
      ])
    : served;
  app.locals[PUBLIC_URL_LOCAL] = security.publicUrl;
  app.disable('x-powered-by');
  app.set('strict routing', true);
  app.set('case sensitive routing', true);
  app.set('query parser', 'simple');
  // The proxies that may say who the client is (X-Forwarded-For), for req.ip and the client address.
  app.set('trust proxy', trustProxySetting());
  // Express's router routes every request: the app-level middleware, then the application's routes
  // at their full paths, in the order they are added here. Only the routes of a `views()` hook are on
  // a router mounted at the base path, their paths relative to it.
  const appRoutes = new WeakSet<object>();
  const route = (method: Method, path: string, ...handlers: express.RequestHandler[]) => {
    const added = app.route(path);
    added[method](...handlers);
    appRoutes.add(added);
  };
  if (security.headers) app.use(securityHeaders());
  app.use(
    requestLogging({
      logger,
      // The route's pattern: an application route's is its full path, a `views()` route's is below the base path.
      routeOf: (req) =>
        req.route
          ? appRoutes.has(req.route)
            ? req.route.path
            : basePath + req.route.path
          : (req.res?.locals[ROUTE_LABEL] as string | undefined),
      onFinish: metrics ? (req, res, route, seconds) => metrics.observe(req.method, route, res.statusCode, seconds) : undefined,
    }),
  );
  // Where the database serves reads beside its pool (SQLite), the requests received together share read snapshots.
  const reads = databaseOf(db).reads;
  app.use((req, res, next) => {
    reads?.requestsArrived();
    if (req.url.length > MAX_URL_LENGTH) sendJson(res, 414, { detail: 'URI Too Long' });
    else if (req.headers.authorization !== undefined && duplicateHeader(req.rawHeaders, 'authorization')) {
      // RFC 6750 §3.1: a request that is malformed, here with two credentials, is an invalid_request.
      res.setHeader('WWW-Authenticate', 'Bearer error="invalid_request"');
      sendJson(res, 400, { detail: 'Bad Request' });
    } else if (duplicateHeader(req.rawHeaders, 'host')) {
      // RFC 9112 §3.2: a request with more than one Host header field is answered 400.
      sendJson(res, 400, { detail: 'Bad Request' });
    } else next();
  });
  // With read replicas, what the reads of each request may use of them (db/replicas.ts): GET and HEAD
  // read from a replica, one that has replayed the commit position the request presents, if any.
  const replicas = replicasOf(db);
  if (replicas) {
    const header = COMMIT_POSITION_HEADER.toLowerCase();
    app.use((req, _res, next) => {
      const presented = req.headers[header];
      const position = typeof presented === 'string' && replicas.validPosition(presented.trim()) ? presented.trim() : undefined;
      replicas.within({ replica: req.method === 'GET' || req.method === 'HEAD', position }, next);
    });
  }
  if (corsHandler) app.use(corsHandler);
  if (metrics) route('get', '/metrics', metricsHandler(metrics));

  // Bodies are read by the routes of the methods that carry one (and by every route of `views()`).
  const body = jsonBody({ limit: 1024 * 1024 });
  const register = (r: Route) => route(r.method, basePath + r.path, ...(METHODS_WITH_BODY.has(r.method) ? [body] : []), ...r.handlers);
  // The health routes first: probes come often, and no other route can take their paths.
  for (const r of routes) if (r.doc?.standalone) register(r);

  if (security.docs !== 'off') {
    let openapi: string | undefined;
    const openapiUrl = `${basePath}/openapi.json`;
    const staffOnly = security.docs === 'staff' ? [options.context!.auth([AdminAuth])] : [];
    route('get', openapiUrl, ...staffOnly, (_req, res) => {
      openapi ??= JSON.stringify(openApiDocument());
      sendJsonText(res, 200, openapi);
    });
    // Swagger UI fetches its document without a token: with `staff` the page is not served.
    if (security.docs === 'public') {
      const ui = { customSiteTitle: options.title, swaggerUrl: openapiUrl, swaggerOptions: { persistAuthorization: true } };
      const policy = docsPagePolicy(swaggerUi.generateHTML(undefined, ui));
      route('get', `${basePath}/docs`, (req, res, next) =>
        req.originalUrl.split('?')[0].endsWith('/') ? next() : res.redirect(301, `${basePath}/docs/`),
      );
      // Swagger UI answers every request under its prefix.
      const docsLabel: express.RequestHandler = (_req, res, next) => {
        // Its page and files under one route label (the logs' and /metrics'), as a route pattern would.
        res.locals[ROUTE_LABEL] = `${basePath}/docs/*`;
        next();
      };
      app.use(
        `${basePath}/docs/`,
        docsLabel,
        ...(security.headers
          ? [((_req, res, next) => (res.setHeader('Content-Security-Policy', policy), next())) as express.RequestHandler]
          : []),
        swaggerUi.serveFiles(undefined, { swaggerUrl: openapiUrl }),
        swaggerUi.setup(undefined, ui),
      );
    }
  }

  for (const r of routes) if (!r.doc?.standalone) register(r);
  const api = express.Router({ strict: true, caseSensitive: true });
  api.use(body);
  options.views?.(api);
  api.use(fallback(routes));
  app.use(basePath || '/', api);
  app.use(fallback([]));
  app.use(errorMiddleware(settings, options.exceptionHandlers ?? [], logError, outage, options.context?.conflicts));
  return app;
}
