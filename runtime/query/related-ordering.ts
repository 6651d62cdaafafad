/**
 * Ordering a list by a field of a related row (`author__username`, DRF style): each such term is a
 * scalar subquery that follows the foreign keys from the listed row, so the list keeps exactly one
 * row per item (no join can repeat one), its `count`, and the primary key tie-break after it.
 */
import type { Knex } from 'knex';

/** One foreign key step: the row's `from` column (`articles.author_id`) equals the related `key` (`users.id`). */
export interface OrderHop {
  from: string;
  table: string;
  key: string;
}

/** An ordering field of a related row: the hops to it and its column there (`users.username`). */
export interface RelatedColumn {
  column: string;
  hops: readonly OrderHop[];
}

/** `table.column` read under `alias`. */
const aliased = (qualified: string, alias: string) => `${alias}.${qualified.slice(qualified.indexOf('.') + 1)}`;

/**
 * `(select a2.name from countries as a2 where a2.id = (select a1.country_id from users as a1 where a1.id = articles.author_id))`,
 * with its identifiers as bindings. Each hop reads its table under an alias of its own, so a table
 * that refers to itself (or to the listed table) stays unambiguous.
 */
export function relatedValue(related: RelatedColumn): { sql: string; bindings: string[] } {
  const { hops, column } = related;
  let value = { sql: '??', bindings: [hops[0].from] };
  hops.forEach((hop, i) => {
    const alias = `svc_order_${i + 1}`;
    const read = i === hops.length - 1 ? column : hops[i + 1].from;
    value = {
      sql: `(select ?? from ?? as ?? where ?? = ${value.sql})`,
      bindings: [aliased(read, alias), hop.table, alias, aliased(hop.key, alias), ...value.bindings],
    };
  });
  return value;
}

/** Orders `query` by `terms`, in order; a term with hops orders by the related value. */
export function orderByTerms(
  query: Knex.QueryBuilder,
  terms: readonly { column: string; order: 'asc' | 'desc'; hops?: readonly OrderHop[] }[],
): void {
  for (const t of terms) {
    if (!t.hops?.length) {
      query.orderBy(t.column, t.order);
      continue;
    }
    const { sql, bindings } = relatedValue({ column: t.column, hops: t.hops });
    query.orderByRaw(`${sql} ${t.order === 'desc' ? 'desc' : 'asc'}`, bindings);
  }
}
