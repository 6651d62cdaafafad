import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { startShowcase, type RunningService } from '../support/services';

describe.each(DIALECTS)('showcase smoke (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());

  it('creates and reads a widget', async () => {
    const maker = await request(svc.app).post('/v/companies/').send({ code: 'acme', title: 'Acme' });
    expect(maker.status).toBe(201);
    const label = await request(svc.app).post('/v/tag-labels/').send({ text: 'red' });
    expect(label.status).toBe(201);
    const res = await request(svc.app)
      .post('/v/widgets/')
      .send({ name: 'w1', price: '12.5', released_on: '2026-01-02', checked_at: '2026-01-02T03:04:05+01:00', extra: { a: [1] }, maker: 'acme', labels: [label.body.id], active: false });
    expect(svc.errors).toEqual([]);
    expect(res.status).toBe(201);
    console.log(res.body);
    const detail = await request(svc.app).get(`/v/widgets/${res.body.id}/`);
    console.log(detail.body);
    const list = await request(svc.app).get('/v/widgets/?limit=2');
    console.log(JSON.stringify(list.body));
    const gad = await request(svc.app).get('/v/shiny-gadgets/');
    console.log(gad.status, JSON.stringify(gad.body));
    const mk = await request(svc.app).get('/v/companies/?page=2');
    console.log(mk.status, JSON.stringify(mk.body));
    const lb = await request(svc.app).get('/v/tag-labels/');
    console.log(lb.status, JSON.stringify(lb.body));
    const bad = await request(svc.app).post('/v/widgets/').send({ name: 'x'.repeat(41), count: 'a', price: '1.234', contact: 'nope', homepage: 'javascript:x' });
    console.log(bad.status, JSON.stringify(bad.body));
    const dup = await request(svc.app).post('/v/widgets/').send({ name: 'w1' });
    console.log(dup.status, JSON.stringify(dup.body));
    const boom = await request(svc.app).post('/v/widgets/').send({ name: 'explode' });
    console.log(boom.status, JSON.stringify(boom.body));
    const tea = await request(svc.app).post('/v/widgets/').send({ name: 'teapot' });
    console.log(tea.status, JSON.stringify(tea.body));
    const empty = await request(svc.app).patch(`/v/widgets/${res.body.id}/`).send({});
    console.log(empty.status, JSON.stringify(empty.body));
    const del = await request(svc.app).delete(`/v/companies/acme/`);
    console.log(del.status, JSON.stringify(del.body));
  });
});
