/**
 * `?fields=` on the blog's articles (`field_selection: true`), on SQLite and PostgreSQL: list items
 * and the detail keep only the named fields of their read schema, in the schema's order; the nested
 * author is one field; an unknown or empty name is a 422 in the seed's shape; pagination and count
 * are unchanged; the OpenAPI document lists the parameter on both operations.
 */
import request from 'supertest';
import { makeArticle, makeUser, type BlogUser } from '../support/blog-fixtures';
import { DIALECTS } from '../support/databases';
import { startBlog, type RunningService } from '../support/services';

const OUT = ['id', 'title', 'summary', 'author', 'category', 'is_published', 'created_at', 'views'];
const DETAIL = ['id', 'title', 'summary', 'content', 'author', 'category', 'tags', 'is_published', 'created_at', 'views'];
const unknown = (allowed: string[]) => ({
  detail: [
    { type: 'enum', loc: ['query', 'fields'], msg: `Input should be a comma-separated list of ${allowed.map((n) => `'${n}'`).join(', ')}` },
  ],
});

describe.each(DIALECTS)('field selection on articles (%s)', (dialect) => {
  let svc: RunningService;
  let author: BlogUser;
  const ids: number[] = [];
  beforeAll(async () => {
    svc = await startBlog(dialect);
    author = await makeUser(svc, { first_name: 'Ada' });
    for (const title of ['One', 'Two', 'Three'])
      ids.push(await makeArticle(svc.database.db, { author_id: author.id, title, summary: `About ${title}` }));
  });
  afterAll(() => svc.close());

  const get = async (path: string) => {
    const res = await request(svc.app).get(path);
    return { status: res.status, body: res.body };
  };

  it('list items keep the named fields, in the schema order, with the count of every match', async () => {
    expect(await get('/api/articles/?fields=title,id&ordering=title&page_size=2')).toEqual({
      status: 200,
      body: {
        items: [
          { id: ids[0], title: 'One' },
          { id: ids[2], title: 'Three' },
        ],
        count: 3,
      },
    });
    expect(await get('/api/articles/?fields=%20summary%20&ordering=title&page=2&page_size=2')).toEqual({
      status: 200,
      body: { items: [{ summary: 'About Two' }], count: 3 },
    });
  });

  it('the detail selects its own fields, a nested relation whole', async () => {
    expect(await get(`/api/articles/${ids[1]}/?fields=author,title,tags`)).toEqual({
      status: 200,
      body: { title: 'Two', author: { id: author.id, username: author.username, first_name: 'Ada', last_name: '' }, tags: [] },
    });
  });

  it('without ?fields, every field', async () => {
    const list = await get('/api/articles/?page_size=1');
    expect(Object.keys(list.body.items[0])).toEqual(OUT);
    expect(Object.keys((await get(`/api/articles/${ids[0]}/`)).body)).toEqual(DETAIL);
  });

  it.each([['content'], ['title,nope'], [''], ['title,,id']])('?fields=%j on the list is a 422 at ["query","fields"]', async (value) => {
    expect(await get(`/api/articles/?fields=${encodeURIComponent(value)}`)).toEqual({ status: 422, body: unknown(OUT) });
  });

  it('the detail refuses a name its schema lacks, and a missing article is still a 404', async () => {
    expect(await get(`/api/articles/${ids[0]}/?fields=author__username`)).toEqual({ status: 422, body: unknown(DETAIL) });
    expect(await get('/api/articles/999999/?fields=title')).toEqual({ status: 404, body: { article: 'not found' } });
  });

  it('the OpenAPI document lists fields on the list and the retrieve', async () => {
    const doc = (await get('/api/openapi.json')).body;
    const param = (path: string) => doc.paths[path].get.parameters.find((p: { name: string }) => p.name === 'fields');
    expect(param('/api/articles/')).toMatchObject({
      in: 'query',
      required: false,
      description: `Only these fields of each item, separated by commas: ${OUT.join(', ')}.`,
    });
    expect(param('/api/articles/{pk}/')).toMatchObject({
      in: 'query',
      required: false,
      description: `Only these fields of each item, separated by commas: ${DETAIL.join(', ')}.`,
    });
  });
});
