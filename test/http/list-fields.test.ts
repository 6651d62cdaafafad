/**
 * `list` fields (the showcase's bookmarks): lists of strings, integers, dates and choices, validated
 * item by item, stored as native arrays on PostgreSQL and JSON elsewhere, read back in their order,
 * and filtered with `contains` (every value) and `overlap` (any), with the same answers on every database.
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { takeErrors } from '../support/fixtures';
import { startShowcase, type RunningService } from '../support/services';

describe.each(DIALECTS)('list fields (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  async function create(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    const res = await request(svc.app).post('/v/bookmarks/').send(body);
    expect([res.status, res.body]).toEqual([201, expect.any(Object)]);
    return res.body;
  }

  it('creates with lists, keeps their order, and applies list defaults', async () => {
    const res = await request(svc.app)
      .post('/v/bookmarks/')
      .send({ title: 'a', tags: ['zeta', 'Alpha', 'zeta', 'a,b "q" \\ {x}'], ratings: [5, -1, 0], visits: ['2026-01-31', '0001-01-01'] });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      title: 'a',
      tags: ['zeta', 'Alpha', 'zeta', 'a,b "q" \\ {x}'],
      ratings: [5, -1, 0],
      sizes: ['M'],
      visits: ['2026-01-31', '0001-01-01'],
    });
    const got = await request(svc.app).get(`/v/bookmarks/${res.body.id}/`);
    expect([got.status, got.body]).toEqual([200, res.body]);
    const bare = await create({ title: 'bare' });
    expect(bare).toEqual({ id: expect.any(Number), title: 'bare', tags: [], ratings: null, sizes: ['M'], visits: null });
  });

  it('patches a list (replaces it), to empty, and to null when nullable', async () => {
    const { id } = await create({ title: 'p', tags: ['x'], ratings: [1] });
    const patched = await request(svc.app)
      .patch(`/v/bookmarks/${id}/`)
      .send({ tags: ['y', 'x'], ratings: null, sizes: [] });
    expect([patched.status, patched.body]).toEqual([200, { id, title: 'p', tags: ['y', 'x'], ratings: null, sizes: [], visits: null }]);
    const emptied = await request(svc.app).patch(`/v/bookmarks/${id}/`).send({ tags: [], ratings: [] });
    expect([emptied.status, emptied.body]).toEqual([200, { id, title: 'p', tags: [], ratings: [], sizes: [], visits: null }]);
  });

  describe('refuses what is not a list of the item type, with the location of the item', () => {
    it.each([
      [
        'a string where a list is expected',
        { tags: 'clinician' },
        [{ type: 'list_type', loc: ['body', 'data', 'tags'], msg: 'Input should be a valid list' }],
      ],
      [
        'null for a list that is not nullable',
        { tags: null },
        [{ type: 'list_type', loc: ['body', 'data', 'tags'], msg: 'Input should be a valid list' }],
      ],
      [
        'an item of the wrong type',
        { tags: ['a', 'b', 3] },
        [{ type: 'string_type', loc: ['body', 'data', 'tags', 2], msg: 'Input should be a valid string' }],
      ],
      [
        'an item too long',
        { tags: ['a', 'x'.repeat(21)] },
        [{ type: 'string_too_long', loc: ['body', 'data', 'tags', 1], msg: 'String should have at most 20 characters' }],
      ],
      [
        'too many items',
        { tags: ['1', '2', '3', '4', '5', '6'] },
        [{ type: 'too_long', loc: ['body', 'data', 'tags'], msg: 'List should have at most 5 items' }],
      ],
      [
        'an integer out of range',
        { ratings: [1, 2147483648] },
        [{ type: 'less_than_equal', loc: ['body', 'data', 'ratings', 1], msg: 'Input should be less than or equal to 2147483647' }],
      ],
      [
        'a fraction for an integer item',
        { ratings: [1.5] },
        [{ type: 'int_type', loc: ['body', 'data', 'ratings', 0], msg: 'Input should be a valid integer' }],
      ],
      [
        'an item not among the choices',
        { sizes: ['S', 'XL'] },
        [{ type: 'enum', loc: ['body', 'data', 'sizes', 1], msg: 'Input should be "S" or "M" or "L"' }],
      ],
      [
        'a date that is not one',
        { visits: ['2026-01-01', '2026-02-30'] },
        [{ type: 'date_parsing', loc: ['body', 'data', 'visits', 1], msg: 'Input should be a valid date in the format YYYY-MM-DD' }],
      ],
      [
        'a date out of range',
        { visits: ['0000-12-31'] },
        [{ type: 'date_out_of_range', loc: ['body', 'data', 'visits', 0], msg: 'Date should be between 0001-01-01 and 9999-12-31' }],
      ],
    ])('%s → 422', async (_what, fields, detail) => {
      const created = await request(svc.app)
        .post('/v/bookmarks/')
        .send({ title: 't', ...fields });
      expect([created.status, created.body]).toEqual([422, { detail }]);
      const { id } = await create({ title: 'patched' });
      const patched = await request(svc.app).patch(`/v/bookmarks/${id}/`).send(fields);
      expect([patched.status, patched.body]).toEqual([422, { detail }]);
    });
  });

  it('reports every bad item of every list at once (the example of docs/reference/spec/fields.md)', async () => {
    const { id } = await create({ title: 'many' });
    const res = await request(svc.app)
      .patch(`/v/bookmarks/${id}/`)
      .send({ tags: ['a', 'x', 'y'.repeat(21)], ratings: [1, 2147483648] });
    expect([res.status, res.body]).toEqual([
      422,
      {
        detail: [
          { type: 'string_too_long', loc: ['body', 'data', 'tags', 2], msg: 'String should have at most 20 characters' },
          { type: 'less_than_equal', loc: ['body', 'data', 'ratings', 1], msg: 'Input should be less than or equal to 2147483647' },
        ],
      },
    ]);
  });

  describe('contains (every value) and overlap (any value)', () => {
    let ids: Record<string, number>;
    beforeAll(async () => {
      // Only these rows: the rows other tests made (some with null ratings) would page them out.
      await svc.database.db('bookmarks').del();
      ids = {};
      for (const [title, tags, ratings, visits] of [
        ['one', ['red', 'green'], [1, 2], ['2026-01-01']],
        ['two', ['Red', 'blue'], [2, 3], null],
        ['three', ['green', 'blue', 'red'], null, ['2026-02-01', '2026-01-01']],
        ['four', [], [], []],
        ['five', ['red%', 'gr_en'], [30], null],
      ] as const) {
        ids[title] = (await create({ title: `f-${title}`, tags, ratings, visits })).id as number;
      }
    });

    async function titles(query: string): Promise<string[]> {
      const res = await request(svc.app).get(`/v/bookmarks/?${query}&page_size=100`);
      expect(res.status).toBe(200);
      return (res.body.items as { title: string }[])
        .map((b) => b.title)
        .filter((t) => t.startsWith('f-'))
        .map((t) => t.slice(2));
    }

    it.each([
      ['tags__contains=red', ['one', 'three']],
      ['tags__contains=red,green', ['one', 'three']],
      ['tags__contains=red,blue', ['three']],
      ['tags__contains=Red', ['two']],
      ['tags__contains=re', []],
      ['tags__contains=red%25', ['five']],
      ['tags__contains=gr_en', ['five']],
      ['tags__overlap=blue,green', ['one', 'two', 'three']],
      ['tags__overlap=RED', []],
      ['tags__overlap=nothing,red', ['one', 'three']],
      ['ratings__contains=2', ['one', 'two']],
      ['ratings__contains=2,3', ['two']],
      ['ratings__overlap=1,3,30', ['one', 'two', 'five']],
      ['ratings__isnull=true', ['three']],
      ['ratings__isnull=false', ['one', 'two', 'four', 'five']],
      ['visits__overlap=2026-01-01', ['one', 'three']],
      ['visits__overlap=2026-02-01,1999-01-01', ['three']],
      // A match case: a rating from 1 to 5, or (excluded) none, which keeps null and empty lists.
      ['rated=true', ['one', 'two']],
      ['rated=false', ['three', 'four', 'five']],
    ])('?%s', async (query, expected) => {
      expect(await titles(query)).toEqual(expected);
    });

    it('validates each value of the filter as the item type', async () => {
      const res = await request(svc.app).get('/v/bookmarks/?ratings__contains=1,2147483648');
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ detail: [{ type: 'less_than_equal', loc: ['query', 'ratings__contains'], msg: expect.any(String) }] });
    });
  });

  it('documents a list as an array of its items in the OpenAPI document', async () => {
    const res = await request(svc.app).get('/v/openapi.json');
    const schemas = res.body.components.schemas;
    expect(schemas.BookmarkIn.properties.tags).toEqual({ type: 'array', items: { type: 'string', maxLength: 20 }, maxItems: 5 });
    // No max_items in the spec: the default, 1000.
    expect(schemas.BookmarkIn.properties.ratings).toEqual({
      type: ['array', 'null'],
      items: { type: 'integer', minimum: -2147483648, maximum: 2147483647 },
      maxItems: 1000,
    });
    expect(schemas.BookmarkOut.properties.ratings).toEqual({ type: ['array', 'null'], items: { type: 'integer' }, maxItems: 1000 });
    expect(schemas.BookmarkOut.properties.sizes).toEqual({
      type: 'array',
      items: { type: 'string', enum: ['S', 'M', 'L'] },
      maxItems: 1000,
    });
  });
});
