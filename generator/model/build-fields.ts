/**
 * The model's columns and relations: each resource's fields (its primary key first, the implicit
 * `id` when no field is one), the columns of foreign keys, its many-to-many join tables and the
 * reverse relations other resources name on it. What other resources refer to is known from these,
 * before any schema or operation is built (build-model.ts).
 */
import type { DescribedResource } from './check-model';
import type { FieldSpec, ResourceSpec } from '../validate/meta-schema';
import type { Field, FieldType, ManyToMany, ReverseRelation } from './model';
import { snakeCase } from './names';
import { columnName, type ResourceNames } from './resource-names';

/** A resource's columns, before its schemas and operations: what other resources refer to. */
export interface Draft {
  described: DescribedResource;
  spec: ResourceSpec;
  names: ResourceNames;
  model: string;
  table: string;
  /** Column fields, the primary key first. */
  fields: Field[];
  m2mSpecs: [string, FieldSpec][];
}

/** The primary key field: the one marked `primary_key`, else the implicit auto-increment `id`. */
export function primaryKeyOf(r: DescribedResource): Field {
  const file = r.spec.file;
  const entry = Object.entries(r.data.fields).find(([, f]) => f.primary_key === true);
  return entry ? makeField(file, entry[0], entry[1], undefined) : implicitId(file);
}

/** What a foreign key needs of the resource it points to. */
export type Targets = ReadonlyMap<string, { table: string; pk: Field }>;

export function draftResource(r: DescribedResource, targets: Targets): Draft {
  const fields: Field[] = [targets.get(r.names.model.name)!.pk];
  const m2mSpecs: [string, FieldSpec][] = [];
  for (const [name, f] of Object.entries(r.data.fields)) {
    if (f.type === 'many_to_many') m2mSpecs.push([name, f]);
    else if (f.primary_key !== true)
      fields.push(makeField(r.spec.file, name, f, f.type === 'foreign_key' ? targets.get(f.to!) : undefined));
  }
  return { described: r, spec: r.data, names: r.names, model: r.names.model.name, table: r.names.table.name, fields, m2mSpecs };
}

function implicitId(file: string): Field {
  return {
    name: 'id',
    column: 'id',
    type: 'integer',
    primaryKey: true,
    autoIncrement: true,
    nullable: false,
    blank: false,
    unique: true,
    ignoreCase: false,
    index: false,
    hasDefault: false,
    default: undefined,
    autoNowAdd: false,
    autoNow: false,
    source: { file, path: ['fields'] },
  };
}

const DEFAULT_MAX_LENGTH: Partial<Record<FieldType, number>> = { email: 254, url: 200, password: 128 };

/**
 * The items a `list` field holds when its spec sets no `max_items`: a list is read whole by every
 * `contains` and `overlap` filter on it, row by row, so its length is the work one row costs.
 */
export const DEFAULT_LIST_MAX_ITEMS = 1000;

/**
 * The items one request may send in a nested write's list when the spec sets no `max_items`: each
 * is a write of the parent's one transaction, which holds a connection (and SQLite's write lock)
 * until the last is written. As a bulk route's default.
 */
export const DEFAULT_NESTED_MAX_ITEMS = 100;

/** A column field; `target` is the table and primary key a foreign key refers to. */
function makeField(file: string, name: string, f: FieldSpec, target: { table: string; pk: Field } | undefined): Field {
  const type = f.type as FieldType;
  const isFk = type === 'foreign_key';
  const primaryKey = f.primary_key === true;
  return {
    name,
    column: columnName(name, type),
    type,
    primaryKey,
    autoIncrement: primaryKey && (type === 'integer' || type === 'big_integer') && f.default === undefined,
    nullable: f.null === true,
    blank: f.blank === true || f.default === '',
    unique: primaryKey || f.unique === true,
    ignoreCase: f.unique === true && f.ignore_case === true,
    index: f.db_index === true || isFk,
    hasDefault: f.default !== undefined,
    default: f.default,
    autoNowAdd: f.auto_now_add === true,
    autoNow: f.auto_now === true,
    maxLength: f.max_length ?? DEFAULT_MAX_LENGTH[type],
    maxDigits: type === 'decimal' ? (f.max_digits ?? 12) : undefined,
    decimalPlaces: type === 'decimal' ? (f.decimal_places ?? 2) : undefined,
    choices: f.choices,
    list: type === 'list' ? { of: f.of!, maxItems: f.max_items ?? DEFAULT_LIST_MAX_ITEMS } : undefined,
    description: f.description,
    relation:
      isFk && target ? { target: f.to!, targetTable: target.table, targetPk: target.pk, onDelete: f.on_delete ?? 'cascade' } : undefined,
    renamedFrom: f.renamed_from,
    source: { file, path: ['fields', name] },
  };
}

export function m2mOf(d: Draft, byModel: ReadonlyMap<string, Draft>): ManyToMany[] {
  return d.m2mSpecs.map(([name, f]) => {
    const target = byModel.get(f.to!)!;
    const own = `${snakeCase(d.model)}_id`;
    const other = `${snakeCase(target.model)}_id`;
    const self = own === other;
    return {
      name,
      target: target.model,
      targetTable: target.table,
      targetPk: target.fields[0],
      joinTable: `${d.table}_${name}`,
      ownColumn: self ? `from_${own}` : own,
      otherColumn: self ? `to_${other}` : other,
      description: f.description,
      source: { file: d.described.spec.file, path: ['fields', name] },
    };
  });
}

/**
 * The reverse relations of every model, by target: each foreign key or many-to-many field with a
 * `reverse_name`, in order of resources, then fields.
 */
export function reverseRelations(drafts: Draft[], m2ms: ReadonlyMap<string, ManyToMany[]>): Map<string, ReverseRelation[]> {
  const byTarget = new Map<string, ReverseRelation[]>();
  for (const d of drafts) {
    for (const [name, f] of Object.entries(d.spec.fields)) {
      if (f.reverse_name === undefined) continue;
      const common = {
        name: f.reverse_name,
        from: d.model,
        fromTable: d.table,
        source: { file: d.described.spec.file, path: ['fields', name, 'reverse_name'] },
      };
      const rel: ReverseRelation =
        f.type === 'many_to_many'
          ? { ...common, kind: 'many_to_many', m2m: m2ms.get(d.model)!.find((m) => m.name === name)! }
          : { ...common, kind: 'foreign_key', field: d.fields.find((x) => x.name === name)! };
      byTarget.set(f.to!, [...(byTarget.get(f.to!) ?? []), rel]);
    }
  }
  return byTarget;
}
