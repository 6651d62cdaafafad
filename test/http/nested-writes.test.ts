/**
 * Nested writes of the showcase: an order is created or updated with its lines (replaced on update)
 * and notes (merged on update) in one request and one transaction, each child through its own
 * resource's create, update and delete: its validation, lifecycle hooks (products in capitals),
 * object permission (a FROZEN line is never changed) and roles (deleting a line needs staff).
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { startShowcase, type RunningService } from '../support/services';

const CLERK = { 'X-Roles': 'clerk' };
const STAFF = { 'X-Roles': 'staff' };

describe.each(DIALECTS)('nested writes (%s)', (dialect) => {
  let svc: RunningService;
  const db = () => svc.context.db;
  const orders = () => db()('orders').orderBy('id').select('id', 'customer');
  const lines = () => db()('order_lines').orderBy('id').select('id', 'order_id', 'product', 'quantity');
  const notes = () => db()('order_notes').orderBy('id').select('id', 'order_id', 'text');

  beforeEach(async () => {
    svc = await startShowcase(dialect);
  });
  afterEach(async () => {
    expect(svc.errors.splice(0)).toEqual([]);
    await svc.close();
  });

  /** Creates the order of `ada` with three lines and one note; answers the 201's body. */
  async function adaOrder() {
    const res = await request(svc.app)
      .post('/v/orders/')
      .set(CLERK)
      .send({
        customer: 'ada',
        lines: [{ product: 'tea', quantity: 2 }, { product: 'milk' }, { product: 'jam', quantity: 3 }],
        notes: [{ text: 'ring twice' }],
      });
    expect(res.status).toBe(201);
    return res.body;
  }

  describe('create', () => {
    it('creates the order and its children in one request, answering them nested, through the child hooks', async () => {
      expect(await adaOrder()).toEqual({
        id: 1,
        customer: 'ada',
        lines: [
          { id: 1, order: 1, product: 'TEA', quantity: 2 },
          { id: 2, order: 1, product: 'MILK', quantity: 1 },
          { id: 3, order: 1, product: 'JAM', quantity: 3 },
        ],
        notes: [{ id: 1, order: 1, text: 'ring twice' }],
      });
      expect(await lines()).toEqual([
        { id: 1, order_id: 1, product: 'TEA', quantity: 2 },
        { id: 2, order_id: 1, product: 'MILK', quantity: 1 },
        { id: 3, order_id: 1, product: 'JAM', quantity: 3 },
      ]);
    });

    it('answers empty lists when the body sends none', async () => {
      const res = await request(svc.app).post('/v/orders/').set(CLERK).send({ customer: 'bob' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ id: 1, customer: 'bob', lines: [], notes: [] });
    });

    it('refuses an invalid third line with a 422 at its location, leaving no row behind', async () => {
      const res = await request(svc.app)
        .post('/v/orders/')
        .set(CLERK)
        .send({ customer: 'ada', lines: [{ product: 'tea' }, { product: 'milk' }, { product: 'jam', quantity: 'many' }] });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        detail: [{ type: 'int_type', loc: ['body', 'data', 'lines', 2, 'quantity'], msg: 'Input should be a valid integer' }],
      });
      expect(await orders()).toEqual([]);
      expect(await lines()).toEqual([]);
    });

    it('rolls back the order and the lines before a third line the database refuses (409)', async () => {
      const res = await request(svc.app)
        .post('/v/orders/')
        .set(CLERK)
        .send({ customer: 'ada', lines: [{ product: 'tea' }, { product: 'milk' }, { product: 'TEA' }], notes: [{ text: 'first' }] });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: 'conflict', details: 'An order line with this order and product already exists.' });
      expect(await orders()).toEqual([]);
      expect(await lines()).toEqual([]);
      expect(await notes()).toEqual([]);
    });
  });

  describe('update', () => {
    it('replaces the lines: named lines are updated, new ones created, the others deleted (a staff caller)', async () => {
      await adaOrder();
      const res = await request(svc.app)
        .patch('/v/orders/1/')
        .set(STAFF)
        .send({ lines: [{ id: 3, product: 'jam', quantity: 5 }, { product: 'bread' }] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: 1,
        customer: 'ada',
        lines: [
          { id: 3, order: 1, product: 'jam', quantity: 5 },
          { id: 4, order: 1, product: 'BREAD', quantity: 1 },
        ],
      });
      expect(await lines()).toEqual([
        { id: 3, order_id: 1, product: 'jam', quantity: 5 },
        { id: 4, order_id: 1, product: 'BREAD', quantity: 1 },
      ]);
    });

    it('merges the notes: named notes are updated, new ones created, the others kept', async () => {
      await adaOrder();
      const res = await request(svc.app)
        .patch('/v/orders/1/')
        .set(CLERK)
        .send({ customer: 'ada l.', notes: [{ text: 'leave at door' }, { id: 1, text: 'ring once' }] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: 1,
        customer: 'ada l.',
        notes: [
          { id: 2, order: 1, text: 'leave at door' },
          { id: 1, order: 1, text: 'ring once' },
        ],
      });
      expect(await notes()).toEqual([
        { id: 1, order_id: 1, text: 'ring once' },
        { id: 2, order_id: 1, text: 'leave at door' },
      ]);
      // The lines were not sent: they stay as they are.
      expect((await lines()).length).toBe(3);
    });

    it('refuses a key that is not a child of this order (422 at the key), changing nothing', async () => {
      await adaOrder();
      const other = await request(svc.app)
        .post('/v/orders/')
        .set(CLERK)
        .send({ customer: 'bob', notes: [{ text: 'bob note' }] });
      expect(other.status).toBe(201);
      const res = await request(svc.app)
        .patch('/v/orders/1/')
        .set(CLERK)
        .send({ customer: 'changed', notes: [{ text: 'new' }, { id: 2, text: 'stolen' }, { id: 1, text: 'a' }, { id: 1, text: 'b' }] });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        detail: [
          { type: 'not_a_child', loc: ['body', 'data', 'notes', 1, 'id'], msg: 'No order note of this order has this key' },
          { type: 'duplicate_key', loc: ['body', 'data', 'notes', 3, 'id'], msg: 'The order note with this key is listed twice' },
        ],
      });
      expect(await orders()).toEqual([
        { id: 1, customer: 'ada' },
        { id: 2, customer: 'bob' },
      ]);
      expect(await notes()).toEqual([
        { id: 1, order_id: 1, text: 'ring twice' },
        { id: 2, order_id: 2, text: 'bob note' },
      ]);
    });

    it('applies the child roles: a replace that deletes a line needs staff (403), and rolls back', async () => {
      await adaOrder();
      const res = await request(svc.app)
        .patch('/v/orders/1/')
        .set(CLERK)
        .send({ customer: 'changed', lines: [{ id: 1, product: 'tea' }] });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden', details: 'Role staff is required' });
      expect(await orders()).toEqual([{ id: 1, customer: 'ada' }]);
      expect((await lines()).length).toBe(3);
    });

    it('applies the child object permission: a FROZEN line is not changed (403), and nothing is', async () => {
      const created = await request(svc.app)
        .post('/v/orders/')
        .set(CLERK)
        .send({ customer: 'ada', lines: [{ product: 'frozen' }, { product: 'tea' }] });
      expect(created.status).toBe(201);
      const res = await request(svc.app)
        .patch('/v/orders/1/')
        .set(STAFF)
        .send({
          lines: [
            { id: 2, product: 'tea', quantity: 9 },
            { id: 1, product: 'FROZEN', quantity: 2 },
          ],
        });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden', details: 'You do not have permission to perform this action.' });
      expect(await lines()).toEqual([
        { id: 1, order_id: 1, product: 'FROZEN', quantity: 1 },
        { id: 2, order_id: 1, product: 'TEA', quantity: 1 },
      ]);
    });

    it('leaves the children alone when the body sends no list', async () => {
      await adaOrder();
      const res = await request(svc.app).patch('/v/orders/1/').set(CLERK).send({ customer: 'ada b.' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ id: 1, customer: 'ada b.' });
      expect((await lines()).length).toBe(3);
      expect((await notes()).length).toBe(1);
    });
  });

  it('documents the nested bodies and answers in the OpenAPI document', async () => {
    const res = await request(svc.app).get('/v/openapi.json');
    expect(res.status).toBe(200);
    const schemas = res.body.components.schemas;
    expect(schemas.OrderIn.properties.lines).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/OrderLinesItem' },
      maxItems: 100,
    });
    expect(schemas.OrderUpdateItem).toBeUndefined();
    expect(schemas.OrderLinesUpdateItem.properties.id).toBeDefined();
    expect(schemas.OrderCreateResult.required).toEqual(['id', 'customer', 'lines', 'notes']);
  });
});
