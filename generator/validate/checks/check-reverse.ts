/**
 * Reverse relations (`reverse_name` on a foreign key or many-to-many field): the name becomes a
 * relation of the target resource, so it must not be one of the target's fields (many-to-many
 * included) and must be the only reverse relation of that name on the target. Each accepted name is
 * recorded on the target (`Resource.reverse`) for the schema and `expand` checks.
 */
import type { SpecFile, YamlPath } from '../../load/load';
import { asRec, asStr, type Ctx, report } from './context';
import type { Resource } from './resources';

export function checkReverseNames(ctx: Ctx): void {
  for (const res of ctx.resources) {
    if (res.opaque) continue;
    for (const field of res.fields.values()) {
      const name = asStr(field.spec.reverse_name);
      if (name === undefined || field.to === undefined) continue;
      const target: Resource | undefined = ctx.byModel.get(field.to);
      if (!target || target.opaque) continue;
      const at = ['fields', field.name, 'reverse_name'];
      const first = target.reverse.get(name);
      if (target.fields.has(name)) {
        report(ctx, res.spec, at, `reverse_name "${name}" is already a field of ${target.name}: choose another name`);
      } else if (first) {
        report(
          ctx,
          res.spec,
          at,
          `reverse_name "${name}" is already the reverse of ${first.from.name}.${first.field.name} on ${target.name}: choose another name`,
        );
      } else {
        target.reverse.set(name, { from: res, field });
      }
    }
  }
}

/**
 * A reverse relation shown in a read schema or by `expand` lists every child but soft-deleted ones:
 * a child resource whose `queryset_request` narrows what callers may read would leak the rows it
 * hides, so it is refused.
 */
export function checkReverseVisible(ctx: Ctx, spec: SpecFile, from: Resource, name: string, at: YamlPath, key: boolean): void {
  const hook = asStr(asRec(from.data.viewset)?.queryset_request);
  if (hook !== undefined) {
    report(
      ctx,
      spec,
      at,
      `reverse relation "${name}" would show every ${from.name}, also those its queryset_request (${hook}) hides: it cannot be shown here`,
      key,
    );
  }
}

/**
 * A foreign key or many-to-many relation shown as records (`expand`, a nested read field) reads the
 * related rows of a whole page in one statement, past the related resource's `queryset_request`:
 * a related resource that narrows what callers may read would leak the rows it hides (another
 * author's draft, with its title and content), so it is refused. The key itself stays showable.
 */
export function checkRelatedVisible(ctx: Ctx, spec: SpecFile, target: Resource, name: string, at: YamlPath, shownAs: string): void {
  const hook = asStr(asRec(target.data.viewset)?.queryset_request);
  if (hook !== undefined) {
    report(
      ctx,
      spec,
      at,
      `${shownAs} "${name}" would show every ${target.name}, also those its queryset_request (${hook}) hides: show "${name}" by key, and let clients read the records through ${target.name}'s own routes`,
      true,
    );
  }
}
