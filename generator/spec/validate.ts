/**
 * Stage 2: check the loaded specs and report every problem at once, each at its YAML position.
 *
 * Layer 1 checks the shape of each file against the JSON meta-schema (ajv) and turns ajv's errors
 * into one plain message per node. Layer 2 checks the meaning of what each file writes (relations,
 * schema fields, defaults, lookups, viewset options) on the parts that passed layer 1: nodes that
 * failed it are marked INVALID, so one mistake is reported once, not once per layer. What the model
 * derives (names, routes, operation ids, hook references) is checked on the model: check-model.ts.
 */
import Ajv, { type AnySchemaObject, type ErrorObject, type ValidateFunction } from 'ajv';
import { isMap, isScalar, isSeq } from 'yaml';
import { type Diagnostic, sortDiagnostics } from '../load/diagnostics';
import { diagnosticAt, type LoadedSpecs, type SpecFile, type YamlPath } from '../load/load';
import { FILTER_MIXINS, LOOKUP_OPERATORS } from '@svcgen/runtime/catalogue';
import { didYouMean } from './suggest';
import { TYPE_MIXINS, type TypeMixinName } from '../model/build-filters';
import { RATE_PATTERN, resourceSchema, serviceSchema, sharedSchemas } from './meta-schema';

export interface Validation {
  /** Every problem found, sorted by position. */
  diagnostics: Diagnostic[];
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
  for (const res of ctx.resources) if (!res.opaque) checkResource(ctx, res);
  if (ctx.service) checkService(ctx, ctx.service.spec, ctx.service.data);
  return { diagnostics: dedupe(sortDiagnostics(ctx.out)), documents: ctx.documents };
}

// ---------------------------------------------------------------------------------------------
// Shared helpers: plain-data access, a tiny walker, reporting, wording
// ---------------------------------------------------------------------------------------------

type Rec = Record<string, unknown>;

/** Marks a node that failed the meta-schema: semantic checks see it as absent-but-written. */
const INVALID = Symbol('invalid');

interface Ctx {
  out: Diagnostic[];
  resources: Resource[];
  byModel: Map<string, Resource>;
  /** Files whose data passed the meta-schema as a whole. */
  documents: Map<SpecFile, unknown>;
  service?: { spec: SpecFile; data: Rec };
}

const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const asRec = (v: unknown): Rec | undefined => (isRec(v) ? v : undefined);
const asStr = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const has = (rec: Rec, key: string): boolean => Object.prototype.hasOwnProperty.call(rec, key);

/** The walker: calls `fn` for each item of a list (skipping INVALID ones) with its path. */
function eachItem(list: unknown, at: YamlPath, fn: (item: unknown, at: YamlPath, index: number) => void): void {
  if (Array.isArray(list)) list.forEach((item, i) => item !== INVALID && fn(item, [...at, i], i));
}

/** The walker: calls `fn` for each entry of a map (skipping INVALID values) with its path. */
function eachEntry(map: unknown, at: YamlPath, fn: (key: string, value: unknown, at: YamlPath) => void): void {
  if (isRec(map)) for (const [key, value] of Object.entries(map)) if (value !== INVALID) fn(key, value, [...at, key]);
}

function report(ctx: Ctx, spec: SpecFile, at: YamlPath, message: string, key = false): void {
  ctx.out.push(diagnosticAt(spec, yamlKeys(spec, at), message, key));
}

/**
 * The plain data has string keys only; YAML keys may be other scalars (`true:` in match cases is a
 * boolean). Map each path segment back to the key as written so that `getIn` finds the node.
 */
function yamlKeys(spec: SpecFile, at: YamlPath): YamlPath {
  const out: Array<string | number> = [];
  let node: unknown = spec.doc.contents;
  for (const seg of at) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
      // A non-string key (boolean, number) is passed through as is: getIn compares scalar values.
      out.push(pair && isScalar(pair.key) ? (pair.key.value as string | number) : seg);
      node = pair?.value;
    } else {
      out.push(seg);
      node = isSeq(node) ? node.items[Number(seg)] : undefined;
    }
  }
  return out;
}

function dedupe(list: Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>();
  return list.filter((d) => {
    const id = `${d.file}:${d.line}:${d.column}:${d.message}`;
    return seen.has(id) ? false : (seen.add(id), true);
  });
}

function show(v: unknown): string {
  return typeof v === 'string' ? `"${v}"` : JSON.stringify(v) ?? String(v);
}

function listWords(items: readonly string[], last = 'or'): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} ${last} ${items[items.length - 1]}`;
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a map',
  null: 'null',
};

function typeWords(type: unknown): string {
  const types = Array.isArray(type) ? type : [type];
  return listWords(types.map((t) => TYPE_WORDS[String(t)] ?? String(t)));
}

function valueWords(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a map';
  if (typeof v === 'number') return Number.isInteger(v) ? 'an integer' : 'a number';
  if (typeof v === 'boolean') return 'a boolean';
  return 'a string';
}

// ---------------------------------------------------------------------------------------------
// Layer 1: the meta-schema
// ---------------------------------------------------------------------------------------------

const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
for (const schema of sharedSchemas) ajv.addSchema(schema);
const checkServiceShape = ajv.compile(serviceSchema);
const checkResourceShape = ajv.compile(resourceSchema);

/** An ajv error; `keyName` is set when the error is about a map key rather than its value. */
type Issue = ErrorObject & { keyName?: string };

/** What one issue becomes: a message at a node, and what layer 2 must not see (an unknown key is dropped). */
interface Finding {
  at: YamlPath;
  key: boolean;
  message: string;
  prune: 'none' | 'value' | 'key';
}

/** Checks one file against its meta-schema; returns its data with the failed nodes marked INVALID. */
function checkShape(ctx: Ctx, spec: SpecFile, validate: ValidateFunction): unknown {
  const data = fileData(spec);
  if (data === undefined && spec.doc.errors.length) return undefined;
  if (validate(data ?? null)) {
    ctx.documents.set(spec, data);
    return data;
  }
  let clean: unknown = structuredClone(data);
  for (const issue of collapse(validate.errors ?? [])) {
    const finding = describeIssue(spec, data, issue);
    report(ctx, spec, finding.at, finding.message, finding.key);
    clean = markInvalid(clean, finding.at, finding.prune);
  }
  return clean;
}

/**
 * The file's plain data. A file whose only YAML errors are duplicate keys (already reported by the
 * loader) is still checked, with the last value of each duplicated key, so that one run shows all.
 */
function fileData(spec: SpecFile): unknown {
  let data = spec.data;
  if (data === undefined && spec.doc.errors.length) {
    if (!spec.doc.errors.every((e) => e.code === 'DUPLICATE_KEY')) return undefined;
    try {
      data = spec.doc.toJS();
    } catch {
      return undefined;
    }
  }
  return data;
}

/**
 * Ajv reports every failed branch of an `anyOf` (and each failed `propertyNames` sub-keyword) before
 * the error of the keyword itself. Replace each such group by the errors worth showing.
 */
function collapse(errors: ErrorObject[]): Issue[] {
  const out: Issue[] = [];
  for (const e of errors) {
    if (e.keyword === 'anyOf') out.push(...pickAnyOfBranch(e, takeChildren(out, e)));
    else if (e.keyword === 'propertyNames') {
      const children = takeChildren(out, e);
      out.push(...(children.length ? children : [e]).map((c) => ({ ...c, keyName: String(e.params.propertyName) })));
    } else out.push(e);
  }
  return out;
}

/** Removes and returns the trailing issues produced inside `parent`'s schema, at or below its node. */
function takeChildren(out: Issue[], parent: ErrorObject): Issue[] {
  const inside = (c: Issue) =>
    (c.instancePath === parent.instancePath || c.instancePath.startsWith(parent.instancePath + '/')) &&
    c.schemaPath.startsWith(parent.schemaPath + '/');
  let k = out.length;
  while (k > 0 && inside(out[k - 1])) k--;
  return out.splice(k);
}

/**
 * One message per node for a failed `anyOf`: the errors of the branch that fits the value best
 * (a branch whose type or constant does not fit does not count), or else "expected one of ...".
 */
function pickAnyOfBranch(e: ErrorObject, children: Issue[]): Issue[] {
  const branches = (e.parentSchema?.anyOf ?? []) as AnySchemaObject[];
  const groups = branches.map((_, i) => children.filter((c) => branchIndex(e, c) === i));
  const fits = groups.map((g) => branchFit(g, e.instancePath));
  let pick = -1;
  for (let i = 0; i < groups.length; i++) {
    if (fits[i] > 0 && (pick < 0 || fits[i] > fits[pick] || (fits[i] === fits[pick] && groups[i].length < groups[pick].length))) {
      pick = i;
    }
  }
  if (pick >= 0 && groups[pick].length) return groups[pick];
  return [{ ...e, keyword: 'alternatives', message: `expected one of: ${branches.map(describeSchema).join(', ')}` }];
}

function branchIndex(parent: ErrorObject, child: Issue): number {
  return Number(child.schemaPath.slice(parent.schemaPath.length + 1).split('/')[0]);
}

/** 0: the value is not of this branch's kind; 1: wrong value of the right kind; 2: lacks a key; 3: deeper. */
function branchFit(group: Issue[], at: string): number {
  const onNode = group.filter((c) => c.instancePath === at && c.keyName === undefined).map((c) => c.keyword);
  if (onNode.some((k) => k === 'type' || k === 'const' || k === 'false schema' || k === 'alternatives')) return 0;
  if (onNode.includes('enum')) return 1;
  if (onNode.includes('required')) return 2;
  return 3;
}

function describeSchema(s: AnySchemaObject): string {
  if (has(s, 'const')) return show(s.const);
  if (Array.isArray(s.enum)) return s.enum.map(String).join(', ');
  if (s.type === 'string' && s.pattern) return 'a name';
  if (s.type) return typeWords(s.type);
  return 'a valid value';
}

/** What a value matching each pattern of the meta-schema looks like. */
const PATTERN_WORDS: Record<string, string> = {
  '^[a-z][a-z0-9_]*$': 'use lowercase letters, digits and _, starting with a letter (like blog_post)',
  '^[A-Z][A-Za-z0-9]*$': 'use letters and digits, starting with an uppercase letter (like BlogPost)',
  '^[A-Za-z_$][A-Za-z0-9_$]*$': 'use letters, digits, _ and $, not starting with a digit (a TypeScript export name)',
  '^[A-Za-z0-9_./-]+\\.ts$': 'give a path to a .ts file relative to the specs directory (like hooks/articles.ts)',
  '^[a-z][a-z0-9 ]*$': 'use lowercase letters, digits and spaces, starting with a letter (like blog post)',
  '^[a-z][a-z0-9_-]*$': 'use lowercase letters, digits, _ and -, starting with a letter (like mark-read)',
  '^/?([a-z0-9_-]+)?$': 'give one URL segment of lowercase letters, digits, _ and - (like /tags)',
  '^/[A-Za-z0-9_/{}.-]*$': 'give a path starting with / using letters, digits, _ - . / and {param} (like /articles/{id}/stats)',
  '^/?[a-z0-9_-]*(/[a-z0-9_-]+)*/?$': 'give URL segments of lowercase letters, digits, _ and - separated by / (like blog-posts)',
  '^-?[a-z][a-z0-9_]*(,-?[a-z][a-z0-9_]*)*$': 'give field names separated by commas, each with an optional - for descending (like -created_at,title)',
  '^(/[a-z0-9_-]+)*$': 'give URL segments each starting with / (like /api), or nothing',
  [RATE_PATTERN]: 'give a number of requests per second, minute, hour or day (like 100/minute, or 5/s)',
};

/** What a value under each pattern is called, when it is not a name. */
const PATTERN_SUBJECTS: Record<string, string> = { [RATE_PATTERN]: 'rate' };

function describeIssue(spec: SpecFile, data: unknown, issue: Issue): Finding {
  const at = toYamlPath(issue.instancePath, data);
  const subject = issue.keyName ?? valueAt(data, at);
  const onValue = (message: string): Finding =>
    issue.keyName === undefined
      ? { at, key: false, message, prune: 'value' }
      : { at: [...at, issue.keyName], key: true, message, prune: 'value' };
  const p = issue.params;
  switch (issue.keyword) {
    case 'additionalProperties': {
      const name = String(p.additionalProperty);
      const known = Object.keys(asRec(issue.parentSchema?.properties) ?? {});
      const what = spec.kind === 'service' && at.length === 1 && at[0] === 'settings' ? 'setting' : 'key';
      const hint = didYouMean(name, known) || (known.length <= 6 ? ` (expected one of: ${known.join(', ')})` : '');
      return { at: [...at, name], key: true, message: `unknown ${what} "${name}"${hint}`, prune: 'key' };
    }
    case 'required':
      return { at, key: false, message: `missing required key "${p.missingProperty}"`, prune: 'none' };
    case 'uniqueItems': {
      const index = Math.max(Number(p.i), Number(p.j));
      return { at: [...at, index], key: false, message: `duplicate entry ${show(valueAt(data, [...at, index]))}`, prune: 'none' };
    }
    case 'enum': {
      const allowed = (p.allowedValues as unknown[]).map(String);
      const hint = (typeof subject === 'string' && didYouMean(subject, allowed)) || ` (expected one of: ${allowed.join(', ')})`;
      return onValue(`unknown value ${show(subject)}${hint}`);
    }
    case 'type':
      if (at.length === 0 && subject == null) return onValue(`the file is empty: expected ${typeWords(p.type)}`);
      return onValue(`expected ${typeWords(p.type)}, got ${valueWords(subject)}`);
    case 'pattern':
      return onValue(
        `invalid ${PATTERN_SUBJECTS[String(p.pattern)] ?? 'name'} ${show(subject)}: ${PATTERN_WORDS[String(p.pattern)] ?? `it must match ${p.pattern}`}`,
      );
    case 'const':
      return onValue(`expected ${show(p.allowedValue)}`);
    case 'minimum':
      return onValue(`expected at least ${p.limit}, got ${show(subject)}`);
    case 'maximum':
      return onValue(`expected at most ${p.limit}, got ${show(subject)}`);
    case 'minLength':
      return onValue(p.limit === 1 ? 'expected a non-empty string' : `expected at least ${p.limit} characters`);
    case 'maxLength':
      return onValue(`${show(subject)} is too long: at most ${p.limit} characters`);
    case 'minItems':
      return onValue(`expected at least ${p.limit} ${p.limit === 1 ? 'item' : 'items'}`);
    case 'maxItems':
    case 'items':
      return onValue(`expected at most ${p.limit} ${p.limit === 1 ? 'item' : 'items'}`);
    case 'minProperties':
      return onValue(`expected at least ${p.limit} ${p.limit === 1 ? 'key' : 'keys'}`);
    case 'maxProperties':
      return onValue(`expected at most ${p.limit} ${p.limit === 1 ? 'key' : 'keys'}`);
    default:
      return onValue(issue.message ?? `invalid value (${issue.keyword})`);
  }
}

/** An ajv JSON pointer (`/fields/a~1b/0`) as a path of keys and list indexes. */
function toYamlPath(pointer: string, data: unknown): YamlPath {
  const at: Array<string | number> = [];
  let node = data;
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    const step = Array.isArray(node) ? Number(seg) : seg;
    at.push(step);
    node = (node as Record<string | number, unknown> | undefined)?.[step];
  }
  return at;
}

function valueAt(data: unknown, at: YamlPath): unknown {
  let node = data;
  for (const seg of at) node = isRec(node) || Array.isArray(node) ? (node as Record<string | number, unknown>)[seg] : undefined;
  return node;
}

function markInvalid(root: unknown, at: YamlPath, prune: Finding['prune']): unknown {
  if (prune === 'none') return root;
  if (at.length === 0) return INVALID;
  const parent = valueAt(root, at.slice(0, -1));
  const last = at[at.length - 1];
  if (Array.isArray(parent) && typeof last === 'number') parent[last] = INVALID;
  else if (isRec(parent) && prune === 'key') delete parent[last];
  else if (isRec(parent)) parent[last] = INVALID;
  return root;
}

// ---------------------------------------------------------------------------------------------
// Layer 2: the resources as layer 2 sees them
// ---------------------------------------------------------------------------------------------

interface Field {
  name: string;
  type?: string;
  to?: string;
  spec: Rec;
  /** The auto-increment `id` a resource gets when no field is its primary key. */
  implicit: boolean;
}

interface Resource {
  spec: SpecFile;
  data: Rec;
  model?: string;
  /** The model as written (even when invalid), for messages. */
  name: string;
  fields: Map<string, Field>;
  pk: Field;
  /** True when the file could not be read: its model is known (if at all), nothing else. */
  opaque: boolean;
}

function indexResource(spec: SpecFile, data: unknown): Resource {
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
  return { spec, data: rec ?? {}, model, name: model ?? written ?? 'this resource', fields, pk, opaque: !rec };
}

/**
 * A field of `target`, or undefined after reporting `<label> "x" is not a field of Model`.
 * Unreadable targets know no fields, so nothing is reported against them.
 */
function fieldOf(ctx: Ctx, spec: SpecFile, target: Resource, name: string, label: string, at: YamlPath, key = false): Field | undefined {
  const field = target.fields.get(name);
  if (!field && !target.opaque) {
    report(ctx, spec, at, `${label} "${name}" is not a field of ${target.name}${didYouMean(name, target.fields.keys())}`, key);
  }
  return field;
}

function relationTarget(ctx: Ctx, field: Field): Resource | undefined {
  return field.to === undefined ? undefined : ctx.byModel.get(field.to);
}

function checkResource(ctx: Ctx, res: Resource): void {
  checkPrimaryKey(ctx, res);
  for (const field of res.fields.values()) if (!field.implicit) checkField(ctx, res, field);
  checkIndexes(ctx, res);
  checkSerializer(ctx, res);
  const vs = asRec(res.data.viewset);
  if (vs) checkViewset(ctx, res, vs);
}

/**
 * Composite indexes: fields of this resource, not many-to-many, and not a one-field index of a field
 * the database already indexes (`unique`, `db_index`, a foreign key). Duplicates and name clashes
 * are checked on the derived names (check-model.ts).
 */
function checkIndexes(ctx: Ctx, res: Resource): void {
  eachItem(res.data.indexes, ['indexes'], (entry, entryAt) => {
    const index = Array.isArray(entry) ? { fields: entry } : asRec(entry);
    const fieldsAt = Array.isArray(entry) ? entryAt : [...entryAt, 'fields'];
    const fields: Field[] = [];
    eachItem(index?.fields, fieldsAt, (name, at) => {
      if (typeof name !== 'string') return;
      const field = fieldOf(ctx, res.spec, res, name, 'index field', at);
      if (field?.type === 'many_to_many') report(ctx, res.spec, at, `cannot index many_to_many field "${name}": its links live in a join table`);
      else if (field) fields.push(field);
    });
    if (fields.length !== 1 || !Array.isArray(index?.fields) || index.fields.length !== 1) return;
    const [field] = fields;
    const unique = index.unique === true;
    const already = field.spec.primary_key === true || field.implicit || field.spec.unique === true ? 'unique' : field.spec.db_index === true || field.type === 'foreign_key' ? 'indexed' : undefined;
    if (already && (!unique || already === 'unique')) {
      report(ctx, res.spec, fieldsAt, `field "${field.name}" is already ${already}; an index of this one field adds nothing`);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Fields
// ---------------------------------------------------------------------------------------------

const PK_TYPES = ['integer', 'big_integer', 'uuid', 'string'];
const INTEGER_TYPES = ['integer', 'big_integer'];
const STRING_TYPES = ['string', 'text', 'email', 'url', 'uuid', 'password'];
const RELATION_TYPES = ['foreign_key', 'many_to_many'];

/** Field options and the types they apply to. */
const OPTION_TYPES: Record<string, string[]> = {
  to: RELATION_TYPES,
  on_delete: ['foreign_key'],
  max_length: ['string', 'email', 'url', 'password'],
  max_digits: ['decimal'],
  decimal_places: ['decimal'],
  auto_now_add: ['date', 'datetime'],
  auto_now: ['date', 'datetime'],
};

const NOT_ON_MANY_TO_MANY = ['null', 'unique', 'default', 'primary_key'];

function checkPrimaryKey(ctx: Ctx, res: Resource): void {
  const pks = [...res.fields.values()].filter((f) => f.spec.primary_key === true);
  for (const extra of pks.slice(1)) {
    const message = `only one field may be the primary key, and "${pks[0].name}" already is`;
    report(ctx, res.spec, ['fields', extra.name, 'primary_key'], message, true);
  }
  for (const pk of pks) {
    if (pk.type && !PK_TYPES.includes(pk.type)) {
      report(ctx, res.spec, ['fields', pk.name, 'type'], `a primary key must be ${listWords(PK_TYPES)}, not ${pk.type}`);
    }
    if (pk.spec.null === true) report(ctx, res.spec, ['fields', pk.name, 'null'], 'a primary key cannot be null', true);
  }
  const id = res.fields.get('id');
  if (id && !id.implicit && id.spec.primary_key !== true) {
    report(ctx, res.spec, ['fields', 'id'], 'a field named "id" must be the primary key: add primary_key: true or rename it', true);
  }
}

function checkField(ctx: Ctx, res: Resource, field: Field): void {
  if (field.type === undefined) return;
  const at = ['fields', field.name];
  checkOptionsFitType(ctx, res, field, at);
  if (RELATION_TYPES.includes(field.type)) checkRelationField(ctx, res, field, at);
  if (field.type === 'decimal') checkDecimalPlaces(ctx, res, field, at);
  checkDefault(ctx, res, field, at);
  checkChoices(ctx, res, field, at);
}

function checkOptionsFitType(ctx: Ctx, res: Resource, field: Field, at: YamlPath): void {
  const type = field.type as string;
  for (const [option, types] of Object.entries(OPTION_TYPES)) {
    if (has(field.spec, option) && !types.includes(type)) {
      report(ctx, res.spec, [...at, option], `"${option}" only applies to ${listWords(types, 'and')} fields, not ${type}`, true);
    }
  }
  if (type !== 'many_to_many') return;
  for (const option of NOT_ON_MANY_TO_MANY) {
    if (has(field.spec, option)) report(ctx, res.spec, [...at, option], `"${option}" is not allowed on a many_to_many field`, true);
  }
}

function checkRelationField(ctx: Ctx, res: Resource, field: Field, at: YamlPath): void {
  if (!has(field.spec, 'to')) {
    report(ctx, res.spec, at, `a ${field.type} field needs "to" naming the related model`);
  } else if (field.to !== undefined && !ctx.byModel.has(field.to)) {
    report(ctx, res.spec, [...at, 'to'], `relation to unknown resource "${field.to}"${didYouMean(field.to, ctx.byModel.keys())}`);
  }
  if (field.spec.on_delete === 'set_null' && field.spec.null !== true) {
    report(ctx, res.spec, [...at, 'on_delete'], 'on_delete: set_null needs null: true on this field');
  }
}

function checkDecimalPlaces(ctx: Ctx, res: Resource, field: Field, at: YamlPath): void {
  const { max_digits: digits, decimal_places: places } = field.spec;
  if (typeof digits === 'number' && typeof places === 'number' && places > digits) {
    report(ctx, res.spec, [...at, 'decimal_places'], `decimal_places (${places}) cannot be more than max_digits (${digits})`);
  }
}

/** How a value of a field type is written, as a test and in words; undefined when anything goes. */
function valueShape(ctx: Ctx, field: Field): { test: (v: unknown) => boolean; words: string } | undefined {
  switch (field.type) {
    case 'integer':
    case 'big_integer':
      return { test: Number.isInteger, words: 'an integer' };
    case 'float':
      return { test: (v) => typeof v === 'number', words: 'a number' };
    case 'decimal':
      return { test: (v) => typeof v === 'number' || (typeof v === 'string' && /^[+-]?\d+(\.\d+)?$/.test(v)), words: 'a number or a decimal string like "9.99"' };
    case 'uuid':
      return { test: (v) => typeof v === 'string' && UUID.test(v), words: 'a UUID string' };
    case 'string':
    case 'text':
    case 'email':
    case 'url':
    case 'password':
      return { test: (v) => typeof v === 'string', words: 'a string' };
    case 'boolean':
      return { test: (v) => typeof v === 'boolean', words: 'true or false' };
    case 'date':
      return { test: isIsoDate, words: 'a date like 2024-01-31' };
    case 'datetime':
      return { test: isIsoDateTime, words: 'an ISO datetime like 2024-01-31T12:00:00Z' };
    case 'foreign_key': {
      const target = relationTarget(ctx, field);
      return target && !target.opaque && target.pk.type ? valueShape(ctx, target.pk) : undefined;
    }
    default:
      return undefined;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isIsoDate(v: unknown): boolean {
  if (typeof v !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(v)) return false;
  const d = new Date(`${v}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(v);
}

function isIsoDateTime(v: unknown): boolean {
  return (
    typeof v === 'string' &&
    /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/.test(v) &&
    isIsoDate(v.slice(0, 10)) &&
    !Number.isNaN(Date.parse(v.replace(' ', 'T')))
  );
}

function checkDefault(ctx: Ctx, res: Resource, field: Field, fieldAt: YamlPath): void {
  if (!has(field.spec, 'default') || field.type === 'many_to_many' || field.spec.default === INVALID) return;
  const value = field.spec.default;
  const at = [...fieldAt, 'default'];
  if (value === null) {
    if (field.spec.null !== true) report(ctx, res.spec, at, 'default is null but the field is not nullable: add null: true');
    return;
  }
  const shape = valueShape(ctx, field);
  const maxLength = field.spec.max_length;
  const choices = field.spec.choices;
  if (shape && !shape.test(value)) {
    report(ctx, res.spec, at, `default ${show(value)} does not fit ${field.type} field "${field.name}": expected ${shape.words}`);
  } else if (typeof value === 'string' && typeof maxLength === 'number' && value.length > maxLength) {
    report(ctx, res.spec, at, `default is ${value.length} characters long, more than max_length ${maxLength}`);
  } else if (Array.isArray(choices) && !choices.includes(value)) {
    report(ctx, res.spec, at, `default ${show(value)} is not one of the choices: ${choices.map(String).join(', ')}`);
  }
}

function checkChoices(ctx: Ctx, res: Resource, field: Field, fieldAt: YamlPath): void {
  const type = field.type as string;
  const at = [...fieldAt, 'choices'];
  if (!Array.isArray(field.spec.choices)) return;
  if (!INTEGER_TYPES.includes(type) && !STRING_TYPES.includes(type)) {
    report(ctx, res.spec, at, `choices only apply to integer and string fields, not ${type}`, true);
    return;
  }
  const shape = valueShape(ctx, field);
  const maxLength = field.spec.max_length;
  eachItem(field.spec.choices, at, (choice, choiceAt) => {
    if (shape && !shape.test(choice)) {
      report(ctx, res.spec, choiceAt, `choice ${show(choice)} does not fit ${type} field "${field.name}": expected ${shape.words}`);
    } else if (typeof choice === 'string' && typeof maxLength === 'number' && choice.length > maxLength) {
      report(ctx, res.spec, choiceAt, `choice ${show(choice)} is longer than max_length ${maxLength}`);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Schemas: serializer sections, serializer_class, manual schemas
// ---------------------------------------------------------------------------------------------

type Role = 'read' | 'write';

const SERIALIZER_ROLES: Record<string, Role> = {
  ReadSerializer: 'read',
  DetailSerializer: 'read',
  CreateSerializer: 'write',
  UpdateSerializer: 'write',
};

const SCHEMA_ROLES: Record<string, Role> = {
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

/** The field a viewset's `soft_delete` stamps deleted rows with (`deleted_at` unless it names one). */
function softDeleteFieldName(res: Resource): string | undefined {
  const spec = asRec(res.data.viewset)?.soft_delete;
  if (spec === true) return 'deleted_at';
  return isRec(spec) ? (asStr(spec.field) ?? 'deleted_at') : undefined;
}

function checkSoftDeleteUnwritable(ctx: Ctx, s: Section, field: Field, at: YamlPath, key = false): void {
  if (s.role === 'write' && field.name === softDeleteFieldName(s.target)) {
    report(ctx, s.spec, at, `field "${field.name}" marks soft-deleted rows: only DELETE and restore set it, so ${s.label} may not take it; remove it`, key);
  }
}

function checkSerializer(ctx: Ctx, res: Resource): void {
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
    report(ctx, s.spec, [...s.at, 'customs'], `customs are computed output fields: only ReadSerializer and DetailSerializer take them, not ${s.label}`, true);
    return;
  }
  eachItem(s.value.customs, [...s.at, 'customs'], (triple, at) => {
    const [name] = Array.isArray(triple) ? triple : [];
    if (typeof name !== 'string') return;
    if (s.target.fields.has(name)) report(ctx, s.spec, [...at, 0], `computed field "${name}" is named like a field of ${s.target.model}: rename it`);
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
      const field = fieldOf(ctx, s.spec, s.target, entry, 'schema field', at);
      if (field) {
        checkPasswordHidden(ctx, s, field, at);
        checkSoftDeleteUnwritable(ctx, s, field, at);
      }
    }
    eachEntry(entry, at, (name, nested, nestedAt) => {
      note(name, nestedAt, true);
      checkNestedEntry(ctx, s, name, asRec(nested) ?? {}, nestedAt);
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

/** `- author: {fields: [id, username]}`: a relation shown as the related record's fields. */
function checkNestedEntry(ctx: Ctx, s: Section, name: string, nested: Rec, at: YamlPath): void {
  const field = fieldOf(ctx, s.spec, s.target, name, 'schema field', at, true);
  if (!field || field.type === undefined) return;
  if (!RELATION_TYPES.includes(field.type)) {
    report(ctx, s.spec, at, `nested field "${name}" must be a foreign_key or many_to_many field, not ${field.type}`, true);
    return;
  }
  if (s.role === 'write') {
    report(ctx, s.spec, at, `${s.label} takes related records by key: list "${name}" without nested fields`, true);
    return;
  }
  const target = relationTarget(ctx, field);
  if (!target) return;
  eachItem(nested.fields, [...at, 'fields'], (inner, innerAt) => {
    const innerField = typeof inner === 'string' ? fieldOf(ctx, s.spec, target, inner, 'schema field', innerAt) : undefined;
    if (innerField) checkPasswordHidden(ctx, s, innerField, innerAt);
  });
}

/** `serializer_class: {Meta: {model, schema_in, ...}}` describing `target` (the resource or a relation's model). */
function checkSerializerClass(ctx: Ctx, spec: SpecFile, target: Resource, at: YamlPath, value: Rec, whose: string): void {
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
function checkManualSchema(ctx: Ctx, spec: SpecFile, target: Resource, at: YamlPath, value: Rec, label: string, role: Role): void {
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

// ---------------------------------------------------------------------------------------------
// Viewset
// ---------------------------------------------------------------------------------------------

const VIEWSET_OPERATIONS: Record<string, string[]> = {
  APIViewSet: ['create', 'list', 'retrieve', 'update', 'delete'],
  ReadOnlyViewSet: ['list', 'retrieve'],
  WriteOnlyViewSet: ['create', 'update', 'delete'],
};

const AUTH_OPERATIONS: Record<string, string[]> = {
  get_auth: ['list', 'retrieve'],
  post_auth: ['create'],
  patch_auth: ['update'],
  delete_auth: ['delete'],
};

function checkViewset(ctx: Ctx, res: Resource, vs: Rec): void {
  checkViewsetClass(ctx, res, vs);
  checkDisable(ctx, res, vs);
  checkBulk(ctx, res, vs);
  checkOrdering(ctx, res, vs);
  checkCursorOrdering(ctx, res, vs);
  checkPaginatedActions(ctx, res, vs);
  eachItem(vs.search_fields, ['viewset', 'search_fields'], (name, at) => {
    if (typeof name === 'string') checkSearchField(ctx, res, name, at);
  });
  const classAt = ['viewset', 'serializer_class'];
  if (isRec(vs.serializer_class)) checkSerializerClass(ctx, res.spec, res, classAt, vs.serializer_class, "this resource's model");
  eachEntry(vs, ['viewset'], (name, value, at) => {
    const role = SCHEMA_ROLES[name];
    if (role && isRec(value)) checkManualSchema(ctx, res.spec, res, at, value, `viewset ${name}`, role);
  });
  checkM2mRelations(ctx, res, vs);
  checkSoftDelete(ctx, res, vs);
  checkQueryParams(ctx, res, vs);
  checkLookups(ctx, res, vs);
  if (has(vs, 'date_compare_attr') && !(Array.isArray(vs.filter_mixins) && vs.filter_mixins.includes('DateFilterViewSetMixin'))) {
    report(ctx, res.spec, ['viewset', 'date_compare_attr'], 'date_compare_attr is the operator of DateFilterViewSetMixin: add it to filter_mixins, or remove this', true);
  }
}

/** Operation settings (auth, overrides, decorators, docs) for operations the viewset class lacks. */
function checkViewsetClass(ctx: Ctx, res: Resource, vs: Rec): void {
  const cls = asStr(vs.class);
  const ops = cls ? VIEWSET_OPERATIONS[cls] : undefined;
  if (!cls || !ops) return;
  const lacks = (wanted: string[]) => !wanted.some((op) => ops.includes(op));
  const reject = (at: YamlPath, wanted: string[]) =>
    report(ctx, res.spec, at, `${cls} has no ${listWords(wanted)} operation: remove "${at[at.length - 1]}"`, true);
  for (const [key, wanted] of Object.entries(AUTH_OPERATIONS)) if (has(vs, key) && lacks(wanted)) reject(['viewset', key], wanted);
  for (const op of VIEWSET_OPERATIONS.APIViewSet) {
    if (ops.includes(op)) continue;
    if (has(vs, `${op}_docs`)) reject(['viewset', `${op}_docs`], [op]);
    if (has(vs, `schema_${op}_out`)) reject(['viewset', `schema_${op}_out`], [op]);
    if (has(asRec(vs.permission_roles) ?? {}, op)) reject(['viewset', 'permission_roles', op], [op]);
    if (has(asRec(vs.operation_throttles) ?? {}, op)) reject(['viewset', 'operation_throttles', op], [op]);
    if (has(asRec(vs.overrides) ?? {}, op)) reject(['viewset', 'overrides', op], [op]);
    if (has(asRec(vs.extra_decorators) ?? {}, op)) reject(['viewset', 'extra_decorators', op], [op]);
  }
}

/**
 * `soft_delete`: the viewset deletes (it changes that operation), and its field is a nullable
 * datetime without a value of its own (no default, no auto_now); no detail action takes the
 * restore's operation id or the hard delete's path.
 */
function checkSoftDelete(ctx: Ctx, res: Resource, vs: Rec): void {
  const name = softDeleteFieldName(res);
  if (name === undefined || res.opaque) return;
  const spec = asRec(vs.soft_delete);
  const at: YamlPath = spec && has(spec, 'field') ? ['viewset', 'soft_delete', 'field'] : ['viewset', 'soft_delete'];
  const cls = asStr(vs.class) ?? 'APIViewSet';
  const disabled = Array.isArray(vs.disable) ? vs.disable : [];
  if (!(VIEWSET_OPERATIONS[cls] ?? []).includes('delete')) {
    report(ctx, res.spec, ['viewset', 'soft_delete'], `soft_delete changes the delete operation, and ${cls} has none: remove soft_delete`, true);
  } else if (disabled.includes('delete') || disabled.includes('all')) {
    report(ctx, res.spec, ['viewset', 'soft_delete'], 'soft_delete changes the delete operation, and disable removes it: remove soft_delete or enable delete', true);
  }
  const field = res.fields.get(name);
  if (!field) {
    const hint = didYouMean(name, res.fields.keys()) || `; add it: ${name}: {type: datetime, null: true}`;
    report(ctx, res.spec, at, `soft_delete field "${name}" is not a field of ${res.name}${hint}`, !spec || !has(spec, 'field'));
    return;
  }
  const marks = `field "${name}" marks soft-deleted rows (viewset soft_delete)`;
  if (field.type !== undefined && field.type !== 'datetime') {
    report(ctx, res.spec, ['fields', name, 'type'], `${marks}, so it must be a datetime, not ${field.type}`);
    return;
  }
  if (field.spec.null !== true) report(ctx, res.spec, ['fields', name], `${marks}, so it must allow null (null: true): a live row has none`, true);
  for (const option of ['default', 'auto_now', 'auto_now_add', 'unique', 'primary_key']) {
    if (has(field.spec, option) && field.spec[option] !== false && field.spec[option] !== null) {
      report(ctx, res.spec, ['fields', name, option], `${marks}: only DELETE sets it, so it takes no ${option}`, true);
    }
  }
  const hard = spec && has(spec, 'hard_delete_roles');
  eachEntry(vs.actions, ['viewset', 'actions'], (action, value, actionAt) => {
    const a = asRec(value);
    if (a?.detail === false) return;
    const methods = Array.isArray(a?.methods) ? a.methods : ['post'];
    if (action === 'restore') {
      report(ctx, res.spec, actionAt, 'action "restore" takes the operation id of the soft delete\'s restore (POST /{base}/{pk}/restore/): rename it', true);
    } else if (hard && action === 'hard' && methods.includes('delete')) {
      report(ctx, res.spec, actionAt, 'action "hard" would answer DELETE /{base}/{pk}/hard/, the hard delete of soft_delete: rename it', true);
    }
  });
}

/** Key types a path segment `bulk` cannot be: `/{base}/bulk/` is never an item's path. */
const NUMERIC_OR_UUID_KEYS = ['integer', 'big_integer', 'uuid'];

/**
 * Bulk operations need the single-item operation they repeat; bulk update and delete need a key that
 * cannot be `bulk`, else `PATCH /{base}/bulk/` would take the place of that item's own route.
 */
function checkBulk(ctx: Ctx, res: Resource, vs: Rec): void {
  const bulk = asRec(vs.bulk);
  if (!bulk) return;
  const cls = asStr(vs.class) ?? 'APIViewSet';
  const served = VIEWSET_OPERATIONS[cls] ?? [];
  const disabled = Array.isArray(vs.disable) ? vs.disable : [];
  eachItem(bulk.operations, ['viewset', 'bulk', 'operations'], (op, at) => {
    if (typeof op !== 'string') return;
    if (!served.includes(op)) {
      report(ctx, res.spec, at, `bulk ${op} repeats the ${op} operation, which ${cls} has not: remove "${op}"`);
    } else if (disabled.includes(op) || disabled.includes('all')) {
      report(ctx, res.spec, at, `bulk ${op} repeats the ${op} operation, which disable turns off: remove "${op}" here or from disable`);
    } else if (op !== 'create' && !NUMERIC_OR_UUID_KEYS.includes(res.pk.type ?? '')) {
      report(
        ctx,
        res.spec,
        at,
        `bulk ${op} would take ${op === 'update' ? 'PATCH' : 'DELETE'} /{base}/bulk/ from the ${res.name} whose key is "bulk": ` +
          `bulk update and delete need an integer, big_integer or uuid primary key ("${res.pk.name}" is a ${res.pk.type ?? 'string'})`,
      );
    }
  });
}

function checkDisable(ctx: Ctx, res: Resource, vs: Rec): void {
  if (Array.isArray(vs.disable) && vs.disable.includes('all') && vs.disable.length > 1) {
    report(ctx, res.spec, ['viewset', 'disable'], '"all" already disables every operation: remove the other entries');
  }
}

function checkOrdering(ctx: Ctx, res: Resource, vs: Rec): void {
  const orderable = (name: string, label: string, at: YamlPath) => {
    if (name.includes('__')) return checkRelatedOrdering(ctx, res, name, label, at);
    const field = fieldOf(ctx, res.spec, res, name, label, at);
    if (field?.type === 'many_to_many') report(ctx, res.spec, at, `cannot order by many_to_many field "${name}"`);
  };
  eachItem(vs.ordering_fields, ['viewset', 'ordering_fields'], (name, at) => {
    if (typeof name === 'string') orderable(name, 'ordering field', at);
  });
  const ordering = asStr(vs.default_ordering);
  if (ordering === undefined) return;
  const at = ['viewset', 'default_ordering'];
  for (const name of ordering.split(',').map((part) => part.trim().replace(/^-/, ''))) {
    orderable(name, 'default ordering field', at);
    if (Array.isArray(vs.ordering_fields) && !vs.ordering_fields.includes(name) && (res.fields.has(name) || name.includes('__'))) {
      report(ctx, res.spec, at, `default ordering field "${name}" is not in ordering_fields: add it there`);
    }
  }
}

/**
 * A cursor-paged list (CursorPagination) is read by position in its order, so each field it may be
 * ordered by must be a column of its own table that compares the same on both databases: never null
 * (SQLite and PostgreSQL sort NULLs at opposite ends), and not json.
 */
function checkCursorOrdering(ctx: Ctx, res: Resource, vs: Rec): void {
  const paginator = typeof vs.pagination_class === 'string' ? vs.pagination_class : asStr(asRec(vs.pagination_class)?.class);
  if (paginator !== 'CursorPagination') return;
  const check = (name: string, label: string, at: YamlPath) => {
    if (name.includes('__')) {
      return report(ctx, res.spec, at, `${label} "${name}" is a field of a related row: a CursorPagination list orders by fields of its own table; order by a field of ${res.name}, or use another paginator`);
    }
    const field = res.fields.get(name);
    if (field?.spec.null === true) {
      report(ctx, res.spec, at, `${label} "${name}" may be null: a CursorPagination list orders by fields without nulls (SQLite and PostgreSQL sort them differently); make the field non-null, or use another paginator`);
    } else if (field?.type === 'json') {
      report(ctx, res.spec, at, `${label} "${name}" is a json field: a CursorPagination list cannot compare its values; use another ordering field`);
    }
  };
  const fields = Array.isArray(vs.ordering_fields) ? vs.ordering_fields : [];
  eachItem(vs.ordering_fields, ['viewset', 'ordering_fields'], (name, at) => {
    if (typeof name === 'string') check(name, 'ordering field', at);
  });
  const ordering = asStr(vs.default_ordering);
  if (ordering === undefined) return;
  for (const name of ordering.split(',').map((part) => part.trim().replace(/^-/, ''))) {
    // One also in ordering_fields is reported there.
    if (!fields.includes(name)) check(name, 'default ordering field', ['viewset', 'default_ordering']);
  }
}

/** The class a `pagination_class` or `paginate` names, or undefined when it names none. */
function paginatorName(value: unknown): string | undefined {
  return typeof value === 'string' ? value : asStr(asRec(value)?.class);
}

/**
 * `paginate` on an action: only a list-level GET action answers a page of the list (a detail
 * action has one record, a write answers what it did), and the page is its answer, so no
 * `response`. A CursorPagination action reads by position in `default_ordering` alone (it takes
 * no `?ordering=`), so that ordering must be one a cursor can hold: the viewset's own columns,
 * never null, not json.
 */
function checkPaginatedActions(ctx: Ctx, res: Resource, vs: Rec): void {
  eachEntry(vs.actions, ['viewset', 'actions'], (name, value, at) => {
    const action = asRec(value);
    if (!action || action.paginate === undefined || action.paginate === null) return;
    const paginateAt = [...at, 'paginate'];
    if (action.detail !== false) {
      return report(ctx, res.spec, paginateAt, `action "${name}" acts on one record: only a list-level action (detail: false) is paginated; add detail: false, or remove paginate`, true);
    }
    const methods = Array.isArray(action.methods) ? action.methods : ['post'];
    if (methods.length !== 1 || methods[0] !== 'get') {
      const given = has(action, 'methods') ? `methods [${methods.join(', ')}]` : 'the default method post';
      return report(ctx, res.spec, has(action, 'methods') ? [...at, 'methods'] : paginateAt, `paginated action "${name}" must answer GET alone (methods: [get]), not ${given}: a page is read, never written`, !has(action, 'methods'));
    }
    if (has(action, 'response') && action.response !== null) {
      report(ctx, res.spec, [...at, 'response'], `paginated action "${name}" answers a page of the list's items (the read schema): remove response`, true);
    }
    if (paginatorName(action.paginate) !== 'CursorPagination' || paginatorName(vs.pagination_class) === 'CursorPagination') return;
    // A cursor-paged list reports its own ordering fields already (checkCursorOrdering).
    const ordering = asStr(vs.default_ordering);
    for (const field of (ordering ?? '').split(',').map((part) => part.trim().replace(/^-/, '')).filter(Boolean)) {
      const why = field.includes('__')
        ? 'is a field of a related row'
        : res.fields.get(field)?.spec.null === true
          ? 'may be null (SQLite and PostgreSQL sort nulls differently)'
          : res.fields.get(field)?.type === 'json'
            ? 'is a json field, whose values cannot be compared'
            : undefined;
      if (why) {
        report(ctx, res.spec, paginateAt, `action "${name}" is paged by CursorPagination, which reads in default_ordering, and default ordering field "${field}" ${why}: order by non-null fields of ${res.name}, or use another paginator`);
      }
    }
  });
}

/**
 * An ordering field of a related row, `author__username`: foreign keys, then a field of the last
 * related resource. A many-to-many on the way would give a row several values to order by.
 */
function checkRelatedOrdering(ctx: Ctx, res: Resource, name: string, label: string, at: YamlPath): void {
  const segments = name.split('__');
  let current = res;
  for (const [i, seg] of segments.entries()) {
    const field = fieldOf(ctx, res.spec, current, seg, `${label} "${name}": field`, at);
    if (!field) return;
    if (field.type === 'many_to_many') return report(ctx, res.spec, at, `${label} "${name}": ${seg} is a many_to_many field, with several values per row; only foreign keys can be followed`);
    if (i === segments.length - 1) return;
    if (field.type !== 'foreign_key') return report(ctx, res.spec, at, `${label} "${name}": ${seg} is a ${field.type} field, not a foreign key to follow`);
    const target = relationTarget(ctx, field);
    if (!target || target.opaque) return;
    current = target;
  }
}

/**
 * A search field: a field of the resource, or of a related one through foreign keys and
 * many-to-manys (`author__username`, `tags__name`), ending at a field that holds a value.
 */
function checkSearchField(ctx: Ctx, res: Resource, name: string, at: YamlPath): void {
  const segments = name.split('__');
  let current = res;
  for (const [i, seg] of segments.entries()) {
    const field = fieldOf(ctx, res.spec, current, seg, segments.length > 1 ? `search field "${name}": field` : 'search field', at);
    if (!field) return;
    const relation = RELATION_TYPES.includes(field.type ?? '');
    if (i === segments.length - 1) {
      if (relation) report(ctx, res.spec, at, `search field "${name}" is a ${field.type}: search a field of the related resource (${name}__<field>)`);
      return;
    }
    if (!relation) return report(ctx, res.spec, at, `search field "${name}": ${seg} is a ${field.type} field, not a relation to follow (write the field alone; lookups like __icontains are implied)`);
    const target = relationTarget(ctx, field);
    if (!target || target.opaque) return;
    current = target;
  }
}

function checkM2mRelations(ctx: Ctx, res: Resource, vs: Rec): void {
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

/** The seed's two M2M rules, and the relation's own schemas. */
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

/** Parameters the list endpoint reads itself (pagination, including CursorPagination's `cursor`, and ordering; `search` too, with search_fields). */
const LIST_PARAMETERS = ['page', 'page_size', 'limit', 'offset', 'cursor', 'ordering'];

function checkQueryParams(ctx: Ctx, res: Resource, vs: Rec): void {
  const seen = new Map<string, string>();
  const clashing = new Set<string>(LIST_PARAMETERS);
  const claim = (name: unknown, where: string, at: YamlPath, key = false) => {
    if (typeof name !== 'string') return;
    if (LIST_PARAMETERS.includes(name) || (name === 'search' && Array.isArray(vs.search_fields))) {
      report(ctx, res.spec, at, `query parameter "${name}" clashes with the list endpoint's own "${name}": rename it`, key);
    } else if (seen.has(name)) {
      clashing.add(name);
      report(ctx, res.spec, at, `duplicate query parameter "${name}": already defined in ${seen.get(name)}`, key);
    } else seen.set(name, where);
  };
  eachEntry(vs.query_params, ['viewset', 'query_params'], (name, _value, at) => claim(name, 'query_params', at, true));
  eachItem(vs.relations_filters, ['viewset', 'relations_filters'], (rf, at) => {
    claim(asRec(rf)?.query_param, 'relations_filters', [...at, 'query_param']);
  });
  eachItem(vs.filters_match_cases, ['viewset', 'filters_match_cases'], (mc, at) => {
    claim(asRec(mc)?.query_param, 'filters_match_cases', [...at, 'query_param']);
  });
  // A parameter already reported (a clash, a duplicate) is not reported again as unused.
  if (vs.query_params_handler === undefined) checkQueryParamsApplied(ctx, res, vs, clashing);
}

/**
 * Without a query_params_handler, a `query_params` entry filters only through a type mixin, which
 * looks up the field of the parameter's name: one that names no field, or whose type no listed mixin
 * takes, would be validated and then ignored.
 */
function checkQueryParamsApplied(ctx: Ctx, res: Resource, vs: Rec, reported: ReadonlySet<string>): void {
  const mixins: unknown[] = Array.isArray(vs.filter_mixins) ? vs.filter_mixins : [];
  // A misspelt mixin is reported as such; what it would have applied is not a second problem.
  if (mixins.some((m) => typeof m !== 'string' || !(FILTER_MIXINS as readonly string[]).includes(m))) return;
  const listed = mixins.filter((m): m is TypeMixinName => typeof m === 'string' && m in TYPE_MIXINS);
  eachEntry(vs.query_params, ['viewset', 'query_params'], (name, value, at) => {
    const type = paramTypeOf(value);
    // An entry the meta-schema rejected is reported as such.
    if (type === undefined || reported.has(name)) return;
    if (!res.fields.has(name)) {
      const hint = didYouMean(name, res.fields.keys()) || '';
      report(ctx, res.spec, at, `query parameter "${name}" names no field of ${res.name}${hint}, so no filter mixin applies it: name it after a field, or apply it in a query_params_handler`, true);
    } else if (!listed.some((m) => (TYPE_MIXINS[m].types as readonly string[]).includes(type))) {
      const takers = (Object.keys(TYPE_MIXINS) as TypeMixinName[]).filter((m) => (TYPE_MIXINS[m].types as readonly string[]).includes(type));
      const add = takers.length ? `add ${takers.length === 1 ? takers[0] : `one of ${takers.join(', ')}`} to filter_mixins` : 'no filter mixin takes it';
      report(ctx, res.spec, at, `query parameter "${name}" (${type}) is applied by none of the listed filter_mixins: ${add}, or apply it in a query_params_handler`, true);
    }
  });
}

/** The type of a filter parameter written `type`, `[type, default]` or `{type, default, description}`. */
function paramTypeOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return asStr(value[0]);
  return asStr(asRec(value)?.type);
}

// ---------------------------------------------------------------------------------------------
// Lookups: `author__username__iexact`, in relations_filters and match cases
// ---------------------------------------------------------------------------------------------

const isOperator = (name: string) => (LOOKUP_OPERATORS as readonly string[]).includes(name);

function checkLookups(ctx: Ctx, res: Resource, vs: Rec): void {
  eachItem(vs.relations_filters, ['viewset', 'relations_filters'], (rf, at) => {
    const lookup = asStr(asRec(rf)?.query_filter);
    if (lookup !== undefined) checkLookup(ctx, res, lookup, [...at, 'query_filter'], false);
  });
  eachItem(vs.filters_match_cases, ['viewset', 'filters_match_cases'], (mc, at) => {
    eachEntry(asRec(mc)?.cases, [...at, 'cases'], (_name, condition, caseAt) => {
      const expr = asRec(condition)?.query_filter;
      if (expr !== undefined && expr !== INVALID) checkQueryExpr(ctx, res, expr, [...caseAt, 'query_filter']);
    });
  });
}

/** `{and: [...]}`, `{or: [...]}`, `{not: {...}}` or a map of lookups to values. */
function checkQueryExpr(ctx: Ctx, res: Resource, expr: unknown, at: YamlPath): void {
  if (!isRec(expr)) return;
  const keys = Object.keys(expr);
  if (keys.length === 0) {
    report(ctx, res.spec, at, 'empty query: give at least one lookup, or and/or/not');
    return;
  }
  const combinator = keys.find((k) => k === 'and' || k === 'or' || k === 'not');
  if (combinator && keys.length > 1) {
    const message = `"${combinator}" must be the only key of its map: wrap the other lookups in it`;
    report(ctx, res.spec, [...at, combinator], message, true);
    return;
  }
  if (combinator === 'not') return checkQueryExpr(ctx, res, expr.not, [...at, 'not']);
  if (combinator) {
    if (!Array.isArray(expr[combinator]) || !expr[combinator].length) {
      report(ctx, res.spec, [...at, combinator], `"${combinator}" needs a non-empty list of queries`);
    }
    return eachItem(expr[combinator], [...at, combinator], (item, itemAt) => checkQueryExpr(ctx, res, item, itemAt));
  }
  for (const lookup of keys.filter((k) => expr[k] !== INVALID)) {
    const operator = checkLookup(ctx, res, lookup, [...at, lookup], true);
    if (operator) checkLookupValue(ctx, res, operator, expr[lookup], [...at, lookup]);
  }
}

/**
 * Walks `field(__field)*(__operator)?` from `res`: each segment before the last field must be a
 * relation, whose target the walk moves to. Returns the operator, if any, when the lookup is valid.
 */
function checkLookup(ctx: Ctx, res: Resource, lookup: string, at: YamlPath, key: boolean): string | undefined {
  const segments = lookup.split('__');
  const fail = (message: string, note = '') => void report(ctx, res.spec, at, `${message} in lookup "${lookup}"${note}`, key);
  const chain = [res.name];
  let current = res;
  for (const [i, seg] of segments.entries()) {
    const rest = segments.slice(i + 1);
    const field = current.fields.get(seg);
    if (!field && i > 0 && isOperator(seg)) {
      return rest.length ? fail(`nothing may follow the operator "${seg}"`) : seg;
    }
    if (!field) {
      return fail(`unknown field "${seg}"`, ` (${chain.join(' → ')})${didYouMean(seg, current.fields.keys())}`);
    }
    if (!rest.length) return undefined;
    if (!RELATION_TYPES.includes(field.type ?? '')) {
      if (rest.length === 1 && isOperator(rest[0])) return rest[0];
      if (isOperator(rest[0])) return fail(`nothing may follow the operator "${rest[0]}"`);
      const operators = LOOKUP_OPERATORS.join(', ');
      const hint = didYouMean(rest[0], LOOKUP_OPERATORS) || ` ("${seg}" is a ${field.type} field, not a relation; operators: ${operators})`;
      return fail(`unknown operator "${rest[0]}"`, hint);
    }
    const target = relationTarget(ctx, field);
    if (!target || target.opaque) return undefined;
    current = target;
    chain.push(target.name);
  }
  return undefined;
}

function checkLookupValue(ctx: Ctx, res: Resource, operator: string, value: unknown, at: YamlPath): void {
  if (operator === 'isnull' && typeof value !== 'boolean') report(ctx, res.spec, at, '"isnull" takes true or false');
  if (operator === 'in' && !Array.isArray(value)) report(ctx, res.spec, at, '"in" takes a list of values');
  if (operator === 'range' && !(Array.isArray(value) && value.length === 2)) {
    report(ctx, res.spec, at, '"range" takes a list of two values [low, high]');
  }
}

// ---------------------------------------------------------------------------------------------
// Service file
// ---------------------------------------------------------------------------------------------

function checkService(ctx: Ctx, spec: SpecFile, data: Rec): void {
  const auth = asRec(data.auth);
  const userModel = asStr(auth?.user_model);
  const user = userModel === undefined ? undefined : ctx.byModel.get(userModel);
  if (userModel !== undefined && !user) {
    const hint = didYouMean(userModel, ctx.byModel.keys());
    report(ctx, spec, ['auth', 'user_model'], `auth.user_model names unknown resource "${userModel}"${hint}`);
  }
  if (user) {
    eachItem(auth?.extra_claims, ['auth', 'extra_claims'], (claim, at) => {
      if (typeof claim === 'string') fieldOf(ctx, spec, user, claim, 'extra claim', at);
    });
  }
}
