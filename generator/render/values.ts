/**
 * How a value read from a database row becomes the value a schema field carries: booleans, dates,
 * decimals, JSON and lists need converting (their column types differ between SQLite and PostgreSQL);
 * everything else is read as it is.
 */
import type { Field, SchemaField } from '../model/model';
import type { Imports } from './imports';

/** The value of `f` from `row.<column>`. */
export function readValue(f: SchemaField, column: string, imports: Imports): string {
  const v = `row.${column}`;
  let expr: string;
  if (f.list) {
    expr = `${imports.runtime('asList')}(${v})`;
    return f.nullable ? `${v} === null ? null : ${expr}` : expr;
  }
  switch (f.value) {
    case 'bool':
      expr = `${imports.runtime('asBool')}(${v})`;
      break;
    case 'date':
      expr = `${imports.runtime('asDate')}(${v})`;
      break;
    case 'datetime':
      expr = `${imports.runtime('asDateTime')}(${v})`;
      break;
    case 'decimal':
      expr = `${imports.runtime('asDecimal')}(${v}, ${f.decimal?.decimalPlaces ?? 2})`;
      break;
    case 'json':
      expr = `${imports.runtime('asJson')}(${v})`;
      break;
    default:
      return v;
  }
  return f.nullable ? `${v} === null ? null : ${expr}` : expr;
}

/** The value kind a column field converts with. */
function valueKind(f: Field): SchemaField['value'] {
  const kinds: Partial<Record<Field['type'], SchemaField['value']>> = {
    boolean: 'bool',
    date: 'date',
    datetime: 'datetime',
    decimal: 'decimal',
    json: 'json',
    float: 'float',
    integer: 'int',
    big_integer: 'bigint',
  };
  return kinds[f.type] ?? 'str';
}

/** The value of a column field, read as it is stored (a record, the authenticated user). */
export function readColumn(f: Field, imports: Imports): string {
  const sf: SchemaField = {
    name: f.name,
    kind: 'value',
    field: f,
    value: valueKind(f),
    required: true,
    nullable: f.nullable,
    decimal: f.type === 'decimal' ? { maxDigits: f.maxDigits!, decimalPlaces: f.decimalPlaces! } : undefined,
    list: f.list ? {} : undefined,
  };
  return readValue(sf, f.column, imports);
}
