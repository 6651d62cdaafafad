/**
 * Zod expressions for schema fields: input schemas validate requests, output schemas only
 * document responses (responses are shaped by precompiled mappers, never re-validated).
 */
import type { SchemaField, ValueKind } from '../model/model';
import { literal } from '../model/names';
import type { Imports } from './imports';

function bounded(sf: SchemaField, imports: Imports): string {
  const b = sf.bounds ?? { min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER };
  return `${imports.runtime('intInput')}(${b.min}, ${b.max})`;
}

function inputValue(kind: ValueKind, sf: SchemaField, imports: Imports): string {
  const z = imports.runtime('z');
  const max = sf.maxLength !== undefined ? `.max(${sf.maxLength})` : '';
  if (sf.choices) {
    return sf.choices.every((c) => typeof c === 'string') ? `${z}.enum(${literal(sf.choices)})` : `${z}.literal(${literal(sf.choices)})`;
  }
  switch (kind) {
    case 'int':
    case 'bigint':
      return bounded(sf, imports);
    case 'float':
      return `${z}.number()`;
    case 'decimal':
      return `${imports.runtime('decimalInput')}(${sf.decimal?.maxDigits ?? 12}, ${sf.decimal?.decimalPlaces ?? 2})`;
    case 'str':
      return `${z}.string()${max}`;
    case 'email':
      return `${z}.email()${max}`;
    case 'url':
      return `${imports.runtime('urlInput')}({ blank: ${sf.field?.blank === true}, maxLength: ${sf.maxLength ?? 200} })`;
    case 'uuid':
      return `${imports.runtime('uuidInput')}()`;
    case 'bool':
      return `${z}.boolean()`;
    case 'date':
      return `${imports.runtime('dateInput')}()`;
    case 'datetime':
      return `${imports.runtime('dateTimeInput')}()`;
    case 'json':
      return `${imports.runtime('jsonInput')}()`;
    case 'list':
      return `${z}.array(${z}.unknown())`;
  }
}

function outputValue(kind: ValueKind, sf: SchemaField, imports: Imports): string {
  const z = imports.runtime('z');
  switch (kind) {
    case 'int':
    case 'bigint':
      return `${z}.int()`;
    case 'float':
      return `${z}.number()`;
    case 'decimal':
      return `${z}.string().meta({ format: 'decimal' })`;
    case 'str':
      return sf.choices ? inputValue(kind, sf, imports) : `${z}.string()`;
    case 'email':
      return `${z}.email()`;
    case 'url':
      // A blank URL is "", which is not a `uri`: the document says either.
      return sf.field?.blank === true
        ? `${z}.union([${z}.literal(''), ${z}.string().meta({ format: 'uri' })])`
        : `${z}.string().meta({ format: 'uri' })`;
    case 'uuid':
      return `${z}.uuid()`;
    case 'bool':
      return `${z}.boolean()`;
    case 'date':
      return `${z}.iso.date()`;
    case 'datetime':
      return `${z}.iso.datetime()`;
    case 'json':
      return `${z}.unknown()`;
    case 'list':
      return `${z}.array(${z}.unknown())`;
  }
}

function withModifiers(expr: string, sf: SchemaField, input: boolean): string {
  let out = expr;
  if (sf.description) out += `.describe(${literal(sf.description)})`;
  if (sf.nullable) out += '.nullable()';
  if (input && sf.defaultValue) out += `.default(${literal(sf.defaultValue.value)})`;
  else if (input && !sf.required) out += '.optional()';
  return out;
}

/** A list of `item` in a response: a list field's value (with its `max_items`), or a many-to-many field's keys. */
function arrayOf(item: string, sf: SchemaField, imports: Imports): string {
  const max = sf.list?.maxItems !== undefined ? `.max(${sf.list.maxItems})` : '';
  return `${imports.runtime('z')}.array(${item})${max}`;
}

/** The schema of a request field: validates and converts what the client sends. */
export function zodInput(sf: SchemaField, imports: Imports): string {
  if (sf.kind === 'nested_write')
    return withModifiers(`${imports.runtime('listInput')}(${sf.write!.item.name}, ${sf.write!.maxItems})`, sf, true);
  const item = inputValue(sf.value, sf, imports);
  const list = sf.list
    ? `${imports.runtime('listInput')}(${item}${sf.list.maxItems !== undefined ? `, ${sf.list.maxItems}` : ''})`
    : undefined;
  const expr = list ?? (sf.kind === 'many_to_many' ? `${imports.runtime('z')}.array(${item})` : item);
  return withModifiers(expr, sf, true);
}

/** The schema of a response field, for the OpenAPI document. */
export function zodOutput(sf: SchemaField, imports: Imports): string {
  const z = imports.runtime('z');
  let expr: string;
  if (sf.kind === 'nested_write') {
    // The children written, as the child resource's create answers each (its schemas module).
    const { child } = sf.write!;
    const out = `${z}.array(${imports.value(`../${child.moduleName}/schemas`, child.responses.create.name)})`;
    return sf.required ? out : `${out}.optional()`;
  }
  if (sf.kind === 'nested_one' || sf.kind === 'nested_many' || sf.kind === 'nested_reverse') {
    const inner = `${z}.object({ ${sf.nested!.fields.map((f) => `${f.name}: ${zodOutput(f, imports)}`).join(', ')} })`;
    expr = sf.kind === 'nested_one' ? inner : `${z}.array(${inner})`;
  } else {
    const item = outputValue(sf.value, sf, imports);
    expr = sf.kind === 'many_to_many' || sf.kind === 'reverse' ? `${z}.array(${item})` : sf.list ? arrayOf(item, sf, imports) : item;
  }
  // A reverse relation shows at most `limit` children.
  if (sf.limit !== undefined) expr += `.max(${sf.limit})`;
  return withModifiers(expr, sf, false);
}
