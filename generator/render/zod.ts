/**
 * Zod expressions for schema fields: input schemas validate requests, output schemas only
 * document responses (responses are shaped by precompiled mappers, never re-validated).
 */
import type { SchemaField, ValueKind } from '../model';
import { literal } from '../names';

function bounded(sf: SchemaField): string {
  const b = sf.bounds;
  return b ? `intInput(${b.min}, ${b.max})` : `intInput(${Number.MIN_SAFE_INTEGER}, ${Number.MAX_SAFE_INTEGER})`;
}

function inputValue(kind: ValueKind, sf: SchemaField): string {
  const max = sf.maxLength !== undefined ? `.max(${sf.maxLength})` : '';
  if (sf.choices) {
    return sf.choices.every((c) => typeof c === 'string') ? `z.enum(${literal(sf.choices)})` : `z.literal(${literal(sf.choices)})`;
  }
  switch (kind) {
    case 'int':
    case 'bigint':
      return bounded(sf);
    case 'float':
      return 'z.number()';
    case 'decimal':
      return `decimalInput(${sf.decimal?.maxDigits ?? 12}, ${sf.decimal?.decimalPlaces ?? 2})`;
    case 'str':
      return `z.string()${max}`;
    case 'email':
      return `z.email()${max}`;
    case 'url':
      return `urlInput({ blank: ${sf.field?.blank === true}, maxLength: ${sf.maxLength ?? 200} })`;
    case 'uuid':
      return 'uuidInput()';
    case 'bool':
      return 'z.boolean()';
    case 'date':
      return 'z.iso.date()';
    case 'datetime':
      return 'z.iso.datetime({ offset: true })';
    case 'json':
      return 'jsonInput()';
    case 'list':
      return 'z.array(z.unknown())';
  }
}

function outputValue(kind: ValueKind, sf: SchemaField): string {
  switch (kind) {
    case 'int':
    case 'bigint':
      return 'z.int()';
    case 'float':
      return 'z.number()';
    case 'decimal':
      return "z.string().openapi({ format: 'decimal' })";
    case 'str':
      return sf.choices ? inputValue(kind, sf) : 'z.string()';
    case 'email':
      return 'z.email()';
    case 'url':
      return "z.string().openapi({ format: 'uri' })";
    case 'uuid':
      return 'z.uuid()';
    case 'bool':
      return 'z.boolean()';
    case 'date':
      return 'z.iso.date()';
    case 'datetime':
      return 'z.iso.datetime()';
    case 'json':
      return 'z.unknown()';
    case 'list':
      return 'z.array(z.unknown())';
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

export function zodInput(sf: SchemaField): string {
  const item = inputValue(sf.value, sf);
  const expr = sf.kind === 'many_to_many' ? `z.array(${item})` : item;
  return withModifiers(expr, sf, true);
}

export function zodOutput(sf: SchemaField): string {
  let expr: string;
  if (sf.kind === 'nested_one' || sf.kind === 'nested_many') {
    const inner = `z.object({ ${sf.nested!.fields.map((f) => `${f.name}: ${zodOutput(f)}`).join(', ')} })`;
    expr = sf.kind === 'nested_many' ? `z.array(${inner})` : inner;
  } else {
    const item = outputValue(sf.value, sf);
    expr = sf.kind === 'many_to_many' ? `z.array(${item})` : item;
  }
  return withModifiers(expr, sf, false);
}
