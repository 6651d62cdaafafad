/**
 * The five generated CRUD endpoints, on the showcase (every key type, paginator and viewset
 * variant) and on the blog's categories, tags and articles. Exact status codes and whole bodies.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { countQueries, createUser, takeErrors, insertArticle, insertRows, ISO_DATETIME, type TestUser, UUID } from '../support/fixtures';
import { startBlog, startShowcase, type RunningService } from '../support/services';

const INT_PARSING = 'Input should be a valid integer, unable to parse string as an integer';
const NOT_FOUND = { detail: 'Not Found' };
const METHOD_NOT_ALLOWED = { detail: 'Method Not Allowed' };

describe.each(DIALECTS)('showcase CRUD (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  async function label(text: string): Promise<string> {
    const res = await request(svc.app).post('/v/tag-labels/').send({ text });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  async function maker(code: string, title: string): Promise<void> {
    const res = await request(svc.app).post('/v/companies/').send({ code, title });
    expect(res.status).toBe(201);
  }

  describe('widgets (every field type, serializer with a detail schema)', () => {
    it('creates with every field and answers 201 with schema_out', async () => {
      await maker('acme', 'Acme');
      const l1 = await label('red');
      const l2 = await label('blue');
      const token = randomUUID();
      const res = await request(svc.app)
        .post('/v/widgets/')
        .send({
          name: 'full',
          notes: 'not in the output',
          count: 3,
          serial: 9007199254740991,
          ratio: 1.5,
          price: '12.5',
          active: false,
          released_on: '2026-01-02',
          checked_at: '2026-01-02T03:04:05+01:00',
          token,
          contact: 'ops@example.com',
          homepage: 'https://example.com/widgets',
          extra: { a: [1, null, 'x'], b: true },
          size: 'L',
          maker: 'acme',
          labels: [l1, l2],
        });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'full',
        count: 3,
        serial: 9007199254740991,
        ratio: 1.5,
        price: '12.50',
        active: false,
        released_on: '2026-01-02',
        checked_at: '2026-01-02T02:04:05.000Z',
        token,
        contact: 'ops@example.com',
        homepage: 'https://example.com/widgets',
        extra: { a: [1, null, 'x'], b: true },
        size: 'L',
        maker: 'acme',
        created_at: ISO_DATETIME,
        updated_at: ISO_DATETIME,
        labels: [l1, l2].sort(),
      });
    });

    it('creates with only the required field: the defaults apply', async () => {
      const res = await request(svc.app).post('/v/widgets/').send({ name: 'minimal' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        name: 'minimal',
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
        created_at: ISO_DATETIME,
        updated_at: ISO_DATETIME,
        labels: [],
      });
    });

    it('retrieves with schema_detail: nested maker {code, title} and the labels', async () => {
      await maker('nested', 'Nested Co');
      const l1 = await label('green');
      const created = await request(svc.app)
        .post('/v/widgets/')
        .send({ name: 'detailed', notes: 'shown in detail', maker: 'nested', labels: [l1] });
      expect(created.status).toBe(201);
      const res = await request(svc.app).get(`/v/widgets/${created.body.id}/`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: created.body.id,
        name: 'detailed',
        notes: 'shown in detail',
        maker: { code: 'nested', title: 'Nested Co' },
        labels: [l1],
        parts: [],
        created_at: created.body.created_at,
        updated_at: created.body.updated_at,
      });
    });

    it('retrieves a widget without a maker as maker null', async () => {
      const created = await request(svc.app).post('/v/widgets/').send({ name: 'no maker' });
      const res = await request(svc.app).get(`/v/widgets/${created.body.id}/`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: created.body.id,
        name: 'no maker',
        notes: '',
        maker: null,
        labels: [],
        parts: [],
        created_at: created.body.created_at,
        updated_at: created.body.updated_at,
      });
    });

    it('updates with PATCH and answers 200 with schema_out', async () => {
      await maker('upd', 'Upd');
      const l1 = await label('one');
      const l2 = await label('two');
      const created = await request(svc.app)
        .post('/v/widgets/')
        .send({ name: 'to update', maker: 'upd', labels: [l1], price: 3 });
      expect(created.status).toBe(201);
      const res = await request(svc.app)
        .patch(`/v/widgets/${created.body.id}/`)
        .send({ count: 7, maker: null, labels: [l2], extra: null, size: 'S' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        ...created.body,
        count: 7,
        maker: null,
        labels: [l2],
        extra: null,
        size: 'S',
        updated_at: ISO_DATETIME,
      });
      const again = await request(svc.app).get(`/v/widgets/${created.body.id}/`);
      expect(again.body).toEqual({
        id: created.body.id,
        name: 'to update',
        notes: '',
        maker: null,
        labels: [l2],
        parts: [],
        created_at: created.body.created_at,
        updated_at: res.body.updated_at,
      });
    });

    it('rejects an empty PATCH body with 400 because require_update_fields is set', async () => {
      const created = await request(svc.app).post('/v/widgets/').send({ name: 'strict' });
      const empty = await request(svc.app).patch(`/v/widgets/${created.body.id}/`).send({});
      expect(empty.status).toBe(400);
      expect(empty.body).toEqual({ error: 'No fields provided for update.' });
      const absent = await request(svc.app).patch(`/v/widgets/${created.body.id}/`);
      expect(absent.status).toBe(400);
      expect(absent.body).toEqual({ error: 'No fields provided for update.' });
    });

    it('deletes with 204 and an empty body, then the widget is a 404', async () => {
      const created = await request(svc.app).post('/v/widgets/').send({ name: 'doomed' });
      const res = await request(svc.app).delete(`/v/widgets/${created.body.id}/`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      const gone = await request(svc.app).get(`/v/widgets/${created.body.id}/`);
      expect(gone.status).toBe(404);
      expect(gone.body).toEqual({ widget: 'not found' });
      const twice = await request(svc.app).delete(`/v/widgets/${created.body.id}/`);
      expect(twice.status).toBe(404);
      expect(twice.body).toEqual({ widget: 'not found' });
      const patch = await request(svc.app).patch(`/v/widgets/${created.body.id}/`).send({ count: 1 });
      expect(patch.status).toBe(404);
      expect(patch.body).toEqual({ widget: 'not found' });
    });

    it('answers 422 int_parsing at ["path","pk"] for a non-integer key', async () => {
      for (const [method, path] of [
        ['get', '/v/widgets/abc/'],
        ['patch', '/v/widgets/abc/'],
        ['delete', '/v/widgets/abc/'],
        ['get', '/v/widgets/1.5/'],
      ] as const) {
        const res = await request(svc.app)
          [method](path)
          .send(method === 'patch' ? { count: 1 } : undefined);
        expect({ method, path, status: res.status, body: res.body }).toEqual({
          method,
          path,
          status: 422,
          body: { detail: [{ type: 'int_parsing', loc: ['path', 'pk'], msg: INT_PARSING }] },
        });
      }
    });

    it('answers 404 with the related model key for a maker or label that does not exist', async () => {
      const noMaker = await request(svc.app).post('/v/widgets/').send({ name: 'orphan', maker: 'nobody' });
      expect(noMaker.status).toBe(404);
      expect(noMaker.body).toEqual({ maker: 'not found' });
      const noLabel = await request(svc.app)
        .post('/v/widgets/')
        .send({ name: 'orphan', labels: [randomUUID()] });
      expect(noLabel.status).toBe(404);
      expect(noLabel.body).toEqual({ tag_label: 'not found' });

      const created = await request(svc.app).post('/v/widgets/').send({ name: 'related on update' });
      const updMaker = await request(svc.app).patch(`/v/widgets/${created.body.id}/`).send({ maker: 'nobody' });
      expect(updMaker.status).toBe(404);
      expect(updMaker.body).toEqual({ maker: 'not found' });
      const updLabel = await request(svc.app)
        .patch(`/v/widgets/${created.body.id}/`)
        .send({ labels: [randomUUID()] });
      expect(updLabel.status).toBe(404);
      expect(updLabel.body).toEqual({ tag_label: 'not found' });
      const list = await request(svc.app).get('/v/widgets/?limit=20');
      expect(list.body.items.map((w: { name: string }) => w.name)).not.toContain('orphan');
    });
  });

  describe('makers (string primary key, api_route_path "companies", serializer_class, manual schema_detail)', () => {
    it('runs create, retrieve, update, delete on a string key', async () => {
      const created = await request(svc.app).post('/v/companies/').send({ code: 'globex', title: 'Globex', founded: 1989 });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ code: 'globex', title: 'Globex' });

      const detail = await request(svc.app).get('/v/companies/globex/');
      expect(detail.status).toBe(200);
      expect(detail.body).toEqual({ code: 'globex', title: 'Globex', founded: 1989 });

      const updated = await request(svc.app).patch('/v/companies/globex/').send({ title: 'Globex Corp', founded: null });
      expect(updated.status).toBe(200);
      expect(updated.body).toEqual({ code: 'globex', title: 'Globex Corp' });
      expect((await request(svc.app).get('/v/companies/globex/')).body).toEqual({ code: 'globex', title: 'Globex Corp', founded: null });

      const deleted = await request(svc.app).delete('/v/companies/globex/');
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');
      const gone = await request(svc.app).get('/v/companies/globex/');
      expect(gone.status).toBe(404);
      expect(gone.body).toEqual({ maker: 'not found' });
    });

    it('accepts an empty PATCH body and an absent body (require_update_fields is off)', async () => {
      await maker('lazy', 'Lazy');
      const empty = await request(svc.app).patch('/v/companies/lazy/').send({});
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual({ code: 'lazy', title: 'Lazy' });
      const absent = await request(svc.app).patch('/v/companies/lazy/');
      expect(absent.status).toBe(200);
      expect(absent.body).toEqual({ code: 'lazy', title: 'Lazy' });
    });

    it('answers 404 {"maker": "not found"} for an unknown key on every item route', async () => {
      for (const method of ['get', 'patch', 'delete'] as const) {
        const res = await request(svc.app)
          [method]('/v/companies/unknown/')
          .send(method === 'patch' ? { title: 'x' } : undefined);
        expect({ method, status: res.status, body: res.body }).toEqual({ method, status: 404, body: { maker: 'not found' } });
      }
    });

    it('is not served under the verbose name plural', async () => {
      const res = await request(svc.app).get('/v/makers/');
      expect(res.status).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
    });
  });

  describe('labels (uuid primary key, no pagination, delete disabled, model_verbose_name "tag label")', () => {
    it('generates the uuid key on create and serves it end to end', async () => {
      const created = await request(svc.app).post('/v/tag-labels/').send({ text: 'generated' });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ id: UUID, text: 'generated' });
      const id = created.body.id;
      const detail = await request(svc.app).get(`/v/tag-labels/${id}/`);
      expect(detail.status).toBe(200);
      expect(detail.body).toEqual({ id, text: 'generated' });
      const updated = await request(svc.app).patch(`/v/tag-labels/${id}/`).send({ text: 'renamed' });
      expect(updated.status).toBe(200);
      expect(updated.body).toEqual({ id, text: 'renamed' });
      const list = await request(svc.app).get('/v/tag-labels/');
      expect(list.status).toBe(200);
      expect(list.body).toEqual(expect.arrayContaining([{ id, text: 'renamed' }]));
    });

    it('accepts a client-chosen uuid key', async () => {
      const id = randomUUID();
      const created = await request(svc.app).post('/v/tag-labels/').send({ id, text: 'chosen' });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ id, text: 'chosen' });
    });

    it('renders uuid keys in canonical lowercase and finds them whatever the case', async () => {
      const id = randomUUID();
      const created = await request(svc.app).post('/v/tag-labels/').send({ id: id.toUpperCase(), text: 'upper' });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ id, text: 'upper' });
      const lower = await request(svc.app).get(`/v/tag-labels/${id}/`);
      expect(lower.status).toBe(200);
      expect(lower.body).toEqual({ id, text: 'upper' });
      const upper = await request(svc.app).get(`/v/tag-labels/${id.toUpperCase()}/`);
      expect(upper.status).toBe(200);
      expect(upper.body).toEqual({ id, text: 'upper' });
    });

    it('accepts an empty PATCH body and an absent body (require_update_fields is off)', async () => {
      const id = await label('unchanged');
      const empty = await request(svc.app).patch(`/v/tag-labels/${id}/`).send({});
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual({ id, text: 'unchanged' });
      const absent = await request(svc.app).patch(`/v/tag-labels/${id}/`);
      expect(absent.status).toBe(200);
      expect(absent.body).toEqual({ id, text: 'unchanged' });
    });

    it('answers 404 {"tag_label": "not found"} for an unknown uuid', async () => {
      const res = await request(svc.app).get(`/v/tag-labels/${randomUUID()}/`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ tag_label: 'not found' });
    });

    it('answers 422 at ["path","pk"] for a malformed uuid', async () => {
      for (const method of ['get', 'patch'] as const) {
        const res = await request(svc.app)
          [method]('/v/tag-labels/not-a-uuid/')
          .send(method === 'patch' ? { text: 'x' } : undefined);
        expect({ method, status: res.status, body: res.body }).toEqual({
          method,
          status: 422,
          body: { detail: [{ type: 'uuid_parsing', loc: ['path', 'pk'], msg: 'Input should be a valid UUID' }] },
        });
      }
    });

    it('has no DELETE: 405 {"detail": "Method Not Allowed"}', async () => {
      const id = await label('kept');
      const res = await request(svc.app).delete(`/v/tag-labels/${id}/`);
      expect(res.status).toBe(405);
      expect(res.body).toEqual(METHOD_NOT_ALLOWED);
      expect((await request(svc.app).get(`/v/tag-labels/${id}/`)).status).toBe(200);
    });

    it('is not served under the model name', async () => {
      const res = await request(svc.app).get('/v/labels/');
      expect(res.status).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
    });
  });

  describe('notes (WriteOnlyViewSet)', () => {
    it('creates, updates and deletes, and has no list or retrieve', async () => {
      const created = await request(svc.app).post('/v/notes/').send({ body: 'hello' });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ id: expect.any(Number), body: 'hello', widget: null });
      const id = created.body.id;

      const list = await request(svc.app).get('/v/notes/');
      expect(list.status).toBe(405);
      expect(list.body).toEqual(METHOD_NOT_ALLOWED);
      const retrieve = await request(svc.app).get(`/v/notes/${id}/`);
      expect(retrieve.status).toBe(405);
      expect(retrieve.body).toEqual(METHOD_NOT_ALLOWED);

      const updated = await request(svc.app).patch(`/v/notes/${id}/`).send({ body: 'edited' });
      expect(updated.status).toBe(200);
      expect(updated.body).toEqual({ id, body: 'edited', widget: null });

      const deleted = await request(svc.app).delete(`/v/notes/${id}/`);
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');
      const again = await request(svc.app).delete(`/v/notes/${id}/`);
      expect(again.status).toBe(404);
      expect(again.body).toEqual({ note: 'not found' });
    });

    it('links a note to a widget and answers 404 {"widget": "not found"} for a missing one', async () => {
      const widget = await request(svc.app).post('/v/widgets/').send({ name: 'noted' });
      const ok = await request(svc.app).post('/v/notes/').send({ body: 'about it', widget: widget.body.id });
      expect(ok.status).toBe(201);
      expect(ok.body).toEqual({ id: expect.any(Number), body: 'about it', widget: widget.body.id });
      const missing = await request(svc.app).post('/v/notes/').send({ body: 'about nothing', widget: 999999 });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ widget: 'not found' });
    });
  });

  describe('gadgets (ReadOnlyViewSet, verbose name "shiny gadget")', () => {
    it('lists and retrieves, and refuses writes with 405', async () => {
      const [id] = await insertRows(svc.database.db, 'shiny_gadgets', [{ label: 'spark', weight: 4 }]);
      const detail = await request(svc.app).get(`/v/shiny-gadgets/${id}/`);
      expect(detail.status).toBe(200);
      expect(detail.body).toEqual({ id, label: 'spark', weight: 4 });

      const post = await request(svc.app).post('/v/shiny-gadgets/').send({ label: 'new' });
      expect(post.status).toBe(405);
      expect(post.body).toEqual(METHOD_NOT_ALLOWED);
      const patch = await request(svc.app).patch(`/v/shiny-gadgets/${id}/`).send({ label: 'x' });
      expect(patch.status).toBe(405);
      expect(patch.body).toEqual(METHOD_NOT_ALLOWED);
      const del = await request(svc.app).delete(`/v/shiny-gadgets/${id}/`);
      expect(del.status).toBe(405);
      expect(del.body).toEqual(METHOD_NOT_ALLOWED);
    });

    it('answers 404 with the verbose name key {"shiny_gadget": "not found"}', async () => {
      const res = await request(svc.app).get('/v/shiny-gadgets/424242/');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ shiny_gadget: 'not found' });
    });
  });

  describe('parts (update disabled, per-resource page sizes)', () => {
    it('creates, retrieves, deletes; PATCH is 405', async () => {
      const widget = await request(svc.app).post('/v/widgets/').send({ name: 'with parts' });
      const created = await request(svc.app).post('/v/parts/').send({ name: 'bolt', widget: widget.body.id });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ id: expect.any(Number), name: 'bolt', widget: widget.body.id });
      const detail = await request(svc.app).get(`/v/parts/${created.body.id}/`);
      expect(detail.status).toBe(200);
      expect(detail.body).toEqual(created.body);
      const patch = await request(svc.app).patch(`/v/parts/${created.body.id}/`).send({ name: 'nut' });
      expect(patch.status).toBe(405);
      expect(patch.body).toEqual(METHOD_NOT_ALLOWED);
      const del = await request(svc.app).delete(`/v/parts/${created.body.id}/`);
      expect(del.status).toBe(204);
      expect(del.text).toBe('');
    });

    it('answers 404 {"widget": "not found"} for a part of a missing widget', async () => {
      const res = await request(svc.app).post('/v/parts/').send({ name: 'loose', widget: 999999 });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ widget: 'not found' });
    });
  });

  it('answers 404 {"detail": "Not Found"} for paths no route matches', async () => {
    for (const path of ['/v/nothing/', '/v/widgets/1/extra/', '/nothing', '/v', '/api/categories/']) {
      const res = await request(svc.app).get(path);
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 404, body: NOT_FOUND });
    }
    const post = await request(svc.app).post('/v/nothing/').send({ a: 1 });
    expect(post.status).toBe(404);
    expect(post.body).toEqual(NOT_FOUND);
  });

  it('answers 405 as JSON for a method a route does not serve', async () => {
    const res = await request(svc.app).put('/v/widgets/');
    expect(res.status).toBe(405);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(METHOD_NOT_ALLOWED);
  });
});

describe.each(DIALECTS)('showcase list shapes (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  it('lists widgets as {items, count} with schema_out items', async () => {
    const created = await request(svc.app).post('/v/widgets/').send({ name: 'only' });
    const res = await request(svc.app).get('/v/widgets/');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ items: [created.body], count: 1 });
  });

  it('lists labels as a plain array', async () => {
    const created = await request(svc.app).post('/v/tag-labels/').send({ text: 'solo' });
    const res = await request(svc.app).get('/v/tag-labels/');
    expect(res.status).toBe(200);
    expect(res.body).toEqual([created.body]);
  });

  it('lists makers as {count, next, previous, results}', async () => {
    const created = await request(svc.app).post('/v/companies/').send({ code: 'one', title: 'One', founded: 2000 });
    const res = await request(svc.app).get('/v/companies/');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ count: 1, next: null, previous: null, results: [created.body] });
  });

  it('runs a constant number of queries to list widgets with labels (N=2 and N=10)', async () => {
    const db = svc.database.db;
    await db('widgets').delete();
    await request(svc.app).post('/v/companies/').send({ code: 'nplus', title: 'N+1' });
    const labels: string[] = [];
    for (const text of ['a', 'b', 'c']) labels.push((await request(svc.app).post('/v/tag-labels/').send({ text })).body.id);
    const addWidgets = async (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const res = await request(svc.app)
          .post('/v/widgets/')
          .send({ name: `n${String(i).padStart(2, '0')}`, maker: 'nplus', labels: labels.slice(0, (i % 3) + 1) });
        expect(res.status).toBe(201);
      }
    };
    await addWidgets(0, 2);
    let small: request.Response | undefined;
    const forTwo = await countQueries(db, async () => {
      small = await request(svc.app).get('/v/widgets/?limit=20');
    });
    expect(small!.body.count).toBe(2);
    expect(small!.body.items.map((w: { labels: string[] }) => w.labels.length)).toEqual([1, 2]);

    await addWidgets(2, 10);
    let big: request.Response | undefined;
    const forTen = await countQueries(db, async () => {
      big = await request(svc.app).get('/v/widgets/?limit=20');
    });
    expect(big!.body.count).toBe(10);
    expect(big!.body.items).toHaveLength(10);
    expect(big!.body.items.map((w: { labels: string[] }) => w.labels.length)).toEqual([1, 2, 3, 1, 2, 3, 1, 2, 3, 1]);
    expect(forTen).toBe(forTwo);
  });
});

describe.each(DIALECTS)('showcase with SVC_NOT_FOUND_ERROR_USE_VERBOSE_NAMES false (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect, { SVC_NOT_FOUND_ERROR_USE_VERBOSE_NAMES: false });
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  it('names the model by its class name in snake case', async () => {
    const gadget = await request(svc.app).get('/v/shiny-gadgets/424242/');
    expect(gadget.status).toBe(404);
    expect(gadget.body).toEqual({ gadget: 'not found' });
    const label = await request(svc.app).get(`/v/tag-labels/${randomUUID()}/`);
    expect(label.status).toBe(404);
    expect(label.body).toEqual({ label: 'not found' });
    const related = await request(svc.app)
      .post('/v/widgets/')
      .send({ name: 'w', labels: [randomUUID()] });
    expect(related.status).toBe(404);
    expect(related.body).toEqual({ label: 'not found' });
  });
});

describe.each(DIALECTS)('blog CRUD (%s)', (dialect) => {
  let svc: RunningService;
  let staff: TestUser;
  let writer: TestUser;
  beforeAll(async () => {
    svc = await startBlog(dialect);
    staff = await createUser(svc, { username: 'admin', is_staff: true });
    writer = await createUser(svc, { username: 'ada', first_name: 'Ada', last_name: 'Lovelace' });
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  describe('categories', () => {
    it('runs the five endpoints with exact bodies', async () => {
      const created = await request(svc.app).post('/api/categories/').set('Authorization', staff.bearer).send({ name: 'News' });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ id: expect.any(Number), name: 'News', description: '' });
      const id = created.body.id;

      const list = await request(svc.app).get('/api/categories/');
      expect(list.status).toBe(200);
      expect(list.body).toEqual({ items: [{ id, name: 'News', description: '' }], count: 1 });

      const detail = await request(svc.app).get(`/api/categories/${id}/`);
      expect(detail.status).toBe(200);
      expect(detail.body).toEqual({ id, name: 'News', description: '' });

      const updated = await request(svc.app)
        .patch(`/api/categories/${id}/`)
        .set('Authorization', staff.bearer)
        .send({ description: 'Daily news' });
      expect(updated.status).toBe(200);
      expect(updated.body).toEqual({ id, name: 'News', description: 'Daily news' });

      const deleted = await request(svc.app).delete(`/api/categories/${id}/`).set('Authorization', staff.bearer);
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');

      const gone = await request(svc.app).get(`/api/categories/${id}/`);
      expect(gone.status).toBe(404);
      expect(gone.body).toEqual({ category: 'not found' });
      const list2 = await request(svc.app).get('/api/categories/');
      expect(list2.body).toEqual({ items: [], count: 0 });
    });

    it('accepts an empty PATCH body and an absent body', async () => {
      const created = await request(svc.app)
        .post('/api/categories/')
        .set('Authorization', staff.bearer)
        .send({ name: 'Quiet', description: 'd' });
      const empty = await request(svc.app).patch(`/api/categories/${created.body.id}/`).set('Authorization', staff.bearer).send({});
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual({ id: created.body.id, name: 'Quiet', description: 'd' });
      const absent = await request(svc.app).patch(`/api/categories/${created.body.id}/`).set('Authorization', staff.bearer);
      expect(absent.status).toBe(200);
      expect(absent.body).toEqual({ id: created.body.id, name: 'Quiet', description: 'd' });
    });

    it('answers 404 {"category": "not found"} for an unknown id on every item route', async () => {
      for (const method of ['get', 'patch', 'delete'] as const) {
        const res = await request(svc.app)
          [method]('/api/categories/987654/')
          .set('Authorization', staff.bearer)
          .send(method === 'patch' ? { name: 'x' } : undefined);
        expect({ method, status: res.status, body: res.body }).toEqual({ method, status: 404, body: { category: 'not found' } });
      }
    });

    it('answers 422 int_parsing at ["path","pk"] for a non-integer id', async () => {
      const res = await request(svc.app).get('/api/categories/abc/');
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [{ type: 'int_parsing', loc: ['path', 'pk'], msg: INT_PARSING }] });
    });

    it('serves retrieve with a trailing slash only (SVC_APPEND_SLASH true)', async () => {
      const created = await request(svc.app).post('/api/categories/').set('Authorization', staff.bearer).send({ name: 'Slashed' });
      const withSlash = await request(svc.app).get(`/api/categories/${created.body.id}/`);
      expect(withSlash.status).toBe(200);
      expect(withSlash.body).toEqual({ id: created.body.id, name: 'Slashed', description: '' });
      const without = await request(svc.app).get(`/api/categories/${created.body.id}`);
      expect(without.status).toBe(404);
      expect(without.body).toEqual(NOT_FOUND);
      const listWithout = await request(svc.app).get('/api/categories');
      expect(listWithout.status).toBe(404);
      expect(listWithout.body).toEqual(NOT_FOUND);
    });
  });

  describe('tags', () => {
    it('runs the five endpoints with exact bodies', async () => {
      const created = await request(svc.app).post('/api/tags/').set('Authorization', staff.bearer).send({ name: 'typescript' });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ id: expect.any(Number), name: 'typescript' });
      const id = created.body.id;

      const list = await request(svc.app).get('/api/tags/');
      expect(list.status).toBe(200);
      expect(list.body).toEqual({ items: [{ id, name: 'typescript' }], count: 1 });

      const detail = await request(svc.app).get(`/api/tags/${id}/`);
      expect(detail.status).toBe(200);
      expect(detail.body).toEqual({ id, name: 'typescript' });

      const updated = await request(svc.app).patch(`/api/tags/${id}/`).set('Authorization', staff.bearer).send({ name: 'ts' });
      expect(updated.status).toBe(200);
      expect(updated.body).toEqual({ id, name: 'ts' });

      const deleted = await request(svc.app).delete(`/api/tags/${id}/`).set('Authorization', staff.bearer);
      expect(deleted.status).toBe(204);
      expect(deleted.text).toBe('');

      const gone = await request(svc.app).get(`/api/tags/${id}/`);
      expect(gone.status).toBe(404);
      expect(gone.body).toEqual({ tag: 'not found' });
    });
  });

  describe('articles', () => {
    it('creates an article whose author is the caller', async () => {
      const res = await request(svc.app)
        .post('/api/articles/')
        .set('Authorization', writer.bearer)
        .send({ title: 'Hello', content: 'World' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(Number),
        title: 'Hello',
        summary: '',
        author: writer.id,
        category: null,
        is_published: false,
        created_at: ISO_DATETIME,
        views: 0,
      });
    });

    it('answers 404 {"category": "not found"} for a category that does not exist, on create and update', async () => {
      const before = await svc.database.db('articles').count({ n: '*' }).first();
      const create = await request(svc.app)
        .post('/api/articles/')
        .set('Authorization', writer.bearer)
        .send({ title: 'T', content: 'C', category: 999999 });
      expect(create.status).toBe(404);
      expect(create.body).toEqual({ category: 'not found' });
      const after = await svc.database.db('articles').count({ n: '*' }).first();
      expect(Number(after?.n)).toBe(Number(before?.n));

      const id = await insertArticle(svc.database.db, { author_id: writer.id, title: 'Mine' });
      const update = await request(svc.app).patch(`/api/articles/${id}/`).set('Authorization', writer.bearer).send({ category: 999999 });
      expect(update.status).toBe(404);
      expect(update.body).toEqual({ category: 'not found' });
    });

    it('retrieves with the detail schema: nested author, category and tags', async () => {
      const db = svc.database.db;
      const [categoryId] = await insertRows(db, 'categories', [{ name: 'Science', description: 'not in the nested shape' }]);
      const [t1, t2] = await insertRows(db, 'tags', [{ name: 'math' }, { name: 'history' }]);
      const id = await insertArticle(db, {
        author_id: writer.id,
        category_id: categoryId,
        title: 'Notes on the Engine',
        content: 'Long text',
        summary: 'Short',
        views: 12,
        created_at: '2026-03-04T05:06:07.000Z',
      });
      await db('articles_tags').insert([
        { article_id: id, tag_id: t2 },
        { article_id: id, tag_id: t1 },
      ]);

      const res = await request(svc.app).get(`/api/articles/${id}/`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id,
        title: 'Notes on the Engine',
        summary: 'Short',
        content: 'Long text',
        author: { id: writer.id, username: 'ada', first_name: 'Ada', last_name: 'Lovelace' },
        category: { id: categoryId, name: 'Science' },
        tags: [
          { id: t1, name: 'math' },
          { id: t2, name: 'history' },
        ],
        is_published: true,
        created_at: '2026-03-04T05:06:07.000Z',
        views: 12,
      });
    });

    it('retrieves an article without category or tags as category null and tags []', async () => {
      const id = await insertArticle(svc.database.db, { author_id: writer.id, title: 'Bare', created_at: '2026-02-03T04:05:06.000Z' });
      const res = await request(svc.app).get(`/api/articles/${id}/`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id,
        title: 'Bare',
        summary: '',
        content: 'Content',
        author: { id: writer.id, username: 'ada', first_name: 'Ada', last_name: 'Lovelace' },
        category: null,
        tags: [],
        is_published: true,
        created_at: '2026-02-03T04:05:06.000Z',
        views: 0,
      });
    });

    it('answers 404 {"article": "not found"} for an unknown id', async () => {
      const res = await request(svc.app).get('/api/articles/987654/');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ article: 'not found' });
    });

    it('retrieves one article with a constant number of queries, however many tags it has', async () => {
      const db = svc.database.db;
      const [categoryId] = await insertRows(db, 'categories', [{ name: 'Queries' }]);
      const tagIds = await insertRows(
        db,
        'tags',
        ['q1', 'q2', 'q3', 'q4', 'q5', 'q6'].map((name) => ({ name })),
      );
      const one = await insertArticle(db, { author_id: writer.id, category_id: categoryId, title: 'one tag' });
      const six = await insertArticle(db, { author_id: writer.id, category_id: categoryId, title: 'six tags' });
      await db('articles_tags').insert({ article_id: one, tag_id: tagIds[0] });
      await db('articles_tags').insert(tagIds.map((tag_id) => ({ article_id: six, tag_id })));

      let small: request.Response | undefined;
      let big: request.Response | undefined;
      const forOne = await countQueries(db, async () => {
        small = await request(svc.app).get(`/api/articles/${one}/`);
      });
      const forSix = await countQueries(db, async () => {
        big = await request(svc.app).get(`/api/articles/${six}/`);
      });
      expect(small!.body.tags).toHaveLength(1);
      expect(big!.body.tags).toHaveLength(6);
      expect(forSix).toBe(forOne);
      // The row, then author, category and tags: one query each.
      expect(forOne).toBeLessThanOrEqual(4);
    });
  });
});

describe.each(DIALECTS)('blog with SVC_APPEND_SLASH false (%s)', (dialect) => {
  let svc: RunningService;
  let staff: TestUser;
  beforeAll(async () => {
    svc = await startBlog(dialect, { SVC_APPEND_SLASH: false });
    staff = await createUser(svc, { is_staff: true });
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  it('serves create and list without, retrieve without, update and delete with the trailing slash', async () => {
    const created = await request(svc.app).post('/api/categories').set('Authorization', staff.bearer).send({ name: 'Flat' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(Number), name: 'Flat', description: '' });
    const id = created.body.id;

    const list = await request(svc.app).get('/api/categories');
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ items: [{ id, name: 'Flat', description: '' }], count: 1 });

    const detail = await request(svc.app).get(`/api/categories/${id}`);
    expect(detail.status).toBe(200);
    expect(detail.body).toEqual({ id, name: 'Flat', description: '' });

    const detailSlash = await request(svc.app).get(`/api/categories/${id}/`);
    expect(detailSlash.status).not.toBe(200);

    const updated = await request(svc.app).patch(`/api/categories/${id}/`).set('Authorization', staff.bearer).send({ name: 'Flatter' });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ id, name: 'Flatter', description: '' });

    const deleted = await request(svc.app).delete(`/api/categories/${id}/`).set('Authorization', staff.bearer);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');

    const gone = await request(svc.app).get(`/api/categories/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ category: 'not found' });
  });

  it('does not serve create at the slashed path', async () => {
    const res = await request(svc.app).post('/api/categories/').set('Authorization', staff.bearer).send({ name: 'Nope' });
    expect(res.status).not.toBe(201);
    expect(await svc.database.db('categories').where({ name: 'Nope' }).first()).toBeUndefined();
  });
});
