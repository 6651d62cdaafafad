/**
 * Values a database cannot hold are 422s, the same on SQLite and PostgreSQL: dates outside years
 * 0001-9999 (PostgreSQL has no year 0; SQLite would store any text), integers past their column's
 * width, decimals past their digits, strings past their length, in bodies, query filters and path
 * keys. The last values in range are accepted and read back unchanged on both.
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { makeArticle, makeUser } from '../support/blog-fixtures';
import { takeErrors } from '../support/fixtures';
import { startBlog, startQuerying, startShowcase, type RunningService } from '../support/services';

const DATE_RANGE = { type: 'date_out_of_range', msg: 'Date should be between 0001-01-01 and 9999-12-31' };
const DATETIME_RANGE = {
  type: 'datetime_out_of_range',
  msg: 'Datetime should be between 0001-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z',
};
const INT_PARSING = 'Input should be a valid integer, unable to parse string as an integer';

const entry = (e: { type: string; msg: string }, ...loc: (string | number)[]) => ({ type: e.type, loc, msg: e.msg });
const invalid = (...entries: unknown[]) => ({ status: 422, body: { detail: entries } });

describe.each(DIALECTS)('values past what a column holds, in bodies (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  let n = 0;
  const create = (fields: Record<string, unknown>) => {
    n += 1;
    return request(svc.app)
      .post('/v/widgets/')
      .send({ name: `limits-${n}`, ...fields });
  };
  const answer = async (fields: Record<string, unknown>) => {
    const res = await create(fields);
    return { status: res.status, body: res.body };
  };

  it.each([
    ['a date in year 0', { released_on: '0000-01-01' }, entry(DATE_RANGE, 'body', 'data', 'released_on')],
    ['a datetime in year 0', { checked_at: '0000-06-01T00:00:00Z' }, entry(DATETIME_RANGE, 'body', 'data', 'checked_at')],
    [
      'a datetime whose offset moves it into year 0',
      { checked_at: '0001-01-01T00:30:00+01:00' },
      entry(DATETIME_RANGE, 'body', 'data', 'checked_at'),
    ],
    [
      'a datetime whose offset moves it past 9999',
      { checked_at: '9999-12-31T23:30:00-01:00' },
      entry(DATETIME_RANGE, 'body', 'data', 'checked_at'),
    ],
    [
      'a 32-bit integer past its column',
      { count: 2147483648 },
      { type: 'less_than_equal', loc: ['body', 'data', 'count'], msg: 'Input should be less than or equal to 2147483647' },
    ],
    [
      'a 32-bit integer below its column',
      { count: -2147483649 },
      { type: 'greater_than_equal', loc: ['body', 'data', 'count'], msg: 'Input should be greater than or equal to -2147483648' },
    ],
    [
      'a big integer past 64 bits',
      { serial: 2 ** 63 },
      { type: 'less_than_equal', loc: ['body', 'data', 'serial'], msg: 'Input should be less than or equal to 9007199254740991' },
    ],
    [
      'a decimal past its digits',
      { price: '1000000.00' },
      {
        type: 'decimal_whole_digits',
        loc: ['body', 'data', 'price'],
        msg: 'Decimal input should have no more than 6 digits before the decimal point',
      },
    ],
    [
      'a string past its length',
      { notes: 'ok', name: 'x'.repeat(41) },
      { type: 'string_too_long', loc: ['body', 'data', 'name'], msg: 'String should have at most 40 characters' },
    ],
  ])('%s → 422', async (_what, fields, expected) => {
    expect(await answer(fields)).toEqual(invalid(expected));
  });

  it('the ends of every range are stored and read back unchanged', async () => {
    const res = await create({
      released_on: '0001-01-01',
      checked_at: '9999-12-31T23:59:59.999Z',
      count: 2147483647,
      serial: 9007199254740991,
      price: '999999.99',
    });
    expect(res.status).toBe(201);
    const back = await request(svc.app).get(`/v/widgets/${res.body.id}/`);
    expect(back.status).toBe(200);
    const other = await create({ released_on: '9999-12-31', checked_at: '0001-01-01T00:00:00Z', count: -2147483648 });
    expect(other.status).toBe(201);
    expect([res.body.released_on, res.body.checked_at, res.body.count, res.body.serial, res.body.price]).toEqual([
      '0001-01-01',
      '9999-12-31T23:59:59.999Z',
      2147483647,
      9007199254740991,
      '999999.99',
    ]);
    expect([other.body.released_on, other.body.checked_at, other.body.count]).toEqual([
      '9999-12-31',
      '0001-01-01T00:00:00.000Z',
      -2147483648,
    ]);
  });

  it('a malformed date or datetime gets the format entry alone, not a range entry too', async () => {
    const DATE_PARSING = { type: 'date_parsing', msg: 'Input should be a valid date in the format YYYY-MM-DD' };
    const DATETIME_PARSING = { type: 'datetime_parsing', msg: 'Input should be a valid datetime in ISO 8601 format' };
    expect(await answer({ released_on: '2024-02-30' })).toEqual(invalid(entry(DATE_PARSING, 'body', 'data', 'released_on')));
    expect(await answer({ released_on: '10000-01-01' })).toEqual(invalid(entry(DATE_PARSING, 'body', 'data', 'released_on')));
    expect(await answer({ checked_at: '10000-01-01T00:00:00Z' })).toEqual(invalid(entry(DATETIME_PARSING, 'body', 'data', 'checked_at')));
  });

  it('a PATCH is held to the same ranges', async () => {
    const { body } = await create({});
    const res = await request(svc.app).patch(`/v/widgets/${body.id}/`).send({ released_on: '0000-12-31' });
    expect({ status: res.status, body: res.body }).toEqual(invalid(entry(DATE_RANGE, 'body', 'data', 'released_on')));
  });
});

describe.each(DIALECTS)('values past what a column holds, in query filters (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startQuerying(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  const answer = async (query: Record<string, string>) => {
    const res = await request(svc.app).get('/books/').query(query);
    return { status: res.status, body: res.body };
  };

  it.each([
    ['a date filter (mixin)', { published_on: '0000-01-01' }, entry(DATE_RANGE, 'query', 'published_on')],
    ['a datetime filter (mixin)', { added_at: '0000-01-01' }, entry(DATETIME_RANGE, 'query', 'added_at')],
    ['a datetime filter with an offset into year 0', { added_at: '0001-01-01T00:00:00+02:00' }, entry(DATETIME_RANGE, 'query', 'added_at')],
    ['a lookup (lt) on a datetime', { added_before: '0000-12-31T23:59:59Z' }, entry(DATETIME_RANGE, 'query', 'added_before')],
    ['one end of a date range', { published_between: '0000-01-01,2000-01-01' }, entry(DATE_RANGE, 'query', 'published_between')],
    ['the other end of a date range', { published_between: '1900-01-01,0000-01-01' }, entry(DATE_RANGE, 'query', 'published_between')],
  ])('%s → 422', async (_what, query, expected) => {
    expect(await answer(query)).toEqual(invalid(expected));
  });

  it('a malformed date in a filter gets the format entry alone', async () => {
    const DATE_PARSING = { type: 'date_parsing', msg: 'Input should be a valid date in the format YYYY-MM-DD' };
    expect(await answer({ published_on: '10000-01-01' })).toEqual(invalid(entry(DATE_PARSING, 'query', 'published_on')));
    expect(await answer({ published_between: '2024-02-30,2024-03-01' })).toEqual(
      invalid(entry(DATE_PARSING, 'query', 'published_between')),
    );
  });

  it('the ends of the range filter normally', async () => {
    expect((await answer({ published_on: '0001-01-01' })).status).toBe(200);
    expect((await answer({ added_before: '9999-12-31T23:59:59.999Z' })).status).toBe(200);
    expect((await answer({ published_between: '0001-01-01,9999-12-31' })).status).toBe(200);
  });
});

describe.each(DIALECTS)('the blog: keys and filters past their column (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startBlog(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  it('?created_at=0000-01-01 → 422 at the query parameter', async () => {
    const res = await request(svc.app).get('/api/articles/').query({ created_at: '0000-01-01' });
    expect({ status: res.status, body: res.body }).toEqual(invalid(entry(DATE_RANGE, 'query', 'created_at')));
  });

  it('path keys that are not 32-bit integers → 422 on every route kind, before any decorator or query', async () => {
    const staff = await makeUser(svc, { is_staff: true });
    const article = await makeArticle(svc.database.db, { author_id: staff.id });
    const routes: [string, string, object | undefined][] = [
      ['get', '/api/articles/{}/', undefined],
      ['patch', '/api/articles/{}/', { title: 'x' }],
      ['delete', '/api/articles/{}/', undefined],
      ['post', '/api/articles/{}/publish/', undefined],
      ['get', '/api/articles/{}/tags/', undefined],
      ['post', '/api/articles/{}/tags/', { add: [1] }],
      ['get', '/api/users/{}/', undefined],
    ];
    for (const key of ['abc', '1.5', '2147483648', '-2147483649', '9223372036854775808']) {
      for (const [method, path, body] of routes) {
        const url = path.replace('{}', key);
        const res = await request(svc.app)[method as 'get'](url).set('Authorization', staff.bearer).send(body);
        const expected =
          /^-?\d+$/.test(key) && Number.isSafeInteger(Number(key))
            ? {
                type: Number(key) > 0 ? 'less_than_equal' : 'greater_than_equal',
                loc: ['path', 'pk'],
                msg:
                  Number(key) > 0
                    ? 'Input should be less than or equal to 2147483647'
                    : 'Input should be greater than or equal to -2147483648',
              }
            : { type: 'int_parsing', loc: ['path', 'pk'], msg: INT_PARSING };
        expect({ url: `${method} ${url}`, status: res.status, body: res.body }).toEqual({
          url: `${method} ${url}`,
          status: 422,
          body: { detail: [expected] },
        });
      }
    }
    // The article is untouched, and a valid key still reaches the decorator and the handler.
    const ok = await request(svc.app).post(`/api/articles/${article}/tags/`).set('Authorization', staff.bearer).send({ add: [] });
    expect({ status: ok.status, body: ok.body }).toEqual({
      status: 200,
      body: { results: { count: 0, details: [] }, errors: { count: 0, details: [] } },
    });
  });

  it('a relation key past 32 bits in a body → 422 at its place', async () => {
    const staff = await makeUser(svc, { is_staff: true });
    const article = await makeArticle(svc.database.db, { author_id: staff.id });
    const res = await request(svc.app)
      .post(`/api/articles/${article}/tags/`)
      .set('Authorization', staff.bearer)
      .send({ add: [1, 2147483648] });
    expect({ status: res.status, body: res.body }).toEqual(
      invalid({ type: 'less_than_equal', loc: ['body', 'data', 'add', 1], msg: 'Input should be less than or equal to 2147483647' }),
    );
    const category = await request(svc.app)
      .post('/api/articles/')
      .set('Authorization', staff.bearer)
      .send({ title: 't', content: 'c', category: 2 ** 31 });
    expect({ status: category.status, body: category.body }).toEqual(
      invalid({ type: 'less_than_equal', loc: ['body', 'data', 'category'], msg: 'Input should be less than or equal to 2147483647' }),
    );
  });
});
