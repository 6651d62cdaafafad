/**
 * What every semantic check shares: the run's context (where problems go, the resources by model,
 * their types here and their indexing in resources.ts, which imports this module), plain-data access
 * that tolerates any value, the walker over lists and maps that skips nodes the meta-schema
 * rejected, reporting at a YAML position, and how values are worded in messages.
 */
import { isMap, isScalar, isSeq } from 'yaml';
import type { Diagnostic } from '../../load/diagnostics';
import { diagnosticAt, type SpecFile, type YamlPath } from '../../load/load';

export type Rec = Record<string, unknown>;

/** Marks a node that failed the meta-schema: semantic checks see it as absent-but-written. */
export const INVALID = Symbol('invalid');

/** A field of a resource as the checks see it (resources.ts indexes them). */
export interface Field {
  name: string;
  type?: string;
  to?: string;
  spec: Rec;
  /** The auto-increment `id` a resource gets when no field is its primary key. */
  implicit: boolean;
}

export interface Resource {
  spec: SpecFile;
  data: Rec;
  model?: string;
  /** The model as written (even when invalid), for messages. */
  name: string;
  fields: Map<string, Field>;
  pk: Field;
  /** True when the file could not be read: its model is known (if at all), nothing else. */
  opaque: boolean;
  /** Reverse relations other resources name on this one (`reverse_name`): name → the resource and its relation field. */
  reverse: Map<string, { from: Resource; field: Field }>;
}

export interface Ctx {
  out: Diagnostic[];
  resources: Resource[];
  byModel: Map<string, Resource>;
  /** Files whose data passed the meta-schema as a whole. */
  documents: Map<SpecFile, unknown>;
  service?: { spec: SpecFile; data: Rec };
}

export const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
export const asRec = (v: unknown): Rec | undefined => (isRec(v) ? v : undefined);
export const asStr = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const has = (rec: Rec, key: string): boolean => Object.prototype.hasOwnProperty.call(rec, key);

/** The walker: calls `fn` for each item of a list (skipping INVALID ones) with its path. */
export function eachItem(list: unknown, at: YamlPath, fn: (item: unknown, at: YamlPath, index: number) => void): void {
  if (Array.isArray(list)) list.forEach((item, i) => item !== INVALID && fn(item, [...at, i], i));
}

/** The walker: calls `fn` for each entry of a map (skipping INVALID values) with its path. */
export function eachEntry(map: unknown, at: YamlPath, fn: (key: string, value: unknown, at: YamlPath) => void): void {
  if (isRec(map)) for (const [key, value] of Object.entries(map)) if (value !== INVALID) fn(key, value, [...at, key]);
}

export function report(ctx: Ctx, spec: SpecFile, at: YamlPath, message: string, key = false): void {
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

export function show(v: unknown): string {
  return typeof v === 'string' ? `"${v}"` : (JSON.stringify(v) ?? String(v));
}

export function listWords(items: readonly string[], last = 'or'): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} ${last} ${items[items.length - 1]}`;
}
