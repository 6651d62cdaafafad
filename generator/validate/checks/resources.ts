/**
 * The resources as layer 2 sees them: each file's fields by name (a field whose spec failed the
 * meta-schema still exists by name, so its uses are not reported), its primary key (the implicit
 * `id` when no field is one), and whether the file could be read at all. A file that could not is
 * opaque: checks that reach it through a relation report nothing against it.
 */
import type { SpecFile, YamlPath } from '../../load/load';
import { didYouMean } from '../suggest';
import { asRec, asStr, type Ctx, type Field, type Resource, report } from './context';

export type { Field, Resource } from './context';

export const RELATION_TYPES = ['foreign_key', 'many_to_many'];

export function indexResource(spec: SpecFile, data: unknown): Resource {
  const rec = asRec(data);
  const written = asStr(spec.doc.get('model'));
  const model = asStr(rec?.model) ?? (rec ? undefined : written);
  const fields = new Map<string, Field>();
  // A field whose spec failed the meta-schema still exists by name, so uses of it are not reported.
  for (const [name, value] of Object.entries(asRec(rec?.fields) ?? {})) {
    const s = asRec(value) ?? {};
    fields.set(name, { name, type: asStr(s.type), to: asStr(s.to), spec: s, implicit: false });
  }
  const implicitId: Field = { name: 'id', type: 'integer', spec: {}, implicit: true };
  const pk = [...fields.values()].find((f) => f.spec.primary_key === true) ?? implicitId;
  if (pk === implicitId && !fields.has('id')) fields.set('id', implicitId);
  return { spec, data: rec ?? {}, model, name: model ?? written ?? 'this resource', fields, pk, opaque: !rec, reverse: new Map() };
}

/**
 * A field of `target`, or undefined after reporting `<label> "x" is not a field of Model`.
 * Unreadable targets know no fields, so nothing is reported against them.
 */
export function fieldOf(
  ctx: Ctx,
  spec: SpecFile,
  target: Resource,
  name: string,
  label: string,
  at: YamlPath,
  key = false,
): Field | undefined {
  const field = target.fields.get(name);
  if (!field && !target.opaque) {
    report(ctx, spec, at, `${label} "${name}" is not a field of ${target.name}${didYouMean(name, target.fields.keys())}`, key);
  }
  return field;
}

export function relationTarget(ctx: Ctx, field: Field): Resource | undefined {
  return field.to === undefined ? undefined : ctx.byModel.get(field.to);
}
