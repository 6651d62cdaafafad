/**
 * Concurrent writes: an action or an update reads its row and then writes it, so two of them on one
 * row must not both act on what they read. On PostgreSQL the row is locked (`SELECT … FOR UPDATE`)
 * until the transaction ends; on SQLite the service has one connection, so its transactions run one
 * at a time. Unique fields answer concurrent duplicates as they answer a single one.
 */
import request from 'supertest';
import type { Db } from '../../runtime';
import { DIALECTS } from '../support/databases';
import { makeArticle, makeCategory, makeUser, unique } from '../support/blog-fixtures';
import { takeErrors } from '../support/fixtures';
import { startBlog, type RunningService } from '../support/services';

/** The 409 of a duplicate tag or category name: the blog keeps the catalogue's body (SVC_NAMED_CONFLICTS off). */
const CONFLICT = { error: 'conflict', details: 'The request violates a database constraint.' };
const TAG_CONFLICT = CONFLICT;
const CATEGORY_CONFLICT = CONFLICT;
const ALREADY_PUBLISHED = { is_published: 'Article is already published' };

/** Statuses and bodies of concurrent responses, counted: `{"200 {...}": 1, "409 {...}": 19}`. */
function tally(responses: { status: number; body: unknown }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const res of responses) {
    const key = `${res.status} ${JSON.stringify(res.body)}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/** Resolves once `ready()` holds, checking after each turn of the event loop (bounded, no clock). */
async function until(ready: () => boolean, turns = 100_000): Promise<void> {
  for (let i = 0; i < turns && !ready(); i++) await new Promise((resolve) => setImmediate(resolve));
  if (!ready()) throw new Error('condition never held');
}

describe.each(DIALECTS)('concurrent writes (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startBlog(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  it('20 concurrent publishes of a draft: exactly one 200, the others the 409 of a published article', async () => {
    const staff = await makeUser(svc, { is_staff: true });
    const author = await makeUser(svc);
    const id = await makeArticle(svc.database.db, { author_id: author.id, is_published: false });
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => request(svc.app).post(`/api/articles/${id}/publish/`).set('Authorization', staff.bearer)),
    );
    expect(tally(responses)).toEqual({
      [`200 ${JSON.stringify({ published: true })}`]: 1,
      [`409 ${JSON.stringify(ALREADY_PUBLISHED)}`]: 19,
    });
    const row = await svc.database.db('articles').where('id', id).first();
    expect(Boolean(row.is_published)).toBe(true);
  });

  it('concurrent publishes of several drafts each succeed once', async () => {
    const staff = await makeUser(svc, { is_staff: true });
    const author = await makeUser(svc);
    const ids = [
      await makeArticle(svc.database.db, { author_id: author.id, is_published: false }),
      await makeArticle(svc.database.db, { author_id: author.id, is_published: false }),
    ];
    const responses = await Promise.all(
      [...ids, ...ids, ...ids].map((id) => request(svc.app).post(`/api/articles/${id}/publish/`).set('Authorization', staff.bearer)),
    );
    expect(tally(responses)).toEqual({
      [`200 ${JSON.stringify({ published: true })}`]: 2,
      [`409 ${JSON.stringify(ALREADY_PUBLISHED)}`]: 4,
    });
  });

  it('concurrent creates of one unique name: one 201, the others the 409 a single duplicate gets', async () => {
    const staff = await makeUser(svc, { is_staff: true });
    const name = unique('race');
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => request(svc.app).post('/api/tags/').set('Authorization', staff.bearer).send({ name })),
    );
    const created = responses.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    expect(created[0].body).toEqual({ id: expect.any(Number), name });
    expect(tally(responses.filter((r) => r.status !== 201))).toEqual({ [`409 ${JSON.stringify(TAG_CONFLICT)}`]: 9 });

    const single = await request(svc.app).post('/api/tags/').set('Authorization', staff.bearer).send({ name });
    expect([single.status, single.body]).toEqual([409, TAG_CONFLICT]);
    expect(await svc.database.db('tags').where({ name }).count({ n: '*' })).toEqual([{ n: 1 }]);
  });

  it('concurrent updates of two categories to one unique name: one 200, one 409', async () => {
    const staff = await makeUser(svc, { is_staff: true });
    const ids = [await makeCategory(svc.database.db), await makeCategory(svc.database.db)];
    const name = unique('same');
    const responses = await Promise.all(
      ids.map((id) => request(svc.app).patch(`/api/categories/${id}/`).set('Authorization', staff.bearer).send({ name })),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(responses.find((r) => r.status === 409)!.body).toEqual(CATEGORY_CONFLICT);
  });

  it('concurrent registrations of one username: one 201, the others the 400 of a taken username', async () => {
    const username = unique('racer');
    const responses = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        request(svc.app)
          .post('/api/auth/register/')
          .send({ username, email: `${username}${i}@example.com`, password: 'correct horse battery' }),
      ),
    );
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    expect(tally(responses.filter((r) => r.status !== 201))).toEqual({
      [`400 ${JSON.stringify({ username: 'Username already taken' })}`]: 4,
    });
  });
});

/**
 * Two transactions started together on the service's database: `order` records when each begins
 * and when the first commits. The first holds its transaction open until the second is either
 * waiting for a connection (SQLite) or running (PostgreSQL).
 */
async function twoTransactions(db: Db, dialect: string): Promise<string[]> {
  const order: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const first = db.transaction(async (trx) => {
    await trx.raw('select 1');
    order.push('first begins');
    await gate;
    order.push('first commits');
  });
  await until(() => order.length === 1);
  const second = db.transaction(async (trx) => {
    await trx.raw('select 1');
    order.push('second begins');
  });
  const pool = (db.client as { pool: { numPendingAcquires(): number } }).pool;
  if (dialect === 'sqlite') await until(() => pool.numPendingAcquires() === 1);
  else await until(() => order.length === 2);
  release();
  await Promise.all([first, second]);
  return order;
}

describe('what serialises writers on SQLite', () => {
  it('the service has one connection: a transaction waits for the one before it to end', async () => {
    const svc = await startBlog('sqlite');
    try {
      const db = svc.database.db;
      expect((db.client as { pool: { max: number } }).pool.max).toBe(1);
      expect(await twoTransactions(db, 'sqlite')).toEqual(['first begins', 'first commits', 'second begins']);
    } finally {
      await svc.close();
    }
  });

  it('PostgreSQL runs them side by side, which is why writes lock their row there', async () => {
    const svc = await startBlog('postgres');
    try {
      expect(await twoTransactions(svc.database.db, 'postgres')).toEqual(['first begins', 'second begins', 'first commits']);
    } finally {
      await svc.close();
    }
  });
});
