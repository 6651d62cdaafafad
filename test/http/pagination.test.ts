/**
 * Pagination and ordering of list endpoints: PageNumberPagination (blog tags, showcase parts),
 * LimitOffsetPagination (widgets), PageNumberResultsPagination (makers), no pagination (labels),
 * a custom paginator (gadgets), and ordering with ties broken by the primary key (articles).
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { createUser, insertArticle, insertRows, insertWidget, takeErrors, type TestUser } from '../support/fixtures';
import { startBlog, startShowcase, type RunningService } from '../support/services';

function invalid(type: string, loc: (string | number)[], msg: string) {
  return { detail: [{ type, loc, msg }] };
}

const TS = '2026-01-01T00:00:00.000Z';

/** WidgetOut of a widget inserted with `insertWidget` and nothing but a name. */
function widgetOut(id: number, name: string) {
  return {
    id,
    name,
    count: 0,
    serial: null,
    ratio: null,
    price: '0.00',
    active: true,
    released_on: null,
    checked_at: null,
    token: null,
    contact: null,
    homepage: '',
    extra: null,
    size: 'M',
    maker: null,
    created_at: TS,
    updated_at: TS,
    labels: [],
  };
}

describe.each(DIALECTS)('PageNumberPagination on the blog with small page settings (%s)', (dialect) => {
  let svc: RunningService;
  let tags: { id: number; name: string }[];
  beforeAll(async () => {
    svc = await startBlog(dialect, { SVC_PAGINATION_PER_PAGE: 3, SVC_MAX_PER_PAGE_SIZE: 5 });
    const names = ['t1', 't2', 't3', 't4', 't5', 't6', 't7'];
    const ids = await insertRows(
      svc.database.db,
      'tags',
      names.map((name) => ({ name })),
    );
    tags = names.map((name, i) => ({ id: Number(ids[i]), name }));
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  const get = (query: string) => request(svc.app).get(`/api/tags/${query}`);

  it('page 1 by default with page_size SVC_PAGINATION_PER_PAGE; count is the total', async () => {
    const res = await get('');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ items: tags.slice(0, 3), count: 7 });
  });

  it('later pages, and the last partial page', async () => {
    expect((await get('?page=2')).body).toEqual({ items: tags.slice(3, 6), count: 7 });
    expect((await get('?page=3')).body).toEqual({ items: tags.slice(6), count: 7 });
  });

  it('a page past the end is {"items": [], "count": N}', async () => {
    const res = await get('?page=4');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ items: [], count: 7 });
    const far = await get('?page=9007199254740991');
    expect(far.status).toBe(200);
    expect(far.body).toEqual({ items: [], count: 7 });
  });

  it('an explicit page_size', async () => {
    expect((await get('?page_size=2&page=2')).body).toEqual({ items: tags.slice(2, 4), count: 7 });
  });

  it('page_size above SVC_MAX_PER_PAGE_SIZE is capped, not an error', async () => {
    const res = await get('?page_size=1000');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ items: tags.slice(0, 5), count: 7 });
    expect((await get('?page_size=1000&page=2')).body).toEqual({ items: tags.slice(5), count: 7 });
  });

  it.each([
    ['page=0', 'page', 'greater_than_equal', 'Input should be greater than or equal to 1'],
    ['page=-1', 'page', 'greater_than_equal', 'Input should be greater than or equal to 1'],
    ['page=abc', 'page', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer'],
    ['page=1.5', 'page', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer'],
    ['page_size=0', 'page_size', 'greater_than_equal', 'Input should be greater than or equal to 1'],
    ['page_size=x', 'page_size', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer'],
  ])('%s → 422 at ["query", "%s"]', async (query, name, type, msg) => {
    const res = await get(`?${query}`);
    expect(res.status).toBe(422);
    expect(res.body).toEqual(invalid(type, ['query', name], msg));
  });

  it('a repeated page parameter is a 422 at ["query","page"], not a 500', async () => {
    const res = await get('?page=1&page=2');
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([expect.objectContaining({ loc: ['query', 'page'] })]);
  });

  it('unknown query parameters are ignored', async () => {
    const res = await get('?color=blue');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ items: tags.slice(0, 3), count: 7 });
  });
});

describe.each(DIALECTS)('PageNumberPagination on the blog with default settings (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startBlog(dialect);
    await svc.database.db.batchInsert(
      'tags',
      Array.from({ length: 105 }, (_, i) => ({ name: `tag${String(i).padStart(3, '0')}` })),
      50,
    );
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  it('page_size defaults to SVC_PAGINATION_PER_PAGE (100) and is capped at SVC_MAX_PER_PAGE_SIZE (100)', async () => {
    const first = await request(svc.app).get('/api/tags/');
    expect(first.status).toBe(200);
    expect(first.body.count).toBe(105);
    expect(first.body.items).toHaveLength(100);
    expect(first.body.items[0]).toEqual({ id: expect.any(Number), name: 'tag000' });
    const second = await request(svc.app).get('/api/tags/?page=2');
    expect(second.body.items.map((t: { name: string }) => t.name)).toEqual(['tag100', 'tag101', 'tag102', 'tag103', 'tag104']);
    expect(second.body.count).toBe(105);
    const capped = await request(svc.app).get('/api/tags/?page_size=1000');
    expect(capped.status).toBe(200);
    expect(capped.body.items).toHaveLength(100);
  });

  it('count equals the total when no filter applies', async () => {
    const res = await request(svc.app).get('/api/tags/?page=1&page_size=1');
    expect(res.body).toEqual({ items: [{ id: expect.any(Number), name: 'tag000' }], count: 105 });
  });
});

describe.each(DIALECTS)('paginators of the showcase (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  describe('parts: PageNumberPagination with page_size 3 and max_page_size 4', () => {
    let parts: { id: number; name: string; widget: number }[];
    beforeAll(async () => {
      const widget = await insertWidget(svc.database.db, { name: 'parts-owner' });
      const names = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
      const ids = await insertRows(
        svc.database.db,
        'parts',
        names.map((name) => ({ name, widget_id: widget })),
      );
      parts = names.map((name, i) => ({ id: Number(ids[i]), name, widget }));
    });

    it('uses the resource page size by default', async () => {
      const res = await request(svc.app).get('/v/parts/');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ items: parts.slice(0, 3), count: 6 });
      expect((await request(svc.app).get('/v/parts/?page=2')).body).toEqual({ items: parts.slice(3), count: 6 });
    });

    it('caps page_size at the resource maximum', async () => {
      const res = await request(svc.app).get('/v/parts/?page_size=100');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ items: parts.slice(0, 4), count: 6 });
    });
  });

  describe('widgets: LimitOffsetPagination (limit default 5, max 20), default ordering by name', () => {
    let widgets: ReturnType<typeof widgetOut>[];
    beforeAll(async () => {
      await svc.database.db('parts').delete();
      await svc.database.db('widgets').delete();
      // Inserted out of order: the list orders by name.
      const names = ['w7', 'w3', 'w1', 'w5', 'w2', 'w6', 'w4'];
      const out: ReturnType<typeof widgetOut>[] = [];
      for (const name of names) out.push(widgetOut(await insertWidget(svc.database.db, { name }), name));
      widgets = out.sort((a, b) => a.name.localeCompare(b.name));
    });

    it('limit defaults to SVC_PAGINATION_PER_PAGE (5)', async () => {
      const res = await request(svc.app).get('/v/widgets/');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ items: widgets.slice(0, 5), count: 7 });
    });

    it('limit and offset', async () => {
      expect((await request(svc.app).get('/v/widgets/?limit=2&offset=5')).body).toEqual({ items: widgets.slice(5), count: 7 });
      expect((await request(svc.app).get('/v/widgets/?offset=3')).body).toEqual({ items: widgets.slice(3), count: 7 });
      expect((await request(svc.app).get('/v/widgets/?limit=20')).body).toEqual({ items: widgets, count: 7 });
    });

    it('an offset past the end is an empty page with the count', async () => {
      const res = await request(svc.app).get('/v/widgets/?offset=7');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ items: [], count: 7 });
    });

    it.each([
      ['limit=21', 'limit', 'less_than_equal', 'Input should be less than or equal to 20'],
      ['limit=1000', 'limit', 'less_than_equal', 'Input should be less than or equal to 20'],
      ['limit=0', 'limit', 'greater_than_equal', 'Input should be greater than or equal to 1'],
      ['offset=-1', 'offset', 'greater_than_equal', 'Input should be greater than or equal to 0'],
    ])('%s → 422 at ["query", "%s"]', async (query, name, type, msg) => {
      const res = await request(svc.app).get(`/v/widgets/?${query}`);
      expect(res.status).toBe(422);
      expect(res.body).toEqual(invalid(type, ['query', name], msg));
    });

    it('orders by an allowed field, descending with "-"', async () => {
      const res = await request(svc.app).get('/v/widgets/?ordering=-name&limit=3');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ items: [...widgets].reverse().slice(0, 3), count: 7 });
    });

    it('rejects an ordering field not in ordering_fields', async () => {
      const res = await request(svc.app).get('/v/widgets/?ordering=price');
      expect(res.status).toBe(422);
      expect(res.body).toEqual(
        invalid(
          'enum',
          ['query', 'ordering'],
          "Input should be a comma-separated list of 'name', 'count', 'created_at', each optionally prefixed with '-'",
        ),
      );
    });
  });

  describe('makers: PageNumberResultsPagination {count, next, previous, results}', () => {
    it('page 1 of an empty table is 200 with count 0', async () => {
      const res = await request(svc.app).get('/v/companies/');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ count: 0, next: null, previous: null, results: [] });
    });

    describe('with 12 makers', () => {
      let makers: { code: string; title: string }[];
      beforeAll(async () => {
        makers = Array.from({ length: 12 }, (_, i) => ({ code: `m${String(i + 1).padStart(2, '0')}`, title: `Maker ${i + 1}` }));
        await insertRows(svc.database.db, 'makers', [...makers].reverse(), 'code');
      });

      it('page_size defaults to 10; next and previous are page numbers or null', async () => {
        const first = await request(svc.app).get('/v/companies/');
        expect(first.status).toBe(200);
        expect(first.body).toEqual({ count: 12, next: 2, previous: null, results: makers.slice(0, 10) });
        const second = await request(svc.app).get('/v/companies/?page=2');
        expect(second.status).toBe(200);
        expect(second.body).toEqual({ count: 12, next: null, previous: 1, results: makers.slice(10) });
      });

      it('a middle page has both neighbours', async () => {
        const res = await request(svc.app).get('/v/companies/?page=2&page_size=5');
        expect(res.body).toEqual({ count: 12, next: 3, previous: 1, results: makers.slice(5, 10) });
      });

      it('a page that does not exist is 404 {"detail": "Invalid page."}', async () => {
        for (const page of ['3', '99', '9007199254740991']) {
          const res = await request(svc.app).get(`/v/companies/?page=${page}`);
          expect({ page, status: res.status, body: res.body }).toEqual({ page, status: 404, body: { detail: 'Invalid page.' } });
        }
      });

      it('page=0 is a 422', async () => {
        const res = await request(svc.app).get('/v/companies/?page=0');
        expect(res.status).toBe(422);
        expect(res.body).toEqual(invalid('greater_than_equal', ['query', 'page'], 'Input should be greater than or equal to 1'));
      });
    });
  });

  describe('labels: pagination_class null', () => {
    it('returns a plain array of every item, ignoring page parameters', async () => {
      const ids = ['00000000-0000-4000-8000-000000000003', '00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002'];
      for (const [i, id] of ids.entries()) {
        expect(
          (
            await request(svc.app)
              .post('/v/tag-labels/')
              .send({ id, text: `label ${i}` })
          ).status,
        ).toBe(201);
      }
      const expected = [
        { id: ids[1], text: 'label 1' },
        { id: ids[2], text: 'label 2' },
        { id: ids[0], text: 'label 0' },
      ];
      const res = await request(svc.app).get('/v/tag-labels/');
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expected);
      const paged = await request(svc.app).get('/v/tag-labels/?page=2&page_size=1&limit=1');
      expect(paged.status).toBe(200);
      expect(paged.body).toEqual(expected);
    });
  });

  describe('gadgets: a custom paginator {page, total, data} with page_size 2', () => {
    it('answers its own shape', async () => {
      const ids = await insertRows(svc.database.db, 'shiny_gadgets', [
        { label: 'a', weight: 1 },
        { label: 'b', weight: 2 },
        { label: 'c', weight: 3 },
      ]);
      const all = ['a', 'b', 'c'].map((label, i) => ({ id: Number(ids[i]), label, weight: i + 1 }));
      const first = await request(svc.app).get('/v/shiny-gadgets/');
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ page: 1, total: 3, data: all.slice(0, 2) });
      const second = await request(svc.app).get('/v/shiny-gadgets/?page=2');
      expect(second.body).toEqual({ page: 2, total: 3, data: all.slice(2) });
      const past = await request(svc.app).get('/v/shiny-gadgets/?page=3');
      expect(past.body).toEqual({ page: 3, total: 3, data: [] });
      const bad = await request(svc.app).get('/v/shiny-gadgets/?page=0');
      expect(bad.status).toBe(422);
      expect(bad.body).toEqual(invalid('greater_than_equal', ['query', 'page'], 'Input should be greater than or equal to 1'));
    });
  });
});

describe.each(DIALECTS)('ordering of articles (%s)', (dialect) => {
  let svc: RunningService;
  let author: TestUser;
  beforeAll(async () => {
    svc = await startBlog(dialect);
    author = await createUser(svc);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  /** ArticleOut of a row inserted with `insertArticle`. */
  function articleOut(id: number, row: { title: string; views: number; created_at: string }) {
    return {
      id,
      title: row.title,
      summary: '',
      author: author.id,
      category: null,
      is_published: true,
      created_at: row.created_at,
      views: row.views,
    };
  }

  describe('with distinct values', () => {
    let rows: ReturnType<typeof articleOut>[];
    beforeAll(async () => {
      await svc.database.db('articles').delete();
      const data = [
        { title: 'b', views: 5, created_at: '2026-01-03T00:00:00.000Z' },
        { title: 'a', views: 5, created_at: '2026-01-01T00:00:00.000Z' },
        { title: 'c', views: 9, created_at: '2026-01-02T00:00:00.000Z' },
        { title: 'd', views: 1, created_at: '2026-01-04T00:00:00.000Z' },
      ];
      rows = [];
      for (const d of data) rows.push(articleOut(await insertArticle(svc.database.db, { author_id: author.id, ...d }), d));
    });
    const byTitle = (...titles: string[]) => titles.map((t) => rows.find((r) => r.title === t));

    it('default_ordering is -created_at', async () => {
      const res = await request(svc.app).get('/api/articles/');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ items: byTitle('d', 'b', 'c', 'a'), count: 4 });
    });

    it('?ordering=-views,title orders by several fields', async () => {
      const res = await request(svc.app).get('/api/articles/?ordering=-views,title');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ items: byTitle('c', 'a', 'b', 'd'), count: 4 });
    });

    it('?ordering=title and ?ordering=created_at', async () => {
      expect((await request(svc.app).get('/api/articles/?ordering=title')).body).toEqual({ items: byTitle('a', 'b', 'c', 'd'), count: 4 });
      expect((await request(svc.app).get('/api/articles/?ordering=created_at')).body).toEqual({
        items: byTitle('a', 'c', 'b', 'd'),
        count: 4,
      });
    });

    it.each([['id'], ['content'], ['-author'], [''], ['title,,views'], ['title;drop table articles']])(
      '?ordering=%s → 422 at ["query","ordering"]',
      async (value) => {
        const res = await request(svc.app).get(`/api/articles/?ordering=${encodeURIComponent(value)}`);
        expect(res.status).toBe(422);
        expect(res.body).toEqual(
          invalid(
            'enum',
            ['query', 'ordering'],
            "Input should be a comma-separated list of 'title', 'created_at', 'views', 'author__username', each optionally prefixed with '-'",
          ),
        );
      },
    );
  });

  describe('with identical sort values', () => {
    let ids: number[];
    beforeAll(async () => {
      await svc.database.db('articles').delete();
      ids = [];
      for (let i = 0; i < 7; i++) {
        ids.push(
          await insertArticle(svc.database.db, { author_id: author.id, title: 'same', views: 3, created_at: '2026-05-05T00:00:00.000Z' }),
        );
      }
    });

    // The key breaks ties in the direction of the last term (an index on that column serves both).
    it.each([
      ['', 'desc'],
      ['&ordering=-views', 'desc'],
      ['&ordering=title,-created_at', 'desc'],
      ['&ordering=-views,-title', 'desc'],
      ['&ordering=views', 'asc'],
      ['&ordering=-views,title', 'asc'],
    ])('pages of 2 never overlap or skip (ordering%s): ties by id, %s', async (ordering, direction) => {
      const seen: number[] = [];
      for (let page = 1; page <= 4; page++) {
        const res = await request(svc.app).get(`/api/articles/?page_size=2&page=${page}${ordering}`);
        expect(res.status).toBe(200);
        expect(res.body.count).toBe(7);
        expect(res.body.items).toHaveLength(page < 4 ? 2 : 1);
        seen.push(...res.body.items.map((a: { id: number }) => a.id));
      }
      expect(seen).toEqual([...ids].sort((a, b) => (direction === 'asc' ? a - b : b - a)));
    });
  });
});
