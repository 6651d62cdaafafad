/**
 * Read replicas (DATABASE_REPLICA_URLS), with read-your-writes.
 *
 * The reads of a GET or HEAD request that run outside a transaction (lists, retrieves, the token's
 * user: every read `selectRows` and its kin run) go to a replica, taken in turn; everything else
 * (writes, transactions, the reads of any other request, reads outside a request) goes to the
 * primary, DATABASE_URL. A replica that fails a read is skipped for REPLICA_RETRY_MS, its read
 * served by the primary at once; it is tried again after that, by itself.
 *
 * A write's answer carries the primary's commit position after it (`X-Commit-Position`, see
 * http/routes.ts). A request that presents a position is served by a replica only once that replica
 * has replayed it (asked of the replica, and remembered until a newer one is wanted), else by the
 * primary: a client that presents the position of its last write always reads that write. Without
 * one, a replica's answer may be older than the client's own last write.
 *
 * Which request is being served is kept in an AsyncLocalStorage of the database's (the scope of
 * `within`), set by the application's first middleware, only when the database has replicas.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Knex } from 'knex';
import { ConfigurationError, type DatabaseSettings } from '../core/settings';
import { connect, dialectOf, type Db } from './connection';
import { databaseOf, type Database, type ReplicaReads } from './database';
import type { CommitPositions } from './dialects/dialect';
import { isConnectionFailure } from './driver-errors';

/** How long a replica that failed is left out before it is tried again. */
export const REPLICA_RETRY_MS = 5000;

type Row = Record<string, any>;

/** What a request asks of the reads it runs. */
export interface ReadScope {
  /** Whether its reads outside transactions may go to a replica (GET and HEAD). */
  replica: boolean;
  /** The commit position a replica must have replayed to serve it, when the request presented one. */
  position?: string;
}

interface Replica {
  readonly db: Db;
  readonly description: string;
  /** Until when it is left out after a failure (ms since the epoch). */
  downUntil: number;
  /** The last position it was seen to have replayed. */
  replayed?: string;
  /** Reads it served. */
  served: number;
}

export class Replicas implements ReplicaReads {
  private readonly scope = new AsyncLocalStorage<ReadScope>();
  private readonly replicas: Replica[];
  private next = 0;
  /** Reads served by the primary that a replica could have served (none reachable, or none caught up). */
  servedByPrimary = 0;

  constructor(
    private readonly primary: Db,
    private readonly positions: CommitPositions,
    urls: readonly string[],
    settings?: DatabaseSettings,
  ) {
    this.replicas = urls.map((url) => {
      const db = connect(url, '', undefined, settings);
      return { db, description: url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@'), downUntil: 0, served: 0 };
    });
  }

  /** Runs `run` with `scope` as the reads' scope (the rest of a request's handling). */
  within<T>(scope: ReadScope, run: () => T): T {
    return this.scope.run(scope, run);
  }

  /** Whether `text` may be presented as a position. */
  validPosition(text: string): boolean {
    return this.positions.valid(text);
  }

  /** The primary's commit position now: at or after every write committed so far. */
  async commitPosition(): Promise<string | undefined> {
    const rows = rowsOf(await this.primary.raw(this.positions.currentSql));
    return rows[0]?.position ?? undefined;
  }

  /** The rows of a read outside a transaction from a replica, or undefined when the primary must serve it. */
  async select(sql: string, bindings: readonly unknown[]): Promise<Row[] | undefined> {
    const scope = this.scope.getStore();
    if (!scope?.replica) return undefined;
    const now = Date.now();
    for (let tried = 0; tried < this.replicas.length; tried++) {
      const replica = this.replicas[this.next];
      this.next = (this.next + 1) % this.replicas.length;
      if (replica.downUntil > now) continue;
      try {
        if (scope.position !== undefined && !(await this.caughtUp(replica, scope.position))) continue;
        const rows = rowsOf(await replica.db.raw(sql, bindings as Knex.RawBinding[]));
        replica.served += 1;
        return rows;
      } catch (err) {
        // A replica that cannot be reached is left out for a while, the read tried elsewhere; any other
        // failure (a read cancelled by a conflict with recovery, a value the query refuses) is the
        // primary's to answer, as if no replica were there.
        if (!isConnectionFailure(err)) break;
        replica.downUntil = Date.now() + REPLICA_RETRY_MS;
        replica.replayed = undefined;
      }
    }
    this.servedByPrimary += 1;
    return undefined;
  }

  /** Whether `replica` has replayed `position`, from what it said last or by asking it again. */
  private async caughtUp(replica: Replica, position: string): Promise<boolean> {
    if (replica.replayed !== undefined && this.positions.reached(replica.replayed, position)) return true;
    const [row] = rowsOf(await replica.db.raw(this.positions.replayedSql));
    const replayed: unknown = row?.position;
    if (typeof replayed !== 'string') return false;
    replica.replayed = replayed;
    return this.positions.reached(replayed, position);
  }

  /** The reads each replica served, by its description. */
  counts(): Record<string, number> {
    return Object.fromEntries(this.replicas.map((r) => [r.description, r.served]));
  }

  async destroy(): Promise<void> {
    await Promise.all(this.replicas.map((r) => r.db.destroy()));
  }
}

function rowsOf(result: Row[] | { rows: Row[] }): Row[] {
  return Array.isArray(result) ? result : result.rows;
}

/** The replica URLs of `env` (DATABASE_REPLICA_URLS, comma-separated; none when unset or empty). */
export function replicaUrls(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.DATABASE_REPLICA_URLS ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
}

/**
 * Gives `db` (a primary `connect()` made) the read replicas at `urls`, each opened as `db`'s own
 * database is (the same adapter, timeouts and pool size); none when `urls` is empty.
 */
export function attachReplicas(db: Db, urls: readonly string[], settings?: DatabaseSettings): Replicas | undefined {
  if (!urls.length) return undefined;
  const dialect = dialectOf(db);
  if (!dialect.positions) throw new ConfigurationError(`DATABASE_REPLICA_URLS: ${dialect.name} has no read replicas`);
  for (const url of urls) {
    if (!dialect.accepts(url))
      throw new ConfigurationError(`DATABASE_REPLICA_URLS must name ${dialect.name} databases like DATABASE_URL, got "${url}"`);
  }
  const database = databaseOf(db);
  const replicas = new Replicas(db, dialect.positions, urls, settings ?? database.settings);
  database.replicas = replicas;
  replicaSets.set(database, replicas);
  return replicas;
}

/** Per database, its replicas (`attachReplicas`). */
const replicaSets = new WeakMap<Database, Replicas>();

/** The replicas of `db`, if it has any. */
export function replicasOf(db: Db): Replicas | undefined {
  return replicaSets.get(databaseOf(db));
}

/** Destroys `db` and its replicas' pools. */
export async function destroyDatabase(db: Db): Promise<void> {
  await replicasOf(db)?.destroy();
  await db.destroy();
}
