/**
 * Routes as data: each generated or custom endpoint is a `Route`, registered on one Express router
 * in a fixed order (static segments before parameters), documented in OpenAPI, and known to the
 * fallback that answers 404 or 405. `expressHandler` binds an operation (operations/operation.ts) to Express:
 * the only place that turns a request into an operation's input and its reply into a response;
 * `operationRoute` builds a whole route from an operation, deriving its handlers and what its
 * documentation repeats of it.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { match } from 'path-to-regexp';
import { CookieAuth, type Authenticator } from '../auth/authenticators';
import { requestContext, type ServiceContext } from '../operations/context';
import { requireRoles } from '../operations/permissions';
import { rateLimit, type RateLimit } from '../operations/rate-limit';
import { sendJson, sendJsonText } from './send';
import { replicasOf, type Replicas } from '../db/replicas';
import { etagOfJson, noneMatchHits } from '../operations/conditional';
import { IDEMPOTENT_REPLAYED_HEADER } from '../operations/idempotency';
import { parseInput, runParsed, type Operation, type OperationInput, type PartSchema, type QueryValues } from '../operations/operation';
import { z } from '../core/zod';
import {
  CRUD_OPERATIONS,
  GENERIC_SUMMARIES,
  operationTitle,
  type CrudOperation,
  type GenericOperation,
  type PathKind,
  type ResourceNouns,
} from '../core/catalogue';

/**
 * The default behaviours' GenericMessageSchema: an object with string values, the documented body of
 * an operation's 400, 403 and 404 unless its resource names an `error_schema`.
 */
export const GenericMessageSchema = z.record(z.string(), z.string()).meta({ id: 'GenericMessageSchema' });

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete' | 'options' | 'head';

export interface RouteResponse {
  status: number;
  description: string;
  schema?: z.ZodType;
}

/** How an operation takes part in conditional requests (operations/conditional.ts). */
export interface ConditionalDoc {
  /** Its success responses carry an `ETag`. */
  etag?: boolean;
  /** A read: `If-None-Match` naming the current ETag is answered 304. */
  read?: boolean;
  /** A write to an existing row: `If-Match` is checked, and required with `'required'`. */
  ifMatch?: 'optional' | 'required';
}

export interface RouteDoc {
  operationId: string;
  summary?: string;
  /** The MCP tool's title, when it should not be the summary (not in the OpenAPI document). */
  title?: string;
  description?: string;
  tags: string[];
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  responses: RouteResponse[];
  /** Error statuses the hook answers itself → the body it sends (the spec's `errors`). */
  errors?: Record<string, Record<string, string>>;
  /** Documented for 400, 401, 403 and 404 (the default behaviours' error_schema). */
  errorSchema?: z.ZodType;
  /** Whether the operation requires a bearer token. */
  secured: boolean;
  /** Whether the access-token cookie authenticates it too (`CookieAuth` among its authenticators). */
  cookie?: boolean;
  /**
   * A route outside the API's request handling (the health routes): it reads no token and answers
   * only the responses listed, so neither a security requirement nor the common errors apply.
   */
  standalone?: boolean;
  /** Whether a rate limit applies: the 429 is documented. */
  throttled?: boolean;
  /** How the operation takes part in conditional requests (ETags), when it does. */
  conditional?: ConditionalDoc;
}

export interface Route {
  method: Method;
  /** Express path relative to the API's base path, e.g. `/articles/:pk/`. */
  path: string;
  /** Middleware and the view, in order (auth first). */
  handlers: RequestHandler[];
  doc?: RouteDoc;
}

function segments(path: string): string[] {
  return path.split('/').filter(Boolean);
}

const isParam = (segment: string) => segment.startsWith(':') || segment.startsWith('*');

/**
 * Whether `general` would catch requests meant for `specific` if registered first: same number of
 * segments, equal where both are static, and a parameter in `general` where `specific` is static
 * (e.g. `/articles/:pk/` and `/articles/search/`).
 */
export function shadows(general: Route, specific: Route): boolean {
  const g = segments(general.path);
  const s = segments(specific.path);
  if (g.length !== s.length) return false;
  let wider = false;
  for (let i = 0; i < g.length; i++) {
    if (g[i] === s[i]) continue;
    if (isParam(g[i]) && !isParam(s[i])) wider = true;
    else return false;
  }
  return wider;
}

/**
 * Routes in the order given (the spec's order), except that a route moves before the first route
 * that would shadow it: static paths are registered before parameter paths that match them.
 */
export function orderRoutes(routes: readonly Route[]): Route[] {
  const out: Route[] = [];
  for (const route of routes) {
    const i = out.findIndex((placed) => shadows(placed, route));
    if (i < 0) out.push(route);
    else out.splice(i, 0, route);
  }
  return out;
}

/** `/articles/:pk/` → `/articles/{pk}/` for OpenAPI. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

/**
 * The fallback after every route: a path some route matches with another method is a 405 with an
 * `Allow` header; any other path is a 404. Both are JSON.
 */
export function fallback(routes: readonly Route[]): RequestHandler {
  const matchers = routes.map((r) => ({ method: r.method.toUpperCase(), test: match(r.path, { decode: false, trailing: false }) }));
  return (req: Request, res: Response, _next: NextFunction) => {
    const allowed = new Set<string>();
    for (const m of matchers) if (m.test(req.path)) allowed.add(m.method);
    if (allowed.has('GET')) allowed.add('HEAD');
    if (allowed.size > 0 && !allowed.has(req.method)) {
      res.setHeader('Allow', [...allowed].sort().join(', '));
      sendJson(res, 405, { detail: 'Method Not Allowed' });
      return;
    }
    sendJson(res, 404, { detail: 'Not Found' });
  };
}

/** A view: the last handler of a route. Sync or async; Express 5 forwards a rejection to the error middleware. */
export type View = (req: Request, res: Response) => unknown;
/** Wraps a view; may run code before and after it, or answer instead of it. */
export type Decorator = (view: View) => View;

/**
 * `decorate_view`: applies decorators so that the first listed is outermost. Null entries are
 * ignored; works for sync and async views alike.
 */
export function decorateView(view: View, ...decorators: (Decorator | null | undefined)[]): View {
  return decorators.reduceRight<View>((inner, d) => (d ? d(inner) : inner), view);
}

/** `unique_view`: gives a view a stable unique name (its operation id). */
export function uniqueView<V extends View>(name: string, view: V): V {
  Object.defineProperty(view, 'name', { value: name });
  return view;
}

/** An operation as Express serves it: with the decorators that wrap its view. */
export interface ExpressOperation<
  P extends PartSchema = undefined,
  Q extends PartSchema = undefined,
  B extends PartSchema = undefined,
> extends Operation<P, Q, B> {
  /** Decorators of the view, the first listed outermost; null entries are ignored. */
  decorators?: readonly (Decorator | null)[];
}

declare global {
  namespace Express {
    interface Request {
      /**
       * The request's path parameters, query and body as the operation's schemas output them, set
       * before the decorators run: a decorator reads values already validated (and typed, e.g. an
       * integer key as a number), never the raw strings of a request that is about to be a 422.
       */
      validated?: { params: unknown; query: unknown; body: unknown };
    }
  }
}

/**
 * The Express handler of an operation: validates the request first (a 422 before any decorator,
 * hook or query runs), then runs a view named by the operation id, wrapped in the operation's
 * decorators, that runs the operation on the validated input and sends its reply.
 */
export function expressHandler<P extends PartSchema = undefined, Q extends PartSchema = undefined, B extends PartSchema = undefined>(
  service: ServiceContext,
  operation: ExpressOperation<P, Q, B>,
): RequestHandler {
  const view: View = async (req, res) => {
    // The input validated before the decorators ran; parsed here only for a view called without it.
    const input = (req.validated as OperationInput<P, Q, B> | undefined) ?? parseInput(operation, rawRequest(req));
    const { status, body, etag, replayed } = await runParsed(operation, input, service.db, (db) => requestContext(req, db, service), {
      transactions: service.transactions,
      req,
    });
    if (replayed) res.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const replicas = replicasOf(service.db);
      if (replicas) await sendCommitPosition(replicas, res);
    }
    if (status === 204) res.status(204).end();
    else if (operation.etag === 'body' && status === 200) sendTagged(req, res, body);
    else {
      if (etag !== undefined) res.setHeader('ETag', etag);
      sendJson(res, status, body);
    }
  };
  const decorated = uniqueView(operation.operationId, decorateView(view, ...(operation.decorators ?? [])));
  // Not an async function: a throw of parseInput goes to `next` as the view's rejection does, and the
  // view's promise is answered as it is, without a promise of its own to settle.
  return (req, res) => {
    req.validated = parseInput(operation, rawRequest(req));
    return decorated(req, res);
  };
}

/**
 * With read replicas, the answer of a write carries the primary's commit position after it, which
 * the client presents with its next requests to read its own writes (db/replicas.ts). A primary that
 * cannot tell it now leaves it out: the write has committed, and is answered.
 */
export const COMMIT_POSITION_HEADER = 'X-Commit-Position';

async function sendCommitPosition(replicas: Replicas, res: Response): Promise<void> {
  const position = await replicas.commitPosition().catch(() => undefined);
  if (position !== undefined) res.setHeader(COMMIT_POSITION_HEADER, position);
}

/**
 * A read's reply tagged with the hash of its body: 304 Not Modified, without a body, when the
 * request's `If-None-Match` names that ETag (conditional.ts).
 */
function sendTagged(req: Request, res: Response, body: unknown): void {
  const json = JSON.stringify(body) ?? 'null';
  const etag = etagOfJson(json);
  res.setHeader('ETag', etag);
  if (noneMatchHits(req.headers['if-none-match'], etag)) res.status(304).end();
  else sendJsonText(res, 200, json);
}

function rawRequest(req: Request) {
  return { params: req.params as Record<string, string>, query: req.query as QueryValues, body: req.body as unknown, headers: req.headers };
}

/**
 * What documentation adds to an operation; the rest of its `RouteDoc` (the operation id, the
 * schemas, whether a token is required, whether a rate limit applies) is derived from the route.
 */
export interface OperationDoc {
  /** One of the default behaviours' operations: its summary is theirs unless `summary` is given. */
  kind?: GenericOperation;
  summary?: string;
  /** The MCP tool's title, when it should not be the summary (not in the OpenAPI document). */
  title?: string;
  description?: string;
  tags: string[];
  /** The body of the success response; `responses` instead when there are several. */
  response?: z.ZodType;
  /** The success responses; by default the operation's status with `response`. */
  responses?: RouteResponse[];
  errors?: RouteDoc['errors'];
  /** Documented for 400, 403 and 404; by default `GenericMessageSchema`. */
  errorSchema?: z.ZodType;
  /** The documented path parameters when the operation does not validate them (it reads them as strings). */
  params?: z.ZodObject;
  /** The documented body when it is not the one the operation validates (a bulk body checked item by item). */
  body?: z.ZodType;
}

/** A route serving an operation: its place, who may call it, and what its documentation adds. */
export interface OperationRoute<P extends ObjectSchema, Q extends ObjectSchema, B extends PartSchema> {
  method: Method;
  /** Express path relative to the API's base path. */
  path: string;
  /** The authenticators tried in order; null: public (a token sent is still read). */
  auth: readonly Authenticator[] | null;
  /** Roles the caller must hold one of (`permission_roles`), checked after authentication. */
  roles?: readonly string[];
  /** Rate limits counting each request, after the roles. */
  throttles?: readonly RateLimit[];
  /**
   * Whether the operation writes an existing row whose lookup checks `If-Match` (documented; the
   * check itself is `rowLookup`'s), and whether the resource requires it.
   */
  ifMatch?: 'optional' | 'required';
  operation: ExpressOperation<P, Q, B>;
  doc: OperationDoc;
}

/** What the routes of one resource share: where they are served, and their documentation. */
export interface ResourceDoc extends ResourceNouns {
  /** The first segment of the resource's paths (`articles`). */
  base: string;
  /** The OpenAPI tag of every route of the resource. */
  tag: string;
  /** The viewset's `error_schema`, when it names one. */
  errorSchema?: z.ZodType;
}

/** A route of a resource: its documentation's tags and error schema default to the resource's. */
export type ResourceOperationRoute<P extends ObjectSchema, Q extends ObjectSchema, B extends PartSchema> = Omit<
  OperationRoute<P, Q, B>,
  'doc'
> & { doc?: Partial<OperationDoc> };

/**
 * One of a resource's five operations: its method, path, status and transaction are the default
 * behaviours' for its kind (`CRUD_OPERATIONS`), and its summary and title the generic ones.
 */
export type CrudRoute<P extends ObjectSchema, Q extends ObjectSchema, B extends PartSchema> = Omit<
  ResourceOperationRoute<P, Q, B>,
  'method' | 'path' | 'operation'
> & {
  kind: CrudOperation;
  operation: Omit<ExpressOperation<P, Q, B>, 'status' | 'transaction'>;
};

/** The path of a resource's operation: `/articles/`, `/articles/:pk/` (without the slash unless `SVC_APPEND_SLASH`). */
function resourcePath(base: string, kind: PathKind, slash: string): string {
  return kind === 'collection' ? `/${base}${slash}` : kind === 'item' ? `/${base}/:pk${slash}` : `/${base}/:pk/`;
}

/**
 * The route builder of one resource's routes: `operationRoute` with the resource's tag and error
 * schema, and the MCP titles of its generic operations naming it (`Create an article`); a route
 * naming one of the five operations' `kind` is served as the default behaviours serve that kind.
 */
export function resourceRoute(service: ServiceContext, resource: ResourceDoc) {
  const slash = service.settings.SVC_APPEND_SLASH ? '/' : '';
  return <P extends ObjectSchema = undefined, Q extends ObjectSchema = undefined, B extends PartSchema = undefined>(
    route: ResourceOperationRoute<P, Q, B> | CrudRoute<P, Q, B>,
  ): Route => {
    const served = 'kind' in route ? crudRoute(route, resource.base, slash) : route;
    const doc = served.doc ?? {};
    return operationRoute(service, {
      ...served,
      doc: {
        ...doc,
        title: doc.title ?? (doc.kind ? operationTitle(doc.kind, resource) : undefined),
        tags: doc.tags ?? [resource.tag],
        errorSchema: doc.errorSchema ?? resource.errorSchema,
      },
    });
  };
}

/** One of the five operations, served and documented as the default behaviours do its kind. */
function crudRoute<P extends ObjectSchema, Q extends ObjectSchema, B extends PartSchema>(
  { kind, operation, doc, ...route }: CrudRoute<P, Q, B>,
  base: string,
  slash: string,
): ResourceOperationRoute<P, Q, B> {
  const { method, pathKind, status, transaction } = CRUD_OPERATIONS[kind];
  return {
    ...route,
    method,
    path: resourcePath(base, pathKind, slash),
    operation: { ...operation, status, transaction },
    doc: { ...doc, kind },
  };
}

/** The description of a success status in the OpenAPI document. */
function statusText(status: number): string {
  return status === 201 ? 'Created' : status === 204 ? 'No Content' : 'OK';
}

/** The schema of path parameters or a query string: an object, or none. */
type ObjectSchema = z.ZodObject | undefined;

/** `Requires the role staff.` or `Requires one of the roles staff, editor.`, after the operation's own description. */
function describeRoles(description: string | undefined, roles: readonly string[]): string {
  const note = `Requires ${roles.length === 1 ? 'the role' : 'one of the roles'} ${roles.join(', ')}.`;
  return description ? `${description}\n\n${note}` : note;
}

/**
 * The route of an operation: authentication, the roles and rate limits, then the operation bound to
 * Express; documented under the operation's id with its own schemas, secured when it has
 * authenticators and throttled when it has rate limits.
 */
export function operationRoute<P extends ObjectSchema = undefined, Q extends ObjectSchema = undefined, B extends PartSchema = undefined>(
  service: ServiceContext,
  route: OperationRoute<P, Q, B>,
): Route {
  const { operation, doc, roles, throttles = [], ifMatch } = route;
  const conditional: ConditionalDoc | undefined =
    operation.etag || ifMatch ? { etag: operation.etag !== undefined, read: operation.etag === 'body', ifMatch } : undefined;
  return {
    method: route.method,
    path: route.path,
    handlers: [
      service.auth(route.auth),
      ...(roles ? [requireRoles(roles)] : []),
      ...throttles.map((limit) => rateLimit(service, limit)),
      expressHandler(service, operation),
    ],
    doc: {
      summary: doc.summary ?? (doc.kind ? GENERIC_SUMMARIES[doc.kind] : undefined),
      title: doc.title,
      tags: doc.tags,
      responses: doc.responses ?? [{ status: operation.status, description: statusText(operation.status), schema: doc.response }],
      errors: doc.errors,
      errorSchema: doc.errorSchema ?? GenericMessageSchema,
      operationId: operation.operationId,
      description: roles ? describeRoles(doc.description, roles) : doc.description,
      params: doc.params ?? operation.params,
      query: operation.query,
      body: doc.body ?? operation.body,
      secured: route.auth !== null,
      ...(route.auth?.includes(CookieAuth) ? { cookie: true } : {}),
      throttled: throttles.length > 0,
      ...(conditional ? { conditional } : {}),
    },
  };
}
