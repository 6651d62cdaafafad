/**
 * The Express application of a generated service: request ids and logs, CORS, metrics, body
 * parsing, routes, OpenAPI and Swagger UI, the JSON 404/405 fallback and the one error middleware
 * that renders every failure.
 */
import express, { type ErrorRequestHandler, type Express, type Request } from 'express';
import swaggerUi from 'swagger-ui-express';
import { ZodError } from 'zod';
import { bodyParserError, jsonBody } from './body';
import { cors, corsSettings, type CorsSettings } from './cors';
import { dialectOf, requestsArrived, type Db } from './db';
import {
  ApiException,
  IntegrityError,
  isConstraintViolation,
  RETRY_AFTER_SECONDS,
  ServiceUnavailableError,
  TooManyRequestsError,
  ValidationError,
} from './errors';
import { buildOpenApi, type ApiInfo } from './openapi';
import { createLogger, logRequestError, requestLogging, type Logger } from './logging';
import { createMetrics, metricsEnabled, metricsHandler, type Metrics } from './metrics';
import { isConnectionFailure, OutageMonitor } from './outage';
import { fallback, orderRoutes, type Method, type Route, type RouteDoc } from './routes';
import type { Settings } from './settings';
import { sendJson, sendJsonText } from './send';
import { toEntries } from './validation';
import { z } from './zod';

/** What an exception handler answers instead of the default body. */
export interface HandledResponse {
  status: number;
  body: unknown;
}

export type ExceptionHandler<E = any> = (req: Request, error: E) => HandledResponse | Promise<HandledResponse>;

// Exception classes are looked up by constructor; `abstract new` admits every class.
export type ExceptionClass = abstract new (...args: any[]) => unknown;

export interface ApiOptions extends ApiInfo {
  settings: Settings;
  db: Db;
  routes: readonly Route[];
  exceptionHandlers?: ReadonlyArray<readonly [ExceptionClass, ExceptionHandler]>;
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
}

/** The methods whose routes read a body (body.ts refuses a non-JSON one on POST, PUT and PATCH only). */
const METHODS_WITH_BODY: ReadonlySet<Method> = new Set(['post', 'put', 'patch', 'delete']);

/** The longest request target (path and query string) served, in bytes; longer is a 414. */
export const MAX_URL_LENGTH = 8192;

export function createApi(options: ApiOptions): Express {
  const { settings, db, basePath } = options;
  const logger = options.logger ?? createLogger();
  const logError: (error: unknown, req?: Request) => void =
    options.logError ?? ((error, req) => logRequestError(logger, req, error, 'unhandled error'));
  const outage = new OutageMonitor(db, options.logError ?? ((message, req) => logger.error({ reqId: req?.id }, message)));
  const metrics = options.metrics ?? (metricsEnabled() ? createMetrics({ db }) : false);
  const corsHandler = cors(options.cors ?? corsSettings());
  const routes = orderRoutes([...healthRoutes(db, outage), ...options.routes]);
  const app = express();
  EXCEPTION_HANDLERS.set(app, options.exceptionHandlers ?? []);
  app.disable('x-powered-by');
  app.set('strict routing', true);
  app.set('case sensitive routing', true);
  app.set('query parser', 'simple');
  // Routes sit on the application itself, at their full paths: a request walks one router. Only the
  // routes of a `views()` hook are on a router mounted at the base path, their paths relative to it.
  const appRoutes = new WeakSet<object>();
  const route = (path: string) => {
    const r = app.route(path);
    appRoutes.add(r);
    return r;
  };
  app.use(
    requestLogging({
      logger,
      routeOf: (req) => (req.route ? (appRoutes.has(req.route) ? req.route.path : basePath + req.route.path) : undefined),
      onFinish: metrics ? (req, res, route, seconds) => metrics.observe(req.method, route, res.statusCode, seconds) : undefined,
    }),
  );
  // SQLite: the requests received together share read snapshots (see requestsArrived).
  const arrived = dialectOf(db) === 'sqlite' ? requestsArrived : undefined;
  app.use((req, res, next) => {
    arrived?.();
    if (req.url.length > MAX_URL_LENGTH) sendJson(res, 414, { detail: 'URI Too Long' });
    else next();
  });
  if (corsHandler) app.use(corsHandler);
  if (metrics) route('/metrics').get(metricsHandler(metrics));

  // Bodies are read by the routes of the methods that carry one (and by every route of `views()`).
  const body = jsonBody({ limit: '1mb' });
  const register = (r: Route) => route(basePath + r.path)[r.method](...(METHODS_WITH_BODY.has(r.method) ? [body] : []), ...r.handlers);
  // The health routes first: probes come often, and no other route can take their paths.
  for (const r of routes) if (r.doc?.standalone) register(r);

  let openapi: string | undefined;
  const openapiUrl = `${basePath}/openapi.json`;
  route(openapiUrl).get((_req, res) => {
    openapi ??= JSON.stringify(buildOpenApi(options, routes));
    sendJsonText(res, 200, openapi);
  });
  route(`${basePath}/docs`).get((req, res, next) => (req.originalUrl.split('?')[0].endsWith('/') ? next() : res.redirect(301, `${basePath}/docs/`)));
  app.use(`${basePath}/docs/`, swaggerUi.serveFiles(undefined, { swaggerUrl: openapiUrl }), swaggerUi.setup(undefined, {
    customSiteTitle: options.title,
    swaggerUrl: openapiUrl,
    swaggerOptions: { persistAuthorization: true },
  }));

  for (const r of routes) if (!r.doc?.standalone) register(r);
  const api = express.Router({ strict: true, caseSensitive: true });
  api.use(body);
  options.views?.(api);
  api.use(fallback(routes));
  app.use(basePath || '/', api);
  app.use(fallback([]));
  app.use(errorMiddleware(settings, options.exceptionHandlers ?? [], logError, outage));
  return app;
}

const HealthSchema = z.object({ status: z.literal('ok') }).openapi('HealthSchema');
const UnavailableSchema = z.object({ detail: z.literal('Service Unavailable') }).openapi('ServiceUnavailableSchema');

/**
 * `GET /health` (liveness) answers while the process serves requests, without touching the database;
 * `GET /health/ready` (readiness) also runs `select 1`: a 503 with `Retry-After` while the database
 * cannot answer, which starts or continues the logged outage like any request failing on it.
 */
function healthRoutes(db: Db, outage: OutageMonitor): Route[] {
  const ok = { status: 'ok' } as const;
  const doc = (operationId: string, summary: string, unavailable: boolean): RouteDoc => ({
    operationId,
    summary,
    tags: ['Health'],
    secured: false,
    standalone: true,
    responses: [
      { status: 200, description: 'OK', schema: HealthSchema },
      ...(unavailable ? [{ status: 503, description: 'Service Unavailable: the database does not answer', schema: UnavailableSchema }] : []),
    ],
  });
  return [
    {
      method: 'get',
      path: '/health',
      handlers: [(_req, res) => sendJson(res, 200, ok)],
      doc: doc('health_live', 'Liveness: the service is up (the database is not queried).', false),
    },
    {
      method: 'get',
      path: '/health/ready',
      handlers: [
        async (_req, res) => {
          try {
            await db.raw('select 1');
          } catch (err) {
            if (isConnectionFailure(err)) outage.failed(err);
            res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
            sendJson(res, 503, { detail: 'Service Unavailable' });
            return;
          }
          sendJson(res, 200, ok);
        },
      ],
      doc: doc('health_ready', 'Readiness: the service is up and its database answers.', true),
    },
  ];
}

/**
 * Driver constraint errors become IntegrityError, connection failures ServiceUnavailableError; a
 * ZodError thrown by custom code becomes the 400 validation body.
 */
function normalize(err: unknown): unknown {
  if (err instanceof ApiException) return err;
  if (isConstraintViolation(err)) return new IntegrityError(err);
  if (isConnectionFailure(err)) return new ServiceUnavailableError(err);
  if (err instanceof ZodError) return new ValidationError(toEntries(err.issues, []));
  return err;
}

/** Each API's exception handlers, for the errors `handledError` renders. */
const EXCEPTION_HANDLERS = new WeakMap<object, ReadonlyArray<readonly [ExceptionClass, ExceptionHandler]>>();

/**
 * What the error middleware would answer for `error` met while serving `req`, for a part of a
 * request that answers on its own (an item of a bulk request): the registered exception handler's
 * response, else an ApiException's status and body (a driver's constraint error is the 409).
 * Undefined for the errors that fail the whole request: an unavailable database and unhandled errors.
 */
export async function handledError(req: Request, error: unknown): Promise<HandledResponse | undefined> {
  const err = normalize(error);
  if (err instanceof ServiceUnavailableError) return undefined;
  const handler = findHandler(err, EXCEPTION_HANDLERS.get(req.app) ?? []);
  if (handler) return handler(req, err);
  return err instanceof ApiException ? { status: err.status_code, body: err.body() } : undefined;
}

/** A URL Express cannot decode (a bad percent escape in a path parameter) is the client's fault. */
function isUndecodableUrl(err: unknown): boolean {
  const { name, status } = (err ?? {}) as { name?: unknown; status?: unknown };
  return name === 'URIError' && status === 400;
}

function findHandler(err: unknown, handlers: ReadonlyArray<readonly [ExceptionClass, ExceptionHandler]>): ExceptionHandler | undefined {
  if (!err || typeof err !== 'object') return undefined;
  // The most specific registered class wins: walk the prototype chain from the error's own class.
  for (let proto = Object.getPrototypeOf(err); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    const entry = handlers.find(([cls]) => cls.prototype === proto);
    if (entry) return entry[1];
  }
  return undefined;
}

export function errorMiddleware(
  settings: Settings,
  handlers: ReadonlyArray<readonly [ExceptionClass, ExceptionHandler]>,
  logError: (error: unknown, req?: Request) => void,
  outage?: OutageMonitor,
): ErrorRequestHandler {
  return async (rawErr, req, res, next) => {
    if (res.headersSent) return next(rawErr);
    const body = bodyParserError(rawErr);
    if (body) {
      res.set(body.headers);
      sendJson(res, body.status, { detail: body.detail });
      return;
    }
    if (isUndecodableUrl(rawErr)) {
      sendJson(res, 400, { detail: 'Bad Request' });
      return;
    }
    const err = normalize(rawErr);
    if (err instanceof ServiceUnavailableError && err.cause !== undefined) outage?.failed(err.cause, req);
    // The one place a 503 or 429 gets its Retry-After, whoever answers it (an exception handler too).
    if (err instanceof ServiceUnavailableError || err instanceof TooManyRequestsError) res.set('Retry-After', String(err.retryAfter));
    try {
      const handler = findHandler(err, handlers);
      if (handler) {
        const out = await handler(req, err);
        send(out.status, out.body);
        return;
      }
    } catch (handlerError) {
      return renderUnhandled(handlerError);
    }
    if (err instanceof ApiException) {
      send(err.status_code, err.body());
      return;
    }
    renderUnhandled(err);

    /** Every 401 carries a challenge (RFC 6750): the one authentication set, else a plain `Bearer`. */
    function send(status: number, body: unknown) {
      if (status === 401 && !res.get('WWW-Authenticate')) res.set('WWW-Authenticate', 'Bearer');
      sendJson(res, status, body);
    }

    function renderUnhandled(error: unknown) {
      logError(error, req);
      if (settings.SVC_DEBUG) {
        res.status(500).type('text/plain').send(error instanceof Error ? (error.stack ?? String(error)) : String(error));
      } else {
        sendJson(res, 500, { detail: 'Internal Server Error' });
      }
    }
  };
}
