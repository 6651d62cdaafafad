/**
 * Liveness and readiness: `GET {base_url}/health` is 200 {"status": "ok"} while the process serves,
 * without touching the database; `GET {base_url}/health/ready` is 200 {"status": "ok"} while the
 * database answers, 503 {"detail": "Service Unavailable"} with Retry-After otherwise. Both are in
 * the OpenAPI document.
 */
import request from 'supertest';
import { RETRY_AFTER_SECONDS } from '../../runtime/core/errors';
import { DIALECTS } from '../support/databases';
import { takeErrors } from '../support/fixtures';
import { startBlog, startShowcase, type RunningService } from '../support/services';

describe.each(DIALECTS)('health (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startBlog(dialect);
  });
  afterAll(() => svc.close());

  it.each(['/api/health', '/api/health/ready'])('%s is 200 {"status": "ok"} while the database answers', async (path) => {
    const res = await request(svc.app).get(path);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('sends the JSON with its length and no ETag; HEAD gets the same headers without the body', async () => {
    const get = await request(svc.app).get('/api/health');
    expect(get.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(get.headers['content-length']).toBe(String(Buffer.byteLength('{"status":"ok"}')));
    expect(get.headers.etag).toBeUndefined();
    const head = await request(svc.app).head('/api/health');
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(head.text ?? '').toBe('');
  });

  it('needs no token, and is served under the base path only', async () => {
    expect((await request(svc.app).get('/health')).status).toBe(404);
    expect((await request(svc.app).get('/health/ready')).status).toBe(404);
  });

  it('answers GET and HEAD only', async () => {
    const res = await request(svc.app).post('/api/health/ready');
    expect({ status: res.status, allow: res.headers.allow, body: res.body }).toEqual({
      status: 405,
      allow: 'GET, HEAD',
      body: { detail: 'Method Not Allowed' },
    });
  });

  it('is documented: operation ids, 200 and (readiness) 503 with their schemas', async () => {
    const doc = (await request(svc.app).get('/api/openapi.json')).body;
    const live = doc.paths['/api/health'].get;
    const ready = doc.paths['/api/health/ready'].get;
    expect([live.operationId, ready.operationId]).toEqual(['health_live', 'health_ready']);
    expect(Object.keys(live.responses)).toEqual(['200', '414']);
    expect(Object.keys(ready.responses)).toEqual(['200', '414', '503']);
    expect(ready.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/HealthSchema' });
    expect(ready.responses['503'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ServiceUnavailableSchema' });
    expect(doc.components.schemas.HealthSchema).toEqual({
      type: 'object',
      properties: { status: { type: 'string', enum: ['ok'] } },
      required: ['status'],
    });
    expect(doc.components.schemas.ServiceUnavailableSchema).toEqual({
      type: 'object',
      properties: { detail: { type: 'string', enum: ['Service Unavailable'] } },
      required: ['detail'],
    });
  });

  it('once the database is gone, liveness is still 200 and readiness 503 with Retry-After', async () => {
    await svc.database.db.destroy();
    const live = await request(svc.app).get('/api/health');
    expect({ status: live.status, body: live.body }).toEqual({ status: 200, body: { status: 'ok' } });
    const ready = await request(svc.app).get('/api/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.headers['content-type']).toMatch(/^application\/json/);
    expect(ready.headers['retry-after']).toBe(String(RETRY_AFTER_SECONDS));
    expect(ready.body).toEqual({ detail: 'Service Unavailable' });
    expect(takeErrors(svc)).toEqual([]);
  });
});

describe.each(DIALECTS)('health of the showcase (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());

  it.each(['/v/health', '/v/health/ready'])('%s is served under the showcase base path', async (path) => {
    const res = await request(svc.app).get(path);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });
});
