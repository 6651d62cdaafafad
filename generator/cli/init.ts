/**
 * `svcgen init DIR`: a new project in two commands. Copies templates/init/ (a service file, one
 * example resource with its hooks module, a smoke test, package.json, tsconfig.json, a README),
 * then builds the service into DIR/generated so that `npm install && npm start` serves it and
 * `npm install && npm test` passes.
 *
 * The project depends on the svcgen package (see `dependencyOn`), which gives it the `svcgen`
 * command, the runtime as `svcgen/runtime` and the compiler `svcgen-tsc` that builds the project's
 * TypeScript into dist/.
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

/** A folder that cannot take a new project. */
export class InitError extends Error {}

export interface InitOptions {
  /**
   * The project's dependency on svcgen: a version range (`^0.2.0`), or the path of a package tarball
   * or folder (written as `file:` relative to the project). Default: see `dependencyOn`.
   */
  svcgen?: string;
  cwd?: string;
}

export interface InitResult {
  /** Files created, relative to the project, sorted. */
  files: string[];
  /** The dependency spec of svcgen in package.json (`^0.1.0`, `file:../svcgen-0.1.0.tgz`). */
  dependency: string;
  /** Where `npm start` serves the example. */
  url: string;
}

/** Dot files of a project, kept without their dot among the templates (npm drops dot files from packages). */
const DOT_FILES = new Set(['gitignore', 'dockerignore']);

/** Template path → project path: `.hbs` is rendered and dropped; `gitignore` becomes `.gitignore`, `dockerignore` `.dockerignore`. */
function targetOf(rel: string): string {
  const name = rel.replace(/\.hbs$/, '');
  return DOT_FILES.has(name) ? `.${name}` : name;
}

function templateFiles(dir: string, base = dir): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? templateFiles(path.join(dir, e.name), base) : [path.relative(base, path.join(dir, e.name)).split(path.sep).join('/')]))
    .sort();
}

export async function initProject(dir: string, options: InitOptions = {}): Promise<InitResult> {
  const cwd = options.cwd ?? process.cwd();
  const root = path.resolve(cwd, dir);
  if (fs.existsSync(root) && (!fs.statSync(root).isDirectory() || fs.readdirSync(root).length)) {
    throw new InitError(`${dir} already exists and is not an empty folder; give svcgen init a new folder`);
  }
  const dependency = dependencyOn(root, cwd, options.svcgen);
  const base = path.basename(root);
  const packageName = base.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[._-]+|-+$/g, '') || 'service';
  const view = {
    packageName,
    title: `${pascalCase(packageName).replace(/([a-z0-9])([A-Z])/g, '$1 $2')} API`,
    dependency,
    version: GENERATOR_VERSION,
    /** The PostgreSQL user, password and database of compose.yaml. */
    dbName: packageName.replace(/[^a-z0-9]+/g, '_'),
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
  return { files: files.sort(), dependency: view.dependency, url: 'http://127.0.0.1:8000/api' };
}

/**
 * How a new project depends on svcgen. Given (`--svcgen`): a path to a tarball or a folder becomes
 * `file:` relative to the project, anything else is a version range. Otherwise the svcgen running
 * init decides: installed from a tarball (`npm install ./svcgen-0.1.0.tgz`), the project depends
 * on that same tarball; run from a checkout of the svcgen repository, on that checkout (its
 * `npm run build` compiles the runtime the project loads); installed from the registry, on
 * `^VERSION`.
 */
export function dependencyOn(root: string, cwd: string, given?: string): string {
  const asFile = (target: string) => `file:${path.relative(root, target).split(path.sep).join('/') || '.'}`;
  if (given !== undefined) {
    const target = path.resolve(cwd, given);
    if (/^[./~]/.test(given) || given.endsWith('.tgz') || fs.existsSync(target)) {
      if (!fs.existsSync(target)) throw new InitError(`--svcgen ${given}: no such tarball or folder`);
      return asFile(target);
    }
    return given;
  }
  if (fs.existsSync(path.join(PACKAGE_ROOT, 'generator', 'cli', 'cli.ts'))) return asFile(PACKAGE_ROOT);
  const tarball = installedFromFile();
  return tarball ? asFile(tarball) : `^${GENERATOR_VERSION}`;
}

/** The tarball this svcgen was installed from, as npm recorded it in the installing project's lockfile. */
function installedFromFile(): string | undefined {
  const modules = path.dirname(PACKAGE_ROOT);
  if (path.basename(modules) !== 'node_modules') return undefined;
  const project = path.dirname(modules);
  for (const lockfile of [path.join(modules, '.package-lock.json'), path.join(project, 'package-lock.json')]) {
    try {
      const lock = JSON.parse(fs.readFileSync(lockfile, 'utf8')) as { packages?: Record<string, { resolved?: string }> };
      const resolved = lock.packages?.['node_modules/svcgen']?.resolved;
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
