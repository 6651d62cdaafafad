/**
 * The assumptions of runtime/http/express-internals.ts, checked against the installed Express and
 * router. Each failure names the module and the assumption: an upgrade that breaks one shows here.
 */
import express from 'express';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { ServiceRequest, ServiceResponse } from '../../runtime/http/server';
import {
  BODY_PARSER_REQUEST_PROPERTIES,
  EXPRESS_REQUEST_PROPERTIES,
  EXPRESS_RESPONSE_PROPERTIES,
  ExpressRoute,
  finalHandler,
  MATCHED_ROUTE,
  parseUrl,
} from '../../runtime/http/express-internals';
import { directDispatch, RouteTable } from '../../runtime/http/dispatch';

const MODULE = 'runtime/http/express-internals.ts';

/** An assumption with what was found, so that a failure prints the module and the assumption. */
function holds(assumption: string, found: unknown, expected: unknown): void {
  expect({ module: MODULE, assumption, found }).toEqual({ module: MODULE, assumption, found: expected });
}

interface Seen {
  added: string[];
  resAdded: string[];
  matched: unknown;
  symbolOwn: boolean;
}

/**
 * Serves one request through Express on a plain Node server and reports what Express added to req
 * and res; `direct`: through direct dispatch (dispatch.ts) instead of the router.
 */
async function serve(method: 'GET' | 'POST', body?: string, direct = false): Promise<Seen> {
  let seen: Seen | undefined;
  const app = express();
  app.set('strict routing', true);
  app.set('case sensitive routing', true);
  const view: express.RequestHandler = (req, res) => {
    const own = Object.keys(req);
    seen = {
      // `_eventsCount` is Node's (node-internals.ts), added when Express first listens to the request.
      added: own.filter((k) => !before.req.includes(k) && k !== '_eventsCount').sort(),
      resAdded: Object.keys(res).filter((k) => !before.res.includes(k)),
      matched: MATCHED_ROUTE ? (req as unknown as Record<symbol, unknown>)[MATCHED_ROUTE] : undefined,
      symbolOwn: MATCHED_ROUTE !== undefined && Object.getOwnPropertySymbols(req).includes(MATCHED_ROUTE),
    };
    res.json({ ok: true });
  };
  if (direct) {
    const table = new RouteTable();
    table.route(method === 'GET' ? 'get' : 'post', '/items/:id', [express.json(), view]);
    directDispatch(app, { middleware: [], table, errorHandler: (err, _req, _res, next) => next(err) });
  } else {
    app.use(express.json());
    app.all('/items/:id', view);
  }
  const before = { req: [] as string[], res: [] as string[] };
  const server = http.createServer((req, res) => {
    before.req = Object.keys(req);
    before.res = Object.keys(res);
    app(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${port}/items/7?x=1`, {
      method,
      body,
      headers: body ? { 'content-type': 'application/json' } : {},
    });
    expect(res.status).toBe(200);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  return seen!;
}

describe(`${MODULE}: Express and its router`, () => {
  it('the router exports the symbol under which a request keeps its matched route, and sets it', async () => {
    holds('router/lib/symbols exports matchedRoute as a symbol', typeof MATCHED_ROUTE, 'symbol');
    const seen = await serve('GET');
    holds('a served request has the matched route under that symbol', [seen.symbolOwn, seen.matched], [true, '/items/:id']);
  });

  it('Express and its JSON body parser set exactly the properties listed, with or without a body', async () => {
    const expected = [...EXPRESS_REQUEST_PROPERTIES, ...BODY_PARSER_REQUEST_PROPERTIES].sort();
    holds('properties Express adds to a request (GET, no body)', (await serve('GET')).added, expected);
    holds('properties Express adds to a request (POST, a JSON body)', (await serve('POST', '{"a":1}')).added, expected);
  });

  it('Express sets exactly EXPRESS_RESPONSE_PROPERTIES on a response', async () => {
    const seen = await serve('GET');
    holds('properties Express adds to a response', seen.resAdded, [...EXPRESS_RESPONSE_PROPERTIES]);
  });
});

describe(`${MODULE}: what direct dispatch takes from Express`, () => {
  it('express.Route is the router\'s Route, parseurl and finalhandler load through Express', () => {
    const route = new ExpressRoute('/items/:id').get(() => undefined);
    holds('express.Route makes a route with its path, methods and stack', [route.path, route.methods, route.stack.length], ['/items/:id', { get: true }, 1]);
    holds('parseurl reads the path of a request', parseUrl({ url: '/a/b?c=1' } as http.IncomingMessage)?.pathname, '/a/b');
    holds('finalhandler makes the final handler of a request', typeof finalHandler({} as http.IncomingMessage, {} as http.ServerResponse, {}), 'function');
  });

  it('direct dispatch sets the properties Express sets (parseurl\'s cache when something asks for it), and the matched route under the router\'s symbol', async () => {
    // Direct dispatch reads the path itself: parseurl's cache, `_parsedUrl`, is made when the URL is
    // asked for parsed (`req.query`, `req.path`), as it is declared (ServiceRequest in server.ts).
    const expected = [...EXPRESS_REQUEST_PROPERTIES, ...BODY_PARSER_REQUEST_PROPERTIES].filter((name) => name !== '_parsedUrl').sort();
    const get = await serve('GET', undefined, true);
    holds('properties direct dispatch adds to a request (GET)', get.added, expected);
    holds('a request served directly has the matched route under the router\'s symbol', [get.symbolOwn, get.matched], [true, '/items/:id']);
    holds('properties direct dispatch adds to a request (POST, a JSON body)', (await serve('POST', '{"a":1}', true)).added, expected);
    holds('properties direct dispatch adds to a response', get.resAdded, [...EXPRESS_RESPONSE_PROPERTIES]);
  });
});

describe('the server declares what Express sets', () => {
  it('ServiceRequest and ServiceResponse declare every property listed in express-internals.ts', () => {
    const req = Object.keys(new ServiceRequest(new net.Socket()));
    const res = Object.keys(new ServiceResponse(new http.IncomingMessage(new net.Socket())));
    holds('ServiceRequest declares them', [...EXPRESS_REQUEST_PROPERTIES, ...BODY_PARSER_REQUEST_PROPERTIES].filter((p) => !req.includes(p)), []);
    holds('ServiceResponse declares them', EXPRESS_RESPONSE_PROPERTIES.filter((p) => !res.includes(p)), []);
  });
});
