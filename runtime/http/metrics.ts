/**
 * Prometheus metrics, served at `GET /metrics` when `SVC_METRICS` is true (404 otherwise):
 *
 * - `http_requests_total{method, route, status}`: requests answered, by route pattern
 *   (`/api/articles/:pk/`; `/api/docs/*` for Swagger UI's page and files; `unmatched` when no route
 *   matched, so URLs never become labels);
 * - `http_request_duration_seconds{method, route, status}`: their latency, a histogram;
 * - `db_pool_connections{state}`: the database pool's connections `used` and `free`, and
 *   `pending` acquisitions (requests waiting for a connection), read at each scrape;
 * - Node's process metrics (`process_*`, `nodejs_*`) from prom-client.
 *
 * Each service has its own registry. Under `SVC_WORKERS` > 1, a worker answers `/metrics` with the
 * sum over every worker, gathered by the primary (see cluster.ts).
 */
import type { RequestHandler } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { isClusterWorker, workerMetrics } from './cluster';
import type { Db } from '../db/connection';
import { ConfigurationError } from '../core/settings';

/** `SVC_METRICS`, checked (default false). */
export function metricsEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const raw = env.SVC_METRICS?.trim() ?? 'false';
  if (/^(true|1|yes|on)$/i.test(raw)) return true;
  if (/^(false|0|no|off)$/i.test(raw)) return false;
  throw new ConfigurationError(`SVC_METRICS must be true or false, got "${env.SVC_METRICS}"`);
}

/** What a tarn pool (Knex's) tells about its connections. */
interface PoolCounts {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

/** The route label of a request no route matched. */
export const UNMATCHED_ROUTE = 'unmatched';

export interface Metrics {
  registry: Registry;
  /** Records one finished request. */
  observe(method: string, route: string | undefined, status: number, seconds: number): void;
  /** The text exposition of the registry (or of every worker's, under a cluster). */
  render(): Promise<string>;
}

export interface MetricsOptions {
  db: Db;
  /** Node's process metrics too (default true). */
  processMetrics?: boolean;
  /** Whether `/metrics` answers for every worker of a cluster (default: when this process is a worker). */
  clusterWide?: boolean;
}

export function createMetrics({ db, processMetrics = true, clusterWide = isClusterWorker() }: MetricsOptions): Metrics {
  const registry = new Registry();
  if (processMetrics) collectDefaultMetrics({ register: registry });
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered', labelNames, registers: [registry] });
  const durations = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency in seconds, from the request to the end of its response',
    labelNames,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  new Gauge({
    name: 'db_pool_connections',
    help: 'Database pool connections: used, free, and pending acquisitions',
    labelNames: ['state'] as const,
    registers: [registry],
    // Reading the pool at each scrape costs nothing per request.
    collect() {
      const pool = (db.client as { pool?: PoolCounts }).pool;
      this.set({ state: 'used' }, pool?.numUsed() ?? 0);
      this.set({ state: 'free' }, pool?.numFree() ?? 0);
      this.set({ state: 'pending' }, pool?.numPendingAcquires() ?? 0);
    },
  });
  return {
    registry,
    observe(method, route, status, seconds) {
      const labels = { method, route: route ?? UNMATCHED_ROUTE, status: String(status) };
      requests.inc(labels);
      durations.observe(labels, seconds);
    },
    render: clusterWide ? workerMetrics(registry) : () => registry.metrics(),
  };
}

/** `GET /metrics`: the text exposition format. */
export function metricsHandler(metrics: Metrics): RequestHandler {
  return async (_req, res) => {
    const text = await metrics.render();
    res.type(metrics.registry.contentType).send(text);
  };
}
