/**
 * Plain TypeScript types for schema fields and query parameters, for the generated client: the
 * same model data `zod.ts` turns into the server's Zod schemas, so a field change changes both.
 * Request types follow what the server accepts (`zodInput`), response types what it answers
 * (`zodOutput`).
 */
import type { ParamType } from '../model/filter-plans';
import type { SchemaField, SchemaModel, ValueKind } from '../model/model';
import { docLine, literal, str } from '../model/names';

/** A property name as a TypeScript key: bare when it is an identifier, else quoted. */
export function propertyKey(name: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? name : str(name);
}

function choicesType(choices: (string | number)[]): string {
  return [...new Set(choices)].map((c) => literal(c)).join(' | ');
}

/** Any JSON value: the client's own type, declared once when a request field uses it. */
export const JSON_VALUE = 'JsonValue';

/** What the server accepts for one value of `kind`. */
function inputValue(kind: ValueKind, sf: SchemaField): string {
  if (sf.choices) return choicesType(sf.choices);
  switch (kind) {
    case 'int':
    case 'bigint':
    case 'float':
      return 'number';
    case 'decimal':
      // decimalInput takes the digits as a string or a number.
      return 'string | number';
    case 'bool':
      return 'boolean';
    case 'json':
      return JSON_VALUE;
    case 'list':
      return 'unknown[]';
    default:
      // str, email, url, uuid, and dates as ISO 8601 text.
      return 'string';
  }
}

/** What the server answers for one value of `kind`. */
function outputValue(kind: ValueKind, sf: SchemaField): string {
  switch (kind) {
    case 'int':
    case 'bigint':
    case 'float':
      return 'number';
    case 'bool':
      return 'boolean';
    case 'json':
      return 'unknown';
    case 'list':
      return 'unknown[]';
    case 'str':
      return sf.choices ? choicesType(sf.choices) : 'string';
    default:
      // decimal (its digits as text), email, url, uuid, and dates as ISO 8601 text.
      return 'string';
  }
}

const listOf = (item: string) => (/^[A-Za-z0-9_$]+$/.test(item) ? `${item}[]` : `(${item})[]`);
// `unknown` and any JSON value already include null.
const orNull = (type: string, sf: SchemaField) => (sf.nullable && type !== 'unknown' && type !== JSON_VALUE ? `${type} | null` : type);

/** The type of a request field. */
export function tsInput(sf: SchemaField): string {
  if (sf.kind === 'nested_write') return `${sf.write!.item.name}[]`;
  const item = inputValue(sf.value, sf);
  return orNull(sf.kind === 'many_to_many' || sf.list ? listOf(item) : item, sf);
}

/** The type of a response field; nested records are inline object types. */
export function tsOutput(sf: SchemaField): string {
  if (sf.kind === 'nested_write') return `${sf.write!.child.responses.create.name}[]`;
  if (sf.kind === 'nested_one' || sf.kind === 'nested_many' || sf.kind === 'nested_reverse') {
    const inner = `{ ${sf.nested!.fields.map((f) => `${propertyKey(f.name)}: ${tsOutput(f)}`).join('; ')} }`;
    return orNull(sf.kind === 'nested_one' ? inner : `${inner}[]`, sf);
  }
  const item = outputValue(sf.value, sf);
  return orNull(sf.kind === 'many_to_many' || sf.kind === 'reverse' || sf.list ? listOf(item) : item, sf);
}

export interface InterfaceMember {
  /** A JSDoc line, when the spec describes the field. */
  doc: string | undefined;
  /** `name: type;` or `name?: type;`. */
  line: string;
}

/** The members of an interface mirroring a schema: request fields the server defaults or does not require are optional. */
export function schemaMembers(s: SchemaModel): InterfaceMember[] {
  const input = s.role === 'in' || s.role === 'update';
  return s.fields.map((f) => {
    // An update's answer has a list of children only when its body sent one.
    const optional = input ? !f.required || f.defaultValue !== undefined : f.kind === 'nested_write' && !f.required;
    const type = input ? tsInput(f) : tsOutput(f);
    return { doc: f.description ? docLine(f.description) : undefined, line: `${propertyKey(f.name)}${optional ? '?' : ''}: ${type};` };
  });
}

const PARAM_TYPES: Record<ParamType, string> = {
  str: 'string',
  int: 'number',
  float: 'number',
  bool: 'boolean',
  date: 'string',
  datetime: 'string',
  uuid: 'string',
  decimal: 'string | number',
  email: 'string',
  url: 'string',
  list: 'string[]',
  dict: 'Record<string, unknown>',
};

/** The type of a query parameter the client sends: one value, a list (`in`), or a pair (`range`). */
export function tsQueryParam(type: string, shape?: 'in' | 'range'): string {
  const item = PARAM_TYPES[type as ParamType] ?? 'string';
  if (shape === 'in') return listOf(item);
  if (shape === 'range') return `[${item}, ${item}]`;
  return item;
}
