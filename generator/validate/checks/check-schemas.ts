/**
 * Schemas: the serializer's sections, a `serializer_class` and manual schemas name fields of the
 * resource they describe, each once, with value types that fit them; what a client reads never
 * shows a password, and what it writes never sets the soft delete's field.
 */
import type { SpecFile, YamlPath } from '../../load/load';
import { DEFAULT_VIEWSET_CLASS, softDeleteFieldName, VIEWSET_OPERATIONS } from '../viewset-defaults';
import { checkRelatedVisible, checkReverseVisible } from './check-reverse';
import { asRec, asStr, type Ctx, eachEntry, eachItem, has, isRec, listWords, type Rec, report } from './context';
import { didYouMean } from '../suggest';
import { type Field, fieldOf, RELATION_TYPES, relationTarget, type Resource } from './resources';

type Role = 'read' | 'write';

const SERIALIZER_ROLES: Record<string, Role> = {
  ReadSerializer: 'read',
  DetailSerializer: 'read',
  CreateSerializer: 'write',
  UpdateSerializer: 'write',
};

export const SCHEMA_ROLES: Record<string, Role> = {
  schema_in: 'write',
  schema_out: 'read',
  schema_detail: 'read',
  schema_update: 'write',
  schema_create_out: 'read',
  schema_update_out: 'read',
};

/** A list-style schema section (`fields`, `excludes`, `optionals`) describing `target`'s records. */
interface Section {
  spec: SpecFile;
  target: Resource;
  at: YamlPath;
  label: string;
  role: Role;
  value: Rec;
}

/** Value types accepted in `optionals` and manual schemas for each field type. */
const OPTIONAL_TYPES: Record<string, string[]> = {
  integer: ['int'],
  big_integer: ['int'],
  float: ['float'],
  decimal: ['decimal', 'float', 'str'],
  string: ['str'],
  text: ['str'],
  email: ['email', 'str'],
  url: ['url', 'str'],
  password: ['str'],
  boolean: ['bool'],
  date: ['date', 'str'],
  datetime: ['datetime', 'str'],
  uuid: ['uuid', 'str'],
  json: ['dict', 'list'],
  list: ['list'],
  many_to_many: ['list'],
};

function acceptedTypes(ctx: Ctx, field: Field): string[] | undefined {
  if (field.type !== 'foreign_key') return field.type === undefined ? undefined : OPTIONAL_TYPES[field.type];
  const target = relationTarget(ctx, field);
  return target && !target.opaque && target.pk.type ? OPTIONAL_TYPES[target.pk.type] : undefined;
}

/** Reports when `type` is not how `field` is written, e.g. `"int"` for a string field. */
function checkValueType(ctx: Ctx, spec: SpecFile, field: Field, type: string, what: string, at: YamlPath): void {
  const accepted = acceptedTypes(ctx, field);
  if (!accepted || accepted.includes(type)) return;
  const kind = field.type === 'foreign_key' ? `foreign_key to ${field.to}` : field.type;
  report(ctx, spec, at, `${what} type "${type}" does not match field "${field.name}" (${kind}, expects ${listWords(accepted)})`);
}

function checkPasswordHidden(ctx: Ctx, s: Section, field: Field, at: YamlPath, key = false): void {
  if (s.role === 'read' && field.type === 'password') {
    report(ctx, s.spec, at, `password field "${field.name}" may not be returned by ${s.label}: remove it`, key);
  }
}

function checkSoftDeleteUnwritable(ctx: Ctx, s: Section, field: Field, at: YamlPath, key = false): void {
  if (s.role === 'write' && field.name === softDeleteFieldName(asRec(s.target.data.viewset)?.soft_delete)) {
    report(
      ctx,
      s.spec,
      at,
      `field "${field.name}" marks soft-deleted rows: only DELETE and restore set it, so ${s.label} may not take it; remove it`,
      key,
    );
  }
}

export function checkSerializer(ctx: Ctx, res: Resource): void {
  eachEntry(res.data.serializer, ['serializer'], (name, value, at) => {
    const role = SERIALIZER_ROLES[name];
    if (role && isRec(value)) checkSection(ctx, { spec: res.spec, target: res, at, label: name, role, value });
  });
}

/**
 * Computed fields (`customs`): only in the resource's own read sections (their hooks are exports of
 * its hooks module), never named like a field of the resource or another entry.
 */
function checkCustoms(ctx: Ctx, s: Section, listed: Set<string>): void {
  const own = s.label === 'ReadSerializer' || s.label === 'DetailSerializer';
  if (s.value.customs !== undefined && !own) {
    report(
      ctx,
      s.spec,
      [...s.at, 'customs'],
      `customs are computed output fields: only ReadSerializer and DetailSerializer take them, not ${s.label}`,
      true,
    );
    return;
  }
  eachItem(s.value.customs, [...s.at, 'customs'], (triple, at) => {
    const [name] = Array.isArray(triple) ? triple : [];
    if (typeof name !== 'string') return;
    if (s.target.fields.has(name))
      report(ctx, s.spec, [...at, 0], `computed field "${name}" is named like a field of ${s.target.model}: rename it`);
    else if (listed.has(name)) report(ctx, s.spec, [...at, 0], `"${name}" is listed twice in ${s.label}`);
    listed.add(name);
  });
}

function checkSection(ctx: Ctx, s: Section): void {
  const listed = new Set<string>();
  const note = (name: string, at: YamlPath, key: boolean) => {
    if (listed.has(name)) report(ctx, s.spec, at, `"${name}" is listed twice in ${s.label}`, key);
    listed.add(name);
  };
  eachItem(s.value.fields, [...s.at, 'fields'], (entry, at) => {
    if (typeof entry === 'string') {
      note(entry, at, false);
      if (isReverse(ctx, s, entry, at, false)) return;
      const field = fieldOf(ctx, s.spec, s.target, entry, 'schema field', at);
      if (field) {
        checkPasswordHidden(ctx, s, field, at);
        checkSoftDeleteUnwritable(ctx, s, field, at);
      }
    }
    eachEntry(entry, at, (name, nested, nestedAt) => {
      note(name, nestedAt, true);
      const spec = asRec(nested) ?? {};
      if (has(spec, 'write')) checkNestedWrite(ctx, s, name, spec, nestedAt);
      else {
        if (has(spec, 'max_items'))
          report(ctx, s.spec, [...nestedAt, 'max_items'], `"max_items" caps the items of a nested write: "${name}" has no write`, true);
        checkNestedEntry(ctx, s, name, spec, nestedAt);
      }
    });
  });
  eachItem(s.value.excludes, [...s.at, 'excludes'], (name, at) => {
    if (typeof name !== 'string') return;
    fieldOf(ctx, s.spec, s.target, name, 'schema field', at);
    if (listed.has(name)) report(ctx, s.spec, at, `"${name}" is in both fields and excludes of ${s.label}: keep one`);
  });
  checkCustoms(ctx, s, listed);
  const optional = new Set<string>();
  eachItem(s.value.optionals, [...s.at, 'optionals'], (pair, at) => {
    const [name, type] = Array.isArray(pair) ? pair : [];
    if (typeof name !== 'string') return;
    if (listed.has(name)) report(ctx, s.spec, [...at, 0], `"${name}" is in both fields and optionals of ${s.label}: keep one`);
    else if (optional.has(name)) report(ctx, s.spec, [...at, 0], `"${name}" is listed twice in the optionals of ${s.label}`);
    optional.add(name);
    const field = fieldOf(ctx, s.spec, s.target, name, 'schema field', [...at, 0]);
    if (!field) return;
    checkPasswordHidden(ctx, s, field, [...at, 0]);
    checkSoftDeleteUnwritable(ctx, s, field, [...at, 0]);
    if (typeof type === 'string') checkValueType(ctx, s.spec, field, type, 'optionals', [...at, 1]);
  });
}

/**
 * Whether `name` is a reverse relation of the section's resource (`reverse_name` on another
 * resource's relation field, not a field here): read sections show it, write sections may not take it.
 */
function isReverse(ctx: Ctx, s: Section, name: string, at: YamlPath, key: boolean): boolean {
  if (s.target.fields.has(name) || !s.target.reverse.has(name)) return false;
  if (s.role === 'write') {
    report(ctx, s.spec, at, `"${name}" is a reverse relation, which only read schemas show: ${s.label} cannot take it`, key);
  } else {
    checkReverseVisible(ctx, s.spec, s.target.reverse.get(name)!.from, name, at, key);
  }
  return true;
}

/** The related records of a nested entry's `fields`: none may be a password. */
function checkNestedFields(ctx: Ctx, s: Section, target: Resource, nested: Rec, at: YamlPath): void {
  eachItem(nested.fields, [...at, 'fields'], (inner, innerAt) => {
    const innerField = typeof inner === 'string' ? fieldOf(ctx, s.spec, target, inner, 'schema field', innerAt) : undefined;
    if (innerField) {
      checkPasswordHidden(ctx, s, innerField, innerAt);
      if (innerField.type === 'many_to_many')
        report(ctx, s.spec, innerAt, `nested field "${inner}" is a many_to_many field: a nested record shows values, not relations`);
    }
  });
}

/** `- author: {fields: [id, username]}`: a relation shown as the related record's fields. */
function checkNestedEntry(ctx: Ctx, s: Section, name: string, nested: Rec, at: YamlPath): void {
  if (isReverse(ctx, s, name, at, true)) {
    if (s.role === 'read') checkNestedFields(ctx, s, s.target.reverse.get(name)!.from, nested, at);
    return;
  }
  const field = fieldOf(ctx, s.spec, s.target, name, 'schema field', at, true);
  if (!field || field.type === undefined) return;
  if (has(nested, 'limit') && field.type !== 'many_to_many') {
    report(
      ctx,
      s.spec,
      [...at, 'limit'],
      `"limit" caps the children of a reverse relation or the records of a many-to-many field; "${name}" is a ${field.type} field`,
      true,
    );
  } else if (has(nested, 'limit') && !has(nested, 'fields')) {
    report(
      ctx,
      s.spec,
      [...at, 'limit'],
      `"limit" caps the records of a many-to-many field shown with fields; its keys are shown whole (an update sends them back): add fields or remove limit`,
      true,
    );
  }
  if (!RELATION_TYPES.includes(field.type)) {
    report(ctx, s.spec, at, `nested field "${name}" must be a foreign_key or many_to_many field, not ${field.type}`, true);
    return;
  }
  if (s.role === 'write') {
    report(ctx, s.spec, at, `${s.label} takes related records by key: list "${name}" without nested fields`, true);
    return;
  }
  if (nested.fields === undefined) {
    report(ctx, s.spec, at, `nested field "${name}" lists the related record's fields: add fields: [...]`, true);
    return;
  }
  const target = relationTarget(ctx, field);
  if (target) {
    checkRelatedVisible(ctx, s.spec, target, name, at, 'nested field');
    checkNestedFields(ctx, s, target, nested, at);
  }
}

/** The modes of a nested write each input section takes. */
const WRITE_MODES: Record<string, string[]> = { CreateSerializer: ['create'], UpdateSerializer: ['replace', 'merge'] };

/** The operations of a child resource each mode runs. */
const MODE_OPERATIONS: Record<string, string[]> = {
  create: ['create'],
  merge: ['create', 'update'],
  replace: ['create', 'update', 'delete'],
};

/** The operations a resource serves (its viewset class's, less `disable`). */
function servedOperations(res: Resource): Set<string> {
  const viewset = asRec(res.data.viewset) ?? {};
  const cls = asStr(viewset.class) ?? DEFAULT_VIEWSET_CLASS;
  const disabled = new Set(Array.isArray(viewset.disable) ? viewset.disable : []);
  return new Set(
    (VIEWSET_OPERATIONS[cls as keyof typeof VIEWSET_OPERATIONS] ?? []).filter((kind) => !disabled.has(kind) && !disabled.has('all')),
  );
}

/**
 * `- lines: {write: replace}`: the children of a reverse foreign key written with the record, in
 * CreateSerializer (`create`) or UpdateSerializer (`replace`, `merge`), each item through the child
 * resource's operations, whose create must take the foreign key (the parent sets it).
 */
function checkNestedWrite(ctx: Ctx, s: Section, name: string, nested: Rec, at: YamlPath): void {
  const modes = WRITE_MODES[s.label];
  if (!modes) {
    const where =
      s.role === 'read'
        ? `${s.label} shows records: write is for CreateSerializer and UpdateSerializer`
        : `nested writes are declared in CreateSerializer and UpdateSerializer, not ${s.label}`;
    report(ctx, s.spec, at, where, true);
    return;
  }
  const mode = asStr(nested.write);
  if (mode !== undefined && !modes.includes(mode)) {
    report(
      ctx,
      s.spec,
      [...at, 'write'],
      `${s.label} writes "${name}" with ${listWords(modes.map((m) => `write: ${m}`))}, not write: ${mode}`,
    );
  }
  if (nested.fields !== undefined) {
    report(ctx, s.spec, [...at, 'fields'], `a nested write's items take the child's create fields: remove fields`, true);
  }
  if (s.target.opaque) return;
  const reverse = ctx.resources.flatMap((res) =>
    res.opaque
      ? []
      : [...res.fields.values()].filter((f) => f.to === s.target.model && f.spec.reverse_name === name).map((field) => ({ res, field })),
  );
  if (reverse.length === 0) {
    const names = ctx.resources.flatMap((res) =>
      [...res.fields.values()].filter((f) => f.to === s.target.model).flatMap((f) => asStr(f.spec.reverse_name) ?? []),
    );
    const fieldNote = s.target.fields.has(name)
      ? `: a field of ${s.target.name} is written by value, without write`
      : didYouMean(name, names);
    report(ctx, s.spec, at, `"${name}" is not a reverse relation of ${s.target.name} (a foreign key's reverse_name)${fieldNote}`, true);
    return;
  }
  const { res: child, field } = reverse[0];
  if (field.type !== 'foreign_key') {
    report(
      ctx,
      s.spec,
      at,
      `"${name}" is the reverse of the many-to-many ${child.name}.${field.name}: nested writes take the children of a foreign key`,
      true,
    );
    return;
  }
  const served = servedOperations(child);
  const missing = (MODE_OPERATIONS[mode ?? ''] ?? []).filter((kind) => !served.has(kind));
  if (missing.length) {
    report(
      ctx,
      s.spec,
      at,
      `${s.label} writes "${name}" through ${child.name}'s ${listWords(missing, 'and')}, which its viewset does not serve`,
      true,
    );
  }
  const create = asRec(asRec(child.data.serializer)?.CreateSerializer);
  const listed = Array.isArray(create?.fields) ? create.fields.filter((f): f is string => typeof f === 'string') : undefined;
  const excluded = Array.isArray(create?.excludes) && create.excludes.includes(field.name);
  const viewset = asRec(child.data.viewset) ?? {};
  if ((listed && !listed.includes(field.name)) || excluded || viewset.schema_in !== undefined || viewset.serializer_class !== undefined) {
    report(
      ctx,
      s.spec,
      at,
      `${child.name}'s create schema must take "${field.name}", which the nested write sets to the parent's key: take it in its CreateSerializer, not a manual schema_in or serializer_class`,
      true,
    );
  }
  // A list of children has one shape: a child's update must answer as its create does.
  const shape = (kind: string) => JSON.stringify(viewset[`schema_${kind}_out`] ?? 'schema_out');
  if (mode !== 'create' && shape('create') !== shape('update')) {
    report(
      ctx,
      s.spec,
      at,
      `${child.name} answers create and update in different shapes (schema_create_out, schema_update_out): the children of "${name}" need one`,
      true,
    );
  }
  if (asRec(asRec(s.target.data.viewset)?.bulk) !== undefined) {
    report(ctx, s.spec, at, `${s.target.name} has bulk routes: nested writes are for its single create and update`, true);
  }
}

/** `serializer_class: {Meta: {model, schema_in, ...}}` describing `target` (the resource or a relation's model). */
export function checkSerializerClass(ctx: Ctx, spec: SpecFile, target: Resource, at: YamlPath, value: Rec, whose: string): void {
  const meta = asRec(value.Meta);
  if (!meta) return;
  const model = asStr(meta.model);
  if (model !== undefined && target.model !== undefined && model !== target.model) {
    report(ctx, spec, [...at, 'Meta', 'model'], `serializer_class.Meta.model must be ${target.model}, ${whose}, not ${model}`);
    return;
  }
  eachEntry(meta, [...at, 'Meta'], (name, section, sectionAt) => {
    const role = SCHEMA_ROLES[name];
    if (!role || !isRec(section)) return;
    checkSection(ctx, { spec, target, at: sectionAt, label: `serializer_class ${name}`, role, value: section });
  });
}

/** A manual schema `{fields: {name: type | {type, ...}}}` whose field names are `target`'s fields. */
export function checkManualSchema(ctx: Ctx, spec: SpecFile, target: Resource, at: YamlPath, value: Rec, label: string, role: Role): void {
  const s: Section = { spec, target, at, label, role, value };
  eachEntry(value.fields, [...at, 'fields'], (name, def, fieldAt) => {
    const field = fieldOf(ctx, spec, target, name, 'schema field', fieldAt, true);
    if (!field) return;
    checkPasswordHidden(ctx, s, field, fieldAt, true);
    checkSoftDeleteUnwritable(ctx, s, field, fieldAt, true);
    const typeAt = isRec(def) ? [...fieldAt, 'type'] : fieldAt;
    const type = isRec(def) ? asStr(def.type) : asStr(def);
    if (type) checkValueType(ctx, spec, field, type, 'schema', typeAt);
  });
}
