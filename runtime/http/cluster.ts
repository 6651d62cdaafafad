/**
 * Several worker processes on one machine (`SVC_WORKERS`, node:cluster), sharing one port.
 *
 * - `SVC_WORKERS=1` (the default) is no cluster: the service serves in its own process.
 * - With N > 1 (or `auto`: one per CPU) the primary process applies the migrations, then forks N
 *   workers that serve. A worker that dies after it started listening is replaced (at most one
 *   restart a second); a worker that fails before listening stops the start: the primary stops the
 *   others and exits 1, as a single process would.
 * - SIGTERM or SIGINT to the primary is forwarded to every worker as SIGTERM (each shuts down
 *   gracefully, see server.ts); the primary exits 0 once they all have. A second signal is forwarded
 *   too: the workers close their connections at once. Workers ignore SIGINT themselves, so that a
 *   Ctrl-C in a terminal (sent to every process) counts once.
 * - `/metrics` in a worker answers the sum over every worker: the worker asks the primary, which
 *   gathers each worker's registry (prom-client's AggregatorRegistry).
 */
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { ConfigurationError } from '../core/settings';

/** `SVC_WORKERS`: a positive integer, or `auto` for one worker per CPU; default 1. */
export function workerCount(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SVC_WORKERS?.trim() || '1';
  if (raw === 'auto') return availableParallelism();
  if (!/^\d{1,4}$/.test(raw) || Number(raw) < 1)
    throw new ConfigurationError(`SVC_WORKERS must be a positive integer or "auto", got "${env.SVC_WORKERS}"`);
  return Number(raw);
}

/** Whether this process is a worker forked by `runPrimary`. */
export function isClusterWorker(): boolean {
  return cluster.isWorker;
}

const METRICS_REQUEST = 'svc:metrics-request';
const METRICS_RESPONSE = 'svc:metrics-response';

interface MetricsMessage {
  type: string;
  id: number;
  text?: string;
  error?: string;
}

export interface PrimaryOptions {
  workers: number;
  /** Progress: workers started, died, replaced; the shutdown. */
  log: (message: string) => void;
  /** The least time between two restarts, in ms (default 1000). */
  restartDelayMs?: number;
}

/**
 * Runs the primary: forks the workers (which run the same entry point), keeps them running, and
 * resolves with the exit code once they have all exited after a shutdown signal (0), or after a
 * worker failed to start (1).
 */
export function runPrimary({ workers, log, restartDelayMs = 1000 }: PrimaryOptions): Promise<number> {
  const aggregator = new AggregatorRegistry();
  const listening = new WeakSet<Worker>();
  let stopping = false;
  let failed = false;
  let lastRestart = 0;

  return new Promise((resolve) => {
    const fork = () => {
      const worker = cluster.fork();
      worker.on('message', (message: MetricsMessage) => {
        if (message?.type !== METRICS_REQUEST) return;
        aggregator.clusterMetrics().then(
          (text) => worker.isConnected() && worker.send({ type: METRICS_RESPONSE, id: message.id, text }),
          (err: Error) => worker.isConnected() && worker.send({ type: METRICS_RESPONSE, id: message.id, error: err.message }),
        );
      });
    };

    const stop = (why: string) => {
      if (stopping) {
        log(`${why} again: workers close their connections now`);
      } else {
        stopping = true;
        log(`${why}: stopping ${Object.keys(cluster.workers ?? {}).length} workers`);
      }
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    };
    const onSignal = (signal: NodeJS.Signals) => stop(signal);

    cluster.on('listening', (worker) => listening.add(worker));
    cluster.on('exit', (worker, code, signal) => {
      const how = signal ? `signal ${signal}` : `code ${code}`;
      if (!stopping && !listening.has(worker)) {
        failed = true;
        log(`worker ${worker.process.pid} failed to start (${how})`);
        stop('start failed');
      } else if (!stopping) {
        const wait = Math.max(0, lastRestart + restartDelayMs - Date.now());
        lastRestart = Date.now() + wait;
        log(`worker ${worker.process.pid} died (${how}); starting another`);
        setTimeout(() => !stopping && fork(), wait);
      }
      if (stopping && Object.keys(cluster.workers ?? {}).length === 0) {
        process.removeListener('SIGTERM', onSignal);
        process.removeListener('SIGINT', onSignal);
        resolve(failed ? 1 : 0);
      }
    });
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    for (let i = 0; i < workers; i++) fork();
  });
}

/**
 * In a worker: answers the primary's requests for this worker's metrics from `registry`, and
 * returns how to render every worker's metrics (asking the primary).
 */
export function workerMetrics(registry: Registry, timeoutMs = 5000): () => Promise<string> {
  AggregatorRegistry.setRegistries([registry]);
  // Constructing one in a worker makes prom-client answer the primary's requests.
  new AggregatorRegistry();
  let next = 0;
  const pending = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();
  process.on('message', (message: MetricsMessage) => {
    if (message?.type !== METRICS_RESPONSE) return;
    const request = pending.get(message.id);
    if (!request) return;
    pending.delete(message.id);
    clearTimeout(request.timer);
    if (message.error !== undefined) request.reject(new Error(`metrics of the workers: ${message.error}`));
    else request.resolve(message.text ?? '');
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error('metrics of the workers: the primary did not answer'));
      }, timeoutMs);
      pending.set(id, { resolve, reject, timer });
      process.send?.({ type: METRICS_REQUEST, id });
    });
}

/**
 * The signals that shut a server down: SIGTERM and SIGINT, or in a worker SIGTERM alone (from the
 * primary); a worker then ignores SIGINT, which the primary forwards as SIGTERM.
 */
export function shutdownSignals(): NodeJS.Signals[] {
  if (!cluster.isWorker) return ['SIGTERM', 'SIGINT'];
  process.on('SIGINT', () => undefined);
  return ['SIGTERM'];
}
