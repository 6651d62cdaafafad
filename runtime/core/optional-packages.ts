/**
 * The packages a service installs only when it uses them: the database driver of its
 * `DATABASE_URL` (better-sqlite3, pg, mysql2), ioredis for `SVC_REDIS_URL`, the MCP SDK for a spec
 * that enables MCP. They are optional peer dependencies of the runtime, loaded on first use; one
 * that is missing stops the service with a one-line ConfigurationError naming the package and the
 * command that installs it, instead of a stack trace from deep inside a `require`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ConfigurationError } from './settings';

/** `name` itself, or a subpath of it (`@scope/pkg/sub.js` → `@scope/pkg`). */
export function packageNameOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/**
 * Whether `error` is a failed resolution and `name` is installed nowhere `require` looks: not a
 * subpath missing from an installed package, nor one of its own dependencies missing.
 */
function isMissing(error: unknown, name: string): boolean {
  if ((error as { code?: unknown } | null)?.code !== 'MODULE_NOT_FOUND') return false;
  return !(require.resolve.paths(name) ?? []).some((dir) => fs.existsSync(path.join(dir, name, 'package.json')));
}

/** The one-line error of a missing optional package: why the service needs it and how to install it. */
export function missingPackageError(name: string, why: string): ConfigurationError {
  return new ConfigurationError(`${why}: the package ${name} is not installed; npm install ${name}`);
}

/**
 * `require(specifier)` of an optional package; when the package is not installed, a
 * ConfigurationError such as `DATABASE_URL is a PostgreSQL URL: the package pg is not installed;
 * npm install pg`. `why`
 * says what needs it. An error from inside an installed package (one of its own dependencies
 * missing, a failing native binding) passes through unchanged.
 */
export function requireOptional<T>(specifier: string, why: string): T {
  try {
    return require(specifier) as T;
  } catch (error) {
    const name = packageNameOf(specifier);
    if (isMissing(error, name)) throw missingPackageError(name, why);
    throw error;
  }
}

/** Checks, without loading it, that an optional package is installed (for packages another library loads, such as Knex's drivers). */
export function resolveOptional(specifier: string, why: string): string {
  try {
    return require.resolve(specifier);
  } catch (error) {
    const name = packageNameOf(specifier);
    if (isMissing(error, name)) throw missingPackageError(name, why);
    throw error;
  }
}
