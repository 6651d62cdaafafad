/**
 * Workspaces for the migration tests: a copy of the blog specs (hooks included) in a scratch folder
 * (test/support/scratch.ts), built into its own output folder, so the generated code imports the
 * runtime by a relative path and jest can require it.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Express } from 'express';
import { generate, type GenerateOptions, type Generated } from '../../generator/pipeline';
import { writeOutput } from '../../generator/output/write';
import type { Db, KeyPair, Migration, ServiceContext, Settings } from '../../runtime';
import { scratchDir } from '../support/scratch';

export const ROOT = path.resolve(__dirname, '../..');

export interface Workspace {
  root: string;
  specs: string;
  out: string;
  remove(): void;
}

const importPath = (from: string, to: string) => {
  const rel = path.relative(from, to).split(path.sep).join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
};

/** `specs/` copied into a fresh scratch folder; its hooks import the runtime and the workspace's own output. */
export function blogWorkspace(tag: string): Workspace {
  const root = scratchDir(tag);
  const specs = path.join(root, 'specs');
  const out = path.join(root, 'generated');
  fs.cpSync(path.join(ROOT, 'specs'), specs, { recursive: true });
  const hooks = path.join(specs, 'hooks');
  for (const f of fs.readdirSync(hooks)) {
    const file = path.join(hooks, f);
    const text = fs
      .readFileSync(file, 'utf8')
      .replace(/'\.\.\/\.\.\/runtime'/g, `'${importPath(hooks, path.join(ROOT, 'runtime'))}'`)
      .replace(/'\.\.\/\.\.\/generated\//g, `'${importPath(hooks, out)}/`);
    fs.writeFileSync(file, text);
  }
  return { root, specs, out, remove: () => fs.rmSync(root, { recursive: true, force: true }) };
}

/** Replaces `from` by `to` in a file; `from` must occur exactly once (a regex may match several times). */
export function edit(file: string, from: string | RegExp, to: string): void {
  const text = fs.readFileSync(file, 'utf8');
  if (typeof from === 'string') {
    if (text.split(from).length !== 2) throw new Error(`${file}: expected exactly one "${from}"`);
    fs.writeFileSync(file, text.replace(from, to));
  } else {
    if (!from.test(text)) throw new Error(`${file}: no match for ${from}`);
    fs.writeFileSync(file, text.replace(from, to));
  }
}

/**
 * `generate` + `writeOutput`, as `svcgen build` does, with the API and access gates open
 * (`--allow-breaking --allow-widen`): these tests are about migrations; the gates have their own
 * (test/cases/api-*, access-*, test/generator/cli.test.ts).
 */
export async function build(ws: Workspace, options: Partial<GenerateOptions> = {}): Promise<Generated> {
  const generated = await generate({ specsDir: ws.specs, outDir: ws.out, allowBreaking: true, allowWiden: true, ...options });
  writeOutput(ws.out, generated.files);
  return generated;
}

export interface LoadedService {
  createService(options: { db: Db; keys: KeyPair; settings?: Settings; logError?: (e: unknown) => void }): {
    app: Express;
    context: ServiceContext;
  };
  migrations: Migration[];
  defaults: Settings;
}

let copies = 0;

/**
 * The generated service in `ws.out` as it is now. Jest caches what it read by path for the whole
 * test file, so each call requires a fresh copy of the output (a sibling folder: the same relative
 * imports of the runtime and the hooks).
 */
export function loadService(ws: Workspace): LoadedService {
  const copy = path.join(ws.root, `generated-${++copies}`);
  fs.cpSync(ws.out, copy, { recursive: true });
  let loaded: LoadedService | undefined;
  jest.isolateModules(() => {
    loaded = {
      createService: require(path.join(copy, 'app')).createService,
      migrations: require(path.join(copy, 'migrations')).migrations,
      defaults: require(path.join(copy, 'settings')).DEFAULT_SETTINGS,
    };
  });
  return loaded!;
}

/** Every row of `table`, ordered by `id`, as plain objects. */
export async function rows(db: Db, table: string): Promise<Record<string, unknown>[]> {
  return (await db(table).select('*').orderBy('id')).map((r: Record<string, unknown>) => ({ ...r }));
}

/** Column names of `table`, sorted. */
export async function columns(db: Db, table: string): Promise<string[]> {
  return Object.keys(await db(table).columnInfo()).sort();
}

export interface LibraryWorkspace extends Workspace {
  /** Writes (or, for null, removes) resource specs by file name. */
  write(files: Record<string, string | null>): void;
}

/** A small service written from scratch (no hooks): `specs/service.yaml` and the resources given to `write`. */
export function libraryWorkspace(tag: string): LibraryWorkspace {
  const root = scratchDir(tag);
  const specs = path.join(root, 'specs');
  fs.mkdirSync(path.join(specs, 'resources'), { recursive: true });
  fs.writeFileSync(path.join(specs, 'service.yaml'), 'title: Library API\nversion: 1.0.0\nbase_path: /api\n');
  return {
    root,
    specs,
    out: path.join(root, 'generated'),
    remove: () => fs.rmSync(root, { recursive: true, force: true }),
    write(files) {
      for (const [name, text] of Object.entries(files)) {
        const p = path.join(specs, 'resources', name);
        if (text === null) fs.rmSync(p);
        else fs.writeFileSync(p, text);
      }
    },
  };
}

/**
 * The message `statement` fails with. (Not `rejects.toThrow()`: better-sqlite3 builds its errors with
 * the Error of the first test file a jest worker ran, which later files' `toThrow` does not recognise.)
 */
export async function failure(statement: PromiseLike<unknown>): Promise<string> {
  try {
    await statement;
  } catch (err) {
    return String((err as { message?: unknown }).message ?? err);
  }
  throw new Error('expected the statement to fail, and it succeeded');
}
