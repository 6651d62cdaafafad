import type { HookContext, Knex } from '@svcgen/runtime';

/** Published articles only. */
export function visibleArticles({ query }: HookContext<{ query: Knex.QueryBuilder }>): void {
  query.where('articles.is_published', true);
}
