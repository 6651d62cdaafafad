/**
 * `?expand=a,b` (Stripe's `expand`, DRF-flex-fields' `expand`): the client names relations the
 * viewset allows to expand, and each item shows them as related records instead of keys (or, for a
 * relation the read schema leaves out, shows them at all). Each named relation is loaded once for
 * the whole page, with one query over the page's keys: a page of 100 costs what a page of 5 does.
 */
import type { Db } from '../db/connection';
import type { Row } from '../db/rows';
import { namesParam } from './fields-selection';

/**
 * The `expand` query parameter: names of `allowed` separated by commas (`namesParam`), returned in
 * the order of `allowed`. Any other name is a 422 with loc `query.expand`, like an unknown field of `?fields=`.
 */
export function expandParam(allowed: readonly string[]) {
  return namesParam(allowed)
    .optional()
    .meta({
      type: 'array',
      items: { type: 'string', enum: [...allowed] },
      style: 'form',
      explode: false,
      description: `Relations to show as related records, separated by commas: ${allowed.join(', ')}.`,
    });
}

/**
 * One expandable relation: loads what a page of rows relates to (one query), and answers the
 * value one row's item shows.
 */
export type Expander<R extends Row = Row> = (db: Db, rows: R[]) => Promise<(row: R) => unknown>;

/**
 * A shaping function (rows → items) whose items show the `names` of `expanders` expanded: each
 * relation loaded once for all rows, beside the shape's own loads. The item keeps its own fields
 * in their order; an expanded relation takes the place of the field of its name, or comes last.
 */
export function expandShape<T extends object, R extends Row = Row>(
  shape: (db: Db, rows: R[]) => Promise<T[]>,
  expanders: Readonly<Record<string, Expander<R>>>,
  names: readonly string[] | undefined,
): (db: Db, rows: R[]) => Promise<T[]> {
  if (!names || names.length === 0) return shape;
  return async (db, rows) => {
    const [items, ...values] = await Promise.all([shape(db, rows), ...names.map((name) => expanders[name](db, rows))]);
    return items.map((item, i) => {
      const out = { ...item } as Record<string, unknown>;
      names.forEach((name, j) => (out[name] = values[j](rows[i])));
      return out as T;
    });
  };
}

/** The fields `?fields=` keeps when `?expand=` names relations too: an expanded relation is always shown. */
export function withExpanded(fields: readonly string[] | undefined, expand: readonly string[] | undefined): string[] | undefined {
  if (!fields || !expand || expand.length === 0) return fields === undefined ? undefined : [...fields];
  return [...fields, ...expand.filter((name) => !fields.includes(name))];
}
