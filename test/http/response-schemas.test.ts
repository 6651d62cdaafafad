/**
 * Per-operation response schemas (`schema_create_out`, `schema_update_out`) of the showcase's
 * tickets: create answers with the retrieve shape, update with a schema of its own, list items keep
 * schema_out; the OpenAPI document says the same.
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { startShowcase, type RunningService } from '../support/services';

const ref = (name: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } });

describe.each(DIALECTS)('per-operation response schemas (%s)', (dialect) => {
  let svc: RunningService;

  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  beforeEach(async () => {
    await svc.context.db('tickets').del();
  });
  afterEach(() => expect(svc.errors.splice(0)).toEqual([]));

  it('answers create with schema_detail, update with its own schema, and lists with schema_out', async () => {
    const created = await request(svc.app).post('/v/tickets/').send({ title: 'Leaky tap' });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect(created.body).toEqual({ id, title: 'Leaky tap', status: 'open', archived: false, label: `#${id} Leaky tap (open, 1 open)` });

    const updated = await request(svc.app).patch(`/v/tickets/${id}/`).set('X-Roles', 'editor').send({ status: 'closed' });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ id, status: 'closed' });

    const list = await request(svc.app).get('/v/tickets/');
    expect(list.body).toEqual({ items: [{ id, title: 'Leaky tap', status: 'closed', title_length: 9 }], count: 1 });
    const retrieved = await request(svc.app).get(`/v/tickets/${id}/`);
    expect(retrieved.body).toEqual({
      id,
      title: 'Leaky tap',
      status: 'closed',
      archived: false,
      label: `#${id} Leaky tap (closed, 0 open)`,
    });
  });

  it('validates the bodies as before: the response schema changes only the answer', async () => {
    const bad = await request(svc.app).post('/v/tickets/').send({ title: 'x', status: 'pending' });
    expect(bad.status).toBe(422);
    expect(bad.body).toEqual({
      detail: [{ type: 'enum', loc: ['body', 'data', 'status'], msg: 'Input should be "open" or "closed"' }],
    });
  });

  it('documents each operation with its own response schema', async () => {
    const doc = (await request(svc.app).get('/v/openapi.json')).body;
    // Each carries the ETag of the ticket (conditional requests).
    const headers = { ETag: { description: expect.any(String), schema: { type: 'string' } } };
    expect(doc.paths['/v/tickets/'].post.responses['201']).toEqual({ description: 'Created', content: ref('TicketDetail'), headers });
    expect(doc.paths['/v/tickets/{pk}/'].patch.responses['200']).toEqual({ description: 'OK', content: ref('TicketStatus'), headers });
    expect(doc.paths['/v/tickets/{pk}/'].get.responses['200']).toEqual({ description: 'OK', content: ref('TicketDetail'), headers });
    expect(doc.components.schemas.TicketStatus).toEqual({
      type: 'object',
      properties: { id: { type: 'integer' }, status: { type: 'string', enum: ['open', 'closed'] } },
      required: ['id', 'status'],
    });
  });
});
