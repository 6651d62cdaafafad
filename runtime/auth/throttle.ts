/**
 * Throttling of failed logins, per username and client address together, and per client address.
 *
 * A login attempt is counted before the password is checked (`LoginThrottle.begin`), so that
 * concurrent attempts cannot all slip under the limit, against three counters: the failures of this
 * username from this address within the window (`SVC_LOGIN_MAX_FAILURES_PER_USERNAME` in
 * `SVC_LOGIN_FAILURES_WINDOW` seconds), the same pair within a day (three times as many: a client
 * that keeps guessing waits a day, not a window, so the delay grows), and every failure from the
 * address within the window (`SVC_LOGIN_MAX_FAILURES_PER_ADDRESS`). When one already holds its
 * limit, the attempt is refused with 429 `{"detail": "Too many failed login attempts. Try again
 * later."}` and `Retry-After` (seconds until the blocking counter's window ends), and counts for
 * nothing. A username is never locked for everyone: failures from one address do not stop its
 * owner, who logs in from another, so failed logins are not a lever to lock a user out. An attempt
 * whose password matches forgets the pair's failures and does not count against the address; an
 * attempt that ends without a verdict on the password (an inactive account, a database error)
 * counts for none. Windows are fixed: they start with the first counted failure and a refused
 * attempt does not extend them. Behind a proxy, the client address is what `SVC_TRUST_PROXY`
 * lets Express read from `X-Forwarded-For`.
 *
 * The counters live in memory (one process) unless `SVC_REDIS_URL` names a Redis server, whose
 * counters every instance shares (one Lua script per check, so checking and counting are atomic).
 * When Redis cannot be reached the throttle fails open, logins go on unthrottled, and the outage is
 * logged once when it starts and once when Redis answers again, never per request: a Redis outage
 * must not lock every user out.
 */
import * as crypto from 'node:crypto';
import * as net from 'node:net';
import type { Request } from 'express';
import type Redis from 'ioredis';
import { TOO_MANY_LOGIN_FAILURES_MESSAGE, TOO_MANY_REGISTRATIONS_MESSAGE } from '../core/catalogue';
import { TooManyRequestsError } from '../core/errors';
import { requireOptional } from '../core/optional-packages';
import type { Settings } from '../core/settings';

/** One counter of an attempt, the number of failures it may hold, and its window when not the call's. */
export interface ThrottleRule {
  key: string;
  limit: number;
  windowMs?: number;
}

export type Reservation = { allowed: true } | { allowed: false; retryAfterMs: number };

/** Where the counters are kept. Every method is atomic over the keys it is given. */
export interface ThrottleStore {
  /**
   * When every counter is below its limit, adds one to each (a new counter expires its rule's
   * `windowMs`, else `windowMs`, after it is created) and allows the attempt; otherwise changes
   * nothing and answers how long until the longest blocking window ends.
   */
  reserve(rules: readonly ThrottleRule[], windowMs: number): Promise<Reservation>;
  /** Takes one back from each counter that still holds something (an attempt that did not fail). */
  release(keys: readonly string[]): Promise<void>;
  /** Forgets the counters. */
  reset(keys: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

/** The counters of one process. Expired counters are swept at most once a minute. */
export class MemoryThrottleStore implements ThrottleStore {
  private readonly counters = new Map<string, { count: number; expiresAt: number }>();
  private nextSweep = 0;

  constructor(private readonly clock: () => number = Date.now) {}

  private live(key: string, now: number) {
    const counter = this.counters.get(key);
    if (counter && counter.expiresAt <= now) {
      this.counters.delete(key);
      return undefined;
    }
    return counter;
  }

  private sweep(now: number): void {
    if (now < this.nextSweep) return;
    this.nextSweep = now + 60_000;
    for (const [key, counter] of this.counters) if (counter.expiresAt <= now) this.counters.delete(key);
  }

  /** How many counters are kept (expired ones until the next sweep). */
  get size(): number {
    return this.counters.size;
  }

  async reserve(rules: readonly ThrottleRule[], windowMs: number): Promise<Reservation> {
    const now = this.clock();
    this.sweep(now);
    let wait = 0;
    for (const rule of rules) {
      const counter = this.live(rule.key, now);
      if (counter && counter.count >= rule.limit) wait = Math.max(wait, counter.expiresAt - now);
    }
    if (wait > 0) return { allowed: false, retryAfterMs: wait };
    for (const rule of rules) {
      const counter = this.live(rule.key, now);
      if (counter) counter.count += 1;
      else this.counters.set(rule.key, { count: 1, expiresAt: now + (rule.windowMs ?? windowMs) });
    }
    return { allowed: true };
  }

  async release(keys: readonly string[]): Promise<void> {
    const now = this.clock();
    for (const key of keys) {
      const counter = this.live(key, now);
      if (counter && counter.count > 0) counter.count -= 1;
    }
  }

  async reset(keys: readonly string[]): Promise<void> {
    for (const key of keys) this.counters.delete(key);
  }

  async close(): Promise<void> {
    this.counters.clear();
  }
}

// KEYS: the counters; ARGV[2i - 1]: the limit of KEYS[i], ARGV[2i]: its window in ms.
// Answers 0 when the attempt was counted, else the milliseconds until the longest blocking window ends.
const RESERVE_SCRIPT = `
local wait = 0
for i, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') >= tonumber(ARGV[2 * i - 1]) then
    local ttl = redis.call('PTTL', key)
    if ttl < 0 then
      ttl = tonumber(ARGV[2 * i])
      redis.call('PEXPIRE', key, ttl)
    end
    if ttl > wait then wait = ttl end
  end
end
if wait > 0 then return wait end
for i, key in ipairs(KEYS) do
  if redis.call('INCR', key) == 1 or redis.call('PTTL', key) < 0 then
    redis.call('PEXPIRE', key, ARGV[2 * i])
  end
end
return 0
`;

const RELEASE_SCRIPT = `
for _, key in ipairs(KEYS) do
  if tonumber(redis.call('GET', key) or '0') > 0 then redis.call('DECR', key) end
end
return 0
`;

export interface RedisThrottleStoreOptions {
  /** `redis://[user:password@]host:port[/db]` (or `rediss://`). */
  url: string;
  /** Where the start and the end of a Redis outage are logged; default console.error. */
  log?: (line: string) => void;
  /** How long a command may take before the throttle gives up on it and fails open, in ms. */
  commandTimeoutMs?: number;
}

type ThrottleRedis = Redis & {
  svcThrottleReserve(...args: (string | number)[]): Promise<number>;
  svcThrottleRelease(...args: (string | number)[]): Promise<number>;
};

/**
 * The counters in Redis, shared by every instance. Fails open: when a command fails (Redis down,
 * unreachable, slower than `commandTimeoutMs`), the attempt is allowed, and the outage is logged
 * once when it starts and once when Redis answers again.
 */
export class RedisThrottleStore implements ThrottleStore {
  readonly client: ThrottleRedis;
  private readonly log: (line: string) => void;
  private readonly firstConnection: Promise<void>;
  private outage: { since: number; unthrottled: number } | undefined;

  constructor(options: RedisThrottleStoreOptions) {
    this.log = options.log ?? ((line) => console.error(line));
    const Client = requireOptional<{ default: typeof Redis }>('ioredis', 'SVC_REDIS_URL is set, the counters in Redis').default;
    const client = new Client(options.url, {
      // Fail fast while Redis is away instead of queueing: a login must not wait for it.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 1000,
      commandTimeout: options.commandTimeoutMs ?? 500,
      retryStrategy: (times) => Math.min(100 * times, 2000),
      // On close, a connection that does not end by itself is destroyed after this long.
      disconnectTimeout: 200,
    }) as ThrottleRedis;
    // Connection errors are reported through the commands that fail (once per outage), not here.
    client.on('error', () => undefined);
    client.defineCommand('svcThrottleReserve', { lua: RESERVE_SCRIPT });
    client.defineCommand('svcThrottleRelease', { lua: RELEASE_SCRIPT });
    this.client = client;
    // Commands sent before the first connection would fail at once: the first ones wait for it, a little.
    this.firstConnection = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 1000);
      client.once('ready', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private async run<T>(command: () => Promise<T>, failOpen: T): Promise<T> {
    try {
      if (this.client.status !== 'ready') await this.firstConnection;
      const result = await command();
      if (this.outage) {
        const seconds = Math.round((Date.now() - this.outage.since) / 1000);
        this.log(`login throttle: Redis answers again after ${seconds} s; ${this.outage.unthrottled} login attempts were not throttled`);
        this.outage = undefined;
      }
      return result;
    } catch (err) {
      if (!this.outage) {
        this.outage = { since: Date.now(), unthrottled: 0 };
        const reason = err instanceof Error ? err.message : String(err);
        this.log(`login throttle: Redis unreachable (${reason}); login attempts are not throttled until it answers`);
      }
      this.outage.unthrottled += 1;
      return failOpen;
    }
  }

  reserve(rules: readonly ThrottleRule[], windowMs: number): Promise<Reservation> {
    return this.run(
      async () => {
        const keys = rules.map((r) => r.key);
        const args = rules.flatMap((r) => [r.limit, r.windowMs ?? windowMs]);
        const wait = Number(await this.client.svcThrottleReserve(keys.length, ...keys, ...args));
        return wait > 0 ? { allowed: false, retryAfterMs: wait } : { allowed: true };
      },
      { allowed: true } as Reservation,
    );
  }

  async release(keys: readonly string[]): Promise<void> {
    await this.run(async () => void (await this.client.svcThrottleRelease(keys.length, ...keys)), undefined);
  }

  async reset(keys: readonly string[]): Promise<void> {
    await this.run(async () => void (await this.client.del(...keys)), undefined);
  }

  /** Closes the connection: politely (QUIT) when it is up, at once otherwise. */
  async close(): Promise<void> {
    if (this.client.status === 'ready') {
      try {
        await this.client.quit();
        return;
      } catch {
        // Closed under us: disconnect below.
      }
    }
    this.client.disconnect();
  }
}

/** The body of the 429 of a throttled login. */
export const TOO_MANY_LOGIN_FAILURES = TOO_MANY_LOGIN_FAILURES_MESSAGE;

/**
 * The address a client's attempts are counted under: the connection's peer address (Express's
 * `req.ip`, which follows `X-Forwarded-For` only when the app trusts a proxy). IPv4-mapped IPv6
 * addresses count as their IPv4 address, and an IPv6 client as its /64 network, since one host
 * usually holds a whole /64.
 */
export function clientAddress(req: Request): string {
  const raw = req.ip ?? req.socket?.remoteAddress ?? 'unknown';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(raw);
  if (mapped) return mapped[1];
  if (net.isIPv6(raw)) return `${ipv6Groups(raw).slice(0, 4).join(':')}::/64`;
  return raw;
}

/** The eight groups of an IPv6 address, in lowercase without leading zeros. */
function ipv6Groups(address: string): string[] {
  const [head, tail] = address.split('%')[0].split('::') as [string, string | undefined];
  const part = (s: string | undefined) => (s ? s.split(':') : []);
  const left = part(head);
  const right = part(tail);
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((g) => (/^[0-9a-f]+$/i.test(g) ? parseInt(g, 16).toString(16) : g));
}

export interface LoginThrottleOptions {
  store: ThrottleStore;
  /** Failures allowed per username from one client address within the window (three times as many within a day). */
  perUsername: number;
  /** Failures allowed per client address within the window. */
  perAddress: number;
  windowSeconds: number;
  /** Accounts registered per client address within `registrationWindowSeconds` (default: no limit). */
  registrationsPerAddress?: number;
  registrationWindowSeconds?: number;
  /** Prefix of the counters' keys, so that services sharing one Redis keep apart. */
  keyPrefix?: string;
}

/** The day a username's failures from one address are also counted over: the longer, growing delay. */
const DAY_MS = 24 * 60 * 60 * 1000;

/** One counted login attempt: tell it how it ended. A failure needs nothing: it stays counted. */
export class LoginAttempt {
  constructor(
    private readonly store: ThrottleStore,
    private readonly pairKeys: readonly string[],
    private readonly addressKey: string,
  ) {}

  /** The password matched: the username's failures from this address are forgotten; the attempt does not count against the address. */
  async succeeded(): Promise<void> {
    await this.store.reset(this.pairKeys);
    await this.store.release([this.addressKey]);
  }

  /** The attempt ended without a verdict on the password (an inactive account, an error): it counts for nothing. */
  async abandoned(): Promise<void> {
    await this.store.release([...this.pairKeys, this.addressKey]);
  }
}

export class LoginThrottle {
  readonly store: ThrottleStore;
  private readonly options: Required<LoginThrottleOptions>;

  constructor(options: LoginThrottleOptions) {
    this.options = { keyPrefix: 'svc:login:', registrationsPerAddress: Infinity, registrationWindowSeconds: 3600, ...options };
    this.store = options.store;
  }

  /**
   * The throttle a service's settings describe: `SVC_LOGIN_MAX_FAILURES_PER_USERNAME`,
   * `SVC_LOGIN_MAX_FAILURES_PER_ADDRESS` within `SVC_LOGIN_FAILURES_WINDOW` seconds, counted in
   * Redis when the environment sets `SVC_REDIS_URL`, in memory otherwise. Keys start with
   * `svc:<SVC_JWT_AUDIENCE>:login:`.
   */
  static fromSettings(settings: Settings, env: NodeJS.ProcessEnv = process.env, log?: (line: string) => void): LoginThrottle {
    const url = env.SVC_REDIS_URL?.trim();
    return new LoginThrottle({
      store: url ? new RedisThrottleStore({ url, log }) : new MemoryThrottleStore(),
      perUsername: settings.SVC_LOGIN_MAX_FAILURES_PER_USERNAME,
      perAddress: settings.SVC_LOGIN_MAX_FAILURES_PER_ADDRESS,
      windowSeconds: settings.SVC_LOGIN_FAILURES_WINDOW,
      registrationsPerAddress: settings.SVC_REGISTRATIONS_PER_ADDRESS,
      registrationWindowSeconds: settings.SVC_REGISTRATIONS_WINDOW,
      keyPrefix: `svc:${settings.SVC_JWT_AUDIENCE}:login:`,
    });
  }

  /**
   * The counter keys of a username from an address (hashed together: a username may be long, and
   * its pair with the address says nothing of either), over the window and over a day, and of the address.
   */
  keys(username: string, address: string): { pair: string; pairDay: string; address: string } {
    const digest = crypto.createHash('sha256').update(username, 'utf8').update('\0').update(address).digest('base64url');
    const prefix = this.options.keyPrefix;
    return { pair: `${prefix}user:${digest}`, pairDay: `${prefix}user-day:${digest}`, address: `${prefix}addr:${address}` };
  }

  /**
   * Counts a login attempt for `username` from the request's client address, before its password
   * is checked. A throttled attempt throws TooManyRequestsError carrying the seconds to wait (the
   * error middleware answers it with `Retry-After`).
   */
  async begin(req: Request, username: string): Promise<LoginAttempt> {
    const keys = this.keys(username, clientAddress(req));
    const reservation = await this.store.reserve(
      [
        { key: keys.pair, limit: this.options.perUsername },
        { key: keys.pairDay, limit: this.options.perUsername * 3, windowMs: Math.max(DAY_MS, this.options.windowSeconds * 1000) },
        { key: keys.address, limit: this.options.perAddress },
      ],
      this.options.windowSeconds * 1000,
    );
    if (!reservation.allowed) {
      const seconds = Math.max(1, Math.ceil(reservation.retryAfterMs / 1000));
      throw new TooManyRequestsError(seconds, TOO_MANY_LOGIN_FAILURES);
    }
    return new LoginAttempt(this.store, [keys.pair, keys.pairDay], keys.address);
  }

  /**
   * Counts an account about to be registered from the request's client address: past
   * `registrationsPerAddress` within the window, TooManyRequestsError (429, `Retry-After`). Returns
   * what to call when no account was made after all (the registration failed), to take it back.
   */
  async beginRegistration(req: Request): Promise<() => Promise<void>> {
    const key = `${this.options.keyPrefix}register:${clientAddress(req)}`;
    const reservation = await this.store.reserve(
      [{ key, limit: this.options.registrationsPerAddress }],
      this.options.registrationWindowSeconds * 1000,
    );
    if (!reservation.allowed) {
      throw new TooManyRequestsError(Math.max(1, Math.ceil(reservation.retryAfterMs / 1000)), TOO_MANY_REGISTRATIONS_MESSAGE);
    }
    return () => this.store.release([key]);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

/** A service (its `ServiceContext`), which keeps its login throttle. */
export interface ThrottledService {
  settings: Settings;
  loginThrottle?: LoginThrottle;
}

/** The login throttle of a service, made from its settings on first use and kept for the service's life. */
export function loginThrottle(service: ThrottledService): LoginThrottle {
  return (service.loginThrottle ??= LoginThrottle.fromSettings(service.settings));
}

/** Gives a service another login throttle (another store, other limits); returns the one it replaces, if any. */
export function setLoginThrottle(service: ThrottledService, throttle: LoginThrottle): LoginThrottle | undefined {
  const previous = service.loginThrottle;
  service.loginThrottle = throttle;
  return previous;
}
