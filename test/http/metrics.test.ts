/**
 * `GET /metrics` (Prometheus): off by default (404); with `SVC_METRICS=true`, request counts and
 * latency histograms by route pattern, method and status, and the database pool's gauges.
 */
import request from 'supertest';
import { ConfigurationError } from '../../runtime';
import { metricsEnabled } from '../../runtime/http/metrics';
import { DIALECTS } from '../support/databases';
import { startBlog, type RunningService } from '../support/services';

describe('SVC_METRICS', () => {
  it('is off unless true, and refuses other values', () => {
    expect(metricsEnabled({})).toBe(false);
    expect(metricsEnabled({ SVC_METRICS: 'true' })).toBe(true);
    expect(metricsEnabled({ SVC_METRICS: 'off' })).toBe(false);
    expect(() => metricsEnabled({ SVC_METRICS: 'sometimes' })).toThrow(
      new ConfigurationError('SVC_METRICS must be true or false, got "sometimes"'),
    );
  });
});

/** The value of the sample `name{labels}` in a text exposition, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe.each(DIALECTS)('metrics (%s)', (dialect) => {
  describe('when SVC_METRICS is not set', () => {
    let svc: RunningService;
    beforeAll(async () => {
      svc = await startBlog(dialect);
    });
    afterAll(() => svc.close());

    it('does not serve /metrics', async () => {
      const res = await request(svc.app).get('/metrics');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Not Found' });
    });
  });

  describe('with SVC_METRICS=true', () => {
    let svc: RunningService;
    beforeAll(async () => {
      process.env.SVC_METRICS = 'true';
      try {
        svc = await startBlog(dialect);
      } finally {
        delete process.env.SVC_METRICS;
      }
    });
    afterAll(() => svc.close());

    it('counts the requests made, by route pattern, method and status', async () => {
      for (let i = 0; i < 3; i++) expect((await request(svc.app).get('/api/articles/')).status).toBe(200);
      expect((await request(svc.app).get('/api/articles/77/')).status).toBe(404);
      expect((await request(svc.app).get('/api/articles/78/')).status).toBe(404);
      expect((await request(svc.app).post('/api/articles/').send({})).status).toBe(401);
      expect((await request(svc.app).get('/api/no/such/path')).status).toBe(404);

      const res = await request(svc.app).get('/metrics');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
      const text = res.text;
      expect(sample(text, 'http_requests_total{method="GET",route="/api/articles/",status="200"}')).toBe(3);
      expect(sample(text, 'http_requests_total{method="GET",route="/api/articles/:pk/",status="404"}')).toBe(2);
      expect(sample(text, 'http_requests_total{method="POST",route="/api/articles/",status="401"}')).toBe(1);
      expect(sample(text, 'http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
      expect(sample(text, 'http_request_duration_seconds_count{method="GET",route="/api/articles/",status="200"}')).toBe(3);
      expect(sample(text, 'http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/api/articles/",status="200"}')).toBe(3);
      // URLs never become labels.
      expect(text).not.toContain('/api/articles/77/');
      expect(text).not.toContain('/api/no/such/path');
      for (const state of ['used', 'free', 'pending'])
        expect(sample(text, `db_pool_connections{state="${state}"}`)).toBeGreaterThanOrEqual(0);
      expect(text).toContain('# TYPE process_cpu_seconds_total counter');

      // The scrape itself is counted from then on.
      const again = await request(svc.app).get('/metrics');
      expect(sample(again.text, 'http_requests_total{method="GET",route="/metrics",status="200"}')).toBe(1);
    });

    it('counts Swagger UI, its page and its files, under one route label of its own, not as unmatched', async () => {
      const before = await request(svc.app).get('/metrics');
      const unmatched = sample(before.text, 'http_requests_total{method="GET",route="unmatched",status="200"}');
      expect((await request(svc.app).get('/api/docs')).status).toBe(301);
      expect((await request(svc.app).get('/api/docs/')).status).toBe(200);
      expect((await request(svc.app).get('/api/docs/swagger-ui.css')).status).toBe(200);
      expect((await request(svc.app).get('/api/docs/swagger-ui-init.js')).status).toBe(200);

      const text = (await request(svc.app).get('/metrics')).text;
      expect(sample(text, 'http_requests_total{method="GET",route="/api/docs",status="301"}')).toBe(1);
      expect(sample(text, 'http_requests_total{method="GET",route="/api/docs/*",status="200"}')).toBe(3);
      expect(sample(text, 'http_requests_total{method="GET",route="unmatched",status="200"}')).toBe(unmatched);
      expect(unmatched).toBeUndefined();
      expect(text).not.toContain('swagger-ui.css');
    });
  });
});
