/**
 * Ordering the blog's articles by a field of their author (`ordering_fields: [..., author__username]`):
 * ascending and descending, after and before other terms, the primary key breaking ties, pages that
 * never overlap, and the count unchanged, with a filter through the tags relation. Both databases.
 */
import request from 'supertest';
import { makeArticle, makeTag, makeUser, relateTags, type BlogUser } from '../support/blog-fixtures';
import { DIALECTS } from '../support/databases';
import { startBlog, type RunningService } from '../support/services';

describe.each(DIALECTS)('ordering articles by author__username (%s)', (dialect) => {
  let svc: RunningService;
  /** Article ids by title. */
  const ids: Record<string, number> = {};
  beforeAll(async () => {
    svc = await startBlog(dialect);
    const db = svc.database.db;
    // Users are created out of username order, so the order by username is not the order by key.
    const users: Record<string, BlogUser> = {};
    for (const name of ['mia', 'abe', 'zoe']) users[name] = await makeUser(svc, { username: `${name}_${dialect}` });
    const tag = await makeTag(db, `ordering-${dialect}`);
    const rows: [string, string, boolean][] = [
      ['z1', 'zoe', true],
      ['a1', 'abe', true],
      ['m1', 'mia', true],
      ['a2', 'abe', true],
      ['z2', 'zoe', true],
      ['m2', 'mia', false],
    ];
    for (const [title, author, tagged] of rows) {
      ids[title] = await makeArticle(db, { title, author_id: users[author].id });
      if (tagged) await relateTags(db, ids[title], [tag]);
    }
  });
  afterAll(() => svc.close());

  const titles = async (query: string) => {
    const res = await request(svc.app).get(`/api/articles/?${query}`);
    expect(res.status).toBe(200);
    return { titles: (res.body.items as { title: string }[]).map((a) => a.title), count: res.body.count };
  };

  it("orders by the author's username, ties by id", async () => {
    expect(await titles('ordering=author__username')).toEqual({ titles: ['a1', 'a2', 'm1', 'm2', 'z1', 'z2'], count: 6 });
  });

  it('descending, and before another term', async () => {
    // Ties by key in the last term's direction: the later article of an author first.
    expect(await titles('ordering=-author__username')).toEqual({ titles: ['z2', 'z1', 'm2', 'm1', 'a2', 'a1'], count: 6 });
    expect(await titles('ordering=-author__username,-title')).toEqual({ titles: ['z2', 'z1', 'm2', 'm1', 'a2', 'a1'], count: 6 });
    expect(await titles('ordering=-views,author__username')).toEqual({ titles: ['a1', 'a2', 'm1', 'm2', 'z1', 'z2'], count: 6 });
  });

  it('pages of 4 neither overlap nor skip, and count every match', async () => {
    expect(await titles('ordering=-author__username&page_size=4&page=1')).toEqual({ titles: ['z2', 'z1', 'm2', 'm1'], count: 6 });
    expect(await titles('ordering=-author__username&page_size=4&page=2')).toEqual({ titles: ['a2', 'a1'], count: 6 });
  });

  it('with a filter through the tags relation: one row per article, and the filtered count', async () => {
    expect(await titles(`ordering=author__username&tag=ordering-${dialect}`)).toEqual({ titles: ['a1', 'a2', 'm1', 'z1', 'z2'], count: 5 });
  });
});
