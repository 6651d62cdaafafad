/**
 * `Idempotency-Key` on POST: a retry with the key replays the stored answer (status, body, ETag,
 * `Idempotent-Replayed: true`) and writes nothing; the key with another request is a 422; two
 * requests at once with one key write once; a failed request records nothing; a key expires.
 * Creates, actions and bulk routes (atomic and item by item) of the blog and the showcase.
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { makeArticle, makeUser, unique, type BlogUser } from '../support/blog-fixtures';
import { takeErrors } from '../support/fixtures';
import { startBlog, startShowcase, type RunningService } from '../support/services';

const REUSED = {
  error: 'idempotency_key_reused',
  details: 'This Idempotency-Key was sent before with another request: a key names one request.',
};
const KEYS = 'svc_idempotency_keys';

describe.each(DIALECTS)('Idempotency-Key on the blog (%s)', (dialect) => {
  let svc: RunningService;
  let user: BlogUser;
  beforeAll(async () => {
    svc = await startBlog(dialect);
    user = await makeUser(svc);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  const create = (key: string | undefined, body: object, bearer = user.bearer) => {
    const req = request(svc.app).post('/api/articles/').set('Authorization', bearer);
    return (key === undefined ? req : req.set('Idempotency-Key', key)).send(body);
  };
  const count = async (title: string) => Number((await svc.database.db('articles').where({ title }).count({ n: '*' }).first())!.n);

  it('a retry with the key is the first answer, replayed, and writes nothing', async () => {
    const key = unique('key');
    const body = { title: unique('Once'), content: 'x' };
    const first = await create(key, body);
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await create(key, body);
    expect([again.status, again.body, again.headers.etag, again.headers['idempotent-replayed']]).toEqual([
      201,
      first.body,
      first.headers.etag,
      'true',
    ]);
    expect(await count(body.title)).toBe(1);
    // Without a key, the same request writes again, as before.
    expect((await create(undefined, body)).status).toBe(201);
    expect(await count(body.title)).toBe(2);
  });

  it('the key with another body or another path is a 422, nothing written; another caller has keys of its own', async () => {
    const key = unique('key');
    const title = unique('First');
    expect((await create(key, { title, content: 'x' })).status).toBe(201);
    const other = await create(key, { title: unique('Other'), content: 'x' });
    expect([other.status, other.body]).toEqual([422, REUSED]);
    const draft = await makeArticle(svc.database.db, { author_id: user.id, is_published: false });
    const path = await request(svc.app)
      .post(`/api/articles/${draft}/publish/`)
      .set('Authorization', user.bearer)
      .set('Idempotency-Key', key);
    expect([path.status, path.body]).toEqual([422, REUSED]);
    const elsewhere = await request(svc.app)
      .post('/api/categories/')
      .set('Authorization', user.bearer)
      .set('Idempotency-Key', key)
      .send({ name: unique('c') });
    // The categories are staff-only: the 403 comes first, and records nothing.
    expect(elsewhere.status).toBe(403);
    const staff = await makeUser(svc, { is_staff: true });
    const mine = await create(key, { title, content: 'x' }, staff.bearer);
    expect([mine.status, mine.headers['idempotent-replayed']]).toEqual([201, undefined]);
    expect(mine.body.author).toBe(staff.id);
    expect(await count(title)).toBe(2);
  });

  it('a request that fails records nothing: the key is free for the corrected request', async () => {
    const staff = await makeUser(svc, { is_staff: true });
    const name = unique('taken');
    expect((await request(svc.app).post('/api/categories/').set('Authorization', staff.bearer).send({ name })).status).toBe(201);
    const key = unique('key');
    const clash = await request(svc.app)
      .post('/api/categories/')
      .set('Authorization', staff.bearer)
      .set('Idempotency-Key', key)
      .send({ name });
    expect([clash.status, clash.body]).toEqual([409, { error: 'conflict', details: 'The request violates a database constraint.' }]);
    const fixed = await request(svc.app)
      .post('/api/categories/')
      .set('Authorization', staff.bearer)
      .set('Idempotency-Key', key)
      .send({ name: `${name}-2` });
    expect([fixed.status, fixed.headers['idempotent-replayed']]).toEqual([201, undefined]);
  });

  it('an action replays its answer: a retried publish is not a 409 "already published"', async () => {
    const staff = await makeUser(svc, { is_staff: true });
    const id = await makeArticle(svc.database.db, { author_id: staff.id, is_published: false });
    const key = unique('key');
    const publish = () =>
      request(svc.app).post(`/api/articles/${id}/publish/`).set('Authorization', staff.bearer).set('Idempotency-Key', key);
    const first = await publish();
    expect([first.status, first.body]).toEqual([200, { published: true }]);
    const again = await publish();
    expect([again.status, again.body, again.headers['idempotent-replayed']]).toEqual([200, { published: true }, 'true']);
    const bare = await request(svc.app).post(`/api/articles/${id}/publish/`).set('Authorization', staff.bearer);
    expect([bare.status, bare.body]).toEqual([409, { is_published: 'Article is already published' }]);
  });

  it('two requests at once with one key: one writes, the other is its answer replayed', async () => {
    for (let round = 0; round < 3; round++) {
      const key = unique('race');
      const body = { title: unique('Raced'), content: 'x' };
      const answers = await Promise.all([create(key, body), create(key, body), create(key, body)]);
      expect(answers.map((a) => a.status)).toEqual([201, 201, 201]);
      expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
      expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(2);
      expect(await count(body.title)).toBe(1);
    }
  });

  it('a key is kept 24 hours: once expired, the same key is a new request', async () => {
    const key = unique('key');
    const body = { title: unique('Expiring'), content: 'x' };
    expect((await create(key, body)).status).toBe(201);
    const stored = await svc.database.db(KEYS).select('expires_at');
    const now = Math.floor(Date.now() / 1000);
    expect(stored.some((r) => Math.abs(Number(r.expires_at) - (now + 24 * 3600)) <= 5)).toBe(true);
    await svc.database.db(KEYS).update({ expires_at: now - 1 });
    const later = await create(key, body);
    expect([later.status, later.headers['idempotent-replayed']]).toEqual([201, undefined]);
    expect(await count(body.title)).toBe(2);
  });

  it('the account endpoints keep nothing: their requests hold passwords and their answers tokens', async () => {
    const key = unique('login');
    const login = () =>
      request(svc.app)
        .post('/api/auth/login/')
        .set('Idempotency-Key', key)
        .send({ username: user.username, password: 'correct horse battery staple' });
    const before = Number((await svc.database.db(KEYS).count({ n: '*' }).first())!.n);
    const first = await login();
    const second = await login();
    expect([first.status, second.status, second.headers['idempotent-replayed']]).toEqual([200, 200, undefined]);
    expect(second.body.refresh_token).not.toBe(first.body.refresh_token);
    expect(Number((await svc.database.db(KEYS).count({ n: '*' }).first())!.n)).toBe(before);
  });

  it('a key that is not 1 to 255 visible ASCII characters is a 422 at the header', async () => {
    for (const key of ['x'.repeat(256), 'with space']) {
      const res = await create(key, { title: unique('Bad key'), content: 'x' });
      expect([res.status, res.body]).toEqual([
        422,
        {
          detail: [
            { type: 'value_error', loc: ['header', 'Idempotency-Key'], msg: 'Idempotency-Key should be 1 to 255 visible ASCII characters' },
          ],
        },
      ]);
    }
  });
});

describe.each(DIALECTS)('Idempotency-Key on bulk routes (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  it('an atomic bulk create is replayed, written once', async () => {
    const key = unique('bulk');
    const items = [{ code: unique('k1') }, { code: unique('k2') }];
    const first = await request(svc.app).post('/v/crates/bulk/').set('Idempotency-Key', key).send(items);
    expect(first.status).toBe(201);
    const again = await request(svc.app).post('/v/crates/bulk/').set('Idempotency-Key', key).send(items);
    expect([again.status, again.body, again.headers['idempotent-replayed']]).toEqual([201, first.body, 'true']);
    expect(Number((await svc.context.db('crates').whereIn('code', [items[0].code, items[1].code]).count({ n: '*' }).first())!.n)).toBe(2);
  });

  it('a bulk create item by item (207) is replayed, its failed items too, and written once', async () => {
    const key = unique('bulk');
    const items = [{ name: unique('w1') }, { name: 'x'.repeat(41) }];
    const first = await request(svc.app).post('/v/widgets/bulk/').set('Idempotency-Key', key).send(items);
    expect(first.status).toBe(207);
    expect(first.body.map((r: { status: number }) => r.status)).toEqual([201, 422]);
    const again = await request(svc.app).post('/v/widgets/bulk/').set('Idempotency-Key', key).send(items);
    expect([again.status, again.body, again.headers['idempotent-replayed']]).toEqual([207, first.body, 'true']);
    expect(Number((await svc.context.db('widgets').where('name', items[0].name).count({ n: '*' }).first())!.n)).toBe(1);
  });
});
