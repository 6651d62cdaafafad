/**
 * Calls of the blog's generated client, right and wrong: each wrong one sits under a
 * `// @ts-expect-error TSxxxx` line naming the error it must produce. `misuse.test.ts`
 * compiles this file as it is (no error) and without those lines (exactly the named errors, each
 * on the line below its directive). Nothing here runs.
 */
import { ApiError, createClient, type Client } from '../../generated/client';

export async function rightAndWrong(api: Client): Promise<void> {
  const article = await api.createArticle({ title: 'Hello', content: 'Text', category: null });
  await api.updateArticle(article.id, { summary: 'Changed' });
  const page = await api.listArticles({ title: 'hello', is_published: false, ordering: ['-views', 'title'], page: 1, page_size: 10 });
  const titles: string[] = page.items.map((a) => a.title);
  const detail = await api.retrieveArticle(article.id);
  const author: string = detail.author.username;
  await api.manageArticleTags(article.id, { add: [1, 2], remove: [3] });
  const published: boolean = (await api.publishArticle(article.id)).published;
  const tokens = await api.login({ username: 'ada', password: 'correct horse' });
  await api.refresh({ refresh_token: tokens.refresh_token }, { token: null, signal: AbortSignal.timeout(1000) });
  const expanded = await api.listArticles({ expand: ['author', 'tags'], page_size: 5 });
  const authors: string[] = expanded.items.map((a) => a.author.username);
  const tagNames: string[] = expanded.items.flatMap((a) => a.tags.map((t) => t.name));
  const category: number | null = expanded.items[0].category;
  const expandedDetail = await api.retrieveArticle(article.id, { expand: ['category'] });
  const categoryName: string | undefined = expandedDetail.category?.name;
  void [titles, author, published, authors, tagNames, category, categoryName];

  // @ts-expect-error TS2561 a misspelt field of the create body (did you mean 'title'?)
  await api.createArticle({ title: 'Hello', content: 'Text', titel: 'Hello' });
  // @ts-expect-error TS2322 a number where the title is a string
  await api.createArticle({ title: 42, content: 'Text' });
  // @ts-expect-error TS2345 the required content is missing
  await api.createArticle({ title: 'Hello' });
  // @ts-expect-error TS2322 a field the list cannot be ordered by
  await api.listArticles({ ordering: 'content' });
  // @ts-expect-error TS2322 a filter of the wrong type
  await api.listArticles({ is_published: 'yes' });
  // @ts-expect-error TS2561 a misspelt filter of the list (did you mean 'title'?)
  await api.listArticles({ titel: 'hello' });
  // @ts-expect-error TS2322 a relation the articles do not expand
  await api.listArticles({ expand: ['comments'] });
  // @ts-expect-error TS2339 without ?expand the author of a list item is its key
  void (await api.listArticles()).items[0].author.username;
  // @ts-expect-error TS2345 the article's key is a number
  await api.retrieveArticle('1');
  // @ts-expect-error TS2322 tag keys are numbers
  await api.manageArticleTags(1, { add: ['news'] });
  // @ts-expect-error TS2353 the relation takes add and remove only
  await api.manageArticleTags(1, { replace: [1] });
  // @ts-expect-error TS2339 the nested author has no email
  void detail.author.email;
  // @ts-expect-error TS2353 publish takes no body
  await api.publishArticle(1, { force: true });
  // @ts-expect-error TS2345 register needs an email
  await api.register({ username: 'ada', password: 'correct horse' });
  // @ts-expect-error TS2322 a token is a string or a function returning one
  createClient({ baseUrl: 'http://127.0.0.1:8000/api', token: 42 });
  // @ts-expect-error TS2349 an error's status is a number, not a method
  void new ApiError(404, { article: 'not found' }, new Headers()).status();
}
