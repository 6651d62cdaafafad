/**
 * Service settings. The specs set each default; the environment overrides it at start.
 */

export interface Settings {
  SVC_APPEND_SLASH: boolean;
  SVC_PAGINATION_PER_PAGE: number;
  SVC_MAX_PER_PAGE_SIZE: number;
  SVC_PAGINATION_MAX_LIMIT: number;
  SVC_NOT_FOUND_ERROR_USE_VERBOSE_NAMES: boolean;
  SVC_DEBUG: boolean;
  SVC_JWT_ISSUER: string;
  SVC_JWT_AUDIENCE: string;
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
}

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
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text)) || Number(text) < 1) {
      throw new ConfigurationError(`${name} must be a positive integer, got "${raw}"`);
    }
    return Number(text);
  }
  if (!text) throw new ConfigurationError(`${name} must not be empty`);
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
