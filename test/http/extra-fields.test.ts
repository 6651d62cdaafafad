/**
 * `extra_fields: forbid` (the showcase's crates): a key of a request body that is no field is a 422
 * at that key, as Pydantic's `extra="forbid"` answers, in a create, an update and each item of a bulk
 * create or update; nothing is written. A resource without it (the default, makers) ignores the key, as the specification's default does.
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { startShowcase, type RunningService } from '../support/services';

const EDITOR = { 'X-Roles': 'editor' };
const extra = (...loc: (string | number)[]) => ({
  type: 'extra_forbidden',
  loc: ['body', 'data', ...loc],
  msg: 'Extra inputs are not permitted',
});

describe.each(DIALECTS)('extra_fields: forbid (%s)', (dialect) => {
  let svc: RunningService;
  const crates = () => svc.context.db('crates').orderBy('id').select('code', 'quantity');

  beforeEach(async () => {
    svc = await startShowcase(dialect);
  });
  afterEach(async () => {
    expect(svc.errors.splice(0)).toEqual([]);
    await svc.close();
  });

  it('refuses a create with a key that is no field, one entry a key, after the fields’ own', async () => {
    const res = await request(svc.app).post('/v/crates/').send({ code: 'a1', qty: 2, quantity: 'x', colour: 'red' });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: [
        { type: 'int_type', loc: ['body', 'data', 'quantity'], msg: 'Input should be a valid integer' },
        extra('qty'),
        extra('colour'),
      ],
    });
    expect(await crates()).toEqual([]);
  });

  it('refuses an update with a renamed field, and leaves the row as it was', async () => {
    const created = await request(svc.app).post('/v/crates/').send({ code: 'a1', quantity: 2 });
    expect(created.status).toBe(201);
    const res = await request(svc.app).patch(`/v/crates/${created.body.id}/`).set(EDITOR).send({ qty: 5 });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ detail: [extra('qty')] });
    expect(await crates()).toEqual([{ code: 'a1', quantity: 2 }]);
    const ok = await request(svc.app).patch(`/v/crates/${created.body.id}/`).set(EDITOR).send({ quantity: 5 });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ id: created.body.id, code: 'a1', quantity: 5, maker: null });
  });

  it('refuses a bulk create or update whose item has a key that is no field, at the item', async () => {
    const create = await request(svc.app)
      .post('/v/crates/bulk/')
      .send([{ code: 'a1' }, { code: 'a2', qty: 3 }]);
    expect(create.status).toBe(422);
    expect(create.body).toEqual({ detail: [extra(1, 'qty')] });
    expect(await crates()).toEqual([]);
    const made = await request(svc.app)
      .post('/v/crates/bulk/')
      .send([{ code: 'a1' }, { code: 'a2' }]);
    expect(made.status).toBe(201);
    const update = await request(svc.app)
      .patch('/v/crates/bulk/')
      .set(EDITOR)
      .send([
        { id: made.body[0].id, quantity: 4 },
        { id: made.body[1].id, amount: 4 },
      ]);
    expect(update.status).toBe(422);
    expect(update.body).toEqual({ detail: [extra(1, 'amount')] });
    expect(await crates()).toEqual([
      { code: 'a1', quantity: 0 },
      { code: 'a2', quantity: 0 },
    ]);
  });

  it('ignores a key that is no field where the resource does not forbid it (the default)', async () => {
    const res = await request(svc.app).post('/v/companies/').send({ code: 'acme', title: 'Acme', colour: 'red' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ code: 'acme', title: 'Acme' });
  });
});
