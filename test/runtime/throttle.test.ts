/**
 * The login throttle's stores on their own: the memory store with a hand-driven clock, and the
 * Redis store against the local server (a random key prefix per test, deleted afterwards): limits,
 * fixed windows, release and reset, atomicity under concurrent attempts, and failing open with one
 * log line per outage when Redis is away (a TCP proxy in front of Redis, cut and restored).
 */
import * as crypto from 'node:crypto';
import * as net from 'node:net';
import type { Request } from 'express';
import Redis from 'ioredis';
import { LoginThrottle, TooManyRequestsError } from '../../runtime';
import {
  clientAddress,
  MemoryThrottleStore,
  RedisThrottleStore,
  TOO_MANY_LOGIN_FAILURES,
  type ThrottleStore,
} from '../../runtime/auth/throttle';
import { ConfigurationError, trustProxySetting } from '../../runtime/core/settings';

const REDIS_URL = process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A TCP proxy on the loopback interface that can be cut (listener closed, connections destroyed) and restored on the same port. */
class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.target);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}

/** A request as the throttle sees it: an address and a response to set headers on. */
function fakeRequest(ip: string): Request {
  return { ip } as never;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('MemoryThrottleStore', () => {
  let now = 1_000_000;
  const clock = () => now;

  it('counts attempts until a counter holds its limit, then refuses without counting, until the window ends', async () => {
    const store = new MemoryThrottleStore(clock);
    const rules = [
      { key: 'u', limit: 3 },
      { key: 'a', limit: 10 },
    ];
    for (let i = 0; i < 3; i++) expect(await store.reserve(rules, 60_000)).toEqual({ allowed: true });
    now += 10_000;
    expect(await store.reserve(rules, 60_000)).toEqual({ allowed: false, retryAfterMs: 50_000 });
    // The refused attempt counted for neither counter: the address still has room for 7 more on other keys.
    for (let i = 0; i < 7; i++)
      expect(
        await store.reserve(
          [
            { key: `u${i}`, limit: 3 },
            { key: 'a', limit: 10 },
          ],
          60_000,
        ),
      ).toEqual({ allowed: true });
    expect(
      await store.reserve(
        [
          { key: 'other', limit: 3 },
          { key: 'a', limit: 10 },
        ],
        60_000,
      ),
    ).toEqual({ allowed: false, retryAfterMs: 50_000 });
    // Fixed window: refusals do not extend it.
    now += 50_000;
    expect(await store.reserve(rules, 60_000)).toEqual({ allowed: true });
  });

  it('release takes one attempt back; reset forgets the counter', async () => {
    const store = new MemoryThrottleStore(clock);
    const rule = [{ key: 'k', limit: 2 }];
    await store.reserve(rule, 60_000);
    await store.reserve(rule, 60_000);
    expect((await store.reserve(rule, 60_000)).allowed).toBe(false);
    await store.release(['k']);
    expect((await store.reserve(rule, 60_000)).allowed).toBe(true);
    expect((await store.reserve(rule, 60_000)).allowed).toBe(false);
    await store.reset(['k']);
    expect((await store.reserve(rule, 60_000)).allowed).toBe(true);
    // Releasing what is not there does nothing.
    await store.release(['absent']);
    expect(store.size).toBe(1);
  });

  it('sweeps expired counters, at most once a minute', async () => {
    const store = new MemoryThrottleStore(clock);
    for (let i = 0; i < 100; i++) await store.reserve([{ key: `k${i}`, limit: 5 }], 1_000);
    expect(store.size).toBe(100);
    now += 61_000;
    await store.reserve([{ key: 'fresh', limit: 5 }], 1_000);
    expect(store.size).toBe(1);
  });
});

describe('clientAddress', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['::1', '0:0:0:0::/64'],
    ['2001:db8:0:1:aaaa::1', '2001:db8:0:1::/64'],
    ['2001:0DB8:0000:0001:bbbb:cccc:dddd:eeee', '2001:db8:0:1::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
  ])('%s counts as %s', (ip, expected) => {
    expect(clientAddress(fakeRequest(ip))).toBe(expected);
  });
});

describe('LoginThrottle', () => {
  function throttle(store: ThrottleStore = new MemoryThrottleStore()) {
    return new LoginThrottle({ store, perUsername: 2, perAddress: 3, windowSeconds: 900 });
  }

  it('refuses with TooManyRequestsError and Retry-After in whole seconds once a username has its failures from an address', async () => {
    const t = throttle();
    const req = fakeRequest('10.0.0.1');
    await t.begin(req, 'ada');
    await t.begin(req, 'ada');
    const refused = await t.begin(req, 'ada').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TooManyRequestsError);
    expect((refused as TooManyRequestsError).status_code).toBe(429);
    expect((refused as TooManyRequestsError).body()).toEqual({ detail: TOO_MANY_LOGIN_FAILURES });
    // The seconds to wait, whole: the error middleware's Retry-After (test/runtime/error-middleware.test.ts).
    expect((refused as TooManyRequestsError).retryAfter).toBe(900);
    // The same username from another address is not locked out: failures are no lever against its owner.
    await expect(t.begin(fakeRequest('10.0.0.2'), 'ada')).resolves.toBeDefined();
    // Another username from another address is not affected.
    await expect(t.begin(fakeRequest('10.0.0.3'), 'grace')).resolves.toBeDefined();
  });

  it('a client that keeps guessing waits longer each time: the window, the window again, then a day', async () => {
    let now = 0;
    const t = new LoginThrottle({ store: new MemoryThrottleStore(() => now), perUsername: 2, perAddress: 100, windowSeconds: 900 });
    const req = fakeRequest('10.0.0.1');
    const waits: number[] = [];
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 2; i++) await t.begin(req, 'ada');
      const refused = (await t.begin(req, 'ada').catch((e: unknown) => e)) as TooManyRequestsError;
      waits.push(refused.retryAfter);
      now += refused.retryAfter * 1000;
    }
    expect(waits).toEqual([900, 900, 24 * 3600 - 1800]);
    // The day over, guessing starts again.
    await expect(t.begin(req, 'ada')).resolves.toBeDefined();
  });

  it('a success forgets the pair and does not count against the address; an abandoned attempt counts for nothing', async () => {
    const t = throttle();
    const req = fakeRequest('10.0.0.1');
    await t.begin(req, 'ada');
    await (await t.begin(req, 'ada')).succeeded();
    // The pair reset; the address holds one failure.
    await t.begin(req, 'ada');
    await (await t.begin(req, 'bob')).abandoned();
    // Address: two failures counted (the success and the abandoned attempt do not count): one more is allowed.
    await t.begin(fakeRequest('10.0.0.1'), 'carol');
    await expect(t.begin(fakeRequest('10.0.0.1'), 'dave')).rejects.toBeInstanceOf(TooManyRequestsError);
  });

  it('keys: the username and the address hashed together (any length, any character), under the prefix', () => {
    const t = new LoginThrottle({
      store: new MemoryThrottleStore(),
      perUsername: 1,
      perAddress: 1,
      windowSeconds: 1,
      keyPrefix: 'svc:blog:login:',
    });
    const keys = t.keys('x'.repeat(10_000), '10.0.0.1');
    expect(keys.pair).toMatch(/^svc:blog:login:user:[A-Za-z0-9_-]{43}$/);
    expect(keys.pairDay).toBe(keys.pair.replace(':user:', ':user-day:'));
    expect(t.keys('x'.repeat(10_000), '10.0.0.2').pair).not.toBe(keys.pair);
    expect(keys.address).toBe('svc:blog:login:addr:10.0.0.1');
  });
});

describe('RedisThrottleStore', () => {
  let admin: Redis;
  let prefix: string;
  const stores: RedisThrottleStore[] = [];

  function store(options: { url?: string; log?: (line: string) => void } = {}): RedisThrottleStore {
    const s = new RedisThrottleStore({ url: options.url ?? REDIS_URL, log: options.log ?? (() => undefined) });
    stores.push(s);
    return s;
  }

  beforeAll(() => {
    admin = new Redis(REDIS_URL);
  });
  beforeEach(() => {
    prefix = `svc-test:${process.pid}:${crypto.randomBytes(6).toString('hex')}:`;
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length) await admin.del(...keys);
  });
  afterAll(async () => {
    await admin.quit();
  });

  it('counts with a window set on the first attempt, refuses at the limit without counting, and expires', async () => {
    const s = store();
    const rules = [
      { key: `${prefix}u`, limit: 2 },
      { key: `${prefix}a`, limit: 5 },
    ];
    expect(await s.reserve(rules, 1500)).toEqual({ allowed: true });
    expect(await s.reserve(rules, 1500)).toEqual({ allowed: true });
    const ttl = await admin.pttl(`${prefix}u`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1500);
    const refused = await s.reserve(rules, 1500);
    expect(refused.allowed).toBe(false);
    expect(refused.allowed === false && refused.retryAfterMs).toBeGreaterThan(0);
    expect(refused.allowed === false && refused.retryAfterMs).toBeLessThanOrEqual(1500);
    expect(await admin.mget(`${prefix}u`, `${prefix}a`)).toEqual(['2', '2']);
    await sleep(1600);
    expect(await s.reserve(rules, 1500)).toEqual({ allowed: true });
  });

  it('release and reset', async () => {
    const s = store();
    const key = `${prefix}k`;
    await s.reserve([{ key, limit: 3 }], 60_000);
    await s.reserve([{ key, limit: 3 }], 60_000);
    await s.release([key, `${prefix}absent`]);
    expect(await admin.get(key)).toBe('1');
    expect(await admin.exists(`${prefix}absent`)).toBe(0);
    await s.reset([key]);
    expect(await admin.exists(key)).toBe(0);
  });

  it('50 concurrent attempts from two instances against a limit of 5: exactly 5 are counted', async () => {
    const a = store();
    const b = store();
    const rules = [
      { key: `${prefix}u`, limit: 5 },
      { key: `${prefix}a`, limit: 100 },
    ];
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).reserve(rules, 60_000)));
    expect(results.filter((r) => r.allowed)).toHaveLength(5);
    expect(await admin.mget(`${prefix}u`, `${prefix}a`)).toEqual(['5', '5']);
  });

  it('a LoginThrottle on Redis: instances share the counters', async () => {
    const options = { perUsername: 2, perAddress: 100, windowSeconds: 60, keyPrefix: prefix };
    const one = new LoginThrottle({ ...options, store: store() });
    const two = new LoginThrottle({ ...options, store: store() });
    const req = fakeRequest('10.0.0.1');
    await one.begin(req, 'ada');
    await two.begin(req, 'ada');
    // The day's counter has the day as its window, the pair's the window.
    expect(await admin.pttl(one.keys('ada', '10.0.0.1').pairDay)).toBeGreaterThan(60_000);
    const refused = await one.begin(req, 'ada').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TooManyRequestsError);
    expect((refused as TooManyRequestsError).retryAfter).toBeGreaterThanOrEqual(59);
    expect((refused as TooManyRequestsError).retryAfter).toBeLessThanOrEqual(60);
  });

  it('fails open when Redis cannot be reached, logging once', async () => {
    const lines: string[] = [];
    // Nothing listens on port 1.
    const s = store({ url: 'redis://127.0.0.1:1', log: (line) => lines.push(line) });
    const t = new LoginThrottle({ store: s, perUsername: 1, perAddress: 1, windowSeconds: 60, keyPrefix: prefix });
    for (let i = 0; i < 10; i++) {
      const attempt = await t.begin(fakeRequest('10.0.0.1'), 'ada');
      await attempt.abandoned();
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^login throttle: Redis unreachable \(.+\); login attempts are not throttled until it answers$/);
  });

  it('an outage in the middle: open while Redis is away, one line when it starts and one when it ends, throttling again after', async () => {
    const url = new URL(REDIS_URL);
    const proxy = new TcpProxy({ host: url.hostname, port: Number(url.port || 6379) });
    await proxy.start();
    const lines: string[] = [];
    const s = store({ url: `redis://127.0.0.1:${proxy.port}`, log: (line) => lines.push(line) });
    const rules = [{ key: `${prefix}u`, limit: 1 }];
    try {
      expect(await s.reserve(rules, 60_000)).toEqual({ allowed: true });
      expect((await s.reserve(rules, 60_000)).allowed).toBe(false);
      await proxy.cut();
      for (let i = 0; i < 5; i++) expect(await s.reserve(rules, 60_000)).toEqual({ allowed: true });
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^login throttle: Redis unreachable/);
      await proxy.start();
      // The client reconnects by itself (its retry delay grows to 2 s at most).
      let back = false;
      for (let i = 0; i < 60 && !back; i++) {
        await sleep(100);
        back = (await s.reserve(rules, 60_000)).allowed === false;
      }
      expect(back).toBe(true);
      expect(lines).toHaveLength(2);
      expect(lines[1]).toMatch(/^login throttle: Redis answers again after \d+ s; \d+ login attempts were not throttled$/);
    } finally {
      await proxy.cut();
    }
  });
});

describe('SVC_TRUST_PROXY', () => {
  const setting = (value?: string) => trustProxySetting(value === undefined ? {} : { SVC_TRUST_PROXY: value });

  it.each([
    [undefined, false],
    ['', false],
    ['false', false],
    ['1', 1],
    ['2', 2],
    ['loopback', ['loopback']],
    ['10.0.0.0/8, 192.168.1.7,fd00::/8', ['10.0.0.0/8', '192.168.1.7', 'fd00::/8']],
  ])('%s → %j', (value, expected) => {
    expect(setting(value)).toEqual(expected);
  });

  it('refuses true, which would let any client name its own address, and what is not an address', () => {
    expect(() => setting('true')).toThrow(
      new ConfigurationError(
        'SVC_TRUST_PROXY=true would let any client name its own address: give the number of proxies in front of the service, or their addresses',
      ),
    );
    expect(() => setting('proxy.example.com')).toThrow(
      /^SVC_TRUST_PROXY: proxy\.example\.com is not an address, a CIDR range or one of loopback, linklocal, uniquelocal$/,
    );
  });
});
