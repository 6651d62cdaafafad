/**
 * Conditional requests: ETags on reads and writes, `If-None-Match` → 304, `If-Match` → 412 when
 * stale. The check and the write are one step: of N writes sent with the same ETag, exactly one wins.
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { makeArticle, makeUser } from '../support/blog-fixtures';
import { takeErrors } from '../support/fixtures';
import { startBlog, startShowcase, type RunningService } from '../support/services';

const STALE = {
  error: 'precondition_failed',
  details: 'The object has changed since it was read: If-Match names none of its current versions.',
};
const EXISTS = {
  error: 'precondition_failed',
  details: 'The object exists in a version If-None-Match names: a write with If-None-Match is made only where none of its versions exists.',
};
const STRONG_ETAG = /^"[A-Za-z0-9_-]{22}"$/;

/** Statuses and bodies of concurrent responses, counted. */
function tally(responses: { status: number; body: unknown }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const res of responses) {
    const key = `${res.status} ${JSON.stringify(res.body)}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

describe.each(DIALECTS)('conditional requests (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startBlog(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  async function article() {
    const author = await makeUser(svc);
    const id = await makeArticle(svc.database.db, { author_id: author.id, title: 'First', summary: 'One', is_published: true });
    return { author, id, path: `/api/articles/${id}/` };
  }

  it('a retrieve carries a strong ETag; an unchanged retrieve with If-None-Match is a 304 without a body', async () => {
    const { path } = await article();
    const first = await request(svc.app).get(path);
    expect(first.status).toBe(200);
    expect(first.headers.etag).toMatch(STRONG_ETAG);
    const again = await request(svc.app).get(path);
    expect(again.headers.etag).toBe(first.headers.etag);

    const unchanged = await request(svc.app).get(path).set('If-None-Match', first.headers.etag);
    expect(unchanged.status).toBe(304);
    expect(unchanged.text).toBe('');
    expect(unchanged.headers.etag).toBe(first.headers.etag);
    // Weak comparison: a W/ tag, or one tag among several, names it too.
    const listed = await request(svc.app).get(path).set('If-None-Match', `"other", W/${first.headers.etag}`);
    expect(listed.status).toBe(304);
    const other = await request(svc.app).get(path).set('If-None-Match', '"other"');
    expect(other.status).toBe(200);
    expect(other.body).toEqual(first.body);
  });

  it('a changed article is a 200 again, with the ETag the update answered with', async () => {
    const { author, path } = await article();
    const read = await request(svc.app).get(path);
    const updated = await request(svc.app).patch(path).set('Authorization', author.bearer).send({ title: 'Second' });
    expect(updated.status).toBe(200);
    expect(updated.headers.etag).toMatch(STRONG_ETAG);
    expect(updated.headers.etag).not.toBe(read.headers.etag);
    const reread = await request(svc.app).get(path).set('If-None-Match', read.headers.etag);
    expect(reread.status).toBe(200);
    expect(reread.body.title).toBe('Second');
    expect(reread.headers.etag).toBe(updated.headers.etag);
  });

  it('a create answers with the ETag its retrieve has', async () => {
    const author = await makeUser(svc);
    const created = await request(svc.app)
      .post('/api/articles/')
      .set('Authorization', author.bearer)
      .send({ title: 'New', content: 'Body' });
    expect(created.status).toBe(201);
    expect(created.headers.etag).toMatch(STRONG_ETAG);
    // The draft is visible to its author.
    const read = await request(svc.app).get(`/api/articles/${created.body.id}/`).set('Authorization', author.bearer);
    expect(read.status).toBe(200);
    expect(read.headers.etag).toBe(created.headers.etag);
  });

  it('a list carries the ETag of its body and answers 304 while it is unchanged', async () => {
    await article();
    const first = await request(svc.app).get('/api/articles/?page_size=5');
    expect(first.headers.etag).toMatch(STRONG_ETAG);
    const again = await request(svc.app).get('/api/articles/?page_size=5').set('If-None-Match', first.headers.etag);
    expect(again.status).toBe(304);
  });

  it('two clients PATCH with the same If-Match: one 200, the other 412, and no field is lost', async () => {
    const { author, path } = await article();
    const read = await request(svc.app).get(path);
    const etag = read.headers.etag;
    const [a, b] = await Promise.all([
      request(svc.app).patch(path).set('Authorization', author.bearer).set('If-Match', etag).send({ title: 'By A' }),
      request(svc.app).patch(path).set('Authorization', author.bearer).set('If-Match', etag).send({ summary: 'By B' }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 412]);
    const [won, lost] = a.status === 200 ? [a, b] : [b, a];
    expect(lost.body).toEqual(STALE);
    expect(lost.headers.etag).toBeUndefined();
    const now = await request(svc.app).get(path);
    expect(now.headers.etag).toBe(won.headers.etag);
    expect({ title: now.body.title, summary: now.body.summary }).toEqual(
      won === a ? { title: 'By A', summary: 'One' } : { title: 'First', summary: 'By B' },
    );
    // The loser re-reads and applies its change on the current version: both changes are kept.
    const retry = await request(svc.app)
      .patch(path)
      .set('Authorization', author.bearer)
      .set('If-Match', now.headers.etag)
      .send(won === a ? { summary: 'By B' } : { title: 'By A' });
    expect(retry.status).toBe(200);
    const final = await request(svc.app).get(path);
    expect({ title: final.body.title, summary: final.body.summary }).toEqual({ title: 'By A', summary: 'By B' });
  });

  it('a race of 20 conditional updates gives exactly one winner per version', async () => {
    const { author, path } = await article();
    let etag = (await request(svc.app).get(path)).headers.etag as string;
    for (let round = 0; round < 3; round++) {
      const responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          request(svc.app)
            .patch(path)
            .set('Authorization', author.bearer)
            .set('If-Match', etag)
            .send({ title: `Round ${round}, client ${i}` }),
        ),
      );
      const winners = responses.filter((r) => r.status === 200);
      expect(winners).toHaveLength(1);
      expect(tally(responses.filter((r) => r.status !== 200))).toEqual({ [`412 ${JSON.stringify(STALE)}`]: 19 });
      const now = await request(svc.app).get(path);
      expect(now.body.title).toBe(winners[0].body.title);
      expect(now.headers.etag).toBe(winners[0].headers.etag);
      etag = now.headers.etag;
    }
  });

  it('If-Match guards deletes and detail actions too; `*` matches any version; a weak tag never matches', async () => {
    const staff = await makeUser(svc, { is_staff: true });
    const author = await makeUser(svc);
    const id = await makeArticle(svc.database.db, { author_id: author.id, is_published: false });
    const path = `/api/articles/${id}/`;
    const stale = '"AAAAAAAAAAAAAAAAAAAAAA"';

    const publish = await request(svc.app).post(`${path}publish/`).set('Authorization', staff.bearer).set('If-Match', stale);
    expect({ status: publish.status, body: publish.body }).toEqual({ status: 412, body: STALE });
    const remove = await request(svc.app).delete(path).set('Authorization', author.bearer).set('If-Match', stale);
    expect({ status: remove.status, body: remove.body }).toEqual({ status: 412, body: STALE });
    const row = await svc.database.db('articles').where('id', id).first();
    expect(Boolean(row.is_published)).toBe(false);

    const current = (await request(svc.app).get(path).set('Authorization', author.bearer)).headers.etag;
    const weak = await request(svc.app)
      .patch(path)
      .set('Authorization', author.bearer)
      .set('If-Match', `W/${current}`)
      .send({ title: 'Weak' });
    expect(weak.status).toBe(412);
    const any = await request(svc.app).post(`${path}publish/`).set('Authorization', staff.bearer).set('If-Match', '*');
    expect({ status: any.status, body: any.body }).toEqual({ status: 200, body: { published: true } });
    const listed = (await request(svc.app).get(path)).headers.etag;
    const gone = await request(svc.app).delete(path).set('Authorization', author.bearer).set('If-Match', `${stale}, ${listed}`);
    expect(gone.status).toBe(200);
    expect(await svc.database.db('articles').where('id', id).first()).toBeUndefined();
  });

  it('If-None-Match on a write: `*` or the current ETag is a 412 and nothing is written; another ETag lets it through', async () => {
    const { author, id, path } = await article();
    const current = (await request(svc.app).get(path)).headers.etag;
    for (const header of ['*', current, `"other", W/${current}`]) {
      const patch = await request(svc.app)
        .patch(path)
        .set('Authorization', author.bearer)
        .set('If-None-Match', header)
        .send({ title: 'Overwritten' });
      expect({ status: patch.status, body: patch.body }).toEqual({ status: 412, body: EXISTS });
      const remove = await request(svc.app).delete(path).set('Authorization', author.bearer).set('If-None-Match', header);
      expect({ status: remove.status, body: remove.body }).toEqual({ status: 412, body: EXISTS });
    }
    expect((await svc.database.db('articles').where('id', id).first()).title).toBe('First');
    const other = await request(svc.app)
      .patch(path)
      .set('Authorization', author.bearer)
      .set('If-None-Match', '"other"')
      .send({ title: 'Changed' });
    expect({ status: other.status, title: other.body.title }).toEqual({ status: 200, title: 'Changed' });
    const gone = await request(svc.app).delete(path).set('Authorization', author.bearer).set('If-None-Match', current);
    expect(gone.status).toBe(200);
  });

  it('a caller who may not write gets its 401 or 403, not the 412 of a stale If-Match or a matching If-None-Match', async () => {
    const { author, id, path } = await article();
    const other = await makeUser(svc);
    const stale = '"AAAAAAAAAAAAAAAAAAAAAA"';
    const current = (await request(svc.app).get(path)).headers.etag;
    const anonymous = await request(svc.app).patch(path).set('If-Match', stale).send({ title: 'x' });
    expect({ status: anonymous.status, body: anonymous.body }).toEqual({ status: 401, body: { detail: 'Unauthorized' } });
    const patch = await request(svc.app).patch(path).set('Authorization', other.bearer).set('If-Match', stale).send({ title: 'x' });
    expect({ status: patch.status, body: patch.body }).toEqual({ status: 403, body: { detail: 'You can only edit your own articles' } });
    const remove = await request(svc.app).delete(path).set('Authorization', other.bearer).set('If-Match', stale);
    expect({ status: remove.status, body: remove.body }).toEqual({
      status: 403,
      body: { detail: 'You can only delete your own articles' },
    });
    const noneMatch = await request(svc.app).delete(path).set('Authorization', other.bearer).set('If-None-Match', current);
    expect({ status: noneMatch.status, body: noneMatch.body }).toEqual({
      status: 403,
      body: { detail: 'You can only delete your own articles' },
    });
    const draft = await makeArticle(svc.database.db, { author_id: author.id, is_published: false });
    // The author of a draft may see it, and may not publish it: the action's hook refuses.
    const publish = await request(svc.app)
      .post(`/api/articles/${draft}/publish/`)
      .set('Authorization', author.bearer)
      .set('If-Match', stale);
    expect({ status: publish.status, body: publish.body }).toEqual({
      status: 403,
      body: { error: 'forbidden', details: 'Only staff can publish' },
    });
    // The author, who may write, gets the 412, and nothing is written.
    const own = await request(svc.app).patch(path).set('Authorization', author.bearer).set('If-Match', stale).send({ title: 'x' });
    expect({ status: own.status, body: own.body }).toEqual({ status: 412, body: STALE });
    expect((await svc.database.db('articles').where('id', id).first()).title).toBe('First');
  });

  it('a missing article is still a 404 with If-Match, and unconditional writes still work', async () => {
    const author = await makeUser(svc);
    const missing = await request(svc.app)
      .patch('/api/articles/999999/')
      .set('Authorization', author.bearer)
      .set('If-Match', '*')
      .send({ title: 'x' });
    expect({ status: missing.status, body: missing.body }).toEqual({ status: 404, body: { article: 'not found' } });
    const { path } = await article();
    const plain = await request(svc.app).patch(path).set('Authorization', author.bearer).send({ title: 'Not mine' });
    expect(plain.status).toBe(403);
  });
});

describe.each(DIALECTS)('conditional requests of the showcase (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  const REQUIRED = {
    error: 'precondition_required',
    details: 'This request must be conditional: send If-Match with the ETag of the version it changes.',
  };

  it('a viewset with require_if_match refuses writes to a reading without If-Match (428), and takes them with it', async () => {
    const created = await request(svc.app).post('/v/readings/').send({ sensor: 'etag', value: 1.5, taken_at: '2026-01-01T00:00:00Z' });
    expect(created.status).toBe(201);
    const path = `/v/readings/${created.body.id}/`;
    const bare = await request(svc.app).patch(path).send({ value: 2.5 });
    expect({ status: bare.status, body: bare.body }).toEqual({ status: 428, body: REQUIRED });
    const remove = await request(svc.app).delete(path);
    expect({ status: remove.status, body: remove.body }).toEqual({ status: 428, body: REQUIRED });

    const etag = (await request(svc.app).get(path)).headers.etag;
    expect(etag).toBe(created.headers.etag);
    const ok = await request(svc.app).patch(path).set('If-Match', etag).send({ value: 2.5 });
    expect(ok.status).toBe(200);
    const stale = await request(svc.app).delete(path).set('If-Match', etag);
    expect(stale.status).toBe(412);
    const gone = await request(svc.app).delete(path).set('If-Match', ok.headers.etag);
    expect(gone.status).toBe(204);
  });

  it('documents If-Match as required on such a viewset, with its 428', async () => {
    const doc = (await request(svc.app).get('/v/openapi.json')).body;
    const update = doc.paths['/v/readings/{pk}/'].patch;
    expect(update.parameters).toContainEqual({
      name: 'If-Match',
      in: 'header',
      required: true,
      description: expect.any(String),
      schema: { type: 'string' },
    });
    expect(update.responses['428'].content['application/json'].example).toEqual(REQUIRED);
  });

  it('a bulk update checks each item against the ETags If-Match lists: one stale item fails the atomic request', async () => {
    const made = await request(svc.app)
      .post('/v/crates/bulk/')
      .send([{ code: 'e1' }, { code: 'e2' }]);
    expect(made.status).toBe(201);
    const [a, b] = made.body.map((c: { id: number }) => c.id);
    const etagA = (await request(svc.app).get(`/v/crates/${a}/`)).headers.etag;
    const etagB = (await request(svc.app).get(`/v/crates/${b}/`)).headers.etag;
    const editor = { 'X-Roles': 'editor' };

    const onlyA = await request(svc.app)
      .patch('/v/crates/bulk/')
      .set(editor)
      .set('If-Match', etagA)
      .send([
        { id: a, quantity: 1 },
        { id: b, quantity: 1 },
      ]);
    expect(onlyA.status).toBe(412);
    expect(await svc.context.db('crates').whereIn('id', [a, b]).orderBy('id').pluck('quantity')).toEqual([0, 0]);

    const both = await request(svc.app)
      .patch('/v/crates/bulk/')
      .set(editor)
      .set('If-Match', `${etagA}, ${etagB}`)
      .send([
        { id: a, quantity: 1 },
        { id: b, quantity: 2 },
      ]);
    expect(both.status).toBe(200);
    expect(await svc.context.db('crates').whereIn('id', [a, b]).orderBy('id').pluck('quantity')).toEqual([1, 2]);
  });
});
