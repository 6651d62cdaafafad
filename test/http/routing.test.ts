/**
 * How requests find their route, as Express's router finds them: HEAD served by a GET route,
 * strict and case-sensitive paths, path parameters decoded (a malformed escape the catalogue's 400),
 * 405 with `Allow` for a path served with other methods, 404 for any other.
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { createUser, insertArticle } from '../support/fixtures';
import { startBlog, type RunningService } from '../support/services';

describe.each(DIALECTS)('routing (%s)', (dialect) => {
  let svc: RunningService;
  let articleId: number;
  beforeAll(async () => {
    svc = await startBlog(dialect);
    const user = await createUser(svc);
    articleId = await insertArticle(svc.database.db, { author_id: user.id });
  });
  afterAll(() => svc.close());

  it('serves HEAD with the GET route: its status and headers, no body', async () => {
    const get = await request(svc.app).get(`/api/articles/${articleId}/`);
    const head = await request(svc.app).head(`/api/articles/${articleId}/`);
    expect(get.status).toBe(200);
    expect(head.status).toBe(200);
    expect(head.text ?? '').toBe('');
    for (const name of ['content-type', 'content-length', 'etag']) expect([name, head.headers[name]]).toEqual([name, get.headers[name]]);
  });

  it('decodes path parameters', async () => {
    const encoded = `/api/articles/${[...String(articleId)].map((digit) => `%${digit.charCodeAt(0).toString(16)}`).join('')}/`;
    const res = await request(svc.app).get(encoded);
    expect(res.status).toBe(200);
    expect((res.body as { id: number }).id).toBe(articleId);
  });

  it.each(['/api/articles/%ZZ/', '/api/articles/%E0%A4%A/'])(
    "a malformed escape in a path parameter (%s) is the catalogue's 400",
    async (path) => {
      const res = await request(svc.app).get(path);
      expect({ status: res.status, body: res.body as unknown }).toEqual({ status: 400, body: { detail: 'Bad Request' } });
      expect(svc.errors).toEqual([]);
    },
  );

  it.each([
    ['without its trailing slash', () => `/api/articles/${articleId}`],
    ['with a doubled slash', () => '/api/articles//'],
    ['in another case', () => '/API/articles/'],
    ['off the API', () => '/elsewhere'],
  ])('a path %s is a 404', async (_what, path) => {
    const res = await request(svc.app).get(path());
    expect({ status: res.status, body: res.body as unknown }).toEqual({ status: 404, body: { detail: 'Not Found' } });
  });

  it('a path served with other methods is a 405 naming them', async () => {
    const res = await request(svc.app).put('/api/articles/').send({});
    expect({ status: res.status, allow: res.headers.allow, body: res.body as unknown }).toEqual({
      status: 405,
      allow: 'GET, HEAD, POST',
      body: { detail: 'Method Not Allowed' },
    });
  });

  it('a query string does not change the route', async () => {
    const res = await request(svc.app).get('/api/health?x=1');
    expect({ status: res.status, body: res.body as unknown }).toEqual({ status: 200, body: { status: 'ok' } });
  });
});
