/**
 * `?search=` over HTTP on SQLite and PostgreSQL: words split on whitespace, every word required, each
 * in any search field, ignoring case; through a foreign key and a many-to-many with each row once and
 * the right count; `%`, `_` and `\` matching themselves; the blog's title and summary search, and
 * the parameter in the OpenAPI document. Whole bodies, exact statuses.
 */
import request from 'supertest';
import { makeArticle, makeUser } from '../support/blog-fixtures';
import { DIALECTS } from '../support/databases';
import { insertRows } from '../support/fixtures';
import { startBlog, startQuerying, type RunningService } from '../support/services';

describe.each(DIALECTS)("search through relations: the querying fixture's books (%s)", (dialect) => {
  let svc: RunningService;
  const TITLES = ['100% Pure', 'snake_case', 'snakeXcase', 'back\\slash', 'Élan'];
  const ids: number[] = [];
  beforeAll(async () => {
    svc = await startQuerying(dialect);
    const db = svc.database.db;
    const [ann, bob, cid] = await insertRows(db, 'authors', [{ name: 'Ann' }, { name: 'Bob' }, { name: 'Cid' }]);
    const [fantasy, fable, poetry] = await insertRows(db, 'genres', [{ name: 'Fantasy' }, { name: 'Fable' }, { name: 'Poetry' }]);
    const books: [string, string | null, unknown, unknown[]][] = [
      [TITLES[0], null, ann, [fantasy, fable]],
      [TITLES[1], 'Style', bob, [fable]],
      [TITLES[2], 'A fable of Ann', null, []],
      [TITLES[3], null, cid, [poetry]],
      [TITLES[4], null, cid, [poetry]],
    ];
    for (const [title, subtitle, author, genres] of books) {
      const [id] = await insertRows(db, 'books', [{ title, subtitle, author_id: author, added_at: '2024-01-01T00:00:00.000Z' }]);
      ids.push(Number(id));
      for (const genre of genres) await insertRows(db, 'books_genres', [{ book_id: id, genre_id: genre }], 'book_id');
    }
  });
  afterAll(() => svc.close());

  const found = (...i: number[]) => ({ items: i.map((n) => ({ id: ids[n], title: TITLES[n] })), count: i.length });
  const search = async (text: string, extra: Record<string, string> = {}) => {
    const res = await request(svc.app)
      .get('/books/')
      .query({ search: text, ...extra });
    return { status: res.status, body: res.body };
  };

  it.each<[string, number[]]>([
    // Two matching genres of one book: listed once.
    ['fa', [0, 1, 2]],
    // Every word is required, each in any field: Fable (genre or subtitle) and Ann (author or subtitle).
    ['FABLE ann', [0, 2]],
    ['  fable \t  ann  ', [0, 2]],
    ['fable bob', [1]],
    ['fable zzz', []],
    // LIKE's wildcards and its escape character match themselves.
    ['100%', [0]],
    ['%', [0]],
    ['snake_', [1]],
    ['_', [1]],
    ['k\\s', [3]],
    // No word: no search.
    ['', [0, 1, 2, 3, 4]],
    ['   ', [0, 1, 2, 3, 4]],
  ])('?search=%j', async (text, expected) => {
    expect(await search(text)).toEqual({ status: 200, body: found(...expected) });
  });

  it('counts every match, not the page, and pages keep one row per book', async () => {
    expect(await search('fa', { page_size: '2', page: '1' })).toEqual({ status: 200, body: { items: found(0, 1).items, count: 3 } });
    expect(await search('fa', { page_size: '2', page: '2' })).toEqual({ status: 200, body: { items: found(2).items, count: 3 } });
  });

  it('combines with the filters (AND)', async () => {
    expect(await search('fable', { title: 'snake' })).toEqual({ status: 200, body: found(1, 2) });
  });

  it('is documented in the OpenAPI document, with its fields', async () => {
    const doc = (await request(svc.app).get('/openapi.json')).body;
    const param = doc.paths['/books/'].get.parameters.find((p: { name: string }) => p.name === 'search');
    const description =
      'Search title, subtitle, author__name, genres__name: every word must be contained, ignoring case, in one of these fields (at most 32 words).';
    expect(param).toEqual({ name: 'search', in: 'query', required: false, description, schema: { type: 'string', description } });
  });
});

describe.each(DIALECTS)("search: the blog's articles, title and summary (%s)", (dialect) => {
  let svc: RunningService;
  const ids: Record<string, number> = {};
  beforeAll(async () => {
    svc = await startBlog(dialect);
    const author = await makeUser(svc);
    const db = svc.database.db;
    ids.hello = await makeArticle(db, { author_id: author.id, title: 'Hello, svcgen', summary: 'A first article' });
    ids.second = await makeArticle(db, { author_id: author.id, title: 'A second article', summary: 'More of svcgen' });
    ids.draft = await makeArticle(db, { author_id: author.id, title: 'Hello draft', summary: '', is_published: false });
  });
  afterAll(() => svc.close());

  const titles = async (text: string) => {
    const res = await request(svc.app).get('/api/articles/').query({ search: text, ordering: 'title' });
    expect(res.status).toBe(200);
    return { titles: (res.body.items as { title: string }[]).map((a) => a.title), count: res.body.count };
  };

  it('searches the title and the summary; the visibility rule still applies', async () => {
    expect(await titles('SVCGEN')).toEqual({ titles: ['A second article', 'Hello, svcgen'], count: 2 });
    expect(await titles('hello first')).toEqual({ titles: ['Hello, svcgen'], count: 1 });
    expect(await titles('hello')).toEqual({ titles: ['Hello, svcgen'], count: 1 });
    expect(await titles('article more')).toEqual({ titles: ['A second article'], count: 1 });
  });
});
