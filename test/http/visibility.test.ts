/**
 * A resource's queryset_request holds on other resources' paths too: the showcase's tickets hide
 * archived ones (hideArchived), and a remark that names one — by foreign key or many-to-many, on
 * create and update — gets the same 404 as for a missing ticket, so a write cannot tell a hidden row
 * from a missing one; the remarks' relation endpoints neither list nor link a hidden ticket.
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { insertRows, takeErrors } from '../support/fixtures';
import { startShowcase, type RunningService } from '../support/services';

const TICKET_NOT_FOUND = { ticket: 'not found' };

describe.each(DIALECTS)('visibility across resources (%s)', (dialect) => {
  let svc: RunningService;
  let visible: number;
  let archived: number;
  const missing = 987654;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
    [visible, archived] = (await insertRows(svc.database.db, 'tickets', [
      { title: 'seen', status: 'open', archived: false },
      { title: 'hidden', status: 'open', archived: true },
    ])) as number[];
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  const post = (body: object) => request(svc.app).post('/v/remarks/').send(body);
  const remarkCount = async () => Number((await svc.database.db('remarks').count({ n: '*' }))[0].n);

  it('the hidden ticket is a 404 to the remark API, as a missing one is', async () => {
    expect((await request(svc.app).get(`/v/tickets/${archived}/`)).status).toBe(404);
  });

  it('a create naming a hidden ticket by foreign key: 404, as for a missing one, and nothing written', async () => {
    const before = await remarkCount();
    for (const ticket of [archived, missing]) {
      const res = await post({ body: 'on a ticket', ticket });
      expect([res.status, res.body]).toEqual([404, TICKET_NOT_FOUND]);
    }
    expect(await remarkCount()).toBe(before);
    const ok = await post({ body: 'on a ticket', ticket: visible });
    expect([ok.status, ok.body.ticket]).toEqual([201, visible]);
  });

  it('a create naming a hidden ticket in a many-to-many list: 404, as for a missing one', async () => {
    for (const linked of [
      [visible, archived],
      [visible, missing],
    ]) {
      const res = await post({ body: 'linked', linked });
      expect([res.status, res.body]).toEqual([404, TICKET_NOT_FOUND]);
    }
    expect((await post({ body: 'related', linked: [visible] })).status).toBe(201);
  });

  it('an update naming a hidden ticket: 404, and the remark unchanged', async () => {
    const id = (await post({ body: 'to move', ticket: visible })).body.id;
    for (const ticket of [archived, missing]) {
      const res = await request(svc.app).patch(`/v/remarks/${id}/`).send({ ticket });
      expect([res.status, res.body]).toEqual([404, TICKET_NOT_FOUND]);
    }
    const res = await request(svc.app)
      .patch(`/v/remarks/${id}/`)
      .send({ linked: [archived] });
    expect([res.status, res.body]).toEqual([404, TICKET_NOT_FOUND]);
    expect(await svc.database.db('remarks').where({ id }).first()).toMatchObject({ ticket_id: visible });
  });

  it('the relation endpoint lists the visible tickets only, and links a hidden one as not found', async () => {
    const id = (await post({ body: 'linked' })).body.id;
    // Linked directly: a ticket archived after it was related stays in the join table.
    await insertRows(svc.database.db, 'remarks_linked', [
      { remark_id: id, ticket_id: visible },
      { remark_id: id, ticket_id: archived },
    ]);
    const list = await request(svc.app).get(`/v/remarks/${id}/linked`);
    expect([list.status, list.body.count, list.body.items.map((t: { id: number }) => t.id)]).toEqual([200, 1, [visible]]);

    const manage = await request(svc.app)
      .post(`/v/remarks/${id}/linked/`)
      .send({ add: [archived, missing], remove: [archived] });
    expect([manage.status, manage.body]).toEqual([
      200,
      {
        results: { count: 0, details: [] },
        errors: { count: 3, details: [`ticket ${archived} not found`, `ticket ${missing} not found`, `ticket ${archived} not found`] },
      },
    ]);
    // The hidden link is left as it was: the caller cannot see it, so cannot remove it either.
    expect(await svc.database.db('remarks_linked').where({ remark_id: id }).orderBy('ticket_id').pluck('ticket_id')).toEqual([
      visible,
      archived,
    ]);
  });
});
