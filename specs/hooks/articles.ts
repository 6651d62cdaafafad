// The blog's article rules: visibility, authorship, ownership and publishing.
// User-owned: `svcgen build` never touches this file; specs/resources/articles.yaml names these hooks.
import { ApiException, ForbiddenError, type AuthUser, type HookContext, type Knex, type Row, type View } from '@svcgen/runtime';
import type { ArticleRecord } from '../../generated/resources/articles/queries';

/**
 * What list and retrieve show: without a token only published articles; with one, published
 * articles plus the caller's own drafts.
 */
export function visibleArticles({ user, query }: HookContext<{ query: Knex.QueryBuilder }>): void {
  if (!user) {
    query.where('articles.is_published', true);
    return;
  }
  query.where((q) => q.where('articles.is_published', true).orWhere('articles.author_id', user.id));
}

/**
 * What writes, actions and tag changes find (queryset_write): what the caller may read, and for
 * staff every draft, so staff can edit, delete and publish other authors' drafts. Another author's
 * draft is a 404 to anyone else, as on retrieve: a write cannot tell it from a missing article.
 */
export function writableArticles(ctx: HookContext<{ query: Knex.QueryBuilder }>): void {
  if (ctx.user?.is_staff) return;
  visibleArticles(ctx);
}

/** The author of a new article is the caller. */
export function setAuthor({ user, values }: HookContext<{ values: Row }>): void {
  values.author_id = (user as AuthUser).id;
}

interface Override {
  instance: ArticleRecord;
  proceed: () => Promise<unknown>;
}

function mayChange(user: AuthUser, article: ArticleRecord): boolean {
  return user.is_staff || String(article.author) === String(user.id);
}

/** PATCH: only the author or staff. */
export async function updateOwnArticle({ user, instance, proceed }: HookContext<Override>): Promise<unknown> {
  if (!mayChange(user as AuthUser, instance)) throw new ForbiddenError({ detail: 'You can only edit your own articles' });
  return proceed();
}

/** DELETE: only the author or staff; answers 200 with a message. */
export async function deleteOwnArticle({ user, instance, proceed }: HookContext<Override>): Promise<{ message: string }> {
  if (!mayChange(user as AuthUser, instance)) throw new ForbiddenError({ detail: 'You can only delete your own articles' });
  await proceed();
  return { message: 'Article deleted' };
}

/** The `publish` action: draft + staff → published; already published → 409; draft + not staff → 403. */
export async function publish({ user, db, instance }: HookContext<{ instance: ArticleRecord }>): Promise<{ published: boolean }> {
  if (instance.is_published) throw new ApiException({ is_published: 'Article is already published' }, 409);
  if (!(user as AuthUser).is_staff) throw new ForbiddenError('forbidden', 'Only staff can publish');
  await db('articles').where('id', instance.id).update({ is_published: true });
  return { published: true };
}

/**
 * The `feed` action (`GET /api/articles/feed/`): the articles the caller may read, as
 * queryset_request narrowed them; the runtime orders them newest first and pages them by cursor.
 */
export function articleFeed({ query }: HookContext<{ query: Knex.QueryBuilder }>): Knex.QueryBuilder {
  return query;
}

/**
 * Decorator of the tags relation's POST: only the article's author or staff may change its tags.
 * It runs after the path is validated, so the key is a 32-bit integer (`req.validated`).
 */
export function onlyAuthorOrStaff(view: View): View {
  return async (req, res) => {
    const user = req.auth as AuthUser;
    const { pk } = req.validated?.params as { pk: number };
    const article = await req.service.db('articles').select('author_id', 'is_published').where('id', pk).first();
    // Another author's draft is none of the caller's business: the route answers 404 for it, as for a missing article.
    if (article && article.is_published && !user.is_staff && String(article.author_id) !== String(user.id)) {
      throw new ForbiddenError('forbidden', 'Only the author or staff can change the tags of an article');
    }
    return view(req, res);
  };
}
