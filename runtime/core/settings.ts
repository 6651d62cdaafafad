/**
 * Service settings. The specs set each default (the spec language's, `SETTINGS`, where a spec is
 * silent); the environment overrides it at start.
 */
import { SETTINGS, type SettingName } from './catalogue';

export interface Settings {
  SVC_APPEND_SLASH: boolean;
  SVC_PAGINATION_PER_PAGE: number;
  SVC_MAX_PER_PAGE_SIZE: number;
  SVC_PAGINATION_MAX_LIMIT: number;
  SVC_NOT_FOUND_ERROR_USE_VERBOSE_NAMES: boolean;
  SVC_DEBUG: boolean;
  /**
   * Whether a 409 names the constraint it broke (`A category with this name already exists.`) instead
   * of the error catalogue's `The request violates a database constraint.` Off by default.
   */
  SVC_NAMED_CONFLICTS: boolean;
  SVC_JWT_ISSUER: string;
  SVC_JWT_AUDIENCE: string;
  /** Seconds a token's `iat` may lie in the future (the issuer's clock ahead of this one); 0 allows none. */
  SVC_JWT_LEEWAY: number;
  SVC_ACCESS_TOKEN_LIFETIME: number;
  SVC_REFRESH_TOKEN_LIFETIME: number;
  /** Seconds the server waits for requests in flight after SIGTERM or SIGINT before closing their connections. */
  SVC_SHUTDOWN_TIMEOUT: number;
  /** Failed logins of one username within SVC_LOGIN_FAILURES_WINDOW before further attempts are a 429. */
  SVC_LOGIN_MAX_FAILURES_PER_USERNAME: number;
  /** Failed logins from one client address within SVC_LOGIN_FAILURES_WINDOW before further attempts are a 429. */
  SVC_LOGIN_MAX_FAILURES_PER_ADDRESS: number;
  /** Seconds a window of failed logins lasts, from its first failure. */
  SVC_LOGIN_FAILURES_WINDOW: number;
  /** Accounts the built-in register creates for one client address within SVC_REGISTRATIONS_WINDOW before further ones are a 429. */
  SVC_REGISTRATIONS_PER_ADDRESS: number;
  /** Seconds a window of registrations lasts, from its first. */
  SVC_REGISTRATIONS_WINDOW: number;
  /** Whether the authentication cookies are `Secure` (sent over HTTPS only); false for a development server on http://localhost. */
  SVC_AUTH_COOKIE_SECURE: boolean;
  /** The `SameSite` attribute of the authentication cookies: `Lax` or `Strict`. */
  SVC_AUTH_COOKIE_SAMESITE: string;
  /** Whether the service serves its operations as MCP tools at `{basePath}/mcp` (http/mcp.ts). */
  SVC_MCP: boolean;
}

/** The values `SVC_AUTH_COOKIE_SAMESITE` may take. */
export const SAME_SITE_VALUES: readonly string[] = SETTINGS.SVC_AUTH_COOKIE_SAMESITE.enum;

/** Every setting at the spec language's default. */
const SETTING_DEFAULTS: Settings = Object.freeze(
  Object.fromEntries(Object.entries(SETTINGS).map(([name, s]) => [name, s.default])) as unknown as Settings,
);

/** The settings a spec sets, with the spec language's default for each it leaves out. */
export function withSettingDefaults(set: Partial<Settings>): Settings {
  return Object.freeze({ ...SETTING_DEFAULTS, ...set });
}

/** `Settings` names exactly the settings of the spec language. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const SAME_NAMES: Same<keyof Settings, SettingName> = true;
void SAME_NAMES;

export class ConfigurationError extends Error {
  override name = 'ConfigurationError';
}

function parseValue(name: string, raw: string, like: unknown): unknown {
  const text = raw.trim();
  if (typeof like === 'boolean') {
    if (/^(true|1|yes|on)$/i.test(text)) return true;
    if (/^(false|0|no|off)$/i.test(text)) return false;
    throw new ConfigurationError(`${name} must be true or false, got "${raw}"`);
  }
  if (typeof like === 'number') {
    const least = (SETTINGS[name as SettingName] as { minimum?: number }).minimum ?? 1;
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text)) || Number(text) < least) {
      throw new ConfigurationError(`${name} must be a ${least ? 'positive' : 'non-negative'} integer, got "${raw}"`);
    }
    return Number(text);
  }
  if (!text) throw new ConfigurationError(`${name} must not be empty`);
  const allowed = (SETTINGS[name as SettingName] as { enum?: readonly string[] }).enum;
  if (allowed && !allowed.includes(text)) {
    throw new ConfigurationError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return text;
}

/** The defaults with every `SVC_*` variable present in `env` applied over them. */
export function loadSettings(defaults: Settings, env: NodeJS.ProcessEnv = process.env, overrides: Partial<Settings> = {}): Settings {
  const out = { ...defaults } as Record<keyof Settings, unknown>;
  for (const name of Object.keys(defaults) as (keyof Settings)[]) {
    const raw = env[name];
    if (raw !== undefined) out[name] = parseValue(name, raw, defaults[name]);
  }
  return Object.freeze({ ...(out as unknown as Settings), ...overrides });
}

/**
 * SQLite's tuning, read from the environment when the database opens (like DATABASE_URL, they
 * belong to a deployment, not to the specs), for each connection:
 *
 * - `SVC_SQLITE_SYNCHRONOUS` (`NORMAL`): `PRAGMA synchronous`. With the write-ahead log, `NORMAL`
 *   never corrupts the database; a power loss may undo the last commits. `FULL` syncs every commit.
 * - `SVC_SQLITE_CACHE_SIZE` (`64`): the page cache in MiB (`PRAGMA cache_size`, SQLite's own default is 2).
 * - `SVC_SQLITE_MMAP_SIZE` (`256`): MiB of the file read through memory mapping (`PRAGMA mmap_size`),
 *   which spares a copy per page read; `0` turns it off.
 */
export interface SqliteSettings {
  synchronous: SqliteSynchronous;
  cacheSizeMib: number;
  mmapSizeMib: number;
}

export const SQLITE_SYNCHRONOUS = ['OFF', 'NORMAL', 'FULL', 'EXTRA'] as const;
export type SqliteSynchronous = (typeof SQLITE_SYNCHRONOUS)[number];

export const DEFAULT_SQLITE_SETTINGS: SqliteSettings = Object.freeze({ synchronous: 'NORMAL', cacheSizeMib: 64, mmapSizeMib: 256 });

function mebibytes(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const text = raw.trim();
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text) * 1024 * 1024)) {
    throw new ConfigurationError(`${name} must be a whole number of MiB (0 or more), got "${raw}"`);
  }
  return Number(text);
}

/**
 * How reads outside transactions name their statements on PostgreSQL (`SVC_PG_PREPARED_STATEMENTS`):
 * `named` (the default) prepares each SQL text once per connection under a name derived from the
 * text, and falls back to `unnamed` for good on the first sign of a transaction pooler that does not
 * keep them (see dialects/postgres-reads.ts); `unnamed` parses and plans every statement.
 */
export interface PostgresSettings {
  preparedStatements: 'named' | 'unnamed';
}

/** The PostgreSQL settings of `env`, the defaults where a variable is unset. */
export function loadPostgresSettings(env: NodeJS.ProcessEnv = process.env): PostgresSettings {
  const raw = env.SVC_PG_PREPARED_STATEMENTS;
  const value = raw === undefined ? 'named' : raw.trim().toLowerCase();
  if (value !== 'named' && value !== 'unnamed')
    throw new ConfigurationError(`SVC_PG_PREPARED_STATEMENTS must be named or unnamed, got "${raw}"`);
  return { preparedStatements: value };
}

/** The SQLite settings of `env`, the defaults where a variable is unset. */
export function loadSqliteSettings(env: NodeJS.ProcessEnv = process.env): SqliteSettings {
  const synchronous = env.SVC_SQLITE_SYNCHRONOUS?.trim().toUpperCase() ?? DEFAULT_SQLITE_SETTINGS.synchronous;
  if (!(SQLITE_SYNCHRONOUS as readonly string[]).includes(synchronous)) {
    throw new ConfigurationError(
      `SVC_SQLITE_SYNCHRONOUS must be one of ${SQLITE_SYNCHRONOUS.join(', ')}, got "${env.SVC_SQLITE_SYNCHRONOUS}"`,
    );
  }
  return {
    synchronous: synchronous as SqliteSynchronous,
    cacheSizeMib: mebibytes('SVC_SQLITE_CACHE_SIZE', env.SVC_SQLITE_CACHE_SIZE, DEFAULT_SQLITE_SETTINGS.cacheSizeMib),
    mmapSizeMib: mebibytes('SVC_SQLITE_MMAP_SIZE', env.SVC_SQLITE_MMAP_SIZE, DEFAULT_SQLITE_SETTINGS.mmapSizeMib),
  };
}

/**
 * How long the service waits for its database before it answers 503, read from the environment
 * when the database opens (like DATABASE_URL, they belong to a deployment), each in seconds
 * (decimals allowed):
 *
 * - `SVC_DB_CONNECT_TIMEOUT` (`5`): opening a connection (TCP, TLS, start-up, authentication), and
 *   the bound of readiness (`/health/ready`).
 * - `SVC_DB_ACQUIRE_TIMEOUT` (`5`): PostgreSQL: waiting for a connection of the pool, opening one
 *   included. SQLite: waiting for the file's write lock (its busy timeout).
 * - `SVC_DB_STATEMENT_TIMEOUT` (`10`): one statement. PostgreSQL cancels it at that time
 *   (`statement_timeout`, sent with each connection's start-up); a server that does not answer at
 *   all within it and one second more is given up, and its connection closed. `0` turns both off.
 * - `SVC_DB_POOL_MAX` (`10`): connections per process (per worker), PostgreSQL and MySQL.
 * - `SVC_DB_TRANSACTION_TIMEOUT` (`30`): one transaction of an operation, from its BEGIN. Past it,
 *   its next statement is not run and its COMMIT not sent: it rolls back and is answered 503. `0`
 *   turns it off.
 */
export interface DatabaseSettings {
  connectTimeoutMs: number;
  acquireTimeoutMs: number;
  /** 0: no statement timeout. */
  statementTimeoutMs: number;
  poolMax: number;
  /** 0: no transaction time limit. */
  transactionTimeoutMs: number;
}

export const DEFAULT_DATABASE_SETTINGS: DatabaseSettings = Object.freeze({
  connectTimeoutMs: 5000,
  acquireTimeoutMs: 5000,
  statementTimeoutMs: 10_000,
  poolMax: 10,
  transactionTimeoutMs: 30_000,
});

function seconds(name: string, raw: string | undefined, fallbackMs: number, mayBeZero: boolean): number {
  if (raw === undefined) return fallbackMs;
  const text = raw.trim();
  const ms = Math.round(Number(text) * 1000);
  if (!/^\d+(\.\d+)?$/.test(text) || !Number.isSafeInteger(ms) || ms > 2_147_483_647 || (ms < 1 && !(mayBeZero && ms === 0))) {
    throw new ConfigurationError(`${name} must be a ${mayBeZero ? 'non-negative' : 'positive'} number of seconds, got "${raw}"`);
  }
  return ms;
}

/** The database timeouts and pool size of `env`, the defaults where a variable is unset. */
export function loadDatabaseSettings(env: NodeJS.ProcessEnv = process.env): DatabaseSettings {
  const d = DEFAULT_DATABASE_SETTINGS;
  const poolMax = env.SVC_DB_POOL_MAX?.trim();
  if (poolMax !== undefined && (!/^\d+$/.test(poolMax) || Number(poolMax) < 1 || Number(poolMax) > 10_000)) {
    throw new ConfigurationError(`SVC_DB_POOL_MAX must be a positive integer, got "${env.SVC_DB_POOL_MAX}"`);
  }
  return {
    connectTimeoutMs: seconds('SVC_DB_CONNECT_TIMEOUT', env.SVC_DB_CONNECT_TIMEOUT, d.connectTimeoutMs, false),
    acquireTimeoutMs: seconds('SVC_DB_ACQUIRE_TIMEOUT', env.SVC_DB_ACQUIRE_TIMEOUT, d.acquireTimeoutMs, false),
    statementTimeoutMs: seconds('SVC_DB_STATEMENT_TIMEOUT', env.SVC_DB_STATEMENT_TIMEOUT, d.statementTimeoutMs, true),
    poolMax: poolMax === undefined ? d.poolMax : Number(poolMax),
    transactionTimeoutMs: seconds('SVC_DB_TRANSACTION_TIMEOUT', env.SVC_DB_TRANSACTION_TIMEOUT, d.transactionTimeoutMs, true),
  };
}

/** The names Express's `trust proxy` takes for address ranges, besides addresses and CIDR ranges. */
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * `SVC_TRUST_PROXY`: which proxies in front of the service may say who the client is, in
 * `X-Forwarded-For` (the client address the login throttle, registration throttle and rate limits
 * count by). Unset or `false`: none, the connection's peer is the client. A whole number: that many
 * proxies in front (`1` behind one load balancer). Otherwise a comma-separated list of their
 * addresses, CIDR ranges, or `loopback`, `linklocal`, `uniquelocal`. `true` (trust any sender of
 * the header) is refused: a client could then name any address.
 */
export function trustProxySetting(env: NodeJS.ProcessEnv = process.env): false | number | string[] {
  const raw = env.SVC_TRUST_PROXY?.trim();
  if (!raw || /^(false|0|no|off)$/i.test(raw)) return false;
  if (/^\d+$/.test(raw)) return Number(raw);
  if (/^(true|yes|on)$/i.test(raw)) {
    throw new ConfigurationError(
      'SVC_TRUST_PROXY=true would let any client name its own address: give the number of proxies in front of the service, or their addresses',
    );
  }
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  const bad = entries.filter((e) => !PROXY_RANGE_NAMES.includes(e) && !/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(e));
  if (bad.length)
    throw new ConfigurationError(
      `SVC_TRUST_PROXY: ${bad.join(', ')} is not an address, a CIDR range or one of ${PROXY_RANGE_NAMES.join(', ')}`,
    );
  return entries;
}
