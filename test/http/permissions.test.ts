/**
 * Declarative permissions of the showcase's tickets: `permission_roles` (editors update, staff
 * delete, a superuser holds every role) checked after authentication, and the
 * `has_object_permission` hook before retrieve, update, delete and detail actions, in the seed's
 * 401 and 403 shapes; the roles are documented in OpenAPI.
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { startShowcase, type RunningService } from '../support/services';

describe.each(DIALECTS)('declarative permissions (%s)', (dialect) => {
  let svc: RunningService;

  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  beforeEach(async () => {
    await svc.context.db('tickets').del();
  });
  afterEach(() => expect(svc.errors.splice(0)).toEqual([]));

  const create = async (title: string): Promise<number> => (await request(svc.app).post('/v/tickets/').send({ title }).expect(201)).body.id;
  const count = async () => Number((await svc.context.db('tickets').count({ n: '*' }))[0].n);

  it('lets a caller holding the role through, and refuses one without it with 403', async () => {
    const id = await create('Leaky tap');
    const refused = await request(svc.app).delete(`/v/tickets/${id}/`).set('X-Roles', 'editor');
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'forbidden', details: 'Role staff is required' });
    expect(await count()).toBe(1);
    const allowed = await request(svc.app).delete(`/v/tickets/${id}/`).set('X-Roles', 'editor, staff');
    expect(allowed.status).toBe(204);
    expect(await count()).toBe(0);
  });

  it("maps staff onto the is_staff flag, other roles onto the user's roles, and a superuser holds every role", async () => {
    const id = await create('Leaky tap');
    const staff = await request(svc.app).patch(`/v/tickets/${id}/`).set('X-Roles', 'staff').send({ status: 'closed' });
    expect(staff.status).toBe(403);
    expect(staff.body).toEqual({ error: 'forbidden', details: 'Role editor is required' });
    const superuser = await request(svc.app).patch(`/v/tickets/${id}/`).set('X-Roles', 'superuser').send({ status: 'closed' });
    expect(superuser.status).toBe(200);
    expect(superuser.body).toEqual({ id, status: 'closed' });
  });

  it('is a 401 before any role check without credentials', async () => {
    const id = await create('Leaky tap');
    const res = await request(svc.app).delete(`/v/tickets/${id}/`);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ detail: 'Unauthorized' });
  });

  it('asks has_object_permission before update, delete and detail actions: false is a 403 that changes nothing', async () => {
    const id = await create('locked door');
    const forbidden = { error: 'forbidden', details: 'You do not have permission to perform this action.' };
    const update = await request(svc.app).patch(`/v/tickets/${id}/`).set('X-Roles', 'editor').send({ status: 'closed' });
    expect([update.status, update.body]).toEqual([403, forbidden]);
    const remove = await request(svc.app).delete(`/v/tickets/${id}/`).set('X-Roles', 'staff');
    expect([remove.status, remove.body]).toEqual([403, forbidden]);
    const close = await request(svc.app).post(`/v/tickets/${id}/close/`);
    expect([close.status, close.body]).toEqual([403, forbidden]);
    const row = await svc.context.db('tickets').where('id', id).first();
    expect(row.status).toBe('open');
    const read = await request(svc.app).get(`/v/tickets/${id}/`);
    expect(read.status).toBe(200);
    expect(read.body.title).toBe('locked door');
  });

  it('asks has_object_permission before retrieve, after the lookup: a missing ticket is still a 404', async () => {
    const id = await create('secret');
    const res = await request(svc.app).get(`/v/tickets/${id}/`);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden', details: 'You do not have permission to perform this action.' });
    const missing = await request(svc.app).get(`/v/tickets/${id + 1000}/`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ ticket: 'not found' });
    // The list does not ask the hook (it has no single object): the ticket is listed.
    const list = await request(svc.app).get('/v/tickets/');
    expect(list.body.count).toBe(1);
  });

  it('documents the roles, the security requirement and the 403 of each operation', async () => {
    const doc = (await request(svc.app).get('/v/openapi.json')).body;
    const del = doc.paths['/v/tickets/{pk}/'].delete;
    expect(del.description).toBe('Requires the role staff.');
    expect(del.security).toEqual([{ BearerAuth: [] }]);
    expect(del.responses['403']).toEqual({
      description: 'Forbidden',
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/GenericMessageSchema' },
          example: { detail: 'You do not have permission to perform this action.' },
        },
      },
    });
    expect(doc.paths['/v/tickets/{pk}/'].patch.description).toBe('Requires the role editor.');
    expect(doc.paths['/v/tickets/{pk}/'].get.description).toBeUndefined();
  });
});
