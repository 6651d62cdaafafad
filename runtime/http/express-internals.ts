/**
 * What the runtime assumes about Express 5 and its router beyond their documented API, in one place.
 * `package.json` pins both exactly; `test/runtime/express-internals.test.ts` checks every assumption
 * below against the installed versions and names this file when an upgrade breaks one.
 *
 * The server declares, on every request and response, the properties Express sets on them while
 * serving (see ServiceRequest in server.ts): an object then keeps one hidden class for its life.
 * A property Express adds that is not declared costs speed, never correctness.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { RequestHandler } from 'express';
import type { Method } from './routes';

/** Loads a module as Express does: its own dependencies (the router, finalhandler, parseurl). */
const expressRequire = createRequire(require.resolve('express'));
const routerRequire = createRequire(expressRequire.resolve('router'));

/**
 * The key under which the router keeps the pattern a request matched: a symbol exported by its
 * internal module `router/lib/symbols`, loaded through Express's own dependency. Undefined when a
 * version of the router has none there (the request then gets it as an added property).
 */
export const MATCHED_ROUTE: symbol | undefined = (() => {
  try {
    const symbols = expressRequire('router/lib/symbols') as { matchedRoute?: unknown };
    return typeof symbols.matchedRoute === 'symbol' ? symbols.matchedRoute : undefined;
  } catch {
    return undefined;
  }
})();

/**
 * The properties Express, its router and `parseurl` set on a request they serve (`_parsedUrl` is
 * parseurl's cache of the parsed URL).
 */
export const EXPRESS_REQUEST_PROPERTIES = ['res', 'next', 'baseUrl', 'originalUrl', 'params', 'route', '_parsedUrl'] as const;

/** The property Express's JSON body parser sets on every request it sees (undefined without a body). */
export const BODY_PARSER_REQUEST_PROPERTIES = ['body'] as const;

/** The properties Express sets on a response it serves. */
export const EXPRESS_RESPONSE_PROPERTIES = ['locals'] as const;

/**
 * What direct dispatch (dispatch.ts) does in Express's stead takes from Express what makes its
 * answers the same:
 * - `ExpressRoute`: the router's Route (`express.Route`), made for each route of the table so that
 *   `req.route` is what the router would set: `path` the full pattern, `methods`, `stack`.
 * - `parseUrl`: `parseurl`, the router's reading of a request's path (cached in `_parsedUrl`).
 * - `finalHandler`: `finalhandler`, where Express's `app.handle` ends a request no layer answered.
 * It mirrors `app.handle` (req.res, res.req, the prototypes, res.locals), the router's entry
 * (req.baseUrl, req.originalUrl, req.next) and its route layers (req.route, req.params, the
 * MATCHED_ROUTE key): express-internals.test.ts checks that it sets the same properties. It does
 * not publish the router's diagnostics_channel tracing events for the routes it serves.
 */
export type ExpressRouteObject = { path: string; methods: Record<string, boolean>; stack: unknown[] } & {
  [M in Method]: (...handlers: RequestHandler[]) => ExpressRouteObject;
};

export const ExpressRoute = (expressRequire('express') as { Route: new (path: string) => ExpressRouteObject }).Route;

export const parseUrl = routerRequire('parseurl') as (req: Pick<IncomingMessage, 'url'>) => { pathname?: string | null } | undefined;

export const finalHandler = expressRequire('finalhandler') as (
  req: IncomingMessage,
  res: ServerResponse,
  options: { env?: string; onerror?: (err: unknown) => void },
) => (err?: unknown) => void;
