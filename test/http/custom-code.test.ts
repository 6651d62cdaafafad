/**
 * Custom code of the showcase: custom authenticators (API key, custom claims), decorator order
 * (decorate_view: first listed outermost, null ignored), paginate() on a custom endpoint, the
 * older views() hook, path parameters of custom endpoints, and route registration order.
 */
import request from 'supertest';
import { type Route } from '../../runtime';
import { orderRoutes, shadows } from '../../runtime/http/routes';
import { DIALECTS } from '../support/databases';
import { startShowcase, type RunningService } from '../support/services';

describe.each(DIALECTS)('showcase custom code (%s)', (dialect) => {
  let svc: RunningService;
  let userToken: string;
  let scopedToken: string;

  beforeAll(async () => {
    svc = await startShowcase(dialect);
    // The showcase has no user model: a token names a user that loadUser cannot find.
    userToken = await svc.context.tokens.issueAccess(1);
    scopedToken = await svc.context.tokens.issueAccess(1, { scope: 'reports' });
  });
  afterAll(() => svc.close());
  afterEach(() => expect(svc.errors.splice(0)).toEqual([]));

  describe('custom authenticators', () => {
    it('accepts the API key authenticator and pages the endpoint result with paginate()', async () => {
      const res = await request(svc.app).get('/v/numbers/?page=2').set('X-API-Key', 'showcase-key');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ items: [{ n: 4 }, { n: 5 }, { n: 6 }], count: 10 });
    });

    it('applies the paginator limits and parameters of paginate()', async () => {
      const last = await request(svc.app).get('/v/numbers/?page=4').set('X-API-Key', 'showcase-key');
      expect(last.body).toEqual({ items: [{ n: 10 }], count: 10 });
      const bad = await request(svc.app).get('/v/numbers/?page=0').set('X-API-Key', 'showcase-key');
      expect(bad.status).toBe(422);
      expect(bad.body).toEqual({
        detail: [{ type: 'greater_than_equal', loc: ['query', 'page'], msg: 'Input should be greater than or equal to 1' }],
      });
    });

    it('is a 401 when no authenticator of the list succeeds', async () => {
      for (const headers of [{}, { 'X-API-Key': 'wrong' }, { Authorization: `Bearer ${userToken}` }]) {
        const res = await request(svc.app).get('/v/numbers/').set(headers);
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ detail: 'Unauthorized' });
      }
    });

    it('reads a custom claim in a custom authenticator and attaches it to the request', async () => {
      const res = await request(svc.app).get('/v/scoped/').set('Authorization', `Bearer ${scopedToken}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ user: '1', scope: 'reports' });
    });

    it('answers 403 when the custom authenticator refuses a valid token, 401 without one', async () => {
      const noScope = await request(svc.app).get('/v/scoped/').set('Authorization', `Bearer ${userToken}`);
      expect(noScope.status).toBe(403);
      expect(noScope.body).toEqual({ error: 'forbidden', details: 'A scope claim is required' });
      const none = await request(svc.app).get('/v/scoped/');
      expect(none.status).toBe(401);
      expect(none.body).toEqual({ detail: 'Unauthorized' });
      const refresh = await request(svc.app)
        .get('/v/scoped/')
        .set('Authorization', `Bearer ${await svc.context.tokens.issueRefresh(1)}`);
      expect(refresh.status).toBe(401);
    });
  });

  describe('decorators', () => {
    it('runs endpoint decorators first-listed outermost, ignoring null entries', async () => {
      const res = await request(svc.app).get('/v/numbers/').set('X-API-Key', 'showcase-key');
      expect(res.status).toBe(200);
      expect(res.headers['x-decorators']).toBe('outer, inner');
    });

    it('runs no decorator for a request that is a 422: path, query and body are validated first', async () => {
      const page = await request(svc.app).get('/v/numbers/?page=abc').set('X-API-Key', 'showcase-key');
      expect(page.status).toBe(422);
      expect(page.body.detail.map((e: { loc: unknown[] }) => e.loc)).toEqual([['query', 'page']]);
      expect(page.headers['x-decorators']).toBeUndefined();
      const list = await request(svc.app).get('/v/widgets/?limit=0');
      expect(list.status).toBe(422);
      expect(list.headers['x-trace']).toBeUndefined();
    });

    it('composes extra_decorators of a CRUD operation in the listed order', async () => {
      const res = await request(svc.app).get('/v/widgets/');
      expect(res.status).toBe(200);
      expect(res.headers['x-trace']).toBe('A, B');
    });
  });

  describe('custom endpoints and views()', () => {
    it('passes path parameters and the validated body (with its default) to the handler', async () => {
      const once = await request(svc.app).post('/v/echo/hello/').send({});
      expect(once.status).toBe(200);
      expect(once.body).toEqual({ words: ['hello'] });
      const twice = await request(svc.app).post('/v/echo/hi/').send({ times: 2 });
      expect(twice.body).toEqual({ words: ['hi', 'hi'] });
      const bad = await request(svc.app).post('/v/echo/hi/').send({ times: 'x' });
      expect(bad.status).toBe(422);
      expect(bad.body).toEqual({ detail: [{ type: 'int_type', loc: ['body', 'data', 'times'], msg: 'Input should be a valid integer' }] });
    });

    it('serves routes the views() hook registers on the router', async () => {
      const res = await request(svc.app).get('/v/legacy/ping/');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ pong: true });
    });

    it('documents custom endpoints with their tags, security and paged response', async () => {
      const doc = (await request(svc.app).get('/v/openapi.json')).body;
      const numbers = doc.paths['/v/numbers/'].get;
      expect(numbers.operationId).toBe('list_numbers');
      expect(numbers.tags).toEqual(['extras']);
      expect(numbers.security).toEqual([{ BearerAuth: [] }]);
      expect(numbers.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['page', 'page_size']);
      const schema = numbers.responses['200'].content['application/json'].schema;
      expect(Object.keys(schema.properties ?? {}).sort()).toEqual(['count', 'items']);
      expect(doc.paths['/v/echo/{word}/'].post.operationId).toBe('echo');
    });
  });
});

describe('route order', () => {
  const route = (path: string): Route => ({ method: 'get', path, handlers: [] });

  it('registers static segments before parameter segments, keeping the given order otherwise', () => {
    const ordered = orderRoutes([
      route('/articles/:pk/'),
      route('/articles/search/'),
      route('/articles/'),
      route('/tags/:pk/'),
      route('/articles/:pk/publish/'),
    ]);
    expect(ordered.map((r) => r.path)).toEqual([
      '/articles/search/',
      '/articles/:pk/',
      '/articles/',
      '/tags/:pk/',
      '/articles/:pk/publish/',
    ]);
    expect(shadows(route('/a/:x/'), route('/a/b/'))).toBe(true);
    expect(shadows(route('/a/b/'), route('/a/:x/'))).toBe(false);
    expect(shadows(route('/a/:x/'), route('/a/b/c/'))).toBe(false);
    expect(shadows(route('/a/:x/'), route('/c/b/'))).toBe(false);
  });
});
