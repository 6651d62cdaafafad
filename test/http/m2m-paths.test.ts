/**
 * Relation path normalisation and append_slash false, on the showcase's notes → labels relation:
 * `path: ""` becomes the related resource's verbose name plural ("tag labels" → tag-labels), the GET
 * has no trailing slash, the POST always has one, and only the enabled operation's key is accepted.
 * (The blog's `tags` and the showcase's `/labels` cover the other spellings with append_slash true.)
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { startShowcase, type RunningService } from '../support/services';

describe.each(DIALECTS)('relation paths (%s)', (dialect) => {
  let svc: RunningService;
  let note: number;
  let label: string;

  beforeAll(async () => {
    svc = await startShowcase(dialect);
    const created = await request(svc.app).post('/v/notes/').send({ body: 'hello' });
    expect(created.status).toBe(201);
    note = created.body.id;
    label = (await request(svc.app).post('/v/tag-labels/').send({ text: 'Blue' })).body.id;
  });
  afterAll(() => svc.close());
  afterEach(() => expect(svc.errors.splice(0)).toEqual([]));

  it('serves the empty path under the related verbose name plural, POST with a slash', async () => {
    const add = await request(svc.app)
      .post(`/v/notes/${note}/tag-labels/`)
      .send({ add: [label] });
    expect(add.status).toBe(200);
    expect(add.body).toEqual({ results: { count: 1, details: [`tag label ${label} added`] }, errors: { count: 0, details: [] } });
  });

  it('serves the GET without a trailing slash (append_slash false), paged like a notes list would be', async () => {
    const res = await request(svc.app).get(`/v/notes/${note}/tag-labels`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ items: [{ id: label, text: 'Blue' }], count: 1 });
    const slash = await request(svc.app).get(`/v/notes/${note}/tag-labels/`);
    expect(slash.status).toBe(405);
    expect(slash.body).toEqual({ detail: 'Method Not Allowed' });
    expect(slash.headers.allow).toBe('POST');
  });

  it('accepts only the keys of enabled operations (remove is disabled)', async () => {
    const res = await request(svc.app)
      .post(`/v/notes/${note}/tag-labels/`)
      .send({ remove: [label] });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: [{ type: 'extra_forbidden', loc: ['body', 'data', 'remove'], msg: 'Extra inputs are not permitted' }],
    });
  });

  it('names the operations after the model and the normalised path', async () => {
    const doc = (await request(svc.app).get('/v/openapi.json')).body;
    expect(doc.paths['/v/notes/{pk}/tag-labels'].get.operationId).toBe('get_note_tag_labels');
    expect(doc.paths['/v/notes/{pk}/tag-labels/'].post.operationId).toBe('manage_note_tag_labels');
  });
});
