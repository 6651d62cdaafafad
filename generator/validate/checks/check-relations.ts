/**
 * Many-to-many relation endpoints (`m2m_relations`): each names a known resource and a
 * many_to_many field pointing to it, once, and has a schema for the related records (the default behaviours'
 * two rules: the related resource's serializer, else a related_schema or serializer_class).
 */
import type { YamlPath } from '../../load/load';
import { didYouMean } from '../suggest';
import { checkManualSchema, checkSerializerClass } from './check-schemas';
import { asRec, asStr, type Ctx, eachItem, has, isRec, type Rec, report } from './context';
import type { Resource } from './resources';

export function checkM2mRelations(ctx: Ctx, res: Resource, vs: Rec): void {
  const relatedNames = new Set<string>();
  eachItem(vs.m2m_relations, ['viewset', 'm2m_relations'], (item, at) => {
    const rel = asRec(item);
    if (!rel) return;
    const relatedName = asStr(rel.related_name);
    if (relatedName !== undefined && relatedNames.has(relatedName)) {
      report(ctx, res.spec, [...at, 'related_name'], `duplicate related_name "${relatedName}": another relation already uses it`);
    }
    if (relatedName !== undefined) relatedNames.add(relatedName);
    const model = asStr(rel.model);
    if (model === undefined) return;
    const target = ctx.byModel.get(model);
    if (!target) {
      report(ctx, res.spec, [...at, 'model'], `m2m relation to unknown resource "${model}"${didYouMean(model, ctx.byModel.keys())}`);
    }
    if (relatedName !== undefined) checkRelatedName(ctx, res, relatedName, model, at);
    if (target && !target.opaque) checkM2mSchemas(ctx, res, rel, target, at);
  });
}

function checkRelatedName(ctx: Ctx, res: Resource, relatedName: string, model: string, at: YamlPath): void {
  const field = res.fields.get(relatedName);
  if (!field || field.type !== 'many_to_many') {
    const m2m = [...res.fields.values()].filter((f) => f.type === 'many_to_many').map((f) => f.name);
    const message = `related_name "${relatedName}" is not a many_to_many field of ${res.name}${didYouMean(relatedName, m2m)}`;
    report(ctx, res.spec, [...at, 'related_name'], message);
  } else if (field.to !== undefined && field.to !== model) {
    report(ctx, res.spec, [...at, 'model'], `many_to_many field "${relatedName}" points to ${field.to}, not ${model}`);
  }
}

/** The default behaviours' two M2M rules, and the relation's own schemas. */
function checkM2mSchemas(ctx: Ctx, res: Resource, rel: Rec, target: Resource, at: YamlPath): void {
  const targetHasSerializer = has(target.data, 'serializer');
  if (targetHasSerializer && has(rel, 'serializer_class')) {
    report(ctx, res.spec, [...at, 'serializer_class'], `serializer_class is not allowed: ${target.name} has a serializer`, true);
  } else if (!targetHasSerializer && !has(rel, 'related_schema') && !has(rel, 'serializer_class')) {
    report(ctx, res.spec, at, `${target.name} has no serializer: give this relation a related_schema or a serializer_class`);
  }
  if (isRec(rel.related_schema)) {
    checkManualSchema(ctx, res.spec, target, [...at, 'related_schema'], rel.related_schema, 'related_schema', 'read');
  }
  if (isRec(rel.serializer_class)) {
    checkSerializerClass(ctx, res.spec, target, [...at, 'serializer_class'], rel.serializer_class, "the relation's model");
  }
}
