/**
 * orderByTerms on both databases: a related field two foreign keys away, through a table that refers
 * to itself (each hop reads its own alias), descending and ascending, rows without a related row
 * (a NULL key) kept, and the exact SQL of the subquery.
 */
import { type Db } from '../../runtime';
import { orderByTerms, relatedValue } from '../../runtime/query/related-ordering';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';

const BOSS_NAME = { column: 'people.name', hops: [{ from: 'people.boss_id', table: 'people', key: 'people.id' }] };
const BOSS_OF_BOSS_NAME = {
  column: 'people.name',
  hops: [
    { from: 'people.boss_id', table: 'people', key: 'people.id' },
    { from: 'people.boss_id', table: 'people', key: 'people.id' },
  ],
};

it('reads each hop under its own alias', () => {
  expect(relatedValue(BOSS_OF_BOSS_NAME)).toEqual({
    sql: '(select ?? from ?? as ?? where ?? = (select ?? from ?? as ?? where ?? = ??))',
    bindings: [
      'svc_order_2.name',
      'people',
      'svc_order_2',
      'svc_order_2.id',
      'svc_order_1.boss_id',
      'people',
      'svc_order_1',
      'svc_order_1.id',
      'people.boss_id',
    ],
  });
});

describe.each(DIALECTS)('orderByTerms (%s)', (dialect) => {
  let database: TestDatabase;
  let db: Db;
  beforeAll(async () => {
    database = await createDatabase(dialect);
    db = database.db;
    await db.schema.createTable('people', (t) => {
      t.increments('id');
      t.string('name', 20).notNullable();
      t.integer('boss_id').nullable().references('id').inTable('people');
    });
    // Two roots: ceo ← ann ← bob; alf ← zed ← cat, dan.
    await db('people').insert({ name: 'ceo', boss_id: null });
    await db('people').insert({ name: 'alf', boss_id: null });
    await db('people').insert({ name: 'zed', boss_id: 2 });
    await db('people').insert({ name: 'ann', boss_id: 1 });
    await db('people').insert([
      { name: 'cat', boss_id: 3 },
      { name: 'bob', boss_id: 4 },
      { name: 'dan', boss_id: 3 },
    ]);
  });
  afterAll(() => database.drop());

  const names = async (terms: Parameters<typeof orderByTerms>[1]) => {
    const q = db('people').select('name').whereNotNull('boss_id');
    orderByTerms(q, terms);
    return (await q).map((r: { name: string }) => r.name);
  };

  it("orders by the boss's name, then by name", async () => {
    expect(
      await names([
        { ...BOSS_NAME, order: 'asc' },
        { column: 'name', order: 'asc' },
      ]),
    ).toEqual(['zed', 'bob', 'ann', 'cat', 'dan']);
    expect(
      await names([
        { ...BOSS_NAME, order: 'desc' },
        { column: 'name', order: 'desc' },
      ]),
    ).toEqual(['dan', 'cat', 'ann', 'bob', 'zed']);
  });

  it("orders by the name of the boss's boss, two hops through the same table", async () => {
    // cat and dan have alf two levels up, bob the ceo; by name alone it would be bob, cat, dan.
    const q = db('people').select('name').whereIn('name', ['bob', 'cat', 'dan']);
    orderByTerms(q, [
      { ...BOSS_OF_BOSS_NAME, order: 'asc' },
      { column: 'name', order: 'asc' },
    ]);
    expect((await q).map((r: { name: string }) => r.name)).toEqual(['cat', 'dan', 'bob']);
  });
});
