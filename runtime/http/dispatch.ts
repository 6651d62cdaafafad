/**
 * Direct dispatch: the service's own routes served without walking Express's router.
 *
 * Express hands every request to its router, which walks its stack layer by layer: for each layer
 * it reads the URL's path, runs the layer's regular expression, trims and restores mount prefixes,
 * and it wraps the callback that restores the request's state. Through the app-level middleware
 * and a few dozen routes that walk was about 7 % of the CPU of a health check. Here the
 * application's `handle` does what Express's does to the request and response, runs the
 * app-level middleware as one chain, and looks the route up in a table built once: static paths
 * in a Map, the others matched segment by segment, tried in the order they were added (the
 * order Express tried them in), with Express's semantics: HEAD served by a GET route, strict and
 * case-sensitive paths, parameters decoded as the router decodes them (a malformed escape is the
 * router's 400 error), `next('route')`, a rejected promise forwarded as an error.
 *
 * What still goes through Express's router, as before: a request no route of the table takes (the
 * `views()` routes, OPTIONS, the 404/405 fallback), and one a prefix of the table takes (the
 * docs, mounted with `app.use` before the routes). The app-level middleware are no longer on that
 * router: they ran before it, once. An error goes to the error middleware, as the router sends
 * one there (every layer after the routes but the error middleware ignores errors).
 */
import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response } from 'express';
import { match } from 'path-to-regexp';
import { ExpressRoute, finalHandler, MATCHED_ROUTE, parseUrl, type ExpressRouteObject } from './express-internals';
import type { Method } from './routes';
import { inheritsDirectly } from './server';

type Params = Record<string, string>;
/**
 * A path's parameters, undefined when the path does not match; throws the router's 400 on a
 * malformed escape. `parts` is the path split at its slashes, given to the matchers that split it.
 */
type Matcher = (path: string, parts: string[]) => Params | undefined;

interface TableRoute {
  /** The Express route, as `req.route` (its `path` is the full pattern, `req[MATCHED_ROUTE]`). */
  route: ExpressRouteObject;
  /** The method, upper-case. */
  method: string;
  handlers: readonly RequestHandler[];
  match: Matcher;
  /** Whether `match` reads the path split at its slashes. */
  split: boolean;
}

/** A prefix mounted on Express's router with `app.use` among the routes: a request it takes is Express's. */
interface TablePrefix {
  route?: undefined;
  prefix: (path: string) => boolean;
}

type Entry = TableRoute | TablePrefix;

/** Decodes a path parameter as the router does (router/lib/layer.js `decodeParam`). */
function decodeParam(value: string): string {
  if (value.length === 0 || value.indexOf('%') === -1) return value;
  try {
    return decodeURIComponent(value);
  } catch (err) {
    if (err instanceof URIError) Object.assign(err, { message: `Failed to decode param '${value}'`, status: 400, statusCode: 400 });
    throw err;
  }
}

/** A segment matched as is, or a whole-segment `:name` parameter; anything else is left to path-to-regexp. */
const SIMPLE_SEGMENT = /^(?:[^:*?+!(){}[\]\\]*|:[A-Za-z_$][A-Za-z0-9_$]*)$/;

/**
 * The matcher of a route's full path, as the router's with strict and case-sensitive routing: a
 * static path is one string; `:name` matches one non-empty segment (path-to-regexp's `[^/]+`).
 */
function matcherOf(pattern: string): { match: Matcher; split: boolean } {
  const segments = pattern.split('/');
  if (!segments.every((s) => SIMPLE_SEGMENT.test(s))) {
    const test = match(pattern, { sensitive: true, end: true, trailing: false, decode: decodeParam });
    return {
      split: false,
      match: (path) => {
        const found = test(path);
        return found ? (found.params as Params) : undefined;
      },
    };
  }
  const names = segments.map((s) => (s.startsWith(':') ? s.slice(1) : undefined));
  if (names.every((name) => name === undefined)) return { split: false, match: (path) => (path === pattern ? Object.create(null) : undefined) };
  return { split: true, match: matchSegments(segments, names) };
}

function matchSegments(segments: readonly string[], names: readonly (string | undefined)[]): Matcher {
  return (_path, parts) => {
    if (parts.length !== segments.length) return undefined;
    for (let i = 0; i < parts.length; i++) if (names[i] === undefined ? parts[i] !== segments[i] : parts[i] === '') return undefined;
    const params: Params = Object.create(null);
    for (let i = 0; i < parts.length; i++) if (names[i] !== undefined) params[names[i]!] = decodeParam(parts[i]);
    return params;
  };
}

const isStatic = (pattern: string) => !/[:*?+!(){}[\]\\]/.test(pattern);

/** The routes and prefixes of the application, in the order Express would try them. */
export class RouteTable {
  private readonly entries: Entry[] = [];
  private readonly statics: string[] = [];

  /** Adds a route at its full path (`basePath + path`); returns the Express route that is `req.route`. */
  route(method: Method, pattern: string, handlers: readonly RequestHandler[]): ExpressRouteObject {
    const route = new ExpressRoute(pattern);
    route[method](...handlers);
    this.entries.push({ route, method: method.toUpperCase(), handlers, ...matcherOf(pattern) });
    if (isStatic(pattern)) this.statics.push(pattern);
    return route;
  }

  /**
   * Marks where a prefix is mounted on Express's router with `app.use(prefix, ...)`: matched as
   * the router matches a mount path (case-sensitive, not strict, not to the end).
   */
  prefix(prefix: string): void {
    const test = match(prefix === '/' ? prefix : prefix.replace(/\/+$/, ''), { sensitive: true, end: false, trailing: true, decode: false });
    this.entries.push({ prefix: (path) => test(path) !== false });
  }

  /**
   * The entries to try for a path, in order: for each static route path, those that can match it
   * (the static routes of that path, parameter routes that match it, prefixes that take it); for
   * any other path, every entry but the static routes.
   */
  lookup(): (path: string) => readonly Entry[] {
    const matches = (entry: Entry, path: string) => {
      if (!entry.route) return entry.prefix(path);
      try {
        return entry.match(path, path.split('/')) !== undefined;
      } catch {
        return true;
      }
    };
    const byPath = new Map<string, Entry[]>();
    for (const path of this.statics) byPath.set(path, this.entries.filter((entry) => matches(entry, path)));
    const others = this.entries.filter((entry) => !entry.route || !isStatic(entry.route.path));
    return (path) => byPath.get(path) ?? others;
  }
}

export interface DirectDispatch {
  /** The app-level middleware, in order: they run for every request, before any route. */
  middleware: readonly RequestHandler[];
  table: RouteTable;
  /** The error middleware, the last layer of the router. */
  errorHandler: ErrorRequestHandler;
}

/** The prototype of a response's `locals`: nothing to inherit, no `__proto__` setter. */
const LOCALS_PROTOTYPE: object = Object.freeze(Object.create(null));

const noop = () => undefined;
const UNSPLIT: string[] = [];
const isPromise = (value: unknown): value is PromiseLike<unknown> =>
  value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function';

/** Runs a handler as the router's Layer does: a throw or a rejected promise goes to `next` as an error. */
function call(fn: RequestHandler, req: Request, res: Response, next: NextFunction): void {
  try {
    const ret: unknown = fn(req, res, next);
    if (isPromise(ret)) ret.then(noop, (err: unknown) => next(err || new Error('Rejected promise')));
  } catch (err) {
    next(err);
  }
}

function callOnError(fn: ErrorRequestHandler, err: unknown, req: Request, res: Response, next: NextFunction): void {
  try {
    const ret: unknown = fn(err, req, res, next);
    if (isPromise(ret)) ret.then(noop, (error: unknown) => next(error || new Error('Rejected promise')));
  } catch (error) {
    next(error);
  }
}

/**
 * Replaces `app.handle` (what `app(req, res)` calls) with the direct dispatch of `table`; the
 * router of `app` must hold neither the middleware nor the table's routes.
 */
export function directDispatch(app: Express, { middleware, table, errorHandler }: DirectDispatch): void {
  if (!app.enabled('strict routing') || !app.enabled('case sensitive routing')) {
    throw new Error('direct dispatch matches paths as strict, case-sensitive routing does');
  }
  type Handle = (req: Request, res: Response, callback?: (err?: unknown) => void) => void;
  const expressApp = app as unknown as { handle: Handle; request: object; response: object };
  const viaRouter = expressApp.handle;
  const entriesOf = table.lookup();
  const chain = middleware.filter((fn) => fn.length <= 3);

  // Where the router would end: the callback given to `app.handle`, or Express's final handler.
  const finish = (req: Request, res: Response, callback: ((err?: unknown) => void) | undefined, err: unknown) =>
    (callback ?? finalHandler(req, res, { env: app.get('env'), onerror: (error: unknown) => app.get('env') !== 'test' && console.error(error) }))(err);
  const exit = (req: Request, res: Response, callback: ((err?: unknown) => void) | undefined, err: unknown) =>
    void setImmediate(finish, req, res, callback, err === 'route' || err === 'router' ? null : err);
  // What the router sets on entering a layer `app.use` added (no path): the layer's parameters and pattern.
  const enterMiddleware = (req: Request) => {
    req.params = {};
    if (MATCHED_ROUTE) (req as unknown as Record<symbol, unknown>)[MATCHED_ROUTE] = '/';
  };
  // An error skips every layer but the error middleware, the router's last.
  const fail = (req: Request, res: Response, callback: ((err?: unknown) => void) | undefined, err: unknown) => {
    enterMiddleware(req);
    callOnError(errorHandler, err, req, res, (next?: unknown) => exit(req, res, callback, next));
  };

  /** Tries the entries from `from` on: the first route that takes the request runs; else the router. */
  function dispatch(req: Request, res: Response, callback: ((err?: unknown) => void) | undefined, path: string, entries: readonly Entry[], from: number): void {
    const method = req.method;
    let parts: string[] | undefined;
    for (let k = from; k < entries.length; k++) {
      const entry = entries[k];
      if (!entry.route) {
        if (entry.prefix(path)) return viaRouter.call(app, req, res, callback);
        continue;
      }
      let params: Params | undefined;
      try {
        params = entry.match(path, entry.split ? (parts ??= path.split('/')) : UNSPLIT);
      } catch (err) {
        return fail(req, res, callback, err);
      }
      if (params === undefined) continue;
      const takes = entry.method === method || (method === 'HEAD' && entry.method === 'GET');
      // A HEAD request enters every route of its path, as with the router: one without GET passes it on.
      if (!takes && method !== 'HEAD') continue;
      req.route = entry.route;
      if (MATCHED_ROUTE) (req as unknown as Record<symbol, unknown>)[MATCHED_ROUTE] = entry.route.path;
      req.params = params;
      if (!takes) continue;
      const { handlers } = entry;
      let i = 0;
      const next = (err?: unknown): void => {
        if (err === 'route') return dispatch(req, res, callback, path, entries, k + 1);
        if (err === 'router') return exit(req, res, callback, null);
        while (i < handlers.length) {
          const fn = handlers[i++];
          if (!err && fn.length <= 3) return call(fn, req, res, next);
          if (err && fn.length === 4) return callOnError(fn as unknown as ErrorRequestHandler, err, req, res, next);
        }
        if (err) fail(req, res, callback, err);
        else dispatch(req, res, callback, path, entries, k + 1);
      };
      req.next = next;
      return next();
    }
    viaRouter.call(app, req, res, callback);
  }

  expressApp.handle = function handle(req, res, callback) {
    // What Express's app.handle does (express/lib/application.js), then what its router does first.
    if (app.enabled('x-powered-by')) res.setHeader('X-Powered-By', 'Express');
    req.res = res;
    res.req = req;
    // The server made them with these prototypes (startServer); a request handed over otherwise gets them here.
    if (!inheritsDirectly(req, expressApp.request)) Object.setPrototypeOf(req, expressApp.request);
    if (!inheritsDirectly(res, expressApp.response)) Object.setPrototypeOf(res, expressApp.response);
    // Express's are an object without a prototype; one whose prototype is empty and has none reads
    // the same (nothing inherited), and the engine does not make it a hash table.
    if (!res.locals) res.locals = Object.create(LOCALS_PROTOTYPE);
    // The router ends at once, before any middleware, on a URL it cannot parse.
    if (pathOf(req) == null) return viaRouter.call(app, req, res, callback);
    req.baseUrl = req.baseUrl || '';
    req.originalUrl = req.originalUrl || req.url;
    enterMiddleware(req);
    let i = 0;
    const next = (err?: unknown): void => {
      if (err && err !== 'route') return err === 'router' ? exit(req, res, callback, null) : fail(req, res, callback, err);
      if (i < chain.length) return call(chain[i++], req, res, next);
      const path = pathOf(req);
      if (path == null) return viaRouter.call(app, req, res, callback);
      dispatch(req, res, callback, path, entriesOf(path), 0);
    };
    req.next = next;
    next();
  };
}

/**
 * The request's path as the router reads it (`parseurl`), or undefined when its URL cannot be parsed.
 * A URL that begins with `/` and holds none of the characters that make parseurl parse it in full
 * (whitespace, `#`, U+00A0, U+FEFF) has for path what comes before its first `?`: read here,
 * without the object parseurl makes and keeps (`req._parsedUrl`, made when something else asks).
 */
export function pathOf(req: Pick<Request, 'url'>): string | undefined {
  const url = req.url;
  if (url.charCodeAt(0) === 0x2f) {
    let end = url.length;
    let i = 1;
    for (; i < url.length; i++) {
      const c = url.charCodeAt(i);
      if (c === 0x3f && end === url.length) end = i;
      else if (c === 0x20 || c === 0x23 || (c >= 0x09 && c <= 0x0d && c !== 0x0b) || c === 0xa0 || c === 0xfeff) break;
    }
    if (i === url.length) return end === url.length ? url : url.slice(0, end);
  }
  try {
    return parseUrl(req)?.pathname ?? undefined;
  } catch {
    return undefined;
  }
}
