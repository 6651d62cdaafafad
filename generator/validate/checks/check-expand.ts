/**
 * `expand` (the viewset's `?expand=`): each name is a relation of the resource (a foreign key, a
 * many-to-many field, or a reverse relation another resource names here), shown as the related
 * records' `fields`, none a password or a many-to-many; `limit` caps the children of a reverse
 * relation only.
 */
import type { YamlPath } from '../../load/load';
import { didYouMean } from '../suggest';
import { asRec, type Ctx, eachEntry, eachItem, has, type Rec, report } from './context';
import { checkRelatedVisible, checkReverseVisible } from './check-reverse';
import { fieldOf, RELATION_TYPES, relationTarget, type Resource } from './resources';

export function checkExpand(ctx: Ctx, res: Resource, vs: Rec): void {
  const relations = [
    ...[...res.fields.values()].filter((f) => f.type && RELATION_TYPES.includes(f.type)).map((f) => f.name),
    ...res.reverse.keys(),
  ];
  eachEntry(vs.expand, ['viewset', 'expand'], (name, value, at) => {
    const spec = asRec(value) ?? {};
    const reverse = res.fields.has(name) ? undefined : res.reverse.get(name);
    if (reverse) {
      checkReverseVisible(ctx, res.spec, reverse.from, name, at, true);
      return checkExpandFields(ctx, res, reverse.from, spec, at);
    }
    const field = res.fields.get(name);
    if (!field) {
      report(ctx, res.spec, at, `expand "${name}" is not a relation of ${res.name}${didYouMean(name, relations)}`, true);
      return;
    }
    if (field.type === undefined) return;
    if (!RELATION_TYPES.includes(field.type)) {
      report(
        ctx,
        res.spec,
        at,
        `expand "${name}" must be a foreign_key, a many_to_many field or a reverse relation, not ${field.type}`,
        true,
      );
      return;
    }
    if (has(spec, 'limit') && field.type !== 'many_to_many') {
      report(
        ctx,
        res.spec,
        [...at, 'limit'],
        `"limit" caps the children of a reverse relation or the records of a many-to-many field; "${name}" is a ${field.type} field`,
        true,
      );
    }
    const target = relationTarget(ctx, field);
    if (target) {
      checkRelatedVisible(ctx, res.spec, target, name, at, 'expand');
      checkExpandFields(ctx, res, target, spec, at);
    }
  });
}

function checkExpandFields(ctx: Ctx, res: Resource, target: Resource, spec: Rec, at: YamlPath): void {
  eachItem(spec.fields, [...at, 'fields'], (inner, innerAt) => {
    if (typeof inner !== 'string') return;
    const field = fieldOf(ctx, res.spec, target, inner, 'expand field', innerAt);
    if (field?.type === 'password') report(ctx, res.spec, innerAt, `password field "${inner}" may not be returned by expand: remove it`);
    if (field?.type === 'many_to_many')
      report(ctx, res.spec, innerAt, `expand field "${inner}" is a many_to_many field: an expanded record shows values, not relations`);
  });
}
