/**
 * The rollback proof: create, update and delete run in one transaction, so a step that fails after
 * the write (the widgets' after_create / after_update hooks throw once the row and its join rows are
 * written) leaves the database exactly as it was. Rows are read straight from the tables.
 */
import type { Knex } from 'knex';
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { takeErrors } from '../support/fixtures';
import { startShowcase, type RunningService } from '../support/services';

interface Snapshot {
  widgets: Record<string, unknown>[];
  links: Record<string, unknown>[];
}

/** Every widget and widget-label row, in a stable order. */
async function snapshot(db: Knex): Promise<Snapshot> {
  return {
    widgets: await db('widgets').select('*').orderBy('id'),
    links: await db('widgets_labels').select('widget_id', 'label_id').orderBy(['widget_id', 'label_id']),
  };
}

describe.each(DIALECTS)('transactions (%s)', (dialect) => {
  let svc: RunningService;
  let labels: string[];
  let widgetId: number;

  beforeAll(async () => {
    svc = await startShowcase(dialect);
    labels = [];
    for (const text of ['l1', 'l2', 'l3']) {
      const res = await request(svc.app).post('/v/tag-labels/').send({ text });
      expect(res.status).toBe(201);
      labels.push(res.body.id);
    }
    expect((await request(svc.app).post('/v/companies/').send({ code: 'acme', title: 'Acme' })).status).toBe(201);
    const widget = await request(svc.app)
      .post('/v/widgets/')
      .send({ name: 'stable', count: 1, maker: 'acme', labels: [labels[0]] });
    expect(widget.status).toBe(201);
    widgetId = widget.body.id;
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  it('a failing after_create hook rolls back the INSERT and the join rows', async () => {
    const before = await snapshot(svc.database.db);
    expect(before.widgets).toHaveLength(1);
    expect(before.links).toHaveLength(1);

    const res = await request(svc.app)
      .post('/v/widgets/')
      .send({ name: 'explode', count: 5, maker: 'acme', labels: [labels[1], labels[2]] });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ detail: 'Internal Server Error' });
    expect(takeErrors(svc)).toEqual(['Error: exploded after the write']);

    expect(await snapshot(svc.database.db)).toEqual(before);
    expect(await svc.database.db('widgets').where({ name: 'explode' }).first()).toBeUndefined();
  });

  it('a failing after_update hook rolls back the UPDATE and the join rows', async () => {
    const before = await snapshot(svc.database.db);
    expect(before.links).toEqual([{ widget_id: widgetId, label_id: labels[0] }]);

    const res = await request(svc.app)
      .patch(`/v/widgets/${widgetId}/`)
      .send({ name: 'explode', count: 99, maker: null, labels: [labels[1], labels[2]] });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ detail: 'Internal Server Error' });
    expect(takeErrors(svc)).toEqual(['Error: exploded after the write']);

    expect(await snapshot(svc.database.db)).toEqual(before);
    const detail = await request(svc.app).get(`/v/widgets/${widgetId}/`);
    expect(detail.body).toEqual(expect.objectContaining({ name: 'stable', maker: { code: 'acme', title: 'Acme' }, labels: [labels[0]] }));
  });

  it('a handled exception after the write (418 from a custom class) rolls back too', async () => {
    const before = await snapshot(svc.database.db);
    const created = await request(svc.app)
      .post('/v/widgets/')
      .send({ name: 'teapot', labels: [labels[1]] });
    expect(created.status).toBe(418);
    expect(created.body).toEqual({ teapot: true, code: 'teapot' });
    expect(await snapshot(svc.database.db)).toEqual(before);

    const updated = await request(svc.app).patch(`/v/widgets/${widgetId}/`).send({ name: 'teapot', labels: [] });
    expect(updated.status).toBe(418);
    expect(updated.body).toEqual({ teapot: true, code: 'teapot' });
    expect(await snapshot(svc.database.db)).toEqual(before);
  });

  it('a ForbiddenError after the write rolls back, and one before a delete keeps the row', async () => {
    const before = await snapshot(svc.database.db);
    const created = await request(svc.app)
      .post('/v/widgets/')
      .send({ name: 'forbidden', labels: [labels[2]] });
    expect(created.status).toBe(403);
    expect(await snapshot(svc.database.db)).toEqual(before);

    const locked = await request(svc.app)
      .post('/v/widgets/')
      .send({ name: 'locked', labels: [labels[1]] });
    expect(locked.status).toBe(201);
    const withLocked = await snapshot(svc.database.db);
    const del = await request(svc.app).delete(`/v/widgets/${locked.body.id}/`);
    expect(del.status).toBe(403);
    expect(del.body).toEqual({ error: 'forbidden', details: 'This widget is locked' });
    expect(await snapshot(svc.database.db)).toEqual(withLocked);
  });

  it('a successful write commits the row and its join rows', async () => {
    const res = await request(svc.app)
      .post('/v/widgets/')
      .send({ name: 'committed', labels: [labels[1], labels[2]] });
    expect(res.status).toBe(201);
    const rows = await svc.database.db('widgets_labels').where({ widget_id: res.body.id }).select('label_id').orderBy('label_id');
    expect(rows.map((r: { label_id: string }) => r.label_id)).toEqual([labels[1], labels[2]].sort());
  });
});
