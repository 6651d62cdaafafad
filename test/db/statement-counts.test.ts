/**
 * The statements each of the blog's article operations sends to the database, counted with Knex's
 * `query` event: a list, a retrieve (its relations included), a create, an update and a delete. The
 * counts are the budget of round trips: a change in the database layer must not raise any of them.
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { createUser, insertArticle, insertRows, takeErrors } from '../support/fixtures';
import { startBlog, type RunningService } from '../support/services';

/** Statements per operation on each database (transactions' BEGIN and COMMIT included), as measured before the database layer moved to Knex's public API. */
const BUDGET: Record<string, Record<string, number>> = {
  sqlite: { list: 4, retrieve: 3, create: 4, update: 8, delete: 5 },
  postgres: { list: 4, retrieve: 2, create: 4, update: 7, delete: 5 },
  mysql: { list: 4, retrieve: 2, create: 6, update: 7, delete: 5 },
};

describe.each(DIALECTS)('statements per operation (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startBlog(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  async function sent(fn: () => Promise<unknown>): Promise<string[]> {
    const statements: string[] = [];
    const listener = (q: { sql: string }) => statements.push(q.sql);
    svc.database.db.on('query', listener);
    try {
      await fn();
    } finally {
      svc.database.db.off('query', listener);
    }
    return statements;
  }

  it('list, retrieve, create, update and delete an article', async () => {
    const user = await createUser(svc);
    const db = svc.database.db;
    const [category] = await insertRows(db, 'categories', [{ name: `c${Date.now()}` }]);
    const id = await insertArticle(db, { author_id: user.id, category_id: category });
    const api = request(svc.app);
    const counts: Record<string, number> = {};
    const texts: Record<string, string[]> = {};
    counts.list = (texts.list = await sent(async () =>
      expect((await api.get('/api/articles/').set('Authorization', user.bearer)).status).toBe(200),
    )).length;
    counts.retrieve = (texts.retrieve = await sent(async () =>
      expect((await request(svc.app).get(`/api/articles/${id}/`).set('Authorization', user.bearer)).status).toBe(200),
    )).length;
    let created = 0;
    counts.create = (texts.create = await sent(async () => {
      const res = await request(svc.app)
        .post('/api/articles/')
        .set('Authorization', user.bearer)
        .send({ title: 'T', content: 'C', category });
      expect(res.status).toBe(201);
      created = res.body.id;
    })).length;
    counts.update = (texts.update = await sent(async () =>
      expect(
        (await request(svc.app).patch(`/api/articles/${created}/`).set('Authorization', user.bearer).send({ title: 'U' })).status,
      ).toBe(200),
    )).length;
    counts.delete = (texts.delete = await sent(async () =>
      expect((await request(svc.app).delete(`/api/articles/${created}/`).set('Authorization', user.bearer)).status).toBeLessThan(300),
    )).length;
    if (process.env.SVCGEN_SHOW_STATEMENTS) console.log(`${dialect} statements: ${JSON.stringify(counts)}`);
    for (const [op, most] of Object.entries(BUDGET[dialect]))
      expect([op, counts[op], texts[op]]).toEqual([op, Math.min(counts[op], most), texts[op]]);
  });
});
