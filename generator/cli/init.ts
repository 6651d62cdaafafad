/**
 * `svcgen init DIR`: a new project in two commands. Copies templates/init/ (a service file, one
 * example resource with its hooks module, a smoke test, package.json, tsconfig.json, a README),
 * then builds the service into DIR/generated so that `npm install && npm start` serves it and
 * `npm install && npm test` passes.
 *
 * The project depends on svcgen's two packages, each at one exact version (see `dependenciesOn`):
 * the runtime `@svcgen/runtime`, which the generated code imports and the service runs, as a
 * dependency; the `svcgen` command with the compiler `svcgen-tsc` that builds the project's
 * TypeScript into dist/, as a devDependency, so that a production install holds only the runtime.
 * Beside them, the packages the runtime leaves to the project (its optional peers), each at the
 * caret range the runtime names: the driver of the database `--db` chooses, and ioredis, which
 * compose.yaml's Redis needs. The tests (an in-memory SQLite database) and `npm start` (the SQLite
 * file of service.yaml while DATABASE_URL is unset) need better-sqlite3 on any database: a
 * devDependency when the service runs on another.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Handlebars from 'handlebars';
import { GENERATOR_VERSION } from '../output/manifest';
import { pascalCase } from '../model/names';
import { RUNTIME_PACKAGE } from '../render/output-imports';
import { PACKAGE_ROOT } from '../package-root';
import { generate } from '../pipeline';
import { TEMPLATES_DIR } from '../render/render';
import { writeOutput } from '../output/write';

export const INIT_TEMPLATES = path.join(TEMPLATES_DIR, 'init');

/** The package.json specs of svcgen's packages in a project, both exact (a version or an absolute `file:`). */
export interface Dependencies {
  /** The command (a devDependency): `0.1.0`, `file:/home/me/svcgen-0.1.0.tgz`, `file:/home/me/svcgen`. */
  svcgen: string;
  /** The runtime (a dependency): `0.1.0`, `file:/home/me/svcgen-runtime-0.1.0.tgz`, `file:/home/me/svcgen/runtime`. */
  runtime: string;
}

/** A version without a range: what a project pins svcgen and its runtime to. */
const EXACT_VERSION = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

/** A folder that cannot take a new project. */
export class InitError extends Error {}

/** The databases `svcgen init --db` sets a project up for: the driver each needs, and how compose.yaml runs it. */
export const INIT_DATABASES = {
  sqlite: { driver: 'better-sqlite3', label: 'SQLite' },
  postgres: { driver: 'pg', label: 'PostgreSQL' },
  mysql: { driver: 'mysql2', label: 'MySQL/MariaDB' },
} as const;

export type InitDatabase = keyof typeof INIT_DATABASES;

/** What a project made without `--db` runs on: the SQLite file of service.yaml. */
export const DEFAULT_INIT_DATABASE: InitDatabase = 'sqlite';

export interface InitOptions {
  /**
   * The project's dependency on svcgen: an exact version (`0.2.0`), or the path of svcgen's package
   * tarball or folder (written as an absolute `file:`). Default: see `dependenciesOn`.
   */
  svcgen?: string;
  /** The database the service runs on in production (compose.yaml, its driver); default sqlite. */
  db?: string;
  cwd?: string;
}

export interface InitResult {
  /** Files created, relative to the project, sorted. */
  files: string[];
  /** How package.json depends on svcgen's two packages. */
  dependencies: Dependencies;
  /** The third-party packages package.json depends on, name → caret range (devDependencies apart). */
  packages: { dependencies: Record<string, string>; devDependencies: Record<string, string> };
  /** Where `npm start` serves the example. */
  url: string;
}

/** Dot files of a project, kept without their dot among the templates (npm drops dot files from packages). */
const DOT_FILES = new Set(['gitignore', 'gitattributes', 'dockerignore']);

/** Template path → project path: `.hbs` is rendered and dropped; `gitignore` becomes `.gitignore`, `dockerignore` `.dockerignore`. */
function targetOf(rel: string): string {
  const name = rel.replace(/\.hbs$/, '');
  return DOT_FILES.has(name) ? `.${name}` : name;
}

function templateFiles(dir: string, base = dir): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? templateFiles(path.join(dir, e.name), base)
        : [path.relative(base, path.join(dir, e.name)).split(path.sep).join('/')],
    )
    .sort();
}

export async function initProject(dir: string, options: InitOptions = {}): Promise<InitResult> {
  const cwd = options.cwd ?? process.cwd();
  const root = path.resolve(cwd, dir);
  if (fs.existsSync(root) && (!fs.statSync(root).isDirectory() || fs.readdirSync(root).length)) {
    throw new InitError(`${dir} already exists and is not an empty folder; give svcgen init a new folder`);
  }
  const db = options.db ?? DEFAULT_INIT_DATABASE;
  if (!Object.hasOwn(INIT_DATABASES, db)) throw new InitError(`--db ${db}: give one of ${Object.keys(INIT_DATABASES).join(', ')}`);
  const database = db as InitDatabase;
  const dependencies = dependenciesOn(root, cwd, options.svcgen);
  const packages = packagesFor(database);
  const base = path.basename(root);
  const packageName =
    base
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[._-]+|-+$/g, '') || 'service';
  const view = {
    packageName,
    title: `${pascalCase(packageName).replace(/([a-z0-9])([A-Z])/g, '$1 $2')} API`,
    dependencies,
    runtimePackage: RUNTIME_PACKAGE,
    version: GENERATOR_VERSION,
    /** The PostgreSQL or MariaDB user, password and database of compose.yaml. */
    dbName: packageName.replace(/[^a-z0-9]+/g, '_'),
    db: {
      sqlite: database === 'sqlite',
      postgres: database === 'postgres',
      mysql: database === 'mysql',
      label: INIT_DATABASES[database].label,
      driver: INIT_DATABASES[database].driver,
    },
    /** package.json's lines of the third-party packages: after the runtime's, before svcgen's. */
    dependencyLines: Object.entries(packages.dependencies)
      .map(([name, range]) => `    "${name}": "${range}"`)
      .join(',\n'),
    devDependencyLines: Object.entries(packages.devDependencies)
      .map(([name, range]) => `    "${name}": "${range}",\n`)
      .join(''),
  };

  const files: string[] = [];
  fs.mkdirSync(root, { recursive: true });
  for (const rel of templateFiles(INIT_TEMPLATES)) {
    const source = fs.readFileSync(path.join(INIT_TEMPLATES, rel), 'utf8');
    const text = rel.endsWith('.hbs') ? Handlebars.compile(source, { noEscape: true, strict: true })(view) : source;
    const target = targetOf(rel);
    fs.mkdirSync(path.dirname(path.join(root, target)), { recursive: true });
    fs.writeFileSync(path.join(root, target), text);
    files.push(target);
  }
  // The service itself, as `npm run build` would write it: the runtime through the package.
  const out = path.join(root, 'generated');
  const generated = await generate({ specsDir: 'specs', outDir: 'generated', cwd: root, runtimeImport: RUNTIME_PACKAGE });
  writeOutput(out, generated.files);
  files.push(...[...generated.files.keys()].map((f) => `generated/${f}`));
  return { files: files.sort(), dependencies, packages, url: 'http://127.0.0.1:8000/api' };
}

/**
 * The runtime's optional peers a project on `database` installs, at the ranges the runtime's
 * package.json names: the database's driver and ioredis (compose.yaml's Redis) as dependencies;
 * better-sqlite3 as a devDependency on another database, for the tests and a local `npm start`.
 */
export function packagesFor(database: InitDatabase): InitResult['packages'] {
  const runtime = JSON.parse(fs.readFileSync(require.resolve(`${RUNTIME_PACKAGE}/package.json`, { paths: [PACKAGE_ROOT] }), 'utf8')) as {
    peerDependencies: Record<string, string>;
  };
  const range = (name: string) => {
    const declared = runtime.peerDependencies[name];
    if (!declared) throw new Error(`${RUNTIME_PACKAGE} names no range of ${name} among its peerDependencies`);
    return declared;
  };
  const driver = INIT_DATABASES[database].driver;
  const sorted = (names: string[]) => Object.fromEntries(names.sort().map((name) => [name, range(name)]));
  return {
    dependencies: sorted([driver, 'ioredis']),
    devDependencies: sorted(database === 'sqlite' ? [] : ['better-sqlite3']),
  };
}

/**
 * How a new project depends on svcgen's packages. Given (`--svcgen`): a path to svcgen's tarball or
 * folder becomes an absolute `file:`, with the runtime beside it (`npm pack -w runtime`
 * writes `svcgen-runtime-0.1.0.tgz` beside `svcgen-0.1.0.tgz`; a checkout holds it in `runtime/`);
 * anything else must be an exact version, of both. Otherwise the svcgen running init decides: run
 * from a checkout of the svcgen repository, on that checkout (its `npm run build` compiles the
 * runtime the project loads); installed from tarballs (`npm install ./svcgen-0.1.0.tgz
 * ./svcgen-runtime-0.1.0.tgz`), on those same tarballs; installed from the registry, on this
 * version of svcgen and the runtime version it pins.
 */
export function dependenciesOn(root: string, cwd: string, given?: string): Dependencies {
  // Absolute: a path relative to the project would break as soon as the project or the tarball moves
  // relative to the other (a copy of the project, a build elsewhere).
  const asFile = (target: string) => `file:${path.resolve(target).split(path.sep).join('/')}`;
  if (given !== undefined) {
    const target = path.resolve(cwd, given);
    if (/^[./~]/.test(given) || given.endsWith('.tgz') || fs.existsSync(target)) {
      if (!fs.existsSync(target)) throw new InitError(`--svcgen ${given}: no such tarball or folder`);
      const runtime = runtimeBeside(target);
      if (!fs.existsSync(runtime))
        throw new InitError(
          `--svcgen ${given}: no runtime package beside it (${path.relative(cwd, runtime)}); \`npm pack -w runtime\` in svcgen's repository makes it`,
        );
      return { svcgen: asFile(target), runtime: asFile(runtime) };
    }
    if (!EXACT_VERSION.test(given))
      throw new InitError(
        `--svcgen ${given}: give an exact version, such as ${GENERATOR_VERSION}; a project pins svcgen and its runtime exactly`,
      );
    return { svcgen: given, runtime: given };
  }
  if (fs.existsSync(path.join(PACKAGE_ROOT, 'generator', 'cli', 'cli.ts')))
    return { svcgen: asFile(PACKAGE_ROOT), runtime: asFile(runtimeBeside(PACKAGE_ROOT)) };
  const installed = (name: string) => {
    const tarball = installedFromFile(name);
    return tarball && asFile(tarball);
  };
  return { svcgen: installed('svcgen') ?? GENERATOR_VERSION, runtime: installed(RUNTIME_PACKAGE) ?? pinnedRuntimeVersion() };
}

/** The runtime package that goes with svcgen's tarball or folder `target`. */
function runtimeBeside(target: string): string {
  if (fs.statSync(target).isDirectory()) return path.join(target, 'runtime');
  return path.join(path.dirname(target), path.basename(target).replace(/^svcgen-/, 'svcgen-runtime-'));
}

/** The exact runtime version this svcgen depends on (its package.json). */
function pinnedRuntimeVersion(): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  return pkg.dependencies[RUNTIME_PACKAGE];
}

/** The tarball package `name` was installed from beside this svcgen, as npm recorded it in the installing project's lockfile. */
function installedFromFile(name: string): string | undefined {
  const modules = path.dirname(PACKAGE_ROOT);
  if (path.basename(modules) !== 'node_modules') return undefined;
  const project = path.dirname(modules);
  for (const lockfile of [path.join(modules, '.package-lock.json'), path.join(project, 'package-lock.json')]) {
    try {
      const lock = JSON.parse(fs.readFileSync(lockfile, 'utf8')) as { packages?: Record<string, { resolved?: string }> };
      const resolved = lock.packages?.[`node_modules/${name}`]?.resolved;
      if (resolved?.startsWith('file:')) {
        const target = path.resolve(project, resolved.slice('file:'.length));
        if (fs.existsSync(target)) return target;
      }
    } catch {
      // No lockfile there.
    }
  }
  return undefined;
}
