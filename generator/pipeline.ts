/**
 * The generator pipeline, each stage once and in order: load → validate (the spec language) → model
 * (the derived names and their checks across files, then the model) → the gates (migrate, api,
 * access) → render (from the model and the gates' results) → format. `generate` is pure up to
 * reading the specs and the output folder's migration history and manifest; `build` writes its bytes
 * (`write.ts`) and `check` compares them with the output folder (`drift.ts`).
 */
import * as path from 'node:path';
import { buildModel } from './model/build-model';
import { checkModel, describeSpecs, hookExportsCheckable, type DescribedSpecs } from './model/check-model';
import { dbSchemaOf } from './migrate/db-schema';
import { SpecError, sortDiagnostics, type Diagnostic } from './load/diagnostics';
import { formatFiles } from './output/format';
import { checkHookExports } from './validate/hook-exports';
import { checkHookImports } from './validate/hook-imports';
import { checkGeneratedNames } from './render/generated-names';
import { diagnosticAt, hasSyntaxError, loadSpecs, type LoadedSpecs } from './load/load';
import { MANIFEST, manifestJson, previousManifest } from './output/manifest';
import { planMigrations } from './migrate/migrations';
import { readMigrationHistory, type MigrationHistory } from './migrate/history';
import type { NewMigration } from './migrate/steps';
import type { ServiceModel, SourceRef } from './model/model';
import { outputImports } from './render/output-imports';
import { renderService } from './render/render';
import { changesSince, endpointsOf, type BuildChanges } from './output/summary';
import { validateSpecs } from './validate/checks';
import { accessMatrix, type AccessMatrix, type AccessRow } from './access/matrix';
import { apiSurface } from './api/surface';
import { API_JSON, apiBreaks, apiJson, committedApi, type FoundBreak } from './api/breaks';
import {
  ACCESS_JSON,
  ACCESS_MD,
  accessJson,
  accessMarkdown,
  committedAccess,
  sourceOf,
  wideningMessage,
  widenings,
  type Widening,
} from './access/gate';

// The pipeline's public names, for callers that import the generator as one module.
export { drift, unifiedDiff, type Drift } from './output/drift';
export { GENERATOR_VERSION, MANIFEST, previousFiles } from './output/manifest';
export { RUNTIME_PACKAGE } from './render/output-imports';
export { PACKAGE_ROOT } from './package-root';
export { writeOutput, type BuildResult } from './output/write';
export { SpecError };

export interface GenerateOptions {
  specsDir: string;
  outDir: string;
  cwd?: string;
  /** Write migration steps that lose data (drop a table or column, narrow a type). */
  allowDestructive?: boolean;
  /** Accept changes that widen access (recorded in access.json and access.md). */
  allowWiden?: boolean;
  /** Accept changes that break the API's clients (recorded in api.json). */
  allowBreaking?: boolean;
  /** One-off values for existing rows of new NOT NULL columns: `table.field` → value as typed. */
  defaults?: Record<string, string>;
  /** Import specifier of the runtime (default: the package name, `@svcgen/runtime`). */
  runtimeImport?: string;
  /**
   * Render what a build into an empty `outDir` writes: ignore the migration history and manifest
   * there (the schema gets a new `0001_initial`). The test cases' expected trees are rendered so.
   */
  firstBuild?: boolean;
}

export interface Generated {
  model: ServiceModel;
  /** Output path (relative to outDir, forward slashes) → exact bytes to write, sorted by path, the manifest last. */
  files: Map<string, string>;
  /** The migration this build adds (undefined when the schema did not change). */
  migration?: NewMigration;
  /** Resources and endpoints added or removed since the previous build's manifest. */
  changes: BuildChanges;
}

/** Every spec problem at once, or none. */
export function validate(specsDir: string, cwd = process.cwd()): Diagnostic[] {
  return checkSpecs(loadSpecs(specsDir, cwd)).diagnostics;
}

/**
 * Every problem: YAML (alone when a file is not YAML), the meta-schema and the meaning of each file,
 * the model's names and hook references across files, and the hooks modules' exports and signatures
 * (of each file whose hooks module is usable, and each hook name no other problem is reported at);
 * then, when all those pass, clashes of the names the generated code derives from the specs. Returns the described specs too: the model is built from them, so names are derived once;
 * and, when the specs are sound, the model itself, which the check of generated names built.
 */
export function checkSpecs(loaded: LoadedSpecs): { diagnostics: Diagnostic[]; described: DescribedSpecs; model?: ServiceModel } {
  const validation = validateSpecs(loaded);
  const described = describeSpecs(loaded, validation.documents);
  // A file that is not YAML leaves holes every later check would report as problems of its own
  // (a resource unknown, a hook unused): the syntax errors are shown alone.
  const files = [loaded.service, ...loaded.resources].filter((s) => s !== undefined);
  if (files.some(hasSyntaxError)) return { diagnostics: sortDiagnostics(loaded.diagnostics), described };
  // What the hooks modules import from the runtime is read apart from the specs: reported with the rest.
  const diagnostics = [
    ...loaded.diagnostics,
    ...validation.diagnostics,
    ...checkModel(described),
    ...checkHookImports(described, loaded.cwd),
  ];
  // Hooks whose module and name are sound are checked alongside the rest, so one run says everything.
  diagnostics.push(...checkHookExports(hookExportsCheckable(described, diagnostics)));
  // The names generated code derives need the model, so they are checked when the specs are sound.
  const model = diagnostics.length ? undefined : buildModel(described);
  if (model) diagnostics.push(...checkGeneratedNames(model, loaded));
  // By file and position, the files whose model is unknown first: a missing `model:` is printed
  // before the relations to that model that fail in a file that sorts earlier.
  const causes = validation.causes;
  return { diagnostics: sortDiagnostics(diagnostics, causes), described, model };
}

/** The model of sound specs, built once by their checks; throws a SpecError listing every problem. */
export function soundModel(loaded: LoadedSpecs): ServiceModel {
  const { diagnostics, model } = checkSpecs(loaded);
  if (diagnostics.length || !model) throw new SpecError(diagnostics);
  return model;
}

/** The specs rendered into the bytes of every output file; throws a SpecError listing every problem. */
export async function generate(options: GenerateOptions): Promise<Generated> {
  const cwd = options.cwd ?? process.cwd();
  const loaded = loadSpecs(options.specsDir, cwd);
  const model = soundModel(loaded);
  const outDir = path.resolve(cwd, options.outDir);
  // The three gates (the migration's steps, the API's breaking changes, access widened) report
  // their problems together: one run says everything a change needs.
  const gated = <T>(gate: () => T): T | undefined => {
    try {
      return gate();
    } catch (err) {
      if (!(err instanceof SpecError)) throw err;
      stopped.push(...err.diagnostics);
      return undefined;
    }
  };
  const stopped: Diagnostic[] = [];
  const history: MigrationHistory = options.firstBuild ? { snapshotFile: '', migrations: [] } : readMigrationHistory(outDir, cwd);
  // Each stage's result is made once: render prints the schema, the migrations and the access matrix the gates made.
  const schema = dbSchemaOf(model);
  const plan = gated(() =>
    planMigrations(model, schema, history, {
      allowDestructive: options.allowDestructive,
      defaults: options.defaults,
      at: positionIn(loaded),
    }),
  );
  const api = gated(() => apiFile(loaded, model, outDir, options));
  const access = gated(() => accessFiles(loaded, model, outDir, options));
  // Each gate's problems in its own order, the migration's first.
  if (stopped.length || !plan || api === undefined || !access) throw new SpecError(stopped);
  const rendered = renderService(model, outputImports(outDir, loaded.dir, options.runtimeImport), {
    schema,
    migrations: plan,
    access: access.matrix,
  });
  const files = await formatFiles(sortedByPath(rendered.files));
  // Committed migrations go back byte for byte, in order among the rest.
  for (const [name, text] of rendered.verbatim) files.set(name, text);
  for (const [name, text] of access.files) files.set(name, text);
  files.set(API_JSON, api);
  const output = sortedByPath(files);
  const endpoints = endpointsOf(model);
  output.set(MANIFEST, manifestJson(output.keys(), endpoints));
  const previous = options.firstBuild ? undefined : previousManifest(outDir);
  return { model, files: output, migration: plan.next, changes: changesSince(previous, [...output.keys()], endpoints) };
}

/** The specs' access matrix, or the problems that keep it from being built. */
export function accessOf(specsDir: string, cwd = process.cwd()): AccessMatrix {
  return accessMatrix(soundModel(loadSpecs(specsDir, cwd)), 'service.yaml');
}

/** Places in the specs, named by a path in the specs folder or as diagnostics show it, and where they are. */
function specPlaces(loaded: LoadedSpecs) {
  const specs = [loaded.service, ...loaded.resources].filter((s) => s !== undefined);
  const specOf = (source: SourceRef) => specs.find((s) => s.relPath === source.file || s.file === source.file);
  const exists = (source: SourceRef) => specOf(source)?.doc.getIn(source.path, true) !== undefined;
  const at = (source: SourceRef | undefined, message: string): Diagnostic => {
    const spec = source && specOf(source);
    return spec
      ? diagnosticAt(spec, source.path, message, true)
      : { file: source?.file ?? loaded.service?.file ?? 'service.yaml', line: 1, column: 1, message };
  };
  return { exists, at };
}

/** Breaks as diagnostics, each at the first of its places that exists in the specs. */
export function breakDiagnostics(loaded: LoadedSpecs, breaks: readonly FoundBreak[], hint: string): Diagnostic[] {
  const { exists, at } = specPlaces(loaded);
  return sortDiagnostics(breaks.map(({ brk, at: places }) => at(places.find(exists), `breaking change: ${brk.message}${hint}`)));
}

/**
 * api.json: the API surface, and the breaking changes acknowledged. A break since the committed
 * surface stops the build unless `allowBreaking`; with it, the breaks join the acknowledged ones.
 */
function apiFile(loaded: LoadedSpecs, model: ServiceModel, outDir: string, options: GenerateOptions): string {
  const { surface, sources } = apiSurface(model);
  const previous = options.firstBuild ? undefined : committedApi(outDir);
  const breaks = previous ? apiBreaks(previous, surface, sources) : [];
  if (breaks.length && !options.allowBreaking) {
    throw new SpecError(breakDiagnostics(loaded, breaks, `; if intended, build with --allow-breaking (recorded in ${API_JSON})`));
  }
  return apiJson(surface, [...(previous?.acknowledged ?? []), ...breaks.map((b) => b.brk)]);
}

/**
 * The access matrix (render prints the access test from it), and access.json and access.md: the
 * matrix, and the widenings acknowledged. A widening since the committed matrix stops the build (at
 * the spec position of the rule that decides it) unless `allowWiden`; with it, the widenings join
 * the acknowledged ones.
 */
function accessFiles(
  loaded: LoadedSpecs,
  model: ServiceModel,
  outDir: string,
  options: GenerateOptions,
): { matrix: AccessMatrix; files: Map<string, string> } {
  // The matrix names spec files by their path in the specs folder (a resource's `specFile`).
  const matrix = accessMatrix(model, 'service.yaml');
  const previous = options.firstBuild ? undefined : committedAccess(outDir);
  const widened = previous ? widenings(previous, matrix) : [];
  if (widened.length && !options.allowWiden) throw new SpecError(wideningDiagnostics(loaded, widened));
  const acknowledged = [...(previous?.acknowledged ?? []), ...widened.map((w) => w.widening)];
  const files = new Map([
    [ACCESS_JSON, accessJson(matrix, acknowledged)],
    [ACCESS_MD, accessMarkdown(model.title, matrix, acknowledged)],
  ]);
  return { matrix, files };
}

/** Widenings as diagnostics, each at the spec position of the rule that decides it; `hint` replaces the build's. */
export function wideningDiagnostics(
  loaded: LoadedSpecs,
  widened: readonly { widening: Widening; row: AccessRow }[],
  hint?: string,
): Diagnostic[] {
  const specs = [loaded.service, ...loaded.resources].filter((s) => s !== undefined);
  const specOf = (source: SourceRef) => specs.find((s) => s.relPath === source.file);
  const exists = (source: SourceRef) => specOf(source)?.doc.getIn(source.path, true) !== undefined;
  const at = (source: SourceRef, message: string) => {
    const spec = specOf(source);
    return spec ? diagnosticAt(spec, source.path, message, true) : { file: source.file, line: 1, column: 1, message };
  };
  return sortDiagnostics(widened.map(({ widening, row }) => at(sourceOf(row, widening, exists), wideningMessage(widening, hint))));
}

/** A diagnostic at a model element's place in the specs (its file's start when the file is not a spec). */
function positionIn(loaded: LoadedSpecs): (source: SourceRef, message: string) => Diagnostic {
  const specs = [loaded.service, ...loaded.resources].filter((s) => s !== undefined);
  return (source, message) => {
    const spec = specs.find((s) => s.file === source.file);
    return spec ? diagnosticAt(spec, source.path, message, true) : { file: source.file, line: 1, column: 1, message };
  };
}

function sortedByPath(files: ReadonlyMap<string, string>): Map<string, string> {
  return new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
