/**
 * View of a resource's `schemas.ts`: the Zod schemas of its request and response bodies, its path
 * parameters and its documented error body.
 */
import { INT32 } from '@svcgen/runtime/catalogue';
import type { NestedWrite, Resource, SchemaModel } from '../model/model';
import { andList, aOrAn } from './english';
import { header, runtimeFrom, type RenderContext } from './context';
import { Imports } from './imports';
import { zodInput, zodOutput } from './zod';

export interface ObjectSchemaView {
  name: string;
  doc: string;
  /** `object`, or `strictObject` for a request body that refuses keys that are no field (`extra_fields: forbid`). */
  object: 'object' | 'strictObject';
  fields: { name: string; zod: string }[];
}

/**
 * An object schema: request schemas validate (`zodInput`), response schemas document (`zodOutput`).
 * `extraFields`: what a request schema does with a key that is no field (a response schema ignores it).
 */
export function objectSchemaView(
  s: SchemaModel,
  doc: string,
  imports: Imports,
  extraFields: 'ignore' | 'forbid' = 'ignore',
): ObjectSchemaView {
  const input = s.role === 'in' || s.role === 'update';
  return {
    name: s.name,
    doc,
    object: input && extraFields === 'forbid' ? 'strictObject' : 'object',
    fields: s.fields.map((f) => ({ name: f.name, zod: input ? zodInput(f, imports) : zodOutput(f, imports) })),
  };
}

/** An object schema, or one printed as another's `.partial()`. */
type SchemaView = ObjectSchemaView & { partialOf?: string };

/**
 * Whether `update` validates, types and documents exactly as `create.partial()`: the same keys in
 * the same order and the same handling of other keys, each field the create field made optional
 * (or the create field itself, when it is already optional). A field with anything else (a
 * default, a required update field, other checks) keeps the update schema explicit.
 */
function isPartialOf(update: ObjectSchemaView, create: ObjectSchemaView): boolean {
  const optional = (zod: string) => zod.endsWith('.optional()');
  return (
    update.object === create.object &&
    update.fields.length === create.fields.length &&
    update.fields.every((f, i) => {
      const c = create.fields[i];
      return f.name === c.name && (f.zod === `${c.zod}.optional()` || (optional(c.zod) && f.zod === c.zod));
    })
  );
}

const SCHEMA_DOC: Record<SchemaModel['role'], string> = {
  in: 'Create request body',
  out: 'List items',
  detail: 'Retrieve response',
  update: 'Update request body',
};

const SOURCE_DOC: Record<SchemaModel['source'], string> = {
  auto: 'generated from the fields',
  serializer: 'from the serializer',
  serializer_class: 'from the serializer_class',
  manual: "from the spec's schema",
};

/** The doc comment of one of the resource's own schemas: what it is used for, and where it comes from. */
function schemaDoc(r: Resource, s: SchemaModel): string {
  const uses: string[] = [];
  if (s === r.schemas.out) uses.push(SCHEMA_DOC.out);
  else if (s === r.schemas.detail || s.role !== 'out') uses.push(SCHEMA_DOC[s.role]);
  const answers = (['create', 'update'] as const).filter((kind) => r.responses[kind] === s);
  if (answers.length) uses.push(answers.length === 2 ? 'the responses of create and update' : `the response of ${answers[0]}`);
  const use = uses.join(' and ');
  const optional = s.role === 'update' ? ' Every field is optional unless the spec requires it.' : '';
  return `${use[0].toUpperCase()}${use.slice(1)}, ${SOURCE_DOC[s.source]}.${optional}`;
}

/** The doc comment of one item of a nested write. */
function nestedItemDoc(r: Resource, w: NestedWrite): string {
  const child = w.child.verboseName;
  const what = `One ${child} of ${aOrAn(r.verboseName)}'s ${w.name}: the ${child}'s create fields but ${w.relation.field!.name}`;
  if (w.mode === 'create') return `${what}.`;
  const rest = w.mode === 'replace' ? 'deleted' : 'kept';
  return `${what}, with the key of the ${child} it changes (none: a new ${child}). The ${child} items the list does not name are ${rest}.`;
}

/** The Zod schema of the primary key as a path parameter (a string, converted where the key is a number). */
function pkParam(r: Resource, imports: Imports): string {
  const z = imports.runtime('z');
  switch (r.pk.type) {
    case 'integer':
      return `${imports.runtime('intFromString')}(${INT32.min}, ${INT32.max})`;
    case 'big_integer':
      return `${imports.runtime('fromString')}.int()`;
    case 'uuid':
      return `${imports.runtime('uuidInput')}()`;
    default:
      return r.pk.maxLength ? `${z}.string().min(1).max(${r.pk.maxLength})` : `${z}.string().min(1)`;
  }
}

/** The name of a read schema as list and retrieve document it under `?expand=`: `ArticleOutExpandable`. */
export const expandableName = (s: SchemaModel) => `${s.name}Expandable`;

/**
 * `<Schema>Expandable`: a read schema whose relations `?expand=` may name are either their plain
 * value or the expanded records (anyOf; a key and an object never overlap), unless the two are
 * one schema, and whose relations the schema leaves out are there when expanded only.
 */
function expandableView(r: Resource, s: SchemaModel, imports: Imports): ObjectSchemaView {
  const z = imports.runtime('z');
  const expanded = new Map(r.expand.map((f) => [f.name, f]));
  const fields = s.fields.map((f) => {
    const plain = zodOutput(f, imports);
    const e = expanded.get(f.name);
    // A relation the schema already shows as the expansion does (the blog's detail tags) is one schema.
    const expansion = e && zodOutput(e, imports);
    return { name: f.name, zod: expansion && expansion !== plain ? `${z}.union([${plain}, ${expansion}])` : plain };
  });
  for (const e of r.expand)
    if (!s.fields.some((f) => f.name === e.name)) fields.push({ name: e.name, zod: `${zodOutput(e, imports)}.optional()` });
  const names = r.expand.map((f) => f.name).join(', ');
  const answers = s === r.schemas.detail ? (s === r.schemas.out ? 'list and retrieve answer' : 'retrieve answers') : 'the list answers';
  return {
    name: expandableName(s),
    doc: `${s.name} as ${answers} it: ?expand= shows ${names} as related records.`,
    object: 'object',
    fields,
  };
}

/** Schemas of actions, relation items and endpoints, after the resource's own, each once. */
function extraSchemas(r: Resource): SchemaModel[] {
  return [
    ...r.actions.map((a) => a.response),
    ...r.relations.filter((rel) => !rel.itemSchemaIsTargetOut).map((rel) => rel.itemSchema),
    ...r.endpoints.flatMap((e) => [e.request, e.response]),
  ].filter((s): s is SchemaModel => s !== undefined);
}

export function schemasView(r: Resource, ctx: RenderContext) {
  const imports = new Imports(runtimeFrom(ctx, 2));
  imports.runtime('z');
  const own = [r.schemas.in, r.schemas.out, ...(r.hasDetail ? [r.schemas.detail] : []), r.schemas.update];
  for (const s of [r.responses.create, r.responses.update]) if (!own.includes(s)) own.push(s);
  // The items of nested writes come first: the request schemas name them.
  const items = [...r.nestedWrites.create, ...r.nestedWrites.update].map((w) =>
    objectSchemaView(w.item, nestedItemDoc(r, w), imports, r.extraFields),
  );
  const results = (['create', 'update'] as const).flatMap((kind) => {
    const s = r.nestedResults[kind];
    return s
      ? [
          objectSchemaView(
            s,
            `The response of ${kind}: ${r.responses[kind].name} and the ${andList(r.nestedWrites[kind].map((w) => w.name))} it wrote.`,
            imports,
          ),
        ]
      : [];
  });
  const ownViews: SchemaView[] = own.map((s) => objectSchemaView(s, schemaDoc(r, s), imports, r.extraFields));
  const update = ownViews[own.indexOf(r.schemas.update)];
  const create = ownViews[own.indexOf(r.schemas.in)];
  if (r.schemas.update.role === 'update' && update !== create && isPartialOf(update, create)) {
    update.partialOf = create.name;
    update.doc = `${update.doc.replace(/ Every field is optional unless the spec requires it\.$/, '')} ${create.name} with every field optional.`;
  }
  const schemas: SchemaView[] = [...items, ...ownViews, ...results];
  if (r.expand.length) {
    for (const s of new Set([r.schemas.out, r.schemas.detail])) schemas.push(expandableView(r, s, imports));
  }
  for (const s of extraSchemas(r)) {
    if (schemas.some((x) => x.name === s.name)) continue;
    schemas.push(
      objectSchemaView(
        s,
        s.role === 'in' ? 'Request body of a custom endpoint.' : 'Response of a custom action or endpoint.',
        imports,
        r.extraFields,
      ),
    );
  }
  if (r.bulkUpdateItem)
    schemas.push(
      objectSchemaView(
        r.bulkUpdateItem,
        `One item of a bulk update: the primary key of the ${r.verboseName} to change, then the update fields.`,
        imports,
        r.extraFields,
      ),
    );
  const pk = pkParam(r, imports);
  const errorSchema = r.errorSchema
    ? objectSchemaView(r.errorSchema, 'Documented body of error responses (error_schema).', imports)
    : undefined;
  return {
    header: header(`${ctx.specsName}/${r.specFile}`),
    schemas,
    model: r.model,
    pkParam: pk,
    bulkKey: r.bulkKey ? zodInput(r.bulkKey, imports) : undefined,
    errorSchema,
    imports: imports.print(),
  };
}
