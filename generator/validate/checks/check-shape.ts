/**
 * Layer 1: each file's shape against the JSON meta-schema (ajv). Ajv's errors become one plain
 * message per node, at that node; the nodes that failed are marked INVALID in the data handed to
 * layer 2, so that a mistake already reported here is not reported again by a semantic check.
 */
import Ajv, { type AnySchemaObject, type ErrorObject, type ValidateFunction } from 'ajv';
import type { SpecFile, YamlPath } from '../../load/load';
import { RATE_PATTERN, resourceSchema, serviceSchema, sharedSchemas } from '../meta-schema';
import { didYouMean } from '../suggest';
import { asRec, type Ctx, has, INVALID, isRec, listWords, report, show } from './context';

const ajv = new Ajv({ allErrors: true, strict: false, verbose: true });
for (const schema of sharedSchemas) ajv.addSchema(schema);
export const checkServiceShape = ajv.compile(serviceSchema);
export const checkResourceShape = ajv.compile(resourceSchema);

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
export function checkShape(ctx: Ctx, spec: SpecFile, validate: ValidateFunction): unknown {
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
  '^-?[a-z][a-z0-9_]*(,-?[a-z][a-z0-9_]*)*$':
    'give field names separated by commas, each with an optional - for descending (like -created_at,title)',
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
