/**
 * The values a spec gives a field: its `default` and its `choices` must be values the field can
 * hold (of its type, within max_length, among the choices), so that a bad value is reported at the
 * spec line instead of failing at the first insert.
 */
import type { YamlPath } from '../../load/load';
import { type Ctx, eachItem, has, INVALID, report, show } from './context';
import { type Field, relationTarget, type Resource } from './resources';

const INTEGER_TYPES = ['integer', 'big_integer'];
const STRING_TYPES = ['string', 'text', 'email', 'url', 'uuid', 'password'];

/** How a value of a field type is written, as a test and in words; undefined when anything goes. */
function valueShape(ctx: Ctx, field: Field): { test: (v: unknown) => boolean; words: string } | undefined {
  switch (field.type) {
    case 'integer':
    case 'big_integer':
      return { test: Number.isInteger, words: 'an integer' };
    case 'float':
      return { test: (v) => typeof v === 'number', words: 'a number' };
    case 'decimal':
      return {
        test: (v) => typeof v === 'number' || (typeof v === 'string' && /^[+-]?\d+(\.\d+)?$/.test(v)),
        words: 'a number or a decimal string like "9.99"',
      };
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
    case 'list':
      return listShape(ctx, field);
    case 'foreign_key': {
      const target = relationTarget(ctx, field);
      return target && !target.opaque && target.pk.type ? valueShape(ctx, target.pk) : undefined;
    }
    default:
      return undefined;
  }
}

/** A list of items of the list's `of`, each of which fits the item type. */
function listShape(ctx: Ctx, field: Field): { test: (v: unknown) => boolean; words: string } | undefined {
  const item = itemShape(ctx, field);
  if (!item) return undefined;
  return { test: (v) => Array.isArray(v) && v.every(item.test), words: `a list of which each item is ${item.words}` };
}

/** The shape of one item of a list field (undefined when `of` is missing or unknown). */
function itemShape(ctx: Ctx, field: Field): { test: (v: unknown) => boolean; words: string } | undefined {
  return typeof field.spec.of === 'string' && field.spec.of !== 'list' ? valueShape(ctx, { ...field, type: field.spec.of }) : undefined;
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

export function checkDefault(ctx: Ctx, res: Resource, field: Field, fieldAt: YamlPath): void {
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
  } else if (field.type === 'list' && Array.isArray(value)) {
    checkListItems(ctx, res, field, value, at, 'default');
  } else if (typeof value === 'string' && typeof maxLength === 'number' && value.length > maxLength) {
    report(ctx, res.spec, at, `default is ${value.length} characters long, more than max_length ${maxLength}`);
  } else if (Array.isArray(choices) && !choices.includes(value)) {
    report(ctx, res.spec, at, `default ${show(value)} is not one of the choices: ${choices.map(String).join(', ')}`);
  }
}

/** The items of a list default: at most `max_items`, each within `max_length` and among the choices. */
function checkListItems(ctx: Ctx, res: Resource, field: Field, items: unknown[], at: YamlPath, what: string): void {
  const { max_items: maxItems, max_length: maxLength, choices } = field.spec;
  if (typeof maxItems === 'number' && items.length > maxItems)
    report(ctx, res.spec, at, `${what} has ${items.length} items, more than max_items ${maxItems}`);
  eachItem(items, at, (item, itemAt) => {
    if (typeof item === 'string' && typeof maxLength === 'number' && item.length > maxLength) {
      report(ctx, res.spec, itemAt, `item ${show(item)} is longer than max_length ${maxLength}`);
    } else if (Array.isArray(choices) && !choices.includes(item as string | number)) {
      report(ctx, res.spec, itemAt, `item ${show(item)} is not one of the choices: ${choices.map(String).join(', ')}`);
    }
  });
}

export function checkChoices(ctx: Ctx, res: Resource, field: Field, fieldAt: YamlPath): void {
  const type = field.type as string;
  const at = [...fieldAt, 'choices'];
  if (!Array.isArray(field.spec.choices)) return;
  const itemType = type === 'list' && typeof field.spec.of === 'string' ? field.spec.of : type;
  if (!INTEGER_TYPES.includes(itemType) && !STRING_TYPES.includes(itemType)) {
    report(
      ctx,
      res.spec,
      at,
      `choices only apply to integer and string fields${type === 'list' ? ' and lists of them' : ''}, not ${type === 'list' ? `a list of ${itemType}` : type}`,
      true,
    );
    return;
  }
  const shape = type === 'list' ? itemShape(ctx, field) : valueShape(ctx, field);
  const maxLength = field.spec.max_length;
  eachItem(field.spec.choices, at, (choice, choiceAt) => {
    if (shape && !shape.test(choice)) {
      report(
        ctx,
        res.spec,
        choiceAt,
        `choice ${show(choice)} does not fit ${type === 'list' ? `the items of list field` : `${type} field`} "${field.name}": expected ${shape.words}`,
      );
    } else if (typeof choice === 'string' && typeof maxLength === 'number' && choice.length > maxLength) {
      report(ctx, res.spec, choiceAt, `choice ${show(choice)} is longer than max_length ${maxLength}`);
    }
  });
}
