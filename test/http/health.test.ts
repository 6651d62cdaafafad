/**
 * Readiness: `GET {base_url}/health` is 200 {"status": "ok"} while the database answers, 503 otherwise.
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { takeErrors } from '../support/fixtures';
import { startBlog, startShowcase, type RunningService } from '../support/services';

describe.each(DIALECTS)('health (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startBlog(dialect);
  });
  afterAll(() => svc.close());

  it('is 200 {"status": "ok"} while the database answers', async () => {
    const res = await request(svc.app).get('/api/health');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('needs no token, and is served under the base path only', async () => {
    expect((await request(svc.app).get('/health')).status).toBe(404);
  });

  it('is 503 once the database is gone', async () => {
    await svc.database.db.destroy();
    const res = await request(svc.app).get('/api/health');
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).not.toEqual({ status: 'ok' });
    expect(takeErrors(svc)).toEqual([]);
  });
});

describe.each(DIALECTS)('health of the showcase (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());

  it('is served under the showcase base path', async () => {
    const res = await request(svc.app).get('/v/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });
});
