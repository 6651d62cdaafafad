/**
 * What the runtime assumes about Express 5 and its router beyond their documented API, in one place.
 * `package.json` pins both exactly; `test/runtime/express-internals.test.ts` checks every assumption
 * below against the installed versions and names this file when an upgrade breaks one.
 *
 * The server declares, on every request and response, the properties Express sets on them while
 * serving (see ServiceRequest in server.ts): an object then keeps one hidden class for its life.
 * A property Express adds that is not declared costs speed, never correctness.
 */
import { createRequire } from 'node:module';

/**
 * The key under which the router keeps the pattern a request matched: a symbol exported by its
 * internal module `router/lib/symbols`, loaded through Express's own dependency. Undefined when a
 * version of the router has none there (the request then gets it as an added property).
 */
export const MATCHED_ROUTE: symbol | undefined = (() => {
  try {
    const symbols = createRequire(require.resolve('express'))('router/lib/symbols') as { matchedRoute?: unknown };
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
