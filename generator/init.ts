/**
 * `svcgen init DIR`: a new project in two commands. Copies templates/init/ (a service file, one
 * example resource with its hooks module, a smoke test, package.json, tsconfig.json, a README),
 * then builds the service into DIR/generated so that `npm install && npm start` serves it and
 * `npm install && npm test` passes.
 *
 * The project depends on svcgen through `"svcgen": "file:<path to this repository>"`: npm links the
 * folder into node_modules/svcgen, which gives the project the `svcgen` command, the runtime as
 * `svcgen/runtime`, the TypeScript loader `svcgen/register` and the compiler `svcgen-tsc`.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Handlebars from 'handlebars';
import { pascalCase } from './names';
import { REPO_ROOT, RUNTIME_PACKAGE } from './output-imports';
import { generate } from './pipeline';
import { TEMPLATES_DIR } from './render';
import { writeOutput } from './write';

export const INIT_TEMPLATES = path.join(TEMPLATES_DIR, 'init');

/** A folder that cannot take a new project. */
export class InitError extends Error {}

export interface InitOptions {
  /** Where the project finds svcgen (default: this repository); written as a path relative to the project. */
  svcgenPath?: string;
  cwd?: string;
}

export interface InitResult {
  /** Files created, relative to the project, sorted. */
  files: string[];
  /** The dependency spec of svcgen in package.json (`file:...`). */
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
  const svcgen = options.svcgenPath ? path.resolve(cwd, options.svcgenPath) : REPO_ROOT;
  const pkg = path.join(svcgen, 'package.json');
  if (!fs.existsSync(pkg) || (JSON.parse(fs.readFileSync(pkg, 'utf8')) as { name?: string }).name !== 'svcgen') {
    throw new InitError(`--svcgen ${options.svcgenPath}: no svcgen package.json there; give the folder of the svcgen repository`);
  }
  const base = path.basename(root);
  const packageName = base.toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[._-]+|-+$/g, '') || 'service';
  const svcgenPath = path.relative(root, svcgen).split(path.sep).join('/') || '.';
  const view = {
    packageName,
    title: `${pascalCase(packageName).replace(/([a-z0-9])([A-Z])/g, '$1 $2')} API`,
    dependency: `file:${svcgenPath}`,
    /** Where the Docker build finds svcgen, relative to the project. */
    svcgenPath,
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
