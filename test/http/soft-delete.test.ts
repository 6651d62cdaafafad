/**
 * Soft delete on the showcase's coupons (`soft_delete` with `hard_delete_roles: [staff]`): DELETE
 * stamps deleted_at and every route then answers 404 for the coupon as for a missing one (list and
 * its count, retrieve, update, a second delete, a detail action, the relation endpoints); a restore
 * brings it back, a hard delete for staff removes it for good; a deleted coupon's code may be used
 * again (partial unique index), and restoring it while a live coupon has the code is a 409. The
 * OpenAPI document shows both routes with their responses.
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { startShowcase, type RunningService } from '../support/services';

const NOT_FOUND = { coupon: 'not found' };
const EDITOR = { 'X-Roles': 'editor' };
const STAFF = { 'X-Roles': 'staff' };

describe.each(DIALECTS)('soft delete (%s)', (dialect) => {
  let svc: RunningService;

  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  beforeEach(async () => {
    await svc.context.db('coupons_labels').del();
    await svc.context.db('coupons').del();
  });
  afterEach(() => expect(svc.errors.splice(0)).toEqual([]));

  const create = async (code: string, percent = 10): Promise<number> =>
    (await request(svc.app).post('/v/coupons/').send({ code, percent }).expect(201)).body.id;
  const remove = (id: number) => request(svc.app).delete(`/v/coupons/${id}/`).set(EDITOR);
  const rows = async () => svc.context.db('coupons').select('id', 'code', 'deleted_at').orderBy('id');

  it('stamps deleted_at instead of removing the row, and hides the coupon from list, count and retrieve', async () => {
    const kept = await create('KEEP');
    const gone = await create('GONE');
    expect((await remove(gone)).status).toBe(204);
    const stored = await rows();
    expect(stored.map((r) => [r.id, r.code, r.deleted_at === null])).toEqual([
      [kept, 'KEEP', true],
      [gone, 'GONE', false],
    ]);
    const list = await request(svc.app).get('/v/coupons/');
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ items: [{ id: kept, code: 'KEEP', percent: 10, deleted_at: null, labels: [] }], count: 1 });
    const retrieve = await request(svc.app).get(`/v/coupons/${gone}/`);
    expect([retrieve.status, retrieve.body]).toEqual([404, NOT_FOUND]);
    expect((await request(svc.app).get(`/v/coupons/${kept}/`)).status).toBe(200);
  });

  it('answers 404 for a deleted coupon on update, a second delete, a detail action and the relation endpoints', async () => {
    const id = await create('GONE');
    const label = '6f1c2f34-5b8e-4a53-9d55-2b1f0e3a7c10';
    await svc.context.db('labels').insert({ id: label, text: 'summer' }).onConflict('id').ignore();
    await request(svc.app)
      .post(`/v/coupons/${id}/tag-labels/`)
      .send({ add: [label] })
      .expect(200);
    expect((await request(svc.app).get(`/v/coupons/${id}/shout/`)).body).toEqual({ code: 'GONE' });
    expect((await remove(id)).status).toBe(204);
    const answers = await Promise.all([
      request(svc.app).patch(`/v/coupons/${id}/`).send({ percent: 50 }),
      remove(id),
      request(svc.app).get(`/v/coupons/${id}/shout/`),
      request(svc.app).get(`/v/coupons/${id}/tag-labels`),
      request(svc.app)
        .post(`/v/coupons/${id}/tag-labels/`)
        .send({ remove: [label] }),
    ]);
    expect(answers.map((res) => [res.status, res.body])).toEqual(Array(5).fill([404, NOT_FOUND]));
    // Nothing changed: the row keeps its value and its relation.
    expect((await svc.context.db('coupons').where('id', id).first()).percent).toBe(10);
    expect(Number((await svc.context.db('coupons_labels').where('coupon_id', id).count({ n: '*' }).first())!.n)).toBe(1);
  });

  it('restores a deleted coupon with the read shape; a live or missing coupon is a 404', async () => {
    const id = await create('BACK', 25);
    const live = await request(svc.app).post(`/v/coupons/${id}/restore/`).set(EDITOR);
    expect([live.status, live.body]).toEqual([404, NOT_FOUND]);
    expect((await remove(id)).status).toBe(204);
    const restored = await request(svc.app).post(`/v/coupons/${id}/restore/`).set(EDITOR);
    expect(restored.status).toBe(200);
    expect(restored.body).toEqual({ id, code: 'BACK', percent: 25, deleted_at: null, labels: [] });
    expect((await request(svc.app).get(`/v/coupons/${id}/`)).status).toBe(200);
    expect((await request(svc.app).get('/v/coupons/')).body.count).toBe(1);
    const missing = await request(svc.app)
      .post(`/v/coupons/${id + 1000}/restore/`)
      .set(EDITOR);
    expect([missing.status, missing.body]).toEqual([404, NOT_FOUND]);
  });

  it('authenticates and checks roles on restore as on delete', async () => {
    const id = await create('ROLE');
    expect((await remove(id)).status).toBe(204);
    const anonymous = await request(svc.app).post(`/v/coupons/${id}/restore/`);
    expect([anonymous.status, anonymous.body]).toEqual([401, { detail: 'Unauthorized' }]);
    const staff = await request(svc.app).post(`/v/coupons/${id}/restore/`).set(STAFF);
    expect([staff.status, staff.body]).toEqual([403, { error: 'forbidden', details: 'Role editor is required' }]);
    expect((await rows())[0].deleted_at).not.toBeNull();
  });

  it('hard-deletes a live or a soft-deleted coupon for staff only', async () => {
    const live = await create('LIVE');
    const deleted = await create('DEAD');
    expect((await remove(deleted)).status).toBe(204);
    const editor = await request(svc.app).delete(`/v/coupons/${live}/hard/`).set(EDITOR);
    expect([editor.status, editor.body]).toEqual([403, { error: 'forbidden', details: 'Role staff is required' }]);
    const anonymous = await request(svc.app).delete(`/v/coupons/${live}/hard/`);
    expect([anonymous.status, anonymous.body]).toEqual([401, { detail: 'Unauthorized' }]);
    expect((await rows()).length).toBe(2);
    for (const id of [live, deleted]) {
      const res = await request(svc.app).delete(`/v/coupons/${id}/hard/`).set(STAFF);
      expect([res.status, res.body]).toEqual([204, {}]);
    }
    expect(await rows()).toEqual([]);
    const again = await request(svc.app).delete(`/v/coupons/${live}/hard/`).set(STAFF);
    expect([again.status, again.body]).toEqual([404, NOT_FOUND]);
  });

  it('lets a new coupon take the code of a deleted one, and refuses a live duplicate', async () => {
    const first = await create('SPRING');
    const duplicate = await request(svc.app).post('/v/coupons/').send({ code: 'SPRING' });
    expect([duplicate.status, duplicate.body]).toEqual([409, { error: 'conflict', details: 'A coupon with this code already exists.' }]);
    expect((await remove(first)).status).toBe(204);
    const second = await create('SPRING', 30);
    expect(second).not.toBe(first);
    expect((await rows()).map((r) => r.code)).toEqual(['SPRING', 'SPRING']);
    // An update to a live coupon's code is refused too, a deleted one's code is free.
    const other = await create('AUTUMN');
    const taken = await request(svc.app).patch(`/v/coupons/${other}/`).send({ code: 'SPRING' });
    expect(taken.status).toBe(409);
  });

  it('refuses to restore a coupon whose code a live coupon has taken since (409), and restores it once the code is free', async () => {
    const first = await create('WINTER');
    expect((await remove(first)).status).toBe(204);
    const second = await create('WINTER');
    const conflict = await request(svc.app).post(`/v/coupons/${first}/restore/`).set(EDITOR);
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({ error: 'conflict', details: 'Cannot restore this coupon: a live coupon has the same code.' });
    expect((await rows()).map((r) => r.deleted_at === null)).toEqual([false, true]);
    expect((await remove(second)).status).toBe(204);
    const restored = await request(svc.app).post(`/v/coupons/${first}/restore/`).set(EDITOR);
    expect([restored.status, restored.body.id]).toEqual([200, first]);
  });

  it('documents restore and hard delete in OpenAPI with their responses', async () => {
    const doc = (await request(svc.app).get('/v/openapi.json').expect(200)).body;
    const restore = doc.paths['/v/coupons/{pk}/restore/'].post;
    expect(restore.operationId).toBe('restore_coupon');
    expect(restore.description).toBe('A coupon that is not deleted is a 404.\n\nRequires the role editor.');
    expect(Object.keys(restore.responses).sort()).toEqual(['200', '400', '401', '403', '404', '409', '422', '503']);
    expect(restore.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/CouponOut' });
    expect(restore.responses['409'].content['application/json'].example).toEqual({
      error: 'conflict',
      details: 'Cannot restore this coupon: a live coupon has the same code.',
    });
    const hard = doc.paths['/v/coupons/{pk}/hard/'].delete;
    expect(hard.operationId).toBe('hard_delete_coupon');
    expect(hard.description).toBe('Requires the role staff.');
    expect(hard.security).toEqual([{ BearerAuth: [] }]);
    expect(Object.keys(hard.responses).sort()).toEqual(['204', '400', '401', '403', '404', '409', '412', '422', '503']);
  });
});
