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
  MATCHED_ROUTE,
} from '../../runtime/http/express-internals';

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

/** Serves one request through Express on a plain Node server and reports what Express added to req and res. */
async function serve(method: 'GET' | 'POST', body?: string): Promise<Seen> {
  let seen: Seen | undefined;
  const app = express();
  app.use(express.json());
  app.all('/items/:id', (req, res) => {
    const own = Object.keys(req);
    seen = {
      // `_eventsCount` is Node's (node-internals.ts), added when Express first listens to the request.
      added: own.filter((k) => !before.req.includes(k) && k !== '_eventsCount').sort(),
      resAdded: Object.keys(res).filter((k) => !before.res.includes(k)),
      matched: MATCHED_ROUTE ? (req as unknown as Record<symbol, unknown>)[MATCHED_ROUTE] : undefined,
      symbolOwn: MATCHED_ROUTE !== undefined && Object.getOwnPropertySymbols(req).includes(MATCHED_ROUTE),
    };
    res.json({ ok: true });
  });
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

describe('the server declares what Express sets', () => {
  it('ServiceRequest and ServiceResponse declare every property listed in express-internals.ts', () => {
    const req = Object.keys(new ServiceRequest(new net.Socket()));
    const res = Object.keys(new ServiceResponse(new http.IncomingMessage(new net.Socket())));
    holds('ServiceRequest declares them', [...EXPRESS_REQUEST_PROPERTIES, ...BODY_PARSER_REQUEST_PROPERTIES].filter((p) => !req.includes(p)), []);
    holds('ServiceResponse declares them', EXPRESS_RESPONSE_PROPERTIES.filter((p) => !res.includes(p)), []);
  });
});
