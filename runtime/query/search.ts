/**
 * `?search=` on a list (DRF's SearchFilter, ninja-aio-crud's SearchViewSetMixin): the text is split
 * on whitespace and every term must match (AND); a term matches when one of the search fields
 * contains it, ignoring case (OR), with the semantics of the `icontains` lookup on both databases
 * (LIKE patterns escaped). Fields of related rows are reached through subqueries, so a row matched
 * through several related rows is still listed once and counted once.
 */
import type { Knex } from 'knex';
import { applyCondition, type Lookup } from './filters';
import { fromString } from '../validation/query-params';

/** The `search` query parameter, documented with the fields it searches. */
export function searchParam(fields: readonly string[]) {
  return fromString
    .str()
    .optional()
    .openapi({
      description: `Search ${fields.join(', ')}: every word must be contained, ignoring case, in one of these fields.`,
    });
}

/** The terms of a search text: its words, without empty ones. */
export function searchTerms(text: string | undefined): string[] {
  return text === undefined ? [] : text.split(/\s+/).filter((term) => term !== '');
}

/** Narrows `query` in place to rows where every term of `text` is in one of the fields' `icontains` lookups. */
export function applySearch(query: Knex.QueryBuilder, fields: readonly Lookup[], text: string | undefined): void {
  const terms = searchTerms(text);
  if (!terms.length || !fields.length) return;
  applyCondition(query, { and: terms.map((term) => ({ or: fields.map((lookup) => ({ lookup, value: term })) })) });
}
