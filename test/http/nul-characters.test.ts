/**
 * NUL characters: PostgreSQL cannot store U+0000 in text and SQLite can, so the service refuses it
 * on both: any string of a body, a query or a path that holds one is a 422 in the seed's shape,
 * where it is, and nothing is written.
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { createUser, insertWidget, takeErrors, type TestUser } from '../support/fixtures';
import { startBlog, startShowcase, type RunningService } from '../support/services';

const NUL = '\u0000';

function nul(loc: (string | number)[]) {
  return { type: 'null_characters_not_allowed', loc, msg: 'String should not contain null characters' };
}

describe.each(DIALECTS)('NUL characters on the showcase (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  const post = (body: unknown) =>
    request(svc.app)
      .post('/v/widgets/')
      .send(body as object);

  it('in a string field of a body → 422 at its field, nothing written', async () => {
    const res = await post({ name: `nul${NUL}name` });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: [nul(['body', 'data', 'name'])] });
    expect(await svc.database.db('widgets').where('name', 'like', 'nul%').first()).toBeUndefined();
  });

  it('a lone NUL, and one at the end', async () => {
    for (const name of [NUL, `end${NUL}`]) {
      const res = await post({ name });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [nul(['body', 'data', 'name'])] });
    }
  });

  it('reported with the other invalid fields, in schema order', async () => {
    const res = await post({ name: 'x'.repeat(41), notes: `a${NUL}`, count: 'many', maker: `m${NUL}` });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: [
        { type: 'string_too_long', loc: ['body', 'data', 'name'], msg: 'String should have at most 40 characters' },
        nul(['body', 'data', 'notes']),
        { type: 'int_type', loc: ['body', 'data', 'count'], msg: 'Input should be a valid integer' },
        nul(['body', 'data', 'maker']),
      ],
    });
  });

  it('a field that is already invalid gets one entry', async () => {
    const res = await post({ name: `${'x'.repeat(40)}${NUL}` });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: [{ type: 'string_too_long', loc: ['body', 'data', 'name'], msg: 'String should have at most 40 characters' }],
    });
  });

  it('inside a JSON field, in a value or a key, at its exact place', async () => {
    const deep = await post({ name: 'json-nul', extra: { list: ['fine', `bad${NUL}`] } });
    expect(deep.status).toBe(422);
    expect(deep.body).toEqual({ detail: [nul(['body', 'data', 'extra', 'list', 1])] });
    const key = await post({ name: 'json-key-nul', extra: { [`k${NUL}`]: 1 } });
    expect(key.status).toBe(422);
    expect(key.body).toEqual({ detail: [nul(['body', 'data', 'extra', `k${NUL}`])] });
  });

  it('a URL and an email with a NUL', async () => {
    const res = await post({ name: 'formats', homepage: `https://example.com/a${NUL}b`, contact: `a${NUL}@example.com` });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((e: { loc: unknown[] }) => e.loc)).toEqual([
      ['body', 'data', 'contact'],
      ['body', 'data', 'homepage'],
    ]);
    expect(res.body.detail[1]).toEqual(nul(['body', 'data', 'homepage']));
  });

  it('in a field the schema does not know: ignored like the field itself', async () => {
    const res = await post({ name: 'unknown-nul', bogus: `x${NUL}` });
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('bogus');
  });

  it('in an update body → 422, the row unchanged', async () => {
    const id = await insertWidget(svc.database.db, { name: 'nul-update' });
    const res = await request(svc.app)
      .patch(`/v/widgets/${id}/`)
      .send({ notes: `n${NUL}` });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: [nul(['body', 'data', 'notes'])] });
    expect((await svc.database.db('widgets').where({ id }).first()).notes).toBe('');
  });

  it('in a string path key → 422 at ["path", "pk"]', async () => {
    for (const method of ['get', 'patch', 'delete'] as const) {
      const res = await request(svc.app)
        [method]('/v/companies/a%00b/')
        .send(method === 'patch' ? { title: 'T' } : undefined);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [nul(['path', 'pk'])] });
    }
  });

  it('in a relation filter → 422 at ["query", name]', async () => {
    const id = await insertWidget(svc.database.db, { name: 'nul-relation' });
    const res = await request(svc.app).get(`/v/widgets/${id}/labels/?text=a%00`);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: [nul(['query', 'text'])] });
  });

  it('a string without NUL is stored as sent, other control characters included', async () => {
    const name = 'ctl\u0001\u001f\u007f';
    const res = await post({ name });
    expect(res.status).toBe(201);
    expect((await svc.database.db('widgets').where({ id: res.body.id }).first()).name).toBe(name);
  });
});

describe.each(DIALECTS)('NUL characters on the blog (%s)', (dialect) => {
  let svc: RunningService;
  let staff: TestUser;
  beforeAll(async () => {
    svc = await startBlog(dialect);
    staff = await createUser(svc, { is_staff: true });
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  it('register with a NUL in the username → 422, no user', async () => {
    const res = await request(svc.app)
      .post('/api/auth/register/')
      .send({ username: `nul${NUL}user`, email: 'nul@example.com', password: 'pw' });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: [nul(['body', 'data', 'username'])] });
    expect(await svc.database.db('users').where({ email: 'nul@example.com' }).first()).toBeUndefined();
  });

  it('login with a NUL in the password → 422', async () => {
    const res = await request(svc.app)
      .post('/api/auth/login/')
      .send({ username: 'someone', password: `pw${NUL}` });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: [nul(['body', 'data', 'password'])] });
  });

  it.each([['title'], ['author'], ['tag']])('list filter %s with a NUL → 422 at ["query", name]', async (name) => {
    const res = await request(svc.app).get(`/api/articles/?${name}=a%00b`);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: [nul(['query', name])] });
  });

  it('a category created with a NUL in its description → 422', async () => {
    const res = await request(svc.app)
      .post('/api/categories/')
      .set('Authorization', staff.bearer)
      .send({ name: 'Nul', description: `d${NUL}` });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: [nul(['body', 'data', 'description'])] });
    expect(await svc.database.db('categories').where({ name: 'Nul' }).first()).toBeUndefined();
  });

  it('an article title with a NUL, created by a signed-in user → 422', async () => {
    const res = await request(svc.app)
      .post('/api/articles/')
      .set('Authorization', staff.bearer)
      .send({ title: `t${NUL}`, content: 'c' });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: [nul(['body', 'data', 'title'])] });
  });
});

/**
 * Lone surrogates (a JSON escape such as "\ud800" without its pair): no UTF-8 encodes one, so each
 * database would store something else (U+FFFD once or three times) or refuse a list holding one.
 * Refused on all three alike: a 422 at the string's place, nothing written.
 */
describe.each(DIALECTS)('lone surrogates (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  const lone = (loc: (string | number)[]) => ({ type: 'string_unicode', loc, msg: 'String should not contain lone surrogates' });
  /** A JSON text as a client writes it, the escape and all (JSON.stringify writes a lone surrogate so too). */
  const send = (path: string, json: string) => request(svc.app).post(path).set('Content-Type', 'application/json').send(json);

  it.each([
    ['a high surrogate', '"x\\ud800y"'],
    ['a low surrogate', '"x\\udc00y"'],
    ['a high one at the end', '"x\\ud83d"'],
    ['a pair reversed', '"\\udc00\\ud800"'],
  ])('%s in a string field → 422 at its field, nothing written', async (_what, text) => {
    const res = await send('/v/widgets/', `{"name": ${text.replace('x', 'surrogate-x')}}`);
    expect([res.status, res.body]).toEqual([422, { detail: [lone(['body', 'data', 'name'])] }]);
    expect(await svc.database.db('widgets').where('name', 'like', 'surrogate%').first()).toBeUndefined();
  });

  it('in an item of a list field, in a JSON field (a value or a key), in an update: at its exact place', async () => {
    const list = await send('/v/bookmarks/', '{"title": "surrogate-list", "tags": ["fine", "bad\\ud800"]}');
    expect([list.status, list.body]).toEqual([422, { detail: [lone(['body', 'data', 'tags', 1])] }]);
    expect(await svc.database.db('bookmarks').where('title', 'surrogate-list').first()).toBeUndefined();
    const deep = await send('/v/widgets/', '{"name": "surrogate-json", "extra": {"list": ["fine", "bad\\udfff"]}}');
    expect([deep.status, deep.body]).toEqual([422, { detail: [lone(['body', 'data', 'extra', 'list', 1])] }]);
    const key = await send('/v/widgets/', '{"name": "surrogate-key", "extra": {"k\\ud800": 1}}');
    expect([key.status, key.body]).toEqual([422, { detail: [lone(['body', 'data', 'extra', 'k\ud800'])] }]);
    const id = await insertWidget(svc.database.db, { name: 'surrogate-kept' });
    const patch = await request(svc.app).patch(`/v/widgets/${id}/`).set('Content-Type', 'application/json').send('{"notes": "n\\ud800"}');
    expect([patch.status, patch.body]).toEqual([422, { detail: [lone(['body', 'data', 'notes'])] }]);
    expect((await svc.database.db('widgets').where('id', id).first()).notes).not.toContain('\ufffd');
  });

  it('a NUL and a lone surrogate in one string: the NUL entry; a well-formed pair is stored as sent', async () => {
    const both = await send('/v/widgets/', '{"name": "surrogate\\u0000\\ud800"}');
    expect([both.status, both.body]).toEqual([422, { detail: [nul(['body', 'data', 'name'])] }]);
    const pair = await send('/v/widgets/', '{"name": "surrogate-pair \\ud83d\\ude00"}');
    expect(pair.status).toBe(201);
    expect(pair.body.name).toBe('surrogate-pair 😀');
    expect((await svc.database.db('widgets').where('id', pair.body.id).first()).name).toBe('surrogate-pair 😀');
  });
});
