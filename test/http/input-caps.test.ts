/**
 * Caps on the client input whose size becomes the size of a query: the words of `?search=` (each
 * one more condition AND-ed: SQLite refuses an expression deeper than 1000), the values of an
 * `__in` filter (each a bound parameter), the terms of `?ordering=` (each an ORDER BY term, and
 * under CursorPagination a condition on every term before it). At the cap the list answers 200;
 * one past it, a 422 in the seed's shape, the same on SQLite and PostgreSQL, before any query.
 */
import request from 'supertest';
import { MAX_LIST_ITEMS, queryParam } from '../../runtime/query/filters';
import { MAX_ORDERING_TERMS } from '../../runtime/query/list';
import { MAX_SEARCH_TERMS } from '../../runtime/query/search';
import { makeArticle, makeUser } from '../support/blog-fixtures';
import { DIALECTS } from '../support/databases';
import { countQueries, insertRows, takeErrors } from '../support/fixtures';
import { startBlog, startQuerying, startShowcase, type RunningService } from '../support/services';

const tooLong = (name: string, msg: string) => ({ detail: [{ type: 'too_long', loc: ['query', name], msg }] });
const words = (n: number, word = 'a') => Array.from({ length: n }, () => word).join(' ');

it('the caps are those the documentation names', () => {
  expect({ MAX_SEARCH_TERMS, MAX_LIST_ITEMS, MAX_ORDERING_TERMS }).toEqual({
    MAX_SEARCH_TERMS: 32,
    MAX_LIST_ITEMS: 1000,
    MAX_ORDERING_TERMS: 16,
  });
});

it(`a \`list\` query parameter holds at most ${MAX_LIST_ITEMS} values`, () => {
  const list = queryParam('list');
  expect(list.safeParse(Array.from({ length: MAX_LIST_ITEMS }, (_, i) => `v${i}`).join(',')).data).toHaveLength(MAX_LIST_ITEMS);
  const past = list.safeParse(','.repeat(MAX_LIST_ITEMS));
  expect(past.error?.issues.map((i) => ({ message: i.message, type: (i as { params?: { type?: string } }).params?.type }))).toEqual([
    { message: 'List should have at most 1000 items', type: 'too_long' },
  ]);
});

describe.each(DIALECTS)('input caps: the blog (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startBlog(dialect);
    const author = await makeUser(svc);
    await makeArticle(svc.database.db, { author_id: author.id, title: 'a b c', summary: 'abc' });
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  const list = async (query: Record<string, string>) => {
    let res: request.Response | undefined;
    const queries = await countQueries(svc.database.db, async () => {
      res = await request(svc.app).get('/api/articles/').query(query);
    });
    return { status: res!.status, body: res!.body, queries };
  };

  it(`?search= with ${MAX_SEARCH_TERMS} words is searched`, async () => {
    const res = await list({ search: words(MAX_SEARCH_TERMS) });
    expect({ status: res.status, titles: res.body.items.map((a: { title: string }) => a.title) }).toEqual({
      status: 200,
      titles: ['a b c'],
    });
    expect((await list({ search: words(MAX_SEARCH_TERMS, 'zz') })).body).toEqual({ items: [], count: 0 });
  });

  it.each([MAX_SEARCH_TERMS + 1, 996, 1500])('?search= with %d words is a 422, before any query', async (n) => {
    expect(await list({ search: words(n) })).toEqual({
      status: 422,
      body: tooLong('search', 'Search should have at most 32 words'),
      queries: 0,
    });
  });

  it('words are counted after splitting on whitespace: blanks around them do not count', async () => {
    expect((await list({ search: `  ${words(MAX_SEARCH_TERMS).replace(/ /g, ' \t ')}  ` })).status).toBe(200);
  });

  it(`?ordering= with ${MAX_ORDERING_TERMS} terms orders; one more is a 422, before any query`, async () => {
    const terms = (n: number) =>
      Array.from({ length: n }, (_, i) => ['title', '-views', 'author__username', 'created_at'][i % 4]).join(',');
    const ok = await list({ ordering: terms(MAX_ORDERING_TERMS) });
    expect({ status: ok.status, count: ok.body.count }).toEqual({ status: 200, count: 1 });
    expect(await list({ ordering: terms(MAX_ORDERING_TERMS + 1) })).toEqual({
      status: 422,
      body: tooLong('ordering', 'List should have at most 16 items'),
      queries: 0,
    });
    expect((await list({ ordering: 'id,'.repeat(1200) + 'id' })).body).toEqual(tooLong('ordering', 'List should have at most 16 items'));
  });
});

describe.each(DIALECTS)('input caps: __in filters through a foreign key and a many-to-many (%s)', (dialect) => {
  let svc: RunningService;
  let id: number;
  beforeAll(async () => {
    svc = await startQuerying(dialect);
    const db = svc.database.db;
    const [genre] = await insertRows(db, 'genres', [{ name: 'g7' }]);
    [id] = (await insertRows(db, 'books', [{ title: 'Seven', pages: 7, added_at: '2024-01-01T00:00:00.000Z' }])).map(Number);
    await insertRows(db, 'books_genres', [{ book_id: id, genre_id: genre }], 'book_id');
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  const list = async (query: Record<string, string>) => {
    let res: request.Response | undefined;
    const queries = await countQueries(svc.database.db, async () => {
      res = await request(svc.app).get('/books/').query(query);
    });
    return { status: res!.status, body: res!.body, queries };
  };
  const numbers = (n: number) => Array.from({ length: n }, (_, i) => String(i + 1)).join(',');
  const names = (n: number) => Array.from({ length: n }, (_, i) => `g${i + 1}`).join(',');
  const SEVEN = { items: [{ id: 0, title: 'Seven' }], count: 1 };

  it.each([
    ['pages_in', numbers],
    ['genres', names],
  ])(`?%s= with ${MAX_LIST_ITEMS} values filters; one more is a 422, before any query`, async (param, values) => {
    const ok = await list({ [param]: values(MAX_LIST_ITEMS) });
    expect({ status: ok.status, body: ok.body }).toEqual({ status: 200, body: { ...SEVEN, items: [{ ...SEVEN.items[0], id }] } });
    expect(await list({ [param]: values(MAX_LIST_ITEMS + 1) })).toEqual({
      status: 422,
      body: tooLong(param, 'List should have at most 1000 items'),
      queries: 0,
    });
  });

  it('a long list of empty values is counted too', async () => {
    expect((await list({ pages_in: ','.repeat(MAX_LIST_ITEMS) })).body).toEqual(tooLong('pages_in', 'List should have at most 1000 items'));
  });

  it(`?search= through the relations with ${MAX_SEARCH_TERMS} words, and one more`, async () => {
    expect((await list({ search: words(MAX_SEARCH_TERMS, 'e') })).body).toEqual({ items: [{ id, title: 'Seven' }], count: 1 });
    expect((await list({ search: words(MAX_SEARCH_TERMS + 1, 'e') })).body).toEqual(
      tooLong('search', 'Search should have at most 32 words'),
    );
  });
});

describe.each(DIALECTS)('input caps: ordering read by position under CursorPagination (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
    for (let i = 0; i < 6; i++) {
      await insertRows(svc.database.db, 'readings', [
        { sensor: `s${i % 2}`, value: i / 2, rank: i % 3, taken_at: new Date(Date.UTC(2026, 0, 1 + i)).toISOString() },
      ]);
    }
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  it(`${MAX_ORDERING_TERMS} terms page by position to the end; one more is a 422`, async () => {
    const terms = (n: number) => Array.from({ length: n }, (_, i) => ['-rank', 'sensor', 'taken_at', '-value'][i % 4]).join(',');
    const seen: number[] = [];
    let target: string | null = `/v/readings/?ordering=${terms(MAX_ORDERING_TERMS)}`;
    while (target) {
      const res = await request(svc.app).get(target);
      expect(res.status).toBe(200);
      seen.push(...res.body.results.map((r: { id: number }) => r.id));
      target = res.body.next ?? null;
    }
    expect(seen).toHaveLength(6);
    expect(new Set(seen).size).toBe(6);
    const res = await request(svc.app).get(`/v/readings/?ordering=${terms(MAX_ORDERING_TERMS + 1)}`);
    expect({ status: res.status, body: res.body }).toEqual({ status: 422, body: tooLong('ordering', 'List should have at most 16 items') });
  });
});
