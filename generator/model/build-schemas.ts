/**
 * The model's schemas: each resource's four (in, out, detail, update), from a manual schema, a
 * serializer class, the resource's serializer or its fields, in that order; the fields of each with
 * their value kinds and bounds, nested read fields, expansions, and free schemas of custom endpoints.
 * Part of building the model (build-model.ts).
 */
import { INT32 } from '@svcgen/runtime/catalogue';
import type { ManualFieldSpec, ManualSchemaSpec, SerializerSectionSpec } from '../validate/meta-schema';
import type { Field, FieldType, ManyToMany, ReverseRelation, SchemaField, SchemaModel, SchemaRole, ValueKind } from './model';
import type { Draft } from './build-fields';

const SAFE = { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER };

const VALUE_KIND: Record<Exclude<FieldType, 'foreign_key' | 'list'>, ValueKind> = {
  integer: 'int',
  big_integer: 'bigint',
  float: 'float',
  decimal: 'decimal',
  string: 'str',
  text: 'str',
  password: 'str',
  email: 'email',
  url: 'url',
  uuid: 'uuid',
  boolean: 'bool',
  date: 'date',
  datetime: 'datetime',
  json: 'json',
};

const MANUAL_KIND: Record<string, ValueKind> = {
  str: 'str',
  int: 'int',
  float: 'float',
  bool: 'bool',
  date: 'date',
  datetime: 'datetime',
  uuid: 'uuid',
  decimal: 'decimal',
  email: 'email',
  url: 'url',
  dict: 'json',
  list: 'list',
};

/** `str` or `{type: str, ...}`: a manual schema field's options. */
function manualOptions(spec: ManualFieldSpec): Exclude<ManualFieldSpec, string> {
  return typeof spec === 'string' ? { type: spec } : spec;
}

/** A manual schema not tied to a model's fields (custom endpoints and actions). */
export function freeSchema(name: string, role: SchemaRole, manual: ManualSchemaSpec): SchemaModel {
  const fields = Object.entries(manual.fields).map(([fname, spec]) => {
    const opts = manualOptions(spec);
    const sf: SchemaField = {
      name: fname,
      kind: 'value',
      value: MANUAL_KIND[opts.type],
      required: opts.required ?? opts.default === undefined,
      nullable: opts.nullable === true,
      maxLength: opts.max_length,
      description: opts.description,
      bounds: MANUAL_KIND[opts.type] === 'int' ? SAFE : undefined,
    };
    if (opts.default !== undefined) sf.defaultValue = { value: opts.default };
    return sf;
  });
  return { name: manual.name ?? name, role, source: 'manual', fields };
}

export interface SchemaContext {
  draft: Draft;
  m2m: ManyToMany[];
  /** Reverse relations read schemas may name. */
  reverse: ReverseRelation[];
  byModel: ReadonlyMap<string, Draft>;
}

export const SECTION: Record<SchemaRole, 'ReadSerializer' | 'DetailSerializer' | 'CreateSerializer' | 'UpdateSerializer'> = {
  out: 'ReadSerializer',
  detail: 'DetailSerializer',
  in: 'CreateSerializer',
  update: 'UpdateSerializer',
};

const SCHEMA_SUFFIX: Record<SchemaRole, string> = { in: 'In', out: 'Out', detail: 'Detail', update: 'Update' };

/**
 * The schema for a role, from the first source that defines it: a manual schema on the viewset,
 * the viewset's serializer_class, the resource's serializer, else generated from the fields.
 * `detail` with no source of its own is undefined (retrieve falls back to schema_out).
 */
export function resolveSchema(ctx: SchemaContext, role: SchemaRole): SchemaModel | undefined {
  const spec = ctx.draft.spec;
  const viewset = spec.viewset ?? {};
  const name = `${ctx.draft.model}${SCHEMA_SUFFIX[role]}`;
  const manual = viewset[`schema_${role}`];
  if (manual) return manualSchema(ctx, manual.name ?? name, role, manual);
  const fromClass = viewset.serializer_class?.Meta[`schema_${role}`];
  if (fromClass && hasContent(fromClass)) return sectionSchema(ctx, name, role, fromClass, 'serializer_class');
  const section = spec.serializer?.[SECTION[role]];
  if (section && hasContent(section)) return sectionSchema(ctx, name, role, section, 'serializer');
  if (role === 'detail') return undefined;
  const fields = autoFields(ctx, role).map((f) => schemaFieldFor(ctx, f, role, undefined));
  // PATCH semantics: every field of a generated update schema is optional.
  if (role === 'update') for (const f of fields) f.required = false;
  return { name, role, source: 'auto', fields };
}

/**
 * What an operation answers with (ninja-aio-crud's `schema_<operation>_out`): the named schema of the
 * resource, or a manual schema of its own (`<Model>CreateOut`, `<Model>UpdateOut` unless named).
 */
export function responseSchema(ctx: SchemaContext, schemas: Record<SchemaRole, SchemaModel>, kind: 'create' | 'update'): SchemaModel {
  const spec = ctx.draft.spec.viewset?.[`schema_${kind}_out`];
  if (spec === undefined || spec === 'schema_out') return schemas.out;
  if (spec === 'schema_detail') return schemas.detail;
  return manualSchema(ctx, spec.name ?? `${ctx.draft.model}${kind === 'create' ? 'CreateOut' : 'UpdateOut'}`, 'out', spec);
}

const hasContent = (s: SerializerSectionSpec) =>
  (s.fields?.length ?? 0) + (s.optionals?.length ?? 0) + (s.excludes?.length ?? 0) + (s.customs?.length ?? 0) > 0;

type FieldRef = Field | ManyToMany | ReverseRelation;

const isM2m = (f: FieldRef): f is ManyToMany => 'joinTable' in f;

const isReverse = (f: FieldRef): f is ReverseRelation => 'fromTable' in f;

/** The most children a reverse relation shows per item when its entry gives no `limit`. */
export const DEFAULT_REVERSE_LIMIT = 100;

/** Fields a schema of this role takes when nothing names them. */
function autoFields(ctx: SchemaContext, role: SchemaRole): FieldRef[] {
  const all: FieldRef[] = [...ctx.draft.fields, ...ctx.m2m];
  if (role === 'out' || role === 'detail') return all.filter((f) => isM2m(f) || (f as Field).type !== 'password');
  // The soft delete's field is written by DELETE and restore only.
  const softDeleted = ctx.draft.names.softDelete?.field;
  return all.filter((f) => isM2m(f) || (isEditable(f as Field, role) && f.name !== softDeleted));
}

function isEditable(f: Field, role: SchemaRole): boolean {
  if (f.autoNow || f.autoNowAdd) return false;
  if (f.primaryKey) return role === 'in' && !f.autoIncrement;
  return true;
}

export function lookup(ctx: SchemaContext, name: string): FieldRef {
  return ctx.draft.fields.find((f) => f.name === name) ?? ctx.m2m.find((m) => m.name === name) ?? ctx.reverse.find((r) => r.name === name)!;
}

export function sectionSchema(
  ctx: SchemaContext,
  name: string,
  role: SchemaRole,
  section: SerializerSectionSpec,
  source: SchemaModel['source'],
): SchemaModel {
  const excludes = new Set<string>(section.excludes ?? []);
  const entries: { name: string; nested?: string[]; limit?: number; optional: boolean }[] = [];
  if (section.fields || section.optionals) {
    for (const entry of section.fields ?? []) {
      if (typeof entry === 'string') entries.push({ name: entry, optional: false });
      else {
        const [fname, spec] = Object.entries(entry)[0];
        // A nested write (`write`) is not a field: withNestedWrites (build-model.ts) adds it once every resource is built.
        if (spec.write === undefined) entries.push({ name: fname, nested: spec.fields, limit: spec.limit, optional: false });
      }
    }
    for (const [fname] of section.optionals ?? []) entries.push({ name: fname, optional: true });
  } else {
    for (const f of autoFields(ctx, role)) entries.push({ name: f.name, optional: false });
  }
  const fields = entries
    .filter((e) => !excludes.has(e.name))
    .map((e) => {
      const sf = schemaFieldFor(ctx, lookup(ctx, e.name), role, e.nested, e.limit);
      if (e.optional || role === 'update') sf.required = false;
      return sf;
    });
  for (const [fname, type, hook] of section.customs ?? []) {
    fields.push({ name: fname, kind: 'value', value: MANUAL_KIND[type], required: true, nullable: false, compute: hook });
  }
  return { name, role, source, fields };
}

export function manualSchema(ctx: SchemaContext, name: string, role: SchemaRole, manual: ManualSchemaSpec): SchemaModel {
  const fields = Object.entries(manual.fields).map(([fname, spec]) => {
    const opts = manualOptions(spec);
    const ref: Field | ManyToMany | undefined = ctx.draft.fields.find((f) => f.name === fname) ?? ctx.m2m.find((m) => m.name === fname);
    const sf: SchemaField = ref
      ? schemaFieldFor(ctx, ref, role, undefined)
      : { name: fname, kind: 'value', value: MANUAL_KIND[opts.type], required: true, nullable: false };
    // `list` names a list field's own value: its items keep their type and options.
    const ownList = sf.list !== undefined && opts.type === 'list';
    if (sf.kind === 'value' && MANUAL_KIND[opts.type] !== undefined && !ownList && !compatible(sf.value, MANUAL_KIND[opts.type])) {
      sf.value = MANUAL_KIND[opts.type];
    }
    if (opts.required !== undefined) sf.required = opts.required;
    else if (role === 'update') sf.required = false;
    if (opts.nullable !== undefined) sf.nullable = opts.nullable;
    if (opts.max_length !== undefined) sf.maxLength = opts.max_length;
    if (opts.default !== undefined) sf.defaultValue = { value: opts.default };
    return sf;
  });
  return { name, role, source: 'manual', fields };
}

/** A manual type that only widens the field's own kind keeps the field's constraints. */
function compatible(fieldKind: ValueKind, manualKind: ValueKind): boolean {
  if (fieldKind === manualKind) return true;
  if (manualKind === 'str') return ['email', 'url', 'uuid', 'date', 'datetime'].includes(fieldKind);
  if (manualKind === 'int') return fieldKind === 'bigint';
  return false;
}

/** The value kind of a field; of each item, for a list. */
export function valueKind(f: Field): ValueKind {
  if (f.type === 'foreign_key') return valueKind(f.relation!.targetPk);
  return f.type === 'list' ? VALUE_KIND[f.list!.of] : VALUE_KIND[f.type];
}

/** The integer range of a field's values, or of a list's items. */
function fieldBounds(f: Field): SchemaField['bounds'] {
  const type = f.type === 'list' ? f.list!.of : f.type;
  return type === 'integer' ? INT32 : type === 'big_integer' ? SAFE : undefined;
}

export function boundsOf(kind: ValueKind): SchemaField['bounds'] {
  return kind === 'int' ? INT32 : kind === 'bigint' ? SAFE : undefined;
}

export function schemaFieldFor(
  ctx: SchemaContext,
  ref: FieldRef,
  role: SchemaRole,
  nested: string[] | undefined,
  limit?: number,
): SchemaField {
  const input = role === 'in' || role === 'update';
  if (isReverse(ref)) {
    // The children's keys (or records), at most `limit` per item: read schemas only (validated).
    const from = ctx.byModel.get(ref.from)!;
    const kind = valueKind(from.fields[0]);
    const sf: SchemaField = {
      name: ref.name,
      kind: nested ? 'nested_reverse' : 'reverse',
      reverse: ref,
      value: kind,
      required: true,
      nullable: false,
      bounds: boundsOf(kind),
      limit: limit ?? DEFAULT_REVERSE_LIMIT,
    };
    if (nested) sf.nested = { target: ref.from, fields: nestedFields(ctx, ref.from, nested) };
    return sf;
  }
  if (isM2m(ref)) {
    const kind = valueKind(ref.targetPk);
    const sf: SchemaField = {
      name: ref.name,
      kind: nested ? 'nested_many' : 'many_to_many',
      m2m: ref,
      value: kind,
      required: false,
      nullable: false,
      bounds: boundsOf(kind),
      description: ref.description,
    };
    // The related records (not their keys, which an update sends back whole): at most `limit` per item.
    if (nested) {
      sf.nested = { target: ref.target, fields: nestedFields(ctx, ref.target, nested) };
      sf.limit = limit ?? DEFAULT_REVERSE_LIMIT;
    }
    return sf;
  }
  const kind = valueKind(ref);
  const sf: SchemaField = {
    name: ref.name,
    kind: ref.type === 'foreign_key' ? (nested ? 'nested_one' : 'foreign_key') : 'value',
    field: ref,
    value: kind,
    required: input ? !(ref.nullable || ref.hasDefault || (ref.primaryKey && ref.type === 'uuid')) : true,
    nullable: ref.nullable,
    maxLength: ref.maxLength,
    choices: ref.choices,
    bounds: ref.type === 'foreign_key' ? boundsOf(kind) : fieldBounds(ref),
    decimal: ref.type === 'decimal' ? { maxDigits: ref.maxDigits!, decimalPlaces: ref.decimalPlaces! } : undefined,
    description: ref.description,
  };
  if (ref.list) sf.list = { maxItems: ref.list.maxItems };
  if (input && ref.type === 'password') sf.value = 'str';
  if (nested && ref.type === 'foreign_key')
    sf.nested = { target: ref.relation!.target, fields: nestedFields(ctx, ref.relation!.target, nested) };
  return sf;
}

function nestedFields(ctx: SchemaContext, target: string, names: string[]): SchemaField[] {
  const t = ctx.byModel.get(target)!;
  const tctx: SchemaContext = { draft: t, m2m: [], reverse: [], byModel: ctx.byModel };
  return names.map((n) => {
    const f = t.fields.find((x) => x.name === n)!;
    return schemaFieldFor(tctx, f, 'out', undefined);
  });
}
