/**
 * Direct dispatch (runtime/http/dispatch.ts) answers as Express's router does: the same routes,
 * middleware and error middleware served both ways, and every request answered alike.
 */
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import request from 'supertest';
import type { IncomingMessage } from 'node:http';
import { directDispatch, pathOf, RouteTable } from '../../runtime/http/dispatch';
import { parseUrl } from '../../runtime/http/express-internals';
import type { Method } from '../../runtime/http/routes';

const state = (req: express.Request) => ({
  route: (req.route as { path?: string } | undefined)?.path ?? null,
  params: req.params ?? null,
  baseUrl: req.baseUrl,
  originalUrl: req.originalUrl,
  url: req.url,
});

const answer =
  (name: string): RequestHandler =>
  (req, res) => {
    res.json({ name, ...state(req) });
  };

const routes: [Method, string, RequestHandler[]][] = [
  ['get', '/api/health', [answer('health')]],
  ['get', '/api/docs', [(_req, res) => res.redirect(301, '/api/docs/')]],
  // the docs prefix comes here
  ['get', '/api/articles/search/', [answer('search')]],
  ['get', '/api/articles/:pk/', [answer('retrieve')]],
  ['post', '/api/articles/', [answer('create')]],
  ['delete', '/api/articles/:pk/', [answer('destroy')]],
  ['head', '/api/articles/:pk/comments/', [(_req, res) => res.status(204).end()]],
  ['post', '/api/only-post/', [answer('only-post')]],
  ['get', '/api/:section/', [answer('section')]],
  ['get', '/api/next/:a/', [(req, _res, next) => (req.params.a === 'on' ? next('route') : next())]],
  ['get', '/api/next/:b/', [answer('next-b')]],
  ['get', '/api/two/:a/:b/', [(_req, _res, next) => next(), answer('two')]],
  ['get', '/api/async/', [async () => Promise.reject(Object.assign(new Error('async'), { status: 418 }))]],
  ['get', '/api/sync/', [() => { throw new Error('sync'); }]],
  ['get', '/api/error/', [(_req, _res, next) => next(new Error('next error'))]],
  ['get', '/api/caught/', [(_req, _res, next) => next(new Error('caught')), ((err: Error, _req, res, _next) => res.json({ caught: err.message })) as ErrorRequestHandler as unknown as RequestHandler]],
  // Patterns left to path-to-regexp: a parameter within a segment, a wildcard.
  ['get', '/api/files/:name.json', [answer('file')]],
  ['get', '/api/wild/*rest', [answer('wild')]],
  ['put', '/api/body/:id/', [express.json(), (req, res) => res.json({ body: req.body as unknown, ...state(req) })]],
];

const fallback: RequestHandler = (req, res) => {
  res.status(404).json({ fallback: true, ...state(req) });
};
const errorHandler: ErrorRequestHandler = (err: { message?: string; status?: number }, req, res, _next) => {
  res.status(err.status ?? 500).json({ error: err.message, ...state(req) });
};
const middleware: RequestHandler[] = [
  (_req, res, next) => {
    res.setHeader('X-Middleware', String(Number(res.getHeader('X-Middleware') ?? 0) + 1));
    next();
  },
  (req, res, next) => (req.headers['x-refuse'] ? res.status(400).json({ refused: true }) : next()),
  (req, _res, next) => (req.headers['x-fail'] ? next(new Error('middleware')) : next()),
];

function build(direct: boolean): Express {
  const app = express();
  app.set('strict routing', true);
  app.set('case sensitive routing', true);
  app.set('env', 'test');
  const table = new RouteTable();
  if (!direct) for (const fn of middleware) app.use(fn);
  routes.forEach(([method, path, handlers], i) => {
    if (direct) table.route(method, path, handlers);
    else app.route(path)[method](...handlers);
    if (i === 1) {
      if (direct) table.prefix('/api/docs/');
      app.use('/api/docs/', answer('docs'));
    }
  });
  const views = express.Router({ strict: true, caseSensitive: true });
  views.get('/view/:v', answer('view'));
  views.use(fallback);
  app.use('/api', views);
  app.use(fallback);
  app.use(errorHandler);
  if (direct) directDispatch(app, { middleware, table, errorHandler });
  return app;
}

const requests: [string, string, Record<string, string>?][] = [];
for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS']) {
  for (const path of [
    '/api/health',
    '/api/health/',
    '/API/health',
    '/api/health?x=1',
    '/api/docs',
    '/api/docs/',
    '/api/docs/x.css',
    '/api/docsx/',
    '/api/articles/search/',
    '/api/articles/12/',
    '/api/articles/%41b/',
    '/api/articles/%E0%A4%A/',
    '/api/articles/12',
    '/api/articles//',
    '/api/articles/',
    '/api/articles/12/comments/',
    '/api/only-post/',
    '/api/anything/',
    '/api/%ZZ/',
    '/api/next/on/',
    '/api/next/off/',
    '/api/two/a/b/',
    '/api/async/',
    '/api/sync/',
    '/api/error/',
    '/api/caught/',
    '/api/body/1/',
    '/api/view/1',
    '/api/files/a.json',
    '/api/files/a%2Fb.json',
    '/api/files/%ZZ.json',
    '/api/wild/a/b/',
    '/api/wild/%C3%A9',
    '/api/%C3%A9/',
    '/api/nothing',
    '/elsewhere',
  ]) {
    requests.push([method, path]);
  }
}
requests.push(['GET', '/api/health', { 'x-refuse': '1' }], ['GET', '/api/articles/1/', { 'x-fail': '1' }], ['GET', '/nothing', { 'x-fail': '1' }]);

describe('direct dispatch', () => {
  const viaRouter = build(false);
  const direct = build(true);

  it.each(requests)('%s %s answers as the router does', async (method, path, headers = {}) => {
    const send = (app: Express) => {
      let test = request(app)[method.toLowerCase() as 'get'](path).set(headers);
      if (method === 'PUT') test = test.set('Content-Type', 'application/json').send('{"a":1}');
      return test;
    };
    const [expected, actual] = await Promise.all([send(viaRouter), send(direct)]);
    const seen = (res: request.Response) => ({ status: res.status, body: res.body as unknown, text: res.text, headers: { ...res.headers, date: undefined, etag: undefined } });
    expect(seen(actual)).toEqual(seen(expected));
  });
});

describe('pathOf', () => {
  it("reads a request's path as parseurl does, for URLs it reads itself and those it leaves to parseurl", () => {
    const urls = [
      '/',
      '/api/health',
      '/api/health?x=1',
      '/api/health?x=1?y=2',
      '/api/health?',
      '/api/a%20b/?q=%23',
      '/api/a b/',
      '/api/a\tb/',
      '/api/a#frag',
      '/api/a?x=1#frag',
      '/api/a\u00a0b',
      '/api/a\ufeffb',
      '/api/é/',
      '//double',
      'http://host/api/health?x=1',
      '*',
      '',
    ];
    for (const url of urls) {
      // A fresh request each time: parseurl keeps what it parsed on the request.
      const expected = (() => {
        try {
          return parseUrl({ url } as IncomingMessage)?.pathname ?? undefined;
        } catch {
          return undefined;
        }
      })();
      expect([url, pathOf({ url })]).toEqual([url, expected]);
    }
  });
});
