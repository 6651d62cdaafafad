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

/**
 * The most words a search may have. Each word is one more condition AND-ed to the others, and
 * SQLite refuses an expression deeper than 1000 where PostgreSQL answers: past this cap the text
 * is a 422 on every database, before any query.
 */
export const MAX_SEARCH_TERMS = 32;

/** The `search` query parameter, documented with the fields it searches; more than MAX_SEARCH_TERMS words is a 422. */
export function searchParam(fields: readonly string[]) {
  return fromString
    .str()
    .superRefine((text, ctx) => {
      const count = searchTerms(text).length;
      if (count > MAX_SEARCH_TERMS) {
        ctx.addIssue({
          code: 'custom',
          message: `Search should have at most ${MAX_SEARCH_TERMS} words`,
          params: { type: 'too_long' },
          input: text,
        });
      }
    })
    .optional()
    .meta({
      description: `Search ${fields.join(', ')}: every word must be contained, ignoring case, in one of these fields (at most ${MAX_SEARCH_TERMS} words).`,
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
