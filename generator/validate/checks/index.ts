/**
 * Stage 2: check the loaded specs and report every problem at once, each at its YAML position.
 *
 * Layer 1 checks the shape of each file against the JSON meta-schema (ajv) and turns ajv's errors
 * into one plain message per node (check-shape.ts). Layer 2 checks the meaning of what each file
 * writes (fields, defaults, schemas, the viewset's options, list queries, relations, the service
 * file) on the parts that passed layer 1: nodes that failed it are marked INVALID, so one mistake is
 * reported once, not once per layer. What the model derives (names, routes, operation ids, hook
 * references) is checked by the model stage: model/check-model.ts.
 */
import { type Diagnostic, sortDiagnostics } from '../../load/diagnostics';
import type { LoadedSpecs, SpecFile } from '../../load/load';
import { checkField, checkIndexes, checkPrimaryKey } from './check-fields';
import { checkReverseNames } from './check-reverse';
import { checkSerializer } from './check-schemas';
import { checkService } from './check-service';
import { checkResourceShape, checkServiceShape, checkShape } from './check-shape';
import { checkViewset } from './check-viewset';
import { asRec, type Ctx } from './context';
import { indexResource, type Resource } from './resources';

export interface Validation {
  /** Every problem found, sorted by position. */
  diagnostics: Diagnostic[];
  /**
   * The resource files whose model other files cannot know (no `model:`, or a file that could not be
   * read): their problems cause others' (a relation to that model), so they are printed first.
   */
  causes: Set<string>;
  /** The files the meta-schema accepted as a whole, with their data: the ones the model can describe. */
  documents: Map<SpecFile, unknown>;
}

/**
 * Every problem in the loaded specs, sorted by position, without repeating `loaded.diagnostics`
 * (YAML syntax errors and duplicate keys, which the loader already reported).
 */
export function validateSpecs(loaded: LoadedSpecs): Validation {
  const ctx: Ctx = { out: [], resources: [], byModel: new Map(), documents: new Map() };
  if (loaded.service) {
    const data = checkShape(ctx, loaded.service, checkServiceShape);
    ctx.service = { spec: loaded.service, data: asRec(data) ?? {} };
  }
  for (const spec of loaded.resources) {
    const res = indexResource(spec, checkShape(ctx, spec, checkResourceShape));
    ctx.resources.push(res);
    if (res.model && !ctx.byModel.has(res.model)) ctx.byModel.set(res.model, res);
  }
  const causes = new Set(ctx.resources.filter((r) => r.opaque || r.model === undefined).map((r) => r.spec.file));
  checkReverseNames(ctx);
  for (const res of ctx.resources) if (!res.opaque) checkResource(ctx, res);
  if (ctx.service) checkService(ctx, ctx.service.spec, ctx.service.data);
  return { diagnostics: dedupe(sortDiagnostics(ctx.out)), causes, documents: ctx.documents };
}

/** The semantic checks of one resource file that could be read. */
function checkResource(ctx: Ctx, res: Resource): void {
  checkPrimaryKey(ctx, res);
  for (const field of res.fields.values()) if (!field.implicit) checkField(ctx, res, field);
  checkIndexes(ctx, res);
  checkSerializer(ctx, res);
  const vs = asRec(res.data.viewset);
  if (vs) checkViewset(ctx, res, vs);
}

/** A problem found twice by two checks (the same message at the same place) is reported once. */
function dedupe(list: Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return list.filter((d) => {
    const id = `${d.file}:${d.line}:${d.column}:${d.message}`;
    return seen.has(id) ? false : (seen.add(id), true);
  });
}
