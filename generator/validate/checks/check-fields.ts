/**
 * The fields of a resource and its composite indexes: one primary key of a type that can be one,
 * options that fit the field's type, relations that name a known resource, decimal places within
 * the digits, and no index the database already has.
 */
import type { YamlPath } from '../../load/load';
import { LIST_ITEM_TYPES } from '../meta-schema';
import { didYouMean } from '../suggest';
import { checkChoices, checkDefault } from './check-defaults';
import { asRec, type Ctx, eachItem, has, listWords, report } from './context';
import { type Field, fieldOf, RELATION_TYPES, type Resource } from './resources';

const PK_TYPES = ['integer', 'big_integer', 'uuid', 'string'];

/** Field options and the types they apply to. */
const OPTION_TYPES: Record<string, string[]> = {
  to: RELATION_TYPES,
  reverse_name: RELATION_TYPES,
  on_delete: ['foreign_key'],
  max_length: ['string', 'email', 'url', 'password', 'list'],
  ignore_case: ['string', 'email', 'url'],
  of: ['list'],
  max_items: ['list'],
  max_digits: ['decimal'],
  decimal_places: ['decimal'],
  auto_now_add: ['date', 'datetime'],
  auto_now: ['date', 'datetime'],
};

const NOT_ON_MANY_TO_MANY = ['null', 'unique', 'default', 'primary_key'];

export function checkPrimaryKey(ctx: Ctx, res: Resource): void {
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

export function checkField(ctx: Ctx, res: Resource, field: Field): void {
  if (field.type === undefined) return;
  const at = ['fields', field.name];
  checkOptionsFitType(ctx, res, field, at);
  if (RELATION_TYPES.includes(field.type)) checkRelationField(ctx, res, field, at);
  if (field.type === 'decimal') checkDecimalPlaces(ctx, res, field, at);
  if (field.type === 'list') checkListField(ctx, res, field, at);
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
  if (field.spec.ignore_case === true && (field.spec.unique !== true || field.spec.primary_key === true)) {
    report(
      ctx,
      res.spec,
      [...at, 'ignore_case'],
      '"ignore_case" makes a unique field unique whatever the case of its letters: it needs "unique: true" (and no "primary_key")',
      true,
    );
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

/** A list names the type of its items; `max_length` applies to string items only; a list is no key and no index. */
function checkListField(ctx: Ctx, res: Resource, field: Field, at: YamlPath): void {
  const of = field.spec.of;
  if (!has(field.spec, 'of'))
    report(ctx, res.spec, at, `a list field needs "of" naming the type of its items: ${listWords([...LIST_ITEM_TYPES])}`);
  else if (has(field.spec, 'max_length') && of !== 'string') {
    report(ctx, res.spec, [...at, 'max_length'], `"max_length" applies to the items of a list of string, not of ${String(of)}`, true);
  }
  for (const option of ['unique', 'db_index'] as const) {
    if (field.spec[option] === true)
      report(ctx, res.spec, [...at, option], `"${option}" does not apply to a list field: a list is compared item by item`, true);
  }
}

function checkDecimalPlaces(ctx: Ctx, res: Resource, field: Field, at: YamlPath): void {
  const { max_digits: digits, decimal_places: places } = field.spec;
  if (typeof digits === 'number' && typeof places === 'number' && places > digits) {
    report(ctx, res.spec, [...at, 'decimal_places'], `decimal_places (${places}) cannot be more than max_digits (${digits})`);
  }
}

/**
 * Composite indexes: fields of this resource, not many-to-many, and not a one-field index of a field
 * the database already indexes (`unique`, `db_index`, a foreign key). Duplicates and name clashes
 * are checked on the derived names (check-model.ts).
 */
export function checkIndexes(ctx: Ctx, res: Resource): void {
  eachItem(res.data.indexes, ['indexes'], (entry, entryAt) => {
    const index = Array.isArray(entry) ? { fields: entry } : asRec(entry);
    const fieldsAt = Array.isArray(entry) ? entryAt : [...entryAt, 'fields'];
    const fields: Field[] = [];
    eachItem(index?.fields, fieldsAt, (name, at) => {
      if (typeof name !== 'string') return;
      const field = fieldOf(ctx, res.spec, res, name, 'index field', at);
      if (field?.type === 'many_to_many')
        report(ctx, res.spec, at, `cannot index many_to_many field "${name}": its links live in a join table`);
      else if (field) fields.push(field);
    });
    if (fields.length !== 1 || !Array.isArray(index?.fields) || index.fields.length !== 1) return;
    const [field] = fields;
    const unique = index.unique === true;
    const already =
      field.spec.primary_key === true || field.implicit || field.spec.unique === true
        ? 'unique'
        : field.spec.db_index === true || field.type === 'foreign_key'
          ? 'indexed'
          : undefined;
    if (already && (!unique || already === 'unique')) {
      report(ctx, res.spec, fieldsAt, `field "${field.name}" is already ${already}; an index of this one field adds nothing`);
    }
  });
}
