/**
 * querySource's keyset on both databases, for every kind of key a cursor carries: read page by
 * page from the positions the previous page gave (through JSON, as a cursor carries them), forward
 * and backward, ascending and descending, it lists the rows exactly as ORDER BY does, ties broken by
 * the primary key; `accept` refuses values of another kind.
 */
import { querySource, type Db, type KeyKind, type OrderTerm, type Row } from '../../runtime';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';

const KINDS: Record<string, KeyKind> = {
  id: 'int',
  price: 'decimal',
  ratio: 'float',
  flag: 'bool',
  day: 'date',
  at: 'datetime',
  tag: 'uuid',
  name: 'str',
};

describe.each(DIALECTS)('querySource keyset (%s)', (dialect) => {
  let database: TestDatabase;
  let db: Db;
  beforeAll(async () => {
    database = await createDatabase(dialect);
    db = database.db;
    await db.schema.createTable('things', (t) => {
      t.increments('id');
      t.decimal('price', 8, 2).notNullable();
      t.double('ratio').notNullable();
      t.boolean('flag').notNullable();
      t.date('day').notNullable();
      t.timestamp('at', { useTz: true }).notNullable();
      t.uuid('tag').notNullable();
      t.string('name', 20).notNullable();
    });
    // Nine rows, every column with ties (three values each, in different patterns).
    for (let i = 0; i < 9; i++) {
      await db('things').insert({
        price: ['12.50', '3.05', '100.00'][i % 3],
        ratio: [0.1, 2.5, -1][(i * 2) % 3],
        flag: i % 2 === 0,
        day: ['2026-03-01', '2025-12-31', '2026-01-15'][Math.floor(i / 3)],
        at: ['2026-01-01T10:00:00.123Z', '2026-01-01T09:59:59.999Z', '2027-06-30T00:00:00.000Z'][(i + 1) % 3],
        tag: ['0a000000-0000-4000-8000-000000000001', 'ff000000-0000-4000-8000-000000000002', '0b000000-0000-4000-8000-000000000003'][
          i % 3
        ],
        name: ['b', 'a', 'c'][Math.floor(i / 3)],
      });
    }
  });
  afterAll(() => database.drop());

  const shape = async (_db: Db, rows: Row[]) => rows.map((row) => Number(row.id));
  const source = (ordering: OrderTerm[]) => querySource(db, db('things'), { columns: ['id'], pk: 'id', ordering, shape, kinds: KINDS });

  /** Every row, `size` at a time, each page read from the position JSON gives back. */
  async function walk(ordering: OrderTerm[], size: number, backward: boolean): Promise<number[]> {
    const keyset = source(ordering).keyset!;
    const seen: number[] = [];
    let position: unknown[] | null = null;
    for (;;) {
      const { items, keys } = await keyset.read(size, position, backward);
      seen.push(...items);
      if (items.length < size) return backward ? seen.reverse() : seen;
      position = keyset.accept(JSON.parse(JSON.stringify(keys[keys.length - 1])))!;
      expect(position).toBeDefined();
    }
  }

  it.each(Object.keys(KINDS).flatMap((column) => [`${column} asc`, `${column} desc`]))(
    'reads by %s forward and back as ORDER BY lists',
    async (term) => {
      const [column, order] = term.split(' ') as [string, 'asc' | 'desc'];
      const ordering = [{ column, order }];
      const all = await source(ordering).fetch(undefined, 0);
      expect(all).toHaveLength(9);
      for (const size of [1, 2, 4]) {
        expect(await walk(ordering, size, false)).toEqual(all);
        expect(await walk(ordering, size, true)).toEqual(all);
      }
    },
  );

  it('reads by several terms, mixed directions', async () => {
    const ordering: OrderTerm[] = [
      { column: 'day', order: 'desc' },
      { column: 'flag', order: 'asc' },
      { column: 'price', order: 'desc' },
    ];
    const all = await source(ordering).fetch(undefined, 0);
    expect(await walk(ordering, 2, false)).toEqual(all);
    expect(await walk(ordering, 3, true)).toEqual(all);
  });

  it.each<[string, unknown]>([
    ['price', 12.5],
    ['price', '12,50'],
    ['ratio', 'NaN'],
    ['flag', 1],
    ['day', '2026-02-30'],
    ['day', '2026-3-1'],
    ['day', '2026-13-01'],
    ['day', '0000-01-01'],
    ['name', 'a\u0000b'],
    ['id', 2 ** 31],
    ['at', '2026-01-01T10:00:00Z'],
    ['at', 1767261600000],
    ['tag', 'not-a-uuid'],
    ['name', 3],
    ['id', '1'],
  ])('refuses a %s key of %j', (column, value) => {
    const keyset = source([{ column, order: 'asc' }]).keyset!;
    // The primary key ends every ordering; ordered by it alone, the position is one value.
    expect(keyset.accept(column === 'id' ? [value] : [value, 1])).toBeUndefined();
    expect(keyset.accept(column === 'id' ? [1] : [value, 1, 1])).toEqual(column === 'id' ? [1] : undefined);
  });
});
