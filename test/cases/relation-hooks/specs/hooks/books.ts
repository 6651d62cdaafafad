// The hooks of the books' tags relation.
import { escapeLike, type HookContext, type Knex, type Row } from '@svcgen/runtime';

/** GET /books/{pk}/tags/: hidden tags never show; `name` matches the start of a name, ignoring case. */
export function tagFilters({ query, filters }: HookContext<{ query: Knex.QueryBuilder; filters: { name?: string } }>): void {
  query.where('tags.hidden', false);
  if (filters.name) query.whereRaw("lower(??) like lower(?) escape '\\'", ['tags.name', `${escapeLike(filters.name)}%`]);
}

/** POST /books/{pk}/tags/: a key names a tag unless that tag is hidden. */
export async function findTag({ db, pk }: HookContext<{ pk: unknown; instance: Row }>): Promise<Row | undefined> {
  return db('tags').where({ id: pk, hidden: false }).first();
}
