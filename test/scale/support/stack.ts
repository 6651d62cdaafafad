/**
 * What the scale suites start on this machine and tear down: PostgreSQL clusters of their own
 * (`pg_createcluster`, a streaming replica made with `pg_basebackup`), PgBouncer, HAProxy, and the
 * blog as processes (`node --conditions=@svcgen/source --require tsx/cjs generated/main.ts`). Ports are free ones in 55000–55999,
 * names carry the test process's id, so that runs side by side do not meet.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import knex, { type Knex } from 'knex';
import { TokenService } from '../../../runtime/auth/tokens';
import { loadSettings } from '../../../runtime';
import { testKeys } from '../../support/keys';
import { FROM_SOURCES } from '../../support/from-sources';

const root = path.resolve(__dirname, '../../..');
const { DEFAULT_SETTINGS } = require('../../../generated/settings');

/** The newest PostgreSQL installed (`/etc/postgresql/<version>`). */
export const PG_VERSION = fs
  .readdirSync('/etc/postgresql')
  .filter((v) => /^\d+$/.test(v))
  .sort((a, b) => Number(a) - Number(b))
  .pop()!;
const PG_BIN = `/usr/lib/postgresql/${PG_VERSION}/bin`;

function run(command: string, args: string[], options: { user?: string } = {}): string {
  const [file, argv] = options.user ? ['runuser', ['-u', options.user, '--', command, ...args]] : [command, args];
  return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A free TCP port on the loopback interface, 55000–55999. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 55000 + crypto.randomInt(1000);
    const free = await new Promise<boolean>((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

export async function waitUntil(what: string, check: () => Promise<boolean> | boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A PostgreSQL cluster of the test's own, on its own port, trusting local connections. */
export class Cluster {
  private constructor(
    readonly name: string,
    readonly port: number,
  ) {}

  get dataDir(): string {
    return `/var/lib/postgresql/${PG_VERSION}/${this.name}`;
  }

  get confDir(): string {
    return `/etc/postgresql/${PG_VERSION}/${this.name}`;
  }

  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** A new cluster named after `label`, on a free port, made but neither configured nor started. */
  private static async made(label: string): Promise<Cluster> {
    const cluster = new Cluster(`svcgen_${label}_${process.pid}_${crypto.randomBytes(3).toString('hex')}`, await freePort());
    run('pg_createcluster', [
      '--start-conf=manual',
      '-p',
      String(cluster.port),
      PG_VERSION,
      cluster.name,
      '--',
      '--auth=trust',
      '--no-sync',
    ]);
    return cluster;
  }

  /** A new primary cluster, started. */
  static async create(label: string, settings: Record<string, string> = {}): Promise<Cluster> {
    const cluster = await Cluster.made(label);
    try {
      cluster.configure(settings);
      cluster.start();
    } catch (err) {
      cluster.drop();
      throw err;
    }
    return cluster;
  }

  /**
   * A streaming replica of `primary` (pg_basebackup), started; `settings` may hold
   * `recovery_min_apply_delay`.
   */
  static async replicaOf(primary: Cluster, settings: Record<string, string> = {}): Promise<Cluster> {
    const cluster = await Cluster.made('replica');
    try {
      // Emptied, not removed: the folder is the postgres user's, in a folder it may not write.
      for (const entry of fs.readdirSync(cluster.dataDir)) fs.rmSync(path.join(cluster.dataDir, entry), { recursive: true, force: true });
      run(
        `${PG_BIN}/pg_basebackup`,
        ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', cluster.dataDir, '-R', '-X', 'stream', '--no-sync'],
        {
          user: 'postgres',
        },
      );
      cluster.configure(settings);
      cluster.start();
    } catch (err) {
      cluster.drop();
      throw err;
    }
    return cluster;
  }

  private configure(settings: Record<string, string>): void {
    const lines = Object.entries({
      listen_addresses: "'127.0.0.1'",
      fsync: 'off',
      synchronous_commit: 'off',
      full_page_writes: 'off',
      max_connections: '200',
      ...settings,
    })
      .map(([k, v]) => `${k} = ${v}`)
      .join('\n');
    fs.appendFileSync(path.join(this.confDir, 'postgresql.conf'), `\n${lines}\n`);
  }

  start(): void {
    run('pg_ctlcluster', ['--skip-systemctl-redirect', PG_VERSION, this.name, 'start']);
  }

  stop(): void {
    run('pg_ctlcluster', ['--skip-systemctl-redirect', PG_VERSION, this.name, 'stop', '-m', 'fast']);
  }

  /** The postmaster's process id. */
  postmaster(): number {
    return Number(fs.readFileSync(path.join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  }

  /** The postmaster and every process it started. */
  pids(): number[] {
    const postmaster = this.postmaster();
    const children = run('ps', ['-o', 'pid=', '--ppid', String(postmaster)])
      .split('\n')
      .map((s) => Number(s.trim()))
      .filter((n) => n > 0);
    return [postmaster, ...children];
  }

  /**
   * A silent partition: every process of the cluster stopped (SIGSTOP). The kernel still completes
   * TCP handshakes on its port, but nothing is ever answered, on new connections or open ones.
   */
  freeze(): number[] {
    // The postmaster first: once stopped it forks no backend, so the children listed after it are
    // all there are (one forked between a listing and the postmaster's stop would answer on).
    const postmaster = this.postmaster();
    process.kill(postmaster, 'SIGSTOP');
    const pids = this.pids();
    for (const pid of pids) if (pid !== postmaster) process.kill(pid, 'SIGSTOP');
    return pids;
  }

  thaw(pids: number[]): void {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // gone
      }
    }
  }

  admin(database = 'postgres'): Knex {
    return knex({ client: 'pg', connection: this.url(database), pool: { min: 0, max: 2 } });
  }

  async createDatabase(name: string): Promise<void> {
    const admin = this.admin();
    try {
      await admin.raw(`create database ${name}`);
    } finally {
      await admin.destroy();
    }
  }

  drop(): void {
    try {
      run('pg_dropcluster', ['--stop', PG_VERSION, this.name]);
    } catch {
      try {
        run('pg_ctlcluster', ['--skip-systemctl-redirect', PG_VERSION, this.name, 'stop', '-m', 'immediate']);
      } catch {
        // not running
      }
      run('pg_dropcluster', [PG_VERSION, this.name]);
    }
  }
}

/** The key files every instance of the blog reads, in a folder of the test's own. */
export function keyFiles(dir: string): Record<string, string> {
  const keys = testKeys();
  fs.writeFileSync(path.join(dir, 'private.pem'), keys.privateKey);
  fs.writeFileSync(path.join(dir, 'public.pem'), keys.publicKey);
  return { SVC_JWT_PRIVATE_KEY_FILE: path.join(dir, 'private.pem'), SVC_JWT_PUBLIC_KEY_FILE: path.join(dir, 'public.pem') };
}

export function tempDir(label: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `svcgen-${label}-`));
}

/** An access token for user `id`, signed with the test keys as the blog signs them (for the blog's audience, or `audience`). */
export function accessToken(id: number, audience?: string): Promise<string> {
  return new TokenService(testKeys(), loadSettings(DEFAULT_SETTINGS, audience ? { SVC_JWT_AUDIENCE: audience } : {})).issueAccess(id);
}

/** A staff user inserted directly; its `Authorization` header. */
export async function staffUser(db: Knex, username = `staff${process.pid}`, audience?: string): Promise<{ id: number; bearer: string }> {
  const [row] = await db('users')
    .insert({
      username,
      email: `${username}@example.com`,
      password: 'not-a-real-hash',
      first_name: '',
      last_name: '',
      is_staff: true,
      is_active: true,
      date_joined: new Date().toISOString(),
    })
    .returning('id');
  const id = Number(row.id);
  return { id, bearer: `Bearer ${await accessToken(id, audience)}` };
}

/** One instance of the blog, a process serving on its own port. */
export class Instance {
  output = '';
  port = 0;
  private child: ChildProcess | undefined;
  private exited: Promise<number | null> | undefined;

  /** `main`: the service's entry point from the repository's root (the blog's by default). */
  constructor(
    private readonly env: Record<string, string>,
    private readonly fixedPort?: number,
    private readonly main = 'generated/main.ts',
  ) {}

  async start(): Promise<void> {
    this.output = '';
    const child = spawn(process.execPath, [...FROM_SOURCES, path.join(root, this.main)], {
      env: { ...process.env, HOST: '127.0.0.1', PORT: String(this.fixedPort ?? 0), SVC_LOG_LEVEL: 'warn', ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (this.output += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (this.output += c));
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
    await waitUntil(
      `the blog to listen (${this.output})`,
      () => {
        if (child.exitCode !== null) throw new Error(`the blog exited: ${this.output}`);
        const m = /listening on http:\/\/127\.0\.0\.1:(\d+)(\/\w+)/.exec(this.output);
        if (m) this.basePath = m[2];
        if (m) this.port = Number(m[1]);
        return !!m;
      },
      120_000,
    );
  }

  basePath = '/api';

  get base(): string {
    return `http://127.0.0.1:${this.port}${this.basePath}`;
  }

  /** SIGTERM, and its exit code once it has drained. */
  async stop(): Promise<number | null> {
    if (!this.child || this.child.exitCode !== null) return this.child?.exitCode ?? null;
    this.child.kill('SIGTERM');
    return this.exited!;
  }

  kill(): void {
    if (this.child && this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

/** A response as the load generators record it. */
export interface Answer {
  status: number;
  body: unknown;
  headers: Headers;
  ms: number;
}

/** One HTTP request with fetch; a network error is status 0. */
export async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const start = Date.now();
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(60_000) });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: res.status, body, headers: res.headers, ms: Date.now() - start };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return {
      status: 0,
      body: `${String(err)}${cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : ''}`,
      headers: new Headers(),
      ms: Date.now() - start,
    };
  }
}

/** A summary of statuses: `{201: 130, 503: 12}`. */
export function statusCounts(answers: readonly Answer[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const a of answers) out[a.status] = (out[a.status] ?? 0) + 1;
  return out;
}

/**
 * PgBouncer in transaction mode on a port of its own, in front of `target` (every database, by the
 * wildcard entry), trusting local clients. Started as the `postgres` user (PgBouncer refuses root).
 * `statement_timeout` is among `ignore_startup_parameters`: the driver sends it with each
 * connection's start-up, which PgBouncer 1.18 would otherwise refuse.
 */
export class PgBouncer {
  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  static async start(target: { host: string; port: number }, options: { poolSize?: number } = {}): Promise<PgBouncer> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-pgbouncer-'));
    fs.chmodSync(dir, 0o777);
    const bouncer = new PgBouncer(await freePort(), dir);
    fs.writeFileSync(path.join(dir, 'userlist.txt'), '"postgres" ""\n');
    fs.writeFileSync(
      path.join(dir, 'pgbouncer.ini'),
      [
        '[databases]',
        `* = host=${target.host} port=${target.port}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${bouncer.port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${path.join(dir, 'userlist.txt')}`,
        'pool_mode = transaction',
        'max_client_conn = 2000',
        `default_pool_size = ${options.poolSize ?? 20}`,
        'max_db_connections = 0',
        'ignore_startup_parameters = statement_timeout',
        'server_reset_query =',
        `pidfile = ${path.join(dir, 'pgbouncer.pid')}`,
        `logfile = ${path.join(dir, 'pgbouncer.log')}`,
        'admin_users = postgres',
        '',
      ].join('\n'),
    );
    for (const f of fs.readdirSync(dir)) fs.chmodSync(path.join(dir, f), 0o666);
    run('pgbouncer', ['-d', '-u', 'postgres', path.join(dir, 'pgbouncer.ini')]);
    await waitUntil('PgBouncer to listen', () => fs.existsSync(path.join(dir, 'pgbouncer.pid')));
    await waitUntil('PgBouncer to accept', async () => {
      const db = knex({ client: 'pg', connection: `postgres://postgres@127.0.0.1:${bouncer.port}/postgres`, pool: { min: 0, max: 1 } });
      try {
        await db.raw('select 1');
        return true;
      } finally {
        await db.destroy();
      }
    });
    return bouncer;
  }

  url(database: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  stop(): void {
    try {
      const pid = Number(fs.readFileSync(path.join(this.dir, 'pgbouncer.pid'), 'utf8').trim());
      process.kill(pid, 'SIGINT');
    } catch {
      // not running
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * HAProxy in front of instances, one frontend per backend, health-checking each server on its
 * readiness route; run in the foreground as the test's child. Each request gets a connection of
 * its own to a server (`http-server-close`): a server that stops refuses new connections, which
 * HAProxy retries on another one (`redispatch`), as it does a request whose connection the server
 * closed unanswered while stopping.
 */
export class HaProxy {
  private child: ChildProcess | undefined;
  output = '';
  private constructor(
    private readonly dir: string,
    readonly statsPort: number,
  ) {}

  static async start(backends: { name: string; port: number; health: string; servers: number[] }[]): Promise<HaProxy> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-haproxy-'));
    const proxy = new HaProxy(dir, await freePort());
    const lines = [
      'global',
      '  maxconn 4096',
      '  log stdout format raw local0 info',
      'defaults',
      '  mode http',
      '  log global',
      '  option httplog',
      '  option dontlog-normal',
      '  timeout connect 1s',
      '  timeout client 60s',
      '  timeout server 60s',
      '  retries 3',
      '  option redispatch 1',
      // A connection the instance closed unanswered carried a request it did not start (a stopping
      // instance answers every request it started, or writes nothing of it): safe to send again.
      '  retry-on conn-failure empty-response',
      '  option http-server-close',
      'listen stats',
      `  bind 127.0.0.1:${proxy.statsPort}`,
      '  stats enable',
      '  stats uri /stats',
    ];
    for (const b of backends) {
      lines.push(`frontend ${b.name}_in`, `  bind 127.0.0.1:${b.port}`, `  default_backend ${b.name}`);
      lines.push(
        `backend ${b.name}`,
        '  balance roundrobin',
        `  option httpchk GET ${b.health}`,
        '  http-check expect status 200',
        '  default-server inter 300ms fall 2 rise 2',
      );
      b.servers.forEach((port, i) => lines.push(`  server ${b.name}${i + 1} 127.0.0.1:${port} check`));
    }
    fs.writeFileSync(path.join(dir, 'haproxy.cfg'), `${lines.join('\n')}\n`);
    const child = spawn('haproxy', ['-db', '-f', path.join(dir, 'haproxy.cfg')], { stdio: ['ignore', 'pipe', 'pipe'] });
    proxy.child = child;
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (proxy.output += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (proxy.output += c));
    await waitUntil(
      `HAProxy to start (${proxy.output})`,
      async () => (await call(`http://127.0.0.1:${proxy.statsPort}/stats;csv`)).status === 200,
    );
    return proxy;
  }

  /** The status HAProxy gives each server of `backend` (`UP`, `DOWN`…), by server name. */
  async servers(backend: string): Promise<Record<string, string>> {
    const csv = (await call(`http://127.0.0.1:${this.statsPort}/stats;csv`)).body as string;
    const [header, ...rows] = csv.replace(/^# /, '').trim().split('\n');
    const columns = header.split(',');
    const out: Record<string, string> = {};
    for (const row of rows.map((r) => r.split(','))) {
      const get = (name: string) => row[columns.indexOf(name)];
      if (get('pxname') === backend && !['FRONTEND', 'BACKEND'].includes(get('svname'))) out[get('svname')] = get('status');
    }
    return out;
  }

  stop(): void {
    if (this.child && this.child.exitCode === null) this.child.kill('SIGTERM');
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
