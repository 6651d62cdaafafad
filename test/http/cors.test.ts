/**
 * CORS headers and preflights as a browser sees them (the browser itself: test/browser/cors.test.ts).
 */
import request from 'supertest';
import { ConfigurationError } from '../../runtime';
import { corsSettings } from '../../runtime/http/cors';
import { DIALECTS } from '../support/databases';
import { startBlog, type RunningService } from '../support/services';

const APP = 'https://app.example.com';

describe('SVC_CORS_* settings', () => {
  it('are off by default, with the usual methods and headers', () => {
    expect(corsSettings({})).toEqual({
      origins: [],
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      headers: ['Authorization', 'Content-Type', 'Idempotency-Key', 'If-Match', 'If-None-Match', 'X-CSRF-Token', 'X-Request-Id'],
      exposeHeaders: ['ETag', 'Idempotent-Replayed', 'Retry-After', 'WWW-Authenticate', 'X-Commit-Position', 'X-Request-Id'],
      credentials: false,
      maxAge: 600,
    });
  });

  it('read every variable', () => {
    expect(
      corsSettings({
        SVC_CORS_ORIGINS: ' https://App.example.com/ , http://localhost:3000',
        SVC_CORS_METHODS: 'get,post',
        SVC_CORS_HEADERS: 'Authorization',
        SVC_CORS_EXPOSE_HEADERS: '',
        SVC_CORS_CREDENTIALS: 'true',
        SVC_CORS_MAX_AGE: '60',
      }),
    ).toEqual({
      origins: ['https://app.example.com', 'http://localhost:3000'],
      methods: ['GET', 'POST'],
      headers: ['Authorization'],
      exposeHeaders: [],
      credentials: true,
      maxAge: 60,
    });
  });

  it.each([
    [
      { SVC_CORS_ORIGINS: 'app.example.com' },
      'SVC_CORS_ORIGINS must list origins like https://app.example.com (scheme, host, optional port), got "app.example.com"',
    ],
    [
      { SVC_CORS_ORIGINS: 'https://a.example.com/path' },
      'SVC_CORS_ORIGINS must list origins like https://app.example.com (scheme, host, optional port), got "https://a.example.com/path"',
    ],
    [{ SVC_CORS_ORIGINS: '*,https://a.example.com' }, 'SVC_CORS_ORIGINS: "*" cannot be combined with other origins'],
    [
      { SVC_CORS_ORIGINS: '*', SVC_CORS_CREDENTIALS: 'true' },
      'SVC_CORS_CREDENTIALS=true needs the origins listed: "*" would let every site send credentials',
    ],
    [{ SVC_CORS_CREDENTIALS: 'maybe' }, 'SVC_CORS_CREDENTIALS must be true or false, got "maybe"'],
    [{ SVC_CORS_MAX_AGE: '-1' }, 'SVC_CORS_MAX_AGE must be a number of seconds, got "-1"'],
    [{ SVC_CORS_HEADERS: 'Authorization, Bad Header' }, 'SVC_CORS_HEADERS must be a comma-separated list of names, got "Bad Header"'],
  ])('refuse %j', (env, message) => {
    expect(() => corsSettings(env)).toThrow(new ConfigurationError(message));
  });
});

describe.each(DIALECTS)('CORS (%s)', (dialect) => {
  describe('off (no SVC_CORS_ORIGINS)', () => {
    let svc: RunningService;
    beforeAll(async () => {
      svc = await startBlog(dialect);
    });
    afterAll(() => svc.close());

    it('answers a preflight as any OPTIONS, without Access-Control headers', async () => {
      const res = await request(svc.app).options('/api/articles/').set('Origin', APP).set('Access-Control-Request-Method', 'GET');
      expect(res.status).toBe(405);
      expect(res.body).toEqual({ detail: 'Method Not Allowed' });
      expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    });
  });

  describe('with allowed origins', () => {
    let svc: RunningService;
    beforeAll(async () => {
      svc = await startBlog(
        dialect,
        {},
        { cors: corsSettings({ SVC_CORS_ORIGINS: `${APP},http://localhost:3000`, SVC_CORS_CREDENTIALS: 'true' }) },
      );
    });
    afterAll(() => svc.close());

    it('answers the preflight of an allowed origin 204, before authentication', async () => {
      const res = await request(svc.app)
        .options('/api/articles/')
        .set('Origin', APP)
        .set('Access-Control-Request-Method', 'POST')
        .set('Access-Control-Request-Headers', 'authorization,content-type');
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(res.headers).toMatchObject({
        'access-control-allow-origin': APP,
        'access-control-allow-methods': 'GET, HEAD, POST, PUT, PATCH, DELETE',
        'access-control-allow-headers': 'Authorization, Content-Type, Idempotency-Key, If-Match, If-None-Match, X-CSRF-Token, X-Request-Id',
        'access-control-allow-credentials': 'true',
        'access-control-max-age': '600',
        vary: 'Origin',
      });
    });

    it('adds the origin to the answers of an allowed origin, errors included', async () => {
      const res = await request(svc.app).post('/api/articles/').set('Origin', 'http://localhost:3000').send({});
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ detail: 'Unauthorized' });
      expect(res.headers).toMatchObject({
        'access-control-allow-origin': 'http://localhost:3000',
        'access-control-allow-credentials': 'true',
        'access-control-expose-headers': 'ETag, Idempotent-Replayed, Retry-After, WWW-Authenticate, X-Commit-Position, X-Request-Id',
        vary: 'Origin',
      });
    });

    it('gives an origin not listed no Access-Control header, and its preflight the usual 405', async () => {
      const get = await request(svc.app).get('/api/articles/').set('Origin', 'https://evil.example.com');
      expect(get.status).toBe(200);
      const preflight = await request(svc.app)
        .options('/api/articles/')
        .set('Origin', 'https://evil.example.com')
        .set('Access-Control-Request-Method', 'GET');
      expect(preflight.status).toBe(405);
      expect(preflight.headers.allow).toBe('GET, HEAD, POST');
      for (const res of [get, preflight]) {
        expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
        expect(res.headers.vary).toBe('Origin');
      }
    });
  });
});
