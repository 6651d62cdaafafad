/**
 * Rate limits of the showcase's beacons: the viewset's `throttle` (3 a minute per user, over every
 * operation), an operation's own (`operation_throttles`: one create an hour per address) and an
 * action's own (two pings a day per address); 429 `{"detail": ...}` with `Retry-After`, counted in
 * memory or, with SVC_REDIS_URL, in Redis shared by instances; documented in OpenAPI.
 */
import * as crypto from 'node:crypto';
import Redis from 'ioredis';
import request from 'supertest';
import { loginThrottle } from '../../runtime';
import { DIALECTS } from '../support/databases';
import { testKeys } from '../support/keys';
import { startShowcase, type RunningService } from '../support/services';

const REDIS_URL = process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe.each(DIALECTS)('rate limits (%s)', (dialect) => {
  let svc: RunningService;

  beforeEach(async () => {
    // A service per test: each starts with fresh counters.
    svc = await startShowcase(dialect);
  });
  afterEach(async () => {
    expect(svc.errors.splice(0)).toEqual([]);
    await loginThrottle(svc.context).close();
    await svc.close();
  });

  it('counts every operation of the viewset per user: the 4th request in a minute is a 429 with Retry-After', async () => {
    for (let i = 0; i < 3; i++) expect((await request(svc.app).get('/v/beacons/').set('X-User', 'ada')).status).toBe(200);
    const res = await request(svc.app).get('/v/beacons/1/').set('X-User', 'ada');
    expect(res.status).toBe(429);
    const seconds = Number(res.headers['retry-after']);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(60);
    expect(res.body).toEqual({ detail: `Request was throttled. Expected available in ${seconds} second${seconds === 1 ? '' : 's'}.` });
    // Another user has a counter of their own.
    expect((await request(svc.app).get('/v/beacons/').set('X-User', 'bob')).status).toBe(200);
  });

  it("adds an operation's own limit, counted per address across users", async () => {
    const first = await request(svc.app).post('/v/beacons/').set('X-User', 'ada').send({ name: 'one' });
    expect(first.status).toBe(201);
    const second = await request(svc.app).post('/v/beacons/').set('X-User', 'bob').send({ name: 'two' });
    expect(second.status).toBe(429);
    expect(Number(second.headers['retry-after'])).toBeGreaterThan(3500);
    expect(await svc.context.db('beacons').pluck('name')).toEqual(['one']);
  });

  it('authenticates before counting: a 401 counts for nothing', async () => {
    for (let i = 0; i < 5; i++) expect((await request(svc.app).get('/v/beacons/')).status).toBe(401);
    expect((await request(svc.app).get('/v/beacons/').set('X-User', 'ada')).status).toBe(200);
  });

  it('limits an action with its own rate', async () => {
    expect((await request(svc.app).get('/v/beacons/ping/').set('X-User', 'ada')).body).toEqual({ pong: true });
    expect((await request(svc.app).get('/v/beacons/ping/').set('X-User', 'bob')).status).toBe(200);
    const third = await request(svc.app).get('/v/beacons/ping/').set('X-User', 'cy');
    expect(third.status).toBe(429);
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(86000);
  });

  it('documents the 429 and its Retry-After on throttled operations only', async () => {
    const doc = (await request(svc.app).get('/v/openapi.json')).body;
    expect(doc.paths['/v/beacons/'].get.responses['429']).toEqual({
      description: 'Too Many Requests',
      headers: { 'Retry-After': { description: 'Seconds until a request is counted again.', schema: { type: 'integer' } } },
      content: { 'application/json': { schema: { $ref: '#/components/schemas/GenericMessageSchema' } } },
    });
    expect(doc.paths['/v/beacons/ping/'].get.responses['429']).toBeDefined();
    expect(doc.paths['/v/tickets/'].get.responses['429']).toBeUndefined();
  });

  it('shares the counters between instances through Redis when SVC_REDIS_URL is set', async () => {
    const audience = `svc-test-${crypto.randomBytes(6).toString('hex')}`;
    const admin = new Redis(REDIS_URL);
    const saved = process.env.SVC_REDIS_URL;
    process.env.SVC_REDIS_URL = REDIS_URL;
    const { createService } = require('../fixtures/showcase/generated/app');
    const settings = { ...svc.settings, SVC_JWT_AUDIENCE: audience };
    const instances = [0, 1].map(() => createService({ db: svc.database.db, keys: testKeys(), settings }));
    try {
      for (let i = 0; i < 3; i++)
        expect(
          (
            await request(instances[i % 2].app)
              .get('/v/beacons/')
              .set('X-User', 'ada')
          ).status,
        ).toBe(200);
      for (const { app } of instances) expect((await request(app).get('/v/beacons/').set('X-User', 'ada')).status).toBe(429);
      const keys = await admin.keys(`svc:${audience}:throttle:*`);
      expect(keys).toEqual([`svc:${audience}:throttle:beacons:user:ada`]);
      expect(await admin.get(keys[0])).toBe('3');
    } finally {
      if (saved === undefined) delete process.env.SVC_REDIS_URL;
      else process.env.SVC_REDIS_URL = saved;
      for (const { context } of instances) await loginThrottle(context).close();
      const keys = await admin.keys(`svc:${audience}:*`);
      if (keys.length) await admin.del(...keys);
      await admin.quit();
    }
  });
});
