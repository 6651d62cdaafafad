/**
 * The health routes every service serves: liveness (`GET /health`) and readiness (`GET /health/ready`).
 */
import { probeOf, type Db } from '../db/connection';
import { RETRY_AFTER_SECONDS } from '../core/errors';
import { databaseOf } from '../db/database';
import { DatabaseTimeoutError } from '../db/dialects/dialect';
import { isConnectionFailure } from '../db/driver-errors';
import type { OutageMonitor } from '../db/outage';
import type { Route, RouteDoc } from './routes';
import { sendJson, sendJsonText } from './send';
import { z } from '../core/zod';

const HealthSchema = z.object({ status: z.literal('ok') }).meta({ id: 'HealthSchema' });
const UnavailableSchema = z.object({ detail: z.literal('Service Unavailable') }).meta({ id: 'ServiceUnavailableSchema' });

/**
 * `GET /health` (liveness) answers while the process serves requests, without touching the database;
 * `GET /health/ready` (readiness) also runs `select 1`: a 503 with `Retry-After` while the database
 * cannot answer it within the connect timeout (SVC_DB_CONNECT_TIMEOUT), which starts or continues
 * the logged outage like any request failing on it. A load balancer that checks it routes around an
 * instance whose database is partitioned away in that time, not in the time TCP takes to give up.
 * The probe has a connection of its own (`probeOf`): requests holding every connection of the pool
 * (long transactions) do not make the instance unready.
 */
export function healthRoutes(db: Db, outage: OutageMonitor): Route[] {
  // The answer of a healthy service, serialized once.
  const ok = JSON.stringify({ status: 'ok' });
  const doc = (operationId: string, summary: string, unavailable: boolean): RouteDoc => ({
    operationId,
    summary,
    tags: ['Health'],
    secured: false,
    standalone: true,
    responses: [
      { status: 200, description: 'OK', schema: HealthSchema },
      ...(unavailable
        ? [{ status: 503, description: 'Service Unavailable: the database does not answer', schema: UnavailableSchema }]
        : []),
    ],
  });
  return [
    {
      method: 'get',
      path: '/health',
      handlers: [(_req, res) => sendJsonText(res, 200, ok)],
      doc: doc('health_live', 'Liveness: the service is up (the database is not queried).', false),
    },
    {
      method: 'get',
      path: '/health/ready',
      handlers: [
        async (_req, res) => {
          try {
            await answersWithin(probeOf(db), databaseOf(db).settings.connectTimeoutMs);
          } catch (err) {
            if (isConnectionFailure(err)) outage.failed(err);
            res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
            sendJson(res, 503, { detail: 'Service Unavailable' });
            return;
          }
          sendJsonText(res, 200, ok);
        },
      ],
      doc: doc('health_ready', 'Readiness: the service is up and its database answers.', true),
    },
  ];
}

/** Runs `select 1` on `db`; rejects with a DatabaseTimeoutError when no answer came within `ms` (the query goes on, its end ignored). */
function answersWithin(db: Db, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new DatabaseTimeoutError(`the database did not answer select 1 within ${ms} ms`)), ms);
    db.raw('select 1').then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
