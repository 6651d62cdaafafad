/**
 * The blog's article rules (contract "articles", seed "States and transitions"): the author comes
 * from the caller, visibility by caller for list and retrieve, ownership of PATCH/DELETE, the
 * publish transitions, a missing category on create, and the nested detail shape.
 * Real SQLite and PostgreSQL, exact status codes and whole bodies.
 */
import request from 'supertest';
import {
  ARTICLE_NOT_FOUND,
  ISO_DATETIME,
  makeArticle,
  makeCategory,
  makeTag,
  makeUser,
  relateTags,
  UNAUTHORIZED,
  unique,
  type BlogUser,
} from '../support/blog-fixtures';
import { DIALECTS } from '../support/databases';
import { startBlog, type RunningService } from '../support/services';

const EDIT_OWN = { detail: 'You can only edit your own articles' };
const DELETE_OWN = { detail: 'You can only delete your own articles' };
const ARTICLE_DELETED = { message: 'Article deleted' };
const ALREADY_PUBLISHED = { is_published: 'Article is already published' };
const ONLY_STAFF_PUBLISH = { error: 'forbidden', details: 'Only staff can publish' };

describe.each(DIALECTS)('blog articles (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startBlog(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(svc.errors).toEqual([]));

  const api = () => request(svc.app);
  const db = () => svc.database.db;

  async function articleRow(id: number): Promise<Record<string, any> | undefined> {
    return db()('articles').where('id', id).first();
  }

  /** ArticleOut of a row as the database holds it. */
  async function articleOut(id: number) {
    const row = (await articleRow(id))!;
    return {
      id,
      title: row.title,
      summary: row.summary,
      author: Number(row.author_id),
      category: row.category_id === null ? null : Number(row.category_id),
      is_published: Boolean(row.is_published),
      created_at: new Date(row.created_at).toISOString(),
      views: Number(row.views),
    };
  }

  describe('create', () => {
    it('the author is the caller; an author, is_published or views in the body is ignored', async () => {
      const caller = await makeUser(svc);
      const someoneElse = await makeUser(svc);
      const res = await api()
        .post('/api/articles/')
        .set('Authorization', caller.bearer)
        .send({ title: 'Mine', content: 'Body', author: someoneElse.id, is_published: true, views: 500 });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        title: 'Mine',
        summary: '',
        author: caller.id,
        category: null,
        is_published: false,
        created_at: ISO_DATETIME,
        views: 0,
      });
      expect(await articleOut(res.body.id)).toEqual(res.body);
    });

    it('takes summary and an existing category', async () => {
      const caller = await makeUser(svc);
      const category = await makeCategory(db(), unique('Cat '));
      const res = await api()
        .post('/api/articles/')
        .set('Authorization', caller.bearer)
        .send({ title: 'T', content: 'C', summary: 'S', category });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        title: 'T',
        summary: 'S',
        author: caller.id,
        category,
        is_published: false,
        created_at: ISO_DATETIME,
        views: 0,
      });
    });

    it('a category that does not exist is a 404 {"category": "not found"} and creates nothing', async () => {
      const caller = await makeUser(svc);
      const [{ n: before }] = await db()('articles').count({ n: '*' });
      const res = await api()
        .post('/api/articles/')
        .set('Authorization', caller.bearer)
        .send({ title: 'T', content: 'C', category: 2147480000 });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ category: 'not found' });
      const [{ n: after }] = await db()('articles').count({ n: '*' });
      expect(Number(after)).toBe(Number(before));
    });

    it('without a token is a 401', async () => {
      const res = await api().post('/api/articles/').send({ title: 'T', content: 'C' });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
    });

    it('a body failing validation is a 422', async () => {
      const caller = await makeUser(svc);
      const res = await api()
        .post('/api/articles/')
        .set('Authorization', caller.bearer)
        .send({ title: 't'.repeat(201) });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        detail: [
          { type: 'string_too_long', loc: ['body', 'data', 'title'], msg: 'String should have at most 200 characters' },
          { type: 'missing', loc: ['body', 'data', 'content'], msg: 'Field required' },
        ],
      });
    });
  });

  describe('retrieve: the detail shape', () => {
    it('nests author {id, username, first_name, last_name}, category {id, name} and tags [{id, name}]', async () => {
      const author = await makeUser(svc, { first_name: 'Ada', last_name: 'Lovelace' });
      const catName = unique('Science ');
      const category = await makeCategory(db(), catName, 'not shown');
      const t1 = await makeTag(db(), unique('alpha'));
      const t2 = await makeTag(db(), unique('beta'));
      const id = await makeArticle(db(), {
        author_id: author.id,
        category_id: category,
        title: 'Engines',
        content: 'Analytical',
        summary: 'On engines',
        views: 7,
        created_at: '2026-02-03T04:05:06.000Z',
      });
      await relateTags(db(), id, [t2, t1]);
      const res = await api().get(`/api/articles/${id}/`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id,
        title: 'Engines',
        summary: 'On engines',
        content: 'Analytical',
        author: { id: author.id, username: author.username, first_name: 'Ada', last_name: 'Lovelace' },
        category: { id: category, name: catName },
        tags: [
          { id: t1, name: expect.stringMatching(/^alpha/) },
          { id: t2, name: expect.stringMatching(/^beta/) },
        ],
        is_published: true,
        created_at: '2026-02-03T04:05:06.000Z',
        views: 7,
      });
    });

    it('category null and tags [] when there are none; a missing article is a 404', async () => {
      const author = await makeUser(svc);
      const id = await makeArticle(db(), { author_id: author.id, title: 'Bare', content: 'x', created_at: '2026-02-03T04:05:06.000Z' });
      const res = await api().get(`/api/articles/${id}/`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id,
        title: 'Bare',
        summary: '',
        content: 'x',
        author: { id: author.id, username: author.username, first_name: '', last_name: '' },
        category: null,
        tags: [],
        is_published: true,
        created_at: '2026-02-03T04:05:06.000Z',
        views: 0,
      });
      const missing = await api().get('/api/articles/2147480000/');
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual(ARTICLE_NOT_FOUND);
    });
  });

  describe('visibility × caller (list and retrieve)', () => {
    // A service of its own, so the list holds exactly these four articles.
    let vis: RunningService;
    let author: BlogUser;
    let other: BlogUser;
    let staff: BlogUser;
    const ids: Record<'published' | 'draft' | 'staffPublished' | 'staffDraft', number> = {
      published: 0,
      draft: 0,
      staffPublished: 0,
      staffDraft: 0,
    };

    beforeAll(async () => {
      vis = await startBlog(dialect);
      author = await makeUser(vis);
      other = await makeUser(vis);
      staff = await makeUser(vis, { is_staff: true });
      const d = vis.database.db;
      ids.published = await makeArticle(d, {
        author_id: author.id,
        title: 'A published',
        is_published: true,
        created_at: '2026-01-01T00:00:00.000Z',
      });
      ids.draft = await makeArticle(d, {
        author_id: author.id,
        title: 'A draft',
        is_published: false,
        created_at: '2026-01-02T00:00:00.000Z',
      });
      ids.staffPublished = await makeArticle(d, {
        author_id: staff.id,
        title: 'S published',
        is_published: true,
        created_at: '2026-01-03T00:00:00.000Z',
      });
      ids.staffDraft = await makeArticle(d, {
        author_id: staff.id,
        title: 'S draft',
        is_published: false,
        created_at: '2026-01-04T00:00:00.000Z',
      });
    });
    afterAll(() => vis.close());
    afterEach(() => expect(vis.errors).toEqual([]));

    function out(key: keyof typeof ids) {
      const byKey = {
        published: { title: 'A published', author: author.id, is_published: true, created_at: '2026-01-01T00:00:00.000Z' },
        draft: { title: 'A draft', author: author.id, is_published: false, created_at: '2026-01-02T00:00:00.000Z' },
        staffPublished: { title: 'S published', author: staff.id, is_published: true, created_at: '2026-01-03T00:00:00.000Z' },
        staffDraft: { title: 'S draft', author: staff.id, is_published: false, created_at: '2026-01-04T00:00:00.000Z' },
      }[key];
      return { id: ids[key], summary: '', category: null, views: 0, ...byKey };
    }

    const callers = ['anonymous', 'author', 'other', 'staff'] as const;
    type Caller = (typeof callers)[number];
    const headers = (caller: Caller): Record<string, string> =>
      caller === 'anonymous' ? {} : { Authorization: { author, other, staff }[caller].bearer };

    /** Who sees what: published articles to everyone, a draft only to its own author (staff included). */
    const VISIBLE: Record<Caller, (keyof typeof ids)[]> = {
      anonymous: ['staffPublished', 'published'],
      author: ['staffPublished', 'draft', 'published'],
      other: ['staffPublished', 'published'],
      staff: ['staffDraft', 'staffPublished', 'published'],
    };

    it.each(callers)("list as %s: published articles plus the caller's own drafts, newest first", async (caller) => {
      const res = await request(vis.app).get('/api/articles/').set(headers(caller));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ items: VISIBLE[caller].map(out), count: VISIBLE[caller].length });
    });

    const matrix = callers.flatMap((caller) =>
      (['published', 'draft', 'staffPublished', 'staffDraft'] as const).map((key) => [caller, key] as const),
    );
    it.each(matrix)('retrieve as %s of the %s article', async (caller, key) => {
      const res = await request(vis.app).get(`/api/articles/${ids[key]}/`).set(headers(caller));
      if (VISIBLE[caller].includes(key)) {
        expect(res.status).toBe(200);
        const { author: _a, ...rest } = out(key);
        const writer = key.startsWith('staff') ? staff : author;
        expect(res.body).toEqual({
          ...rest,
          content: 'Content',
          author: { id: writer.id, username: writer.username, first_name: '', last_name: '' },
          tags: [],
        });
      } else {
        expect(res.status).toBe(404);
        expect(res.body).toEqual(ARTICLE_NOT_FOUND);
      }
    });
  });

  describe('ownership of PATCH and DELETE', () => {
    let author: BlogUser;
    let other: BlogUser;
    let staff: BlogUser;
    beforeAll(async () => {
      author = await makeUser(svc);
      other = await makeUser(svc);
      staff = await makeUser(svc, { is_staff: true });
    });

    it('PATCH by neither the author nor staff: 403 {"detail": "You can only edit your own articles"}, nothing changes', async () => {
      const id = await makeArticle(db(), { author_id: author.id, title: 'Original' });
      const before = await articleOut(id);
      const res = await api().patch(`/api/articles/${id}/`).set('Authorization', other.bearer).send({ title: 'Hijacked' });
      expect(res.status).toBe(403);
      expect(res.body).toEqual(EDIT_OWN);
      expect(await articleOut(id)).toEqual(before);
    });

    it('DELETE by neither the author nor staff: 403 {"detail": "You can only delete your own articles"}, the article stays', async () => {
      const id = await makeArticle(db(), { author_id: author.id });
      const res = await api().delete(`/api/articles/${id}/`).set('Authorization', other.bearer);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(DELETE_OWN);
      expect(await articleRow(id)).toBeDefined();
    });

    it('PATCH by the author: 200 schema_out with the change saved', async () => {
      const category = await makeCategory(db());
      const id = await makeArticle(db(), { author_id: author.id, title: 'Old', summary: 'old' });
      const res = await api().patch(`/api/articles/${id}/`).set('Authorization', author.bearer).send({ title: 'New', category });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...(await articleOut(id)), title: 'New', summary: 'old', category });
      expect((await articleRow(id))!.title).toBe('New');
    });

    it('PATCH by the author of their own draft: 200', async () => {
      const id = await makeArticle(db(), { author_id: author.id, is_published: false });
      const res = await api().patch(`/api/articles/${id}/`).set('Authorization', author.bearer).send({ summary: 'draft summary' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(await articleOut(id));
      expect(res.body.summary).toBe('draft summary');
      expect(res.body.is_published).toBe(false);
    });

    it('DELETE by the author: 200 {"message": "Article deleted"}, then 404', async () => {
      const id = await makeArticle(db(), { author_id: author.id });
      const res = await api().delete(`/api/articles/${id}/`).set('Authorization', author.bearer);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(ARTICLE_DELETED);
      expect(await articleRow(id)).toBeUndefined();
      const after = await api().get(`/api/articles/${id}/`);
      expect(after.status).toBe(404);
      expect(after.body).toEqual(ARTICLE_NOT_FOUND);
    });

    it("PATCH and DELETE by staff on someone else's published article are allowed", async () => {
      const id = await makeArticle(db(), { author_id: author.id, title: 'Before' });
      const patch = await api().patch(`/api/articles/${id}/`).set('Authorization', staff.bearer).send({ title: 'Edited by staff' });
      expect(patch.status).toBe(200);
      expect(patch.body).toEqual(await articleOut(id));
      expect(patch.body.title).toBe('Edited by staff');
      expect(patch.body.author).toBe(author.id);
      const del = await api().delete(`/api/articles/${id}/`).set('Authorization', staff.bearer);
      expect(del.status).toBe(200);
      expect(del.body).toEqual(ARTICLE_DELETED);
      expect(await articleRow(id)).toBeUndefined();
    });

    it("PATCH and DELETE by staff on someone else's draft are allowed (queryset_write shows staff every draft)", async () => {
      const id = await makeArticle(db(), { author_id: author.id, title: 'Draft', is_published: false });
      const patch = await api().patch(`/api/articles/${id}/`).set('Authorization', staff.bearer).send({ summary: 'reviewed' });
      expect({ status: patch.status, body: patch.body }).toEqual({ status: 200, body: await articleOut(id) });
      expect(patch.body.summary).toBe('reviewed');
      const del = await api().delete(`/api/articles/${id}/`).set('Authorization', staff.bearer);
      expect({ status: del.status, body: del.body }).toEqual({ status: 200, body: ARTICLE_DELETED });
      expect(await articleRow(id)).toBeUndefined();
    });

    it("another author's draft, which the caller cannot read: PATCH, DELETE, publish and a tags POST are the 404 of a missing article, nothing changes", async () => {
      const id = await makeArticle(db(), { author_id: author.id, title: 'Hidden draft', is_published: false });
      const tag = await makeTag(db(), unique('hidden'));
      const before = await articleOut(id);
      const writes = (key: number) => [
        api().patch(`/api/articles/${key}/`).set('Authorization', other.bearer).send({ title: 'Hijacked' }),
        api().delete(`/api/articles/${key}/`).set('Authorization', other.bearer),
        api().post(`/api/articles/${key}/publish/`).set('Authorization', other.bearer),
        api()
          .post(`/api/articles/${key}/tags/`)
          .set('Authorization', other.bearer)
          .send({ add: [tag] }),
      ];
      const hidden = await Promise.all(writes(id));
      const missing = await Promise.all(writes(2147480000));
      expect(hidden.map((r) => ({ status: r.status, body: r.body }))).toEqual(missing.map((r) => ({ status: r.status, body: r.body })));
      expect(hidden.map((r) => ({ status: r.status, body: r.body }))).toEqual(Array(4).fill({ status: 404, body: ARTICLE_NOT_FOUND }));
      expect(await articleOut(id)).toEqual(before);
      expect(await db()('articles_tags').where('article_id', id)).toEqual([]);
      // The same article once published is visible to the caller: the ownership rule answers.
      await db()('articles').where('id', id).update({ is_published: true });
      const patch = await api().patch(`/api/articles/${id}/`).set('Authorization', other.bearer).send({ title: 'Hijacked' });
      expect({ status: patch.status, body: patch.body }).toEqual({ status: 403, body: EDIT_OWN });
      const del = await api().delete(`/api/articles/${id}/`).set('Authorization', other.bearer);
      expect({ status: del.status, body: del.body }).toEqual({ status: 403, body: DELETE_OWN });
    });

    it('a missing article: PATCH and DELETE are 404 {"article": "not found"}', async () => {
      for (const user of [author, staff]) {
        const patch = await api().patch('/api/articles/2147480000/').set('Authorization', user.bearer).send({ title: 'x' });
        expect(patch.status).toBe(404);
        expect(patch.body).toEqual(ARTICLE_NOT_FOUND);
        const del = await api().delete('/api/articles/2147480000/').set('Authorization', user.bearer);
        expect(del.status).toBe(404);
        expect(del.body).toEqual(ARTICLE_NOT_FOUND);
      }
    });

    it('without a token: PATCH and DELETE are 401', async () => {
      const id = await makeArticle(db(), { author_id: author.id });
      const patch = await api().patch(`/api/articles/${id}/`).send({ title: 'x' });
      expect(patch.status).toBe(401);
      expect(patch.body).toEqual(UNAUTHORIZED);
      const del = await api().delete(`/api/articles/${id}/`);
      expect(del.status).toBe(401);
      expect(del.body).toEqual(UNAUTHORIZED);
      expect(await articleRow(id)).toBeDefined();
    });
  });

  describe('publish (seed state table)', () => {
    let author: BlogUser;
    let staff: BlogUser;
    beforeAll(async () => {
      author = await makeUser(svc);
      staff = await makeUser(svc, { is_staff: true });
    });

    const publish = (id: number, user?: BlogUser) => {
      const req = api().post(`/api/articles/${id}/publish/`);
      return user ? req.set('Authorization', user.bearer) : req;
    };
    const published = async (id: number) => Boolean((await articleRow(id))!.is_published);

    it('draft + staff → 200 {"published": true}; the flag is saved', async () => {
      const id = await makeArticle(db(), { author_id: staff.id, is_published: false });
      const res = await publish(id, staff);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ published: true });
      expect(await published(id)).toBe(true);
      const anonymous = await api().get(`/api/articles/${id}/`);
      expect(anonymous.status).toBe(200);
      expect(anonymous.body.is_published).toBe(true);
    });

    it('draft of another author + staff → 200 {"published": true}; the flag is saved', async () => {
      // The state table's only condition is "caller is staff"; queryset_write shows staff every draft.
      const id = await makeArticle(db(), { author_id: author.id, is_published: false });
      const res = await publish(id, staff);
      expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { published: true } });
      expect(await published(id)).toBe(true);
    });

    it('published + anyone → 409 {"is_published": "Article is already published"}, unchanged', async () => {
      const id = await makeArticle(db(), { author_id: author.id, is_published: true });
      for (const user of [staff, author]) {
        const res = await publish(id, user);
        expect(res.status).toBe(409);
        expect(res.body).toEqual(ALREADY_PUBLISHED);
        expect(await published(id)).toBe(true);
      }
    });

    it('publishing twice: 200, then 409', async () => {
      const id = await makeArticle(db(), { author_id: staff.id, is_published: false });
      expect((await publish(id, staff)).status).toBe(200);
      const again = await publish(id, staff);
      expect(again.status).toBe(409);
      expect(again.body).toEqual(ALREADY_PUBLISHED);
    });

    it('draft + not staff (its own author) → 403 {"error": "forbidden", "details": "Only staff can publish"}, still a draft', async () => {
      const id = await makeArticle(db(), { author_id: author.id, is_published: false });
      const res = await publish(id, author);
      expect(res.status).toBe(403);
      expect(res.body).toEqual(ONLY_STAFF_PUBLISH);
      expect(await published(id)).toBe(false);
    });

    it('no token → 401 {"detail": "Unauthorized"}, still a draft', async () => {
      const id = await makeArticle(db(), { author_id: author.id, is_published: false });
      const res = await publish(id);
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED);
      expect(await published(id)).toBe(false);
    });

    it('a missing article → 404 {"article": "not found"}', async () => {
      const res = await publish(2147480000, staff);
      expect(res.status).toBe(404);
      expect(res.body).toEqual(ARTICLE_NOT_FOUND);
    });
  });
});
