/**
 * Bulk routes of the showcase: crates are atomic (one transaction, all or nothing, at most 3 items),
 * widgets are not (each item in its own transaction with a result of its own, at most 5 items).
 * Each item goes through the single-item operation's schema, permissions and hooks.
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { startShowcase, type RunningService } from '../support/services';

const STAFF = { 'X-Roles': 'staff' };
const EDITOR = { 'X-Roles': 'editor' };
/** The 409s of a duplicate crate code and a duplicate widget name. */
const CRATE_CONFLICT = { error: 'conflict', details: 'A crate with this code already exists.' };
const WIDGET_CONFLICT = { error: 'conflict', details: 'A widget with this name already exists.' };

/** A widget as create and update answer it, with the values the test sets. */
function widget(fields: Record<string, unknown>) {
  return {
    count: 0,
    serial: null,
    ratio: null,
    price: '0.00',
    active: true,
    released_on: null,
    checked_at: null,
    token: null,
    contact: null,
    homepage: '',
    extra: null,
    size: 'M',
    maker: null,
    labels: [],
    created_at: expect.any(String),
    updated_at: expect.any(String),
    ...fields,
  };
}

describe.each(DIALECTS)('bulk routes (%s)', (dialect) => {
  let svc: RunningService;
  const crates = () => svc.context.db('crates').orderBy('id').select('code', 'quantity');

  beforeEach(async () => {
    svc = await startShowcase(dialect);
  });
  afterEach(async () => {
    expect(svc.errors.splice(0)).toEqual([]);
    await svc.close();
  });

  describe('atomic (crates)', () => {
    it('creates every item in order and answers their bodies with 201', async () => {
      const res = await request(svc.app)
        .post('/v/crates/bulk/')
        .send([{ code: 'a1', quantity: 2 }, { code: 'a2' }]);
      expect(res.status).toBe(201);
      expect(res.body).toEqual([
        { id: 1, code: 'a1', quantity: 2, maker: null },
        { id: 2, code: 'a2', quantity: 0, maker: null },
      ]);
    });

    it('writes nothing when one item is invalid, and the 422 names the item by its index', async () => {
      const res = await request(svc.app)
        .post('/v/crates/bulk/')
        .send([{ code: 'ok' }, { code: 'bad', quantity: 'many' }, { quantity: 1 }]);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        detail: [
          { type: 'int_type', loc: ['body', 'data', 1, 'quantity'], msg: 'Input should be a valid integer' },
          { type: 'missing', loc: ['body', 'data', 2, 'code'], msg: 'Field required' },
        ],
      });
      expect(await crates()).toEqual([]);
    });

    it('rolls back the items before a failing one: a hook refusal, a missing related row, a unique conflict', async () => {
      const hook = await request(svc.app)
        .post('/v/crates/bulk/')
        .send([{ code: 'c1' }, { code: 'c2', quantity: 13 }]);
      expect(hook.status).toBe(400);
      expect(hook.body).toEqual({ error: '13 is an unlucky quantity.' });

      const related = await request(svc.app)
        .post('/v/crates/bulk/')
        .send([{ code: 'c1' }, { code: 'c2', maker: 'nobody' }]);
      expect(related.status).toBe(404);
      expect(related.body).toEqual({ maker: 'not found' });

      // The same unique value twice in one batch, then once against a row already in the table.
      const twice = await request(svc.app)
        .post('/v/crates/bulk/')
        .send([{ code: 'dup' }, { code: 'dup' }]);
      expect(twice.status).toBe(409);
      expect(twice.body).toEqual(CRATE_CONFLICT);
      expect(await crates()).toEqual([]);

      expect((await request(svc.app).post('/v/crates/').send({ code: 'taken' })).status).toBe(201);
      const table = await request(svc.app)
        .post('/v/crates/bulk/')
        .send([{ code: 'new' }, { code: 'taken' }]);
      expect(table.status).toBe(409);
      expect(table.body).toEqual(CRATE_CONFLICT);
      expect(await crates()).toEqual([{ code: 'taken', quantity: 0 }]);
    });

    it('updates items named by their key, and writes nothing when one is unknown or refused', async () => {
      await request(svc.app)
        .post('/v/crates/bulk/')
        .send([{ code: 'u1' }, { code: 'u2' }, { code: 'sealed-u3' }]);
      const ok = await request(svc.app)
        .patch('/v/crates/bulk/')
        .set(EDITOR)
        .send([
          { id: 2, quantity: 5 },
          { id: 1, code: 'u1b' },
        ]);
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual([
        { id: 2, code: 'u2', quantity: 5, maker: null },
        { id: 1, code: 'u1b', quantity: 0, maker: null },
      ]);

      const unknown = await request(svc.app)
        .patch('/v/crates/bulk/')
        .set(EDITOR)
        .send([
          { id: 1, quantity: 9 },
          { id: 99, quantity: 9 },
        ]);
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ crate: 'not found' });

      const sealed = await request(svc.app)
        .patch('/v/crates/bulk/')
        .set(EDITOR)
        .send([
          { id: 1, quantity: 9 },
          { id: 3, quantity: 9 },
        ]);
      expect(sealed.status).toBe(403);
      expect(sealed.body).toEqual({ error: 'forbidden', details: 'You do not have permission to perform this action.' });

      // Renaming one crate to another's code inside one batch is the unique conflict.
      const clash = await request(svc.app)
        .patch('/v/crates/bulk/')
        .set(EDITOR)
        .send([{ id: 1, code: 'u2' }]);
      expect(clash.status).toBe(409);
      expect(clash.body).toEqual(CRATE_CONFLICT);

      const missingKey = await request(svc.app)
        .patch('/v/crates/bulk/')
        .set(EDITOR)
        .send([{ quantity: 1 }, { id: 'one' }]);
      expect(missingKey.status).toBe(422);
      expect(missingKey.body).toEqual({
        detail: [
          { type: 'missing', loc: ['body', 'data', 0, 'id'], msg: 'Field required' },
          { type: 'int_type', loc: ['body', 'data', 1, 'id'], msg: 'Input should be a valid integer' },
        ],
      });
      expect(await crates()).toEqual([
        { code: 'u1b', quantity: 0 },
        { code: 'u2', quantity: 5 },
        { code: 'sealed-u3', quantity: 0 },
      ]);
    });

    it('runs the update override per item: its error answer fails the batch and rolls back the items before it', async () => {
      await request(svc.app)
        .post('/v/crates/bulk/')
        .send([{ code: 'o1' }, { code: 'o2' }]);
      const res = await request(svc.app)
        .patch('/v/crates/bulk/')
        .set(EDITOR)
        .send([
          { id: 1, quantity: 5 },
          { id: 2, quantity: 5000 },
        ]);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ detail: 'A crate holds at most 1000.' });
      expect(await crates()).toEqual([
        { code: 'o1', quantity: 0 },
        { code: 'o2', quantity: 0 },
      ]);
      const ok = await request(svc.app)
        .patch('/v/crates/bulk/')
        .set(EDITOR)
        .send([
          { id: 1, quantity: 5 },
          { id: 2, quantity: 1000 },
        ]);
      expect(ok.status).toBe(200);
      expect(ok.body.map((c: { quantity: number }) => c.quantity)).toEqual([5, 1000]);
    });

    it('deletes by {"ids": [...]} with 204; an unknown id is the 404 and nothing is deleted', async () => {
      await request(svc.app)
        .post('/v/crates/bulk/')
        .send([{ code: 'd1' }, { code: 'd2' }, { code: 'd3' }]);
      const unknown = await request(svc.app)
        .delete('/v/crates/bulk/')
        .set(STAFF)
        .send({ ids: [1, 42] });
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ crate: 'not found' });
      // A key named twice is not found the second time.
      const twice = await request(svc.app)
        .delete('/v/crates/bulk/')
        .set(STAFF)
        .send({ ids: [1, 1] });
      expect(twice.status).toBe(404);
      expect(await crates()).toHaveLength(3);

      const res = await request(svc.app)
        .delete('/v/crates/bulk/')
        .set(STAFF)
        .send({ ids: [3, 1] });
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(await crates()).toEqual([{ code: 'd2', quantity: 0 }]);
    });

    it('checks authentication and roles once for the request, before any item', async () => {
      await request(svc.app)
        .post('/v/crates/bulk/')
        .send([{ code: 'p1' }]);
      const anonymous = await request(svc.app)
        .patch('/v/crates/bulk/')
        .send([{ id: 1, quantity: 3 }]);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual({ detail: 'Unauthorized' });
      const editor = await request(svc.app)
        .delete('/v/crates/bulk/')
        .set(EDITOR)
        .send({ ids: [1] });
      expect(editor.status).toBe(403);
      expect(editor.body).toEqual({ error: 'forbidden', details: 'Role staff is required' });
      expect(await crates()).toEqual([{ code: 'p1', quantity: 0 }]);
    });

    it('refuses more than max_items items with a 422 before looking at any item', async () => {
      const res = await request(svc.app)
        .post('/v/crates/bulk/')
        .send([{ code: 'x1' }, { code: 'x2' }, { code: 'x3' }, { nonsense: true }]);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [{ type: 'too_long', loc: ['body', 'data'], msg: 'List should have at most 3 items' }] });
      const ids = await request(svc.app)
        .delete('/v/crates/bulk/')
        .set(STAFF)
        .send({ ids: [1, 2, 3, 4] });
      expect(ids.status).toBe(422);
      expect(ids.body).toEqual({ detail: [{ type: 'too_long', loc: ['body', 'data', 'ids'], msg: 'List should have at most 3 items' }] });
      expect(await crates()).toEqual([]);
    });

    it('answers malformed bodies with a 422: not a list, no ids, ids of the wrong type', async () => {
      const object = await request(svc.app).post('/v/crates/bulk/').send({ code: 'x' });
      expect(object.status).toBe(422);
      expect(object.body).toEqual({ detail: [{ type: 'list_type', loc: ['body', 'data'], msg: 'Input should be a valid list' }] });

      const empty = await request(svc.app).post('/v/crates/bulk/');
      expect(empty.status).toBe(422);
      expect(empty.body).toEqual({ detail: [{ type: 'missing', loc: ['body', 'data'], msg: 'Field required' }] });

      const item = await request(svc.app).post('/v/crates/bulk/').send(['x']);
      expect(item.status).toBe(422);
      expect(item.body).toEqual({
        detail: [
          {
            type: 'model_attributes_type',
            loc: ['body', 'data', 0],
            msg: 'Input should be a valid dictionary or object to extract fields from',
          },
        ],
      });

      const list = await request(svc.app).delete('/v/crates/bulk/').set(STAFF).send([1, 2]);
      expect(list.status).toBe(422);
      expect(list.body).toEqual({
        detail: [
          {
            type: 'model_attributes_type',
            loc: ['body', 'data'],
            msg: 'Input should be a valid dictionary or object to extract fields from',
          },
        ],
      });

      const wrong = await request(svc.app)
        .delete('/v/crates/bulk/')
        .set(STAFF)
        .send({ ids: [1, 'two', null] });
      expect(wrong.status).toBe(422);
      expect(wrong.body).toEqual({
        detail: [
          { type: 'int_type', loc: ['body', 'data', 'ids', 1], msg: 'Input should be a valid integer' },
          { type: 'int_type', loc: ['body', 'data', 'ids', 2], msg: 'Input should be a valid integer' },
        ],
      });
    });

    it('leaves the item routes to the key: GET /crates/bulk/ is a retrieve with a key that is not an integer', async () => {
      const res = await request(svc.app).get('/v/crates/bulk/');
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [{ type: 'int_parsing', loc: ['path', 'pk'], msg: expect.any(String) }] });
    });
  });

  describe('not atomic (widgets)', () => {
    const names = () => svc.context.db('widgets').orderBy('id').pluck('name');

    it('answers 207 with a result per item, in order; a failing item undoes nothing of the others', async () => {
      const res = await request(svc.app)
        .post('/v/widgets/bulk/')
        .send([{ name: 'w1', count: 2 }, { name: 5 }, { name: 'w1' }, { name: 'forbid-me' }, { name: 'teapot' }]);
      expect(res.status).toBe(207);
      expect(res.body).toEqual([
        { status: 201, data: widget({ id: 1, name: 'w1', count: 2 }) },
        { status: 422, detail: [{ type: 'string_type', loc: ['body', 'data', 1, 'name'], msg: 'Input should be a valid string' }] },
        // The same unique value as an earlier item of the batch.
        { status: 409, ...WIDGET_CONFLICT },
        // The after_create hook refuses: the item's row is rolled back, the others stay.
        { status: 403, error: 'forbidden', details: 'Widgets named forbid* are not allowed' },
        // The service's exception handler renders the item's error, as for a single create.
        { status: 418, teapot: true, code: 'teapot' },
      ]);
      expect(await names()).toEqual(['w1']);
    });

    it('reports a missing related row and a unique value against the table per item', async () => {
      await request(svc.app).post('/v/companies/').send({ code: 'acme', title: 'Acme' });
      const res = await request(svc.app)
        .post('/v/widgets/bulk/')
        .send([{ name: 'm1', maker: 'nobody' }, { name: 'm2', maker: 'acme' }, { name: 'm2' }]);
      expect(res.status).toBe(207);
      expect(res.body).toEqual([
        { status: 404, maker: 'not found' },
        // The refused item wrote nothing, on either database: the first row is this one.
        { status: 201, data: widget({ id: 1, name: 'm2', maker: 'acme' }) },
        { status: 409, ...WIDGET_CONFLICT },
      ]);
    });

    it('updates item by item: unknown keys, empty updates and conflicts fail alone', async () => {
      await request(svc.app)
        .post('/v/widgets/bulk/')
        .send([{ name: 'a' }, { name: 'b' }]);
      const res = await request(svc.app)
        .patch('/v/widgets/bulk/')
        .send([{ id: 1, count: 7 }, { id: 99, count: 1 }, { id: 2 }, { id: 2, name: 'a' }, { id: 2, name: 'b2' }]);
      expect(res.status).toBe(207);
      expect(res.body).toEqual([
        { status: 200, data: widget({ id: 1, name: 'a', count: 7 }) },
        { status: 404, widget: 'not found' },
        // require_update_fields: an item with nothing but its key changes nothing.
        { status: 400, error: 'No fields provided for update.' },
        { status: 409, ...WIDGET_CONFLICT },
        { status: 200, data: widget({ id: 2, name: 'b2' }) },
      ]);
      expect(await names()).toEqual(['a', 'b2']);
    });

    it('deletes item by item: an unknown id is its own 404, a hook refusal its own 403', async () => {
      await request(svc.app)
        .post('/v/widgets/bulk/')
        .send([{ name: 'x' }, { name: 'locked' }, { name: 'y' }]);
      const res = await request(svc.app)
        .delete('/v/widgets/bulk/')
        .send({ ids: [1, 42, 2, 'three', 3] });
      expect(res.status).toBe(207);
      expect(res.body).toEqual([
        { status: 204 },
        { status: 404, widget: 'not found' },
        { status: 403, error: 'forbidden', details: 'This widget is locked' },
        { status: 422, detail: [{ type: 'int_type', loc: ['body', 'data', 'ids', 3], msg: 'Input should be a valid integer' }] },
        { status: 204 },
      ]);
      expect(await names()).toEqual(['locked']);
    });

    it('still checks the size and the shape of the whole body first', async () => {
      const many = Array.from({ length: 6 }, (_, i) => ({ name: `n${i}` }));
      const res = await request(svc.app).post('/v/widgets/bulk/').send(many);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [{ type: 'too_long', loc: ['body', 'data'], msg: 'List should have at most 5 items' }] });
      const object = await request(svc.app).patch('/v/widgets/bulk/').send({ id: 1 });
      expect(object.status).toBe(422);
      expect(object.body).toEqual({ detail: [{ type: 'list_type', loc: ['body', 'data'], msg: 'Input should be a valid list' }] });
      expect(await names()).toEqual([]);
    });

    it('lets an unhandled error fail the request with a 500; the items before it stay written', async () => {
      const res = await request(svc.app)
        .post('/v/widgets/bulk/')
        .send([{ name: 'before' }, { name: 'explode' }, { name: 'after' }]);
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ detail: 'Internal Server Error' });
      expect(svc.errors.splice(0)).toEqual([new Error('exploded after the write')]);
      expect(await names()).toEqual(['before']);
    });

    it('gives concurrent batches with the same unique value one winner', async () => {
      const send = () =>
        request(svc.app)
          .post('/v/widgets/bulk/')
          .send([{ name: 'race' }]);
      const answers = await Promise.all([send(), send(), send()]);
      const statuses = answers.map((a) => a.body[0].status).sort();
      expect(answers.map((a) => a.status)).toEqual([207, 207, 207]);
      expect(statuses).toEqual([201, 409, 409]);
      expect(await names()).toEqual(['race']);
    });
  });
});
