/**
 * `?expand=` and reverse relations, on every database: the blog's articles expand author, category
 * and tags (list and retrieve, with `?fields=`, with ETags); the showcase's makers expand their
 * widgets (a reverse relation, capped per maker), its widgets expand maker, labels and parts, and a
 * widget's detail shows its first parts (a reverse relation in a read schema). An unknown name is a
 * 422 in the seed's shape. Statements are counted: a page of 100 expanded articles or makers costs
 * what a page of 5 does.
 */
import request from 'supertest';
import { makeUser, type BlogUser } from '../support/blog-fixtures';
import { DIALECTS } from '../support/databases';
import { countQueries, insertRows, insertWidget } from '../support/fixtures';
import { startBlog, startShowcase, type RunningService } from '../support/services';

const unknown = (allowed: string[]) => ({
  detail: [
    { type: 'enum', loc: ['query', 'expand'], msg: `Input should be a comma-separated list of ${allowed.map((n) => `'${n}'`).join(', ')}` },
  ],
});

describe.each(DIALECTS)('?expand= on the blog articles (%s)', (dialect) => {
  let svc: RunningService;
  let author: BlogUser;
  let categoryId: number;
  const tagIds: number[] = [];
  const ids: number[] = [];
  beforeAll(async () => {
    svc = await startBlog(dialect);
    author = await makeUser(svc, { first_name: 'Ada' });
    const db = svc.database.db;
    [categoryId] = (await insertRows(db, 'categories', [{ name: 'News', description: '' }])).map(Number);
    tagIds.push(...(await insertRows(db, 'tags', [{ name: 'b-tag' }, { name: 'a-tag' }])).map(Number));
    const at = (i: number) => `2026-01-0${i}T00:00:00.000Z`;
    const rows = [
      { title: 'One', category_id: categoryId, created_at: at(3) },
      { title: 'Two', category_id: null, created_at: at(2) },
    ];
    for (const row of rows) {
      ids.push(
        ...(
          await insertRows(db, 'articles', [{ content: 'c', summary: '', is_published: true, views: 0, author_id: author.id, ...row }])
        ).map(Number),
      );
    }
    await db('articles_tags').insert(tagIds.map((tag_id) => ({ article_id: ids[0], tag_id })));
  });
  afterAll(() => svc.close());
  afterEach(() => expect(svc.errors).toEqual([]));

  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await request(svc.app).get(path).set(headers);
    return { status: res.status, body: res.body, etag: res.headers.etag as string | undefined };
  };
  const authorOut = () => ({ id: author.id, username: author.username });

  it('without ?expand the list answers as before: keys, no tags', async () => {
    const { status, body } = await get('/api/articles/');
    expect(status).toBe(200);
    expect(body.items.map((a: Record<string, unknown>) => [a.title, a.author, a.category, 'tags' in a])).toEqual([
      ['One', author.id, categoryId, false],
      ['Two', author.id, null, false],
    ]);
  });

  it('expands author, category and tags on the list: records in place of keys, tags added last, a null key stays null', async () => {
    const { status, body } = await get('/api/articles/?expand=tags,author,category');
    expect(status).toBe(200);
    const [one, two] = body.items;
    expect(Object.keys(one)).toEqual(['id', 'title', 'summary', 'author', 'category', 'is_published', 'created_at', 'views', 'tags']);
    expect([one.author, one.category, one.tags]).toEqual([
      authorOut(),
      { id: categoryId, name: 'News' },
      [
        { id: tagIds[0], name: 'b-tag' },
        { id: tagIds[1], name: 'a-tag' },
      ],
    ]);
    expect([two.author, two.category, two.tags]).toEqual([authorOut(), null, []]);
    expect(body.count).toBe(2);
  });

  it("expands on retrieve, replacing the detail's own nested author by the expansion", async () => {
    const plain = await get(`/api/articles/${ids[0]}/`);
    expect(plain.body.author).toEqual({ id: author.id, username: author.username, first_name: 'Ada', last_name: '' });
    const expanded = await get(`/api/articles/${ids[0]}/?expand=author`);
    expect(expanded.status).toBe(200);
    expect(expanded.body).toEqual({ ...plain.body, author: authorOut() });
  });

  it('with ?fields=, an expanded relation is shown whether or not the selection names it', async () => {
    expect((await get(`/api/articles/?fields=title&expand=author&ordering=title`)).body.items).toEqual([
      { title: 'One', author: authorOut() },
      { title: 'Two', author: authorOut() },
    ]);
    expect((await get(`/api/articles/${ids[1]}/?fields=id,category&expand=category`)).body).toEqual({ id: ids[1], category: null });
  });

  it.each([['nope'], ['author,nope'], [''], ['author__username']])(
    '?expand=%j is a 422 at ["query","expand"] on list and retrieve',
    async (value) => {
      const allowed = ['author', 'category', 'tags'];
      expect(await get(`/api/articles/?expand=${encodeURIComponent(value)}`)).toEqual({
        status: 422,
        body: unknown(allowed),
        etag: undefined,
      });
      expect(await get(`/api/articles/${ids[0]}/?expand=${encodeURIComponent(value)}`)).toEqual({
        status: 422,
        body: unknown(allowed),
        etag: undefined,
      });
    },
  );

  it('an expanded representation has an ETag of its own; If-None-Match answers 304 for the one it names', async () => {
    const plain = await get(`/api/articles/${ids[0]}/`);
    const expanded = await get(`/api/articles/${ids[0]}/?expand=author,tags`);
    expect(plain.etag).toBeDefined();
    expect(expanded.etag).toBeDefined();
    expect(expanded.etag).not.toBe(plain.etag);
    expect((await get(`/api/articles/${ids[0]}/?expand=author,tags`, { 'If-None-Match': expanded.etag! })).status).toBe(304);
    expect((await get(`/api/articles/${ids[0]}/?expand=author,tags`, { 'If-None-Match': plain.etag! })).status).toBe(200);
    expect((await get(`/api/articles/${ids[0]}/`, { 'If-None-Match': plain.etag! })).status).toBe(304);
  });

  it('documents expand on list and retrieve: an array of the allowed names, written a,b; each relation its key or the record', async () => {
    const doc = (await get('/api/openapi.json')).body;
    const param = (path: string) => doc.paths[path].get.parameters.find((p: { name: string }) => p.name === 'expand');
    for (const path of ['/api/articles/', '/api/articles/{pk}/']) {
      expect(param(path)).toMatchObject({
        in: 'query',
        required: false,
        style: 'form',
        explode: false,
        schema: { type: 'array', items: { type: 'string', enum: ['author', 'category', 'tags'] } },
      });
    }
    const out = doc.components.schemas.ArticleOutExpandable;
    expect(out.properties.author.anyOf).toEqual([
      { type: 'integer' },
      expect.objectContaining({ type: 'object', required: ['id', 'username'] }),
    ]);
    expect(out.required).not.toContain('tags');
    expect(doc.components.schemas.ArticleOut.properties.author).toMatchObject({ type: 'integer' });
  });

  it('runs the same number of statements for a page of 5 and a page of 100: one per expanded relation', async () => {
    const db = svc.database.db;
    const tagged: number[] = [];
    for (let i = 0; i < 100; i++) {
      const user = (
        await insertRows(db, 'users', [
          {
            username: `bulk${i}_${process.pid}`,
            email: `b${i}@example.com`,
            password: 'x',
            first_name: '',
            last_name: '',
            is_staff: false,
            is_active: true,
            date_joined: '2026-01-01T00:00:00.000Z',
          },
        ])
      )[0];
      const [id] = await insertRows(db, 'articles', [
        {
          title: `Bulk ${i}`,
          content: 'c',
          summary: '',
          is_published: true,
          views: 0,
          author_id: Number(user),
          category_id: i % 2 ? categoryId : null,
          created_at: '2025-06-01T00:00:00.000Z',
        },
      ]);
      tagged.push(Number(id));
    }
    await db('articles_tags').insert(tagged.map((article_id, i) => ({ article_id, tag_id: tagIds[i % 2] })));
    const statements = async (size: number, expand: string) =>
      countQueries(db, async () => {
        const res = await request(svc.app).get(`/api/articles/?page_size=${size}${expand}`);
        expect([res.status, res.body.items.length]).toEqual([200, size]);
      });
    const plain = await statements(5, '');
    expect(await statements(100, '')).toBe(plain);
    const five = await statements(5, '&expand=author,category,tags');
    expect(five).toBe(plain + 3);
    expect(await statements(100, '&expand=author,category,tags')).toBe(five);
  });
});

describe.each(DIALECTS)('reverse relations and ?expand= on the showcase (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(svc.errors).toEqual([]));

  const get = async (path: string) => {
    const res = await request(svc.app).get(path);
    return { status: res.status, body: res.body };
  };
  const maker = (code: string, title = code) => insertRows(svc.database.db, 'makers', [{ code, title }], 'code');
  const parts = async (widget: number, names: string[]) =>
    (
      await insertRows(
        svc.database.db,
        'parts',
        names.map((name) => ({ name, widget_id: widget })),
      )
    ).map(Number);

  it("a widget's detail shows its first three parts by key order, [] without any", async () => {
    const widget = await insertWidget(svc.database.db, { name: 'with parts' });
    const keys = await parts(widget, ['p1', 'p2', 'p3', 'p4', 'p5']);
    const bare = await insertWidget(svc.database.db, { name: 'no parts' });
    const detail = await get(`/v/widgets/${widget}/`);
    expect(detail.status).toBe(200);
    expect(detail.body.parts).toEqual([
      { id: keys[0], name: 'p1' },
      { id: keys[1], name: 'p2' },
      { id: keys[2], name: 'p3' },
    ]);
    expect((await get(`/v/widgets/${bare}/`)).body.parts).toEqual([]);
    // ?expand=parts caps at five, its own limit.
    expect((await get(`/v/widgets/${widget}/?expand=parts`)).body.parts.map((p: { name: string }) => p.name)).toEqual([
      'p1',
      'p2',
      'p3',
      'p4',
      'p5',
    ]);
  });

  it("expands a widget's maker (null without one) and labels on the list", async () => {
    await maker('exp-co', 'Exp Co');
    const label = (await insertRows(svc.database.db, 'labels', [{ id: '00000000-0000-4000-8000-000000000001', text: 'red' }]))[0];
    const a = await insertWidget(svc.database.db, { name: 'aa-expand', maker_id: 'exp-co' });
    await insertWidget(svc.database.db, { name: 'ab-expand' });
    await svc.database.db('widgets_labels').insert({ widget_id: a, label_id: label });
    const { status, body } = await get('/v/widgets/?expand=maker,labels&limit=2&ordering=name');
    expect(status).toBe(200);
    expect(body.items.map((w: Record<string, unknown>) => [w.name, w.maker, w.labels])).toEqual([
      ['aa-expand', { code: 'exp-co', title: 'Exp Co', founded: null }, [{ id: label, text: 'red' }]],
      ['ab-expand', null, []],
    ]);
  });

  it("expands makers' widgets: at most three per maker, by the widgets' default ordering (name), on list and retrieve", async () => {
    await maker('m-many');
    await maker('m-none');
    for (const name of ['zeta', 'alpha', 'mid', 'beta']) await insertWidget(svc.database.db, { name: `${name}-mw`, maker_id: 'm-many' });
    const { status, body } = await get('/v/companies/?expand=widgets&page_size=100');
    expect(status).toBe(200);
    const byCode = Object.fromEntries(
      body.results.map((m: { code: string; widgets: { name: string }[] }) => [m.code, m.widgets.map((w) => w.name)]),
    );
    expect(byCode['m-many']).toEqual(['alpha-mw', 'beta-mw', 'mid-mw']);
    expect(byCode['m-none']).toEqual([]);
    const one = await get('/v/companies/m-many/?expand=widgets');
    expect(one.status).toBe(200);
    expect(Object.keys(one.body)).toEqual(['code', 'title', 'founded', 'widgets']);
    expect(one.body.widgets.map((w: { name: string }) => w.name)).toEqual(['alpha-mw', 'beta-mw', 'mid-mw']);
    expect(Object.keys((await get('/v/companies/m-many/')).body)).toEqual(['code', 'title', 'founded']);
    expect(await get('/v/companies/?expand=widget')).toEqual({ status: 422, body: unknown(['widgets']) });
  });

  it('expands the widgets of a page of 100 makers with as many statements as of a page of 5', async () => {
    const db = svc.database.db;
    for (let i = 0; i < 100; i++) {
      const code = `cnt${String(i).padStart(3, '0')}`;
      await maker(code);
      await insertWidget(db, { name: `cw-${code}-a`, maker_id: code });
      await insertWidget(db, { name: `cw-${code}-b`, maker_id: code });
    }
    const statements = (size: number) =>
      countQueries(db, async () => {
        const res = await request(svc.app).get(`/v/companies/?expand=widgets&page_size=${size}`);
        expect([res.status, res.body.results.length]).toEqual([200, size]);
      });
    expect(await statements(100)).toBe(await statements(5));
  });
});
