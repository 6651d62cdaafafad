/**
 * The list pipeline: the resource's base query with filters applied, then ordering, then the
 * paginator's slice; rows are shaped by the resource's precompiled mapper.
 */
import type { Knex } from 'knex';
import { countOf, selectFirst, selectRows, type Db } from './db';
import type { ListSource } from './pagination';
import type { Row } from './relations';
import { fromString } from './query-params';
import { orderByTerms, type OrderHop, type RelatedColumn } from './related-ordering';
import { z } from './zod';

export interface OrderTerm {
  column: string;
  order: 'asc' | 'desc';
  /** A field of a related row (`author__username`): the foreign keys to it; `column` is in the last table. */
  hops?: readonly OrderHop[];
}

/**
 * A ListSource over `query` (filters applied, no select or order). `ordering` is applied to every
 * fetch; the primary key is appended as the last term so that pages never overlap or skip a row.
 */
export function querySource<T>(
  db: Db,
  query: Knex.QueryBuilder,
  options: { columns: readonly string[]; pk: string; ordering: readonly OrderTerm[]; shape: (db: Db, rows: Row[]) => Promise<T[]> },
): ListSource<T> {
  const ordering = options.ordering.some((t) => t.column === options.pk && !t.hops)
    ? options.ordering
    : [...options.ordering, { column: options.pk, order: 'asc' as const }];
  const related = ordering.some((t) => t.hops);
  return {
    async count() {
      return countOf(await selectFirst(db, query.clone().clearSelect().clearOrder().count({ count: '*' })));
    },
    async fetch(limit, offset) {
      const q = query.clone().select(options.columns);
      if (related) orderByTerms(q, ordering);
      else q.orderBy(ordering.map((t) => ({ column: t.column, order: t.order })));
      if (limit !== undefined) q.limit(limit);
      if (offset > 0) q.offset(offset);
      return options.shape(db, await selectRows(db, q));
    },
  };
}

/**
 * The `ordering` query parameter: one field or several separated by commas, `-` for descending.
 * Only names in `allowed` (field name → column, or a related row's column) pass; anything else is a
 * 422 with loc `query.ordering`.
 */
export function orderingParam(allowed: Readonly<Record<string, string | RelatedColumn>>) {
  const names = Object.keys(allowed);
  const message = `Input should be a comma-separated list of ${names.map((n) => `'${n}'`).join(', ')}, each optionally prefixed with '-'`;
  return fromString.str()
    .transform((value, ctx): OrderTerm[] => {
      const terms: OrderTerm[] = [];
      for (const part of value.split(',')) {
        const name = part.trim().replace(/^-/, '');
        if (!Object.prototype.hasOwnProperty.call(allowed, name)) {
          ctx.issues.push({ code: 'custom', message, params: { type: 'enum' }, input: value });
          return z.NEVER;
        }
        const target = allowed[name];
        const order = part.trim().startsWith('-') ? ('desc' as const) : ('asc' as const);
        terms.push(typeof target === 'string' ? { column: target, order } : { column: target.column, order, hops: target.hops });
      }
      return terms;
    })
    .optional()
    .openapi({ type: 'string', description: `Order by ${names.join(', ')}; prefix with - for descending; separate several with commas.` });
}
