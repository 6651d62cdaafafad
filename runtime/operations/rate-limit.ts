/**
 * Rate limits of operations (`throttle` and `operation_throttles` of a viewset, as DRF's throttles
 * and ninja-aio-crud's `throttle`): a number of requests per second, minute, hour or day, counted
 * per caller (`user`: the authenticated user's id, or the client address without one; `address`:
 * the client address) in fixed windows. The counters are kept where the login throttle keeps its
 * own (`loginThrottle(service).store`: in memory, or in Redis when `SVC_REDIS_URL` is set, shared by
 * every instance and failing open), so one mechanism serves both.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { TooManyRequestsError } from '../core/errors';
import { clientAddress, loginThrottle } from '../auth/throttle';
import type { Settings } from '../core/settings';

export interface RateLimit {
  /** `100/minute`: requests per `second`, `minute`, `hour` or `day` (or `s`, `m`, `h`, `d`). */
  rate: string;
  scope: 'user' | 'address';
  /** What the counter counts: the resource's table for a viewset's throttle, the operation id for an operation's. */
  name: string;
}

const PERIODS: Record<string, number> = { s: 1, second: 1, m: 60, minute: 60, h: 3600, hour: 3600, d: 86400, day: 86400 };

/** `100/minute` → 100 requests per 60 000 ms. */
export function parseRate(rate: string): { limit: number; windowMs: number } {
  const m = /^([1-9][0-9]*)\/(s|second|m|minute|h|hour|d|day)$/.exec(rate);
  if (!m) throw new Error(`invalid rate "${rate}": expected <number>/<second|minute|hour|day>`);
  return { limit: Number(m[1]), windowMs: PERIODS[m[2]] * 1000 };
}

/** DRF's message: `Request was throttled. Expected available in 42 seconds.` */
export function throttledMessage(seconds: number): string {
  return `Request was throttled. Expected available in ${seconds} second${seconds === 1 ? '' : 's'}.`;
}

/**
 * Middleware after authentication counting each request against `limit`; past it, a 429
 * `{"detail": "Request was throttled. Expected available in N seconds."}` with `Retry-After: N`.
 */
export function rateLimit(service: { settings: Settings }, limit: RateLimit): RequestHandler {
  const { limit: max, windowMs } = parseRate(limit.rate);
  const prefix = `svc:${service.settings.SVC_JWT_AUDIENCE}:throttle:${limit.name}:`;
  return async (req: Request, _res: Response, next: NextFunction) => {
    const who = limit.scope === 'user' && req.auth ? `user:${String(req.auth.id)}` : `addr:${clientAddress(req)}`;
    const reservation = await loginThrottle(service).store.reserve([{ key: prefix + who, limit: max }], windowMs);
    if (!reservation.allowed) {
      const seconds = Math.max(1, Math.ceil(reservation.retryAfterMs / 1000));
      throw new TooManyRequestsError(seconds, throttledMessage(seconds));
    }
    next();
  };
}
