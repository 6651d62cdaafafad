/**
 * Computed output fields (`customs` of ReadSerializer and DetailSerializer) of the showcase's
 * tickets: each row's value comes from a hook given the record and the database, in lists, pages,
 * retrieves and write responses alike, and the OpenAPI document types them.
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { startShowcase, type RunningService } from '../support/services';

describe.each(DIALECTS)('computed output fields (%s)', (dialect) => {
  let svc: RunningService;

  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  beforeEach(async () => {
    await svc.context.db('tickets').del();
  });
  afterEach(() => expect(svc.errors.splice(0)).toEqual([]));

  it('computes a list field for every row of the page, in order', async () => {
    for (const title of ['a', 'bbb', 'cc']) await request(svc.app).post('/v/tickets/').send({ title }).expect(201);
    const res = await request(svc.app).get('/v/tickets/?page_size=2&page=1');
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(3);
    expect(res.body.items.map((t: { title: string; title_length: number }) => [t.title, t.title_length])).toEqual([
      ['a', 1],
      ['bbb', 3],
    ]);
  });

  it('computes a detail field that reads the database', async () => {
    const first = (await request(svc.app).post('/v/tickets/').send({ title: 'one' })).body.id;
    await request(svc.app).post('/v/tickets/').send({ title: 'two' }).expect(201);
    const res = await request(svc.app).get(`/v/tickets/${first}/`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: first, title: 'one', status: 'open', archived: false, label: `#${first} one (open, 2 open)` });
  });

  it('documents computed fields with their types, required', async () => {
    const doc = (await request(svc.app).get('/v/openapi.json')).body;
    expect(doc.components.schemas.TicketOut.properties.title_length).toEqual({ type: 'integer' });
    expect(doc.components.schemas.TicketOut.required).toContain('title_length');
    expect(doc.components.schemas.TicketDetail.properties.label).toEqual({ type: 'string' });
    expect(doc.components.schemas.TicketDetail.required).toContain('label');
  });
});
