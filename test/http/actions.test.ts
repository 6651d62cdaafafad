/**
 * List-level actions (`detail: false`) of the showcase's tickets, next to a detail action: their
 * routes before the item routes, the read query they receive (narrowed by queryset_request), the
 * transaction of a non-GET action, and their entries in the OpenAPI document.
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { startShowcase, type RunningService } from '../support/services';
import { insertReturning } from '../../runtime/db/inserts';

describe.each(DIALECTS)('list-level actions (%s)', (dialect) => {
  let svc: RunningService;

  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  beforeEach(async () => {
    await svc.context.db('tickets').del();
  });
  afterEach(() => expect(svc.errors.splice(0)).toEqual([]));

  async function seed(rows: { title: string; status?: string; archived?: boolean }[]): Promise<number[]> {
    const ids: number[] = [];
    for (const row of rows) {
      const ticket = { status: 'open', archived: false, ...row };
      const [inserted] = await insertReturning(svc.context.db, svc.context.db('tickets').insert(ticket), ticket, ['id']);
      ids.push(inserted.id);
    }
    return ids;
  }

  it('serves a GET list-level action at /{base}/{name}/, before the item route, with the rows the list reads', async () => {
    await seed([{ title: 'a' }, { title: 'b' }, { title: 'c', status: 'closed' }, { title: 'hidden', archived: true }]);
    const res = await request(svc.app).get('/v/tickets/counts/');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ open: 2, closed: 1 });
  });

  it('runs a POST list-level action in a transaction on the visible rows', async () => {
    await seed([{ title: 'a' }, { title: 'b', status: 'closed' }, { title: 'hidden', archived: true }]);
    const res = await request(svc.app).post('/v/tickets/close-all/');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ closed: 1 });
    const rows = await svc.context.db('tickets').select('title', 'status').orderBy('title');
    expect(rows).toEqual([
      { title: 'a', status: 'closed' },
      { title: 'b', status: 'closed' },
      { title: 'hidden', status: 'open' },
    ]);
  });

  it('rolls the whole action back when its hook throws', async () => {
    await seed([{ title: 'a' }, { title: 'frozen' }]);
    const res = await request(svc.app).post('/v/tickets/close-all/');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden', details: 'A frozen ticket cannot be closed' });
    const statuses = await svc.context.db('tickets').pluck('status');
    expect(statuses).toEqual(['open', 'open']);
  });

  it('answers the methods an action does not serve as the routes behind it do', async () => {
    // The GET action has no POST: /tickets/{pk}/ has none either, so the path is a 405.
    const post = await request(svc.app).post('/v/tickets/counts/');
    expect(post.status).toBe(405);
    expect(post.body).toEqual({ detail: 'Method Not Allowed' });
    expect(post.headers.allow).toBe('DELETE, GET, HEAD, PATCH');
  });

  it('keeps detail actions at /{base}/{pk}/{name}/ with the record', async () => {
    const [id] = await seed([{ title: 'a' }]);
    const res = await request(svc.app).post(`/v/tickets/${id}/close/`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'closed' });
    const missing = await request(svc.app).post(`/v/tickets/${id + 1000}/close/`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ ticket: 'not found' });
  });

  it('writes see the rows reads see (no queryset_write: the queryset_request hook): an archived ticket is a 404 to a detail action, PATCH and DELETE, unchanged', async () => {
    const [id] = await seed([{ title: 'gone', archived: true }]);
    const answers = await Promise.all([
      request(svc.app).post(`/v/tickets/${id}/close/`),
      request(svc.app).patch(`/v/tickets/${id}/`).set('X-Roles', 'editor').send({ status: 'closed' }),
      request(svc.app).delete(`/v/tickets/${id}/`).set('X-Roles', 'staff'),
    ]);
    expect(answers.map((r) => ({ status: r.status, body: r.body }))).toEqual(Array(3).fill({ status: 404, body: { ticket: 'not found' } }));
    expect(await svc.context.db('tickets').select('title', 'status')).toEqual([{ title: 'gone', status: 'open' }]);
  });

  it('pages a paginated list-level action as the list pages its items (PageNumberPagination, page_size 2)', async () => {
    const ids = await seed([
      { title: 'one' },
      { title: 'two', status: 'closed' },
      { title: 'three' },
      { title: 'four' },
      { title: 'gone', archived: true },
    ]);
    // The list's read schema, its computed field included; ordered by key, as the list is.
    const item = (i: number, title: string) => ({ id: ids[i], title, status: 'open', title_length: title.length });
    const page = async (query: string) => {
      const res = await request(svc.app).get(`/v/tickets/open/${query}`);
      return { status: res.status, body: res.body };
    };
    expect(await page('')).toEqual({ status: 200, body: { items: [item(0, 'one'), item(2, 'three')], count: 3 } });
    expect(await page('?page=2')).toEqual({ status: 200, body: { items: [item(3, 'four')], count: 3 } });
    expect(await page('?page=3')).toEqual({ status: 200, body: { items: [], count: 3 } });
    expect(await page('?page=1&page_size=3')).toEqual({
      status: 200,
      body: { items: [item(0, 'one'), item(2, 'three'), item(3, 'four')], count: 3 },
    });
    expect(await page('?page=0')).toEqual({
      status: 422,
      body: { detail: [{ type: 'greater_than_equal', loc: ['query', 'page'], msg: 'Input should be greater than or equal to 1' }] },
    });
    const doc = (await request(svc.app).get('/v/openapi.json')).body;
    const op = doc.paths['/v/tickets/open/'].get;
    expect(op.operationId).toBe('open_tickets');
    expect(op.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(['query:page', 'query:page_size']);
    const schema = op.responses['200'].content['application/json'].schema;
    expect(schema.properties.items).toEqual({ type: 'array', items: { $ref: '#/components/schemas/TicketOut' } });
  });

  it('documents list-level actions without a path parameter', async () => {
    const doc = (await request(svc.app).get('/v/openapi.json')).body;
    const counts = doc.paths['/v/tickets/counts/'].get;
    const { responses, ...operation } = counts;
    // No path parameter: the action is routed at the collection.
    expect(operation).toEqual({
      operationId: 'counts_tickets',
      summary: 'How many visible tickets are open and closed.',
      tags: ['Tickets'],
      security: [{}, { BearerAuth: [] }],
    });
    expect(responses[200]).toEqual({
      description: 'OK',
      content: { 'application/json': { schema: { $ref: '#/components/schemas/TicketCounts' } } },
    });
    expect(Object.keys(responses)).toEqual(['200', '400', '401', '403', '404', '503']);
    expect(doc.paths['/v/tickets/close-all/'].post.operationId).toBe('close_all_tickets');
    expect(doc.paths['/v/tickets/{pk}/close/'].post.operationId).toBe('close_ticket');
  });
});
