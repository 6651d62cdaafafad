/**
 * List filters over HTTP, on SQLite and PostgreSQL with the same expectations: typed query
 * parameters (defaults, 422s), every lookup operator, chains through foreign keys and a
 * many-to-many (no duplicates, right count), LIKE escaping, the filter mixins and what each
 * ignores, match cases (include, exclude, composed and/or/not), query_params_handler hooks (sync
 * and async, mixins in another order), and the blog's article filters. Whole bodies, exact statuses.
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { countQueries, createUser, insertRows, takeErrors, type TestUser } from '../support/fixtures';
import { startBlog, startQuerying, type RunningService } from '../support/services';

const ISBN = '3f2c7e1a-5b1d-4c2e-8f00-000000000001';

/** The books of the querying fixture, by short name, in insertion (= id) order. */
const BOOKS = {
  pure_: '100% Pure',
  pure: '100 Pure',
  snake_: 'snake_case',
  snakeX: 'snakeXcase',
  back: 'back\\slash',
  elan: 'Élan Vital',
} as const;
type Book = keyof typeof BOOKS;
const ALL_BOOKS = Object.keys(BOOKS) as Book[];

/** `where …` of a captured SELECT, with identifier quotes and placeholders made dialect-neutral. */
function whereOf(sql: string): string {
  const where = sql.slice(sql.indexOf(' where ') + 7, sql.indexOf(' order by '));
  return where.replace(/[`"]/g, '').replace(/\$\d+/g, '?');
}

describe.each(DIALECTS)('list filters: querying fixture (%s)', (dialect) => {
  /**
   * An icontains condition with an ASCII value: PostgreSQL's lower() of both sides; SQLite's own
   * lower(), natively; MySQL's lower() of both sides compared as bytes, whatever the collation.
   */
  const ilike = (column: string) =>
    ({
      postgres: `lower(${column}) LIKE lower(?) ESCAPE '\\'`,
      sqlite: `lower(${column}) LIKE ? ESCAPE '\\'`,
      mysql: `cast(lower(convert(${column} using utf8mb4) collate utf8mb4_uca1400_as_cs) as binary) LIKE ? ESCAPE '\\\\'`,
    })[dialect];
  let svc: RunningService;
  const ids = {
    books: {} as Record<Book, number>,
    authors: {} as Record<string, number>,
    genres: {} as Record<string, number>,
    probes: [] as number[],
  };

  beforeAll(async () => {
    svc = await startQuerying(dialect);
    const db = svc.database.db;
    const [fr, de] = (
      await insertRows(db, 'countries', [
        { name: 'France', code: 'FR' },
        { name: 'Germany', code: 'DE' },
      ])
    ).map(Number);
    const authors = await insertRows(db, 'authors', [
      { name: 'Ann', country_id: fr, active: true },
      { name: 'Bob', country_id: de, active: true },
      { name: 'Cid', country_id: null, active: false },
      { name: 'Dee', country_id: fr, active: false },
    ]);
    ['Ann', 'Bob', 'Cid', 'Dee'].forEach((name, i) => (ids.authors[name] = Number(authors[i])));
    const genres = await insertRows(
      db,
      'genres',
      ['Fantasy', 'Fable', 'Pulp', 'Poetry'].map((name) => ({ name })),
    );
    ['Fantasy', 'Fable', 'Pulp', 'Poetry'].forEach((name, i) => (ids.genres[name] = Number(genres[i])));
    const { Ann, Bob, Cid, Dee } = ids.authors;
    const rows: [Book, Record<string, unknown>, string[]][] = [
      [
        'pure_',
        {
          subtitle: null,
          pages: 120,
          rating: 4.8,
          price: '9.99',
          in_print: true,
          published_on: '1940-05-01',
          added_at: '2024-01-01T10:00:00.000Z',
          isbn: ISBN,
          author_id: Ann,
        },
        ['Fantasy', 'Fable'],
      ],
      [
        'pure',
        {
          subtitle: 'A sequel',
          pages: 300,
          rating: null,
          price: '12.50',
          in_print: false,
          published_on: '1999-12-31',
          added_at: '2024-02-01T00:00:00.000Z',
          author_id: Bob,
        },
        ['Pulp'],
      ],
      [
        'snake_',
        {
          subtitle: 'Style',
          pages: 30,
          rating: 3.0,
          price: '5.00',
          in_print: true,
          published_on: null,
          added_at: '2024-03-15T12:30:00.000Z',
          author_id: Cid,
        },
        [],
      ],
      [
        'snakeX',
        {
          subtitle: null,
          pages: 13,
          rating: 4.5,
          price: '7.25',
          in_print: true,
          published_on: '2001-01-01',
          added_at: '2024-03-16T00:00:00.000Z',
          author_id: null,
        },
        ['Fantasy', 'Pulp'],
      ],
      [
        'back',
        {
          subtitle: 'Paths',
          pages: 500,
          rating: 5.0,
          price: '20.00',
          in_print: false,
          published_on: '1960-06-06',
          added_at: '2023-12-31T23:59:59.000Z',
          author_id: Dee,
        },
        ['Poetry', 'Fable', 'Fantasy'],
      ],
      [
        'elan',
        {
          subtitle: null,
          pages: 3,
          rating: 1.5,
          price: '0.50',
          in_print: true,
          published_on: '1907-01-01',
          added_at: '2024-01-01T00:00:00.000Z',
          author_id: Ann,
        },
        ['Poetry'],
      ],
    ];
    for (const [name, values, bookGenres] of rows) {
      const [id] = await insertRows(db, 'books', [{ title: BOOKS[name], ...values }]);
      ids.books[name] = Number(id);
      for (const g of bookGenres) await insertRows(db, 'books_genres', [{ book_id: id, genre_id: ids.genres[g] }], 'book_id');
    }
    ids.probes = (
      await insertRows(db, 'probes', [
        { label: 'alpha 3', n: 3, x: 1.5, flag: true, day: '2024-01-10', at: '2024-01-10T08:00:00.000Z' },
        { label: 'beta', n: 30, x: 3.0, flag: false, day: '2024-01-20', at: '2024-01-20T08:00:00.000Z' },
        { label: 'gamma 30', n: 13, x: 1.5, flag: true, day: '2024-01-30', at: '2024-01-30T08:00:00.000Z' },
      ])
    ).map(Number);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  const books = (...names: Book[]) => ({ items: names.map((n) => ({ id: ids.books[n], title: BOOKS[n] })), count: names.length });
  const list = (path: string, query: Record<string, string>) => request(svc.app).get(path).query(query);

  async function expectBooks(query: Record<string, string>, names: Book[]): Promise<void> {
    const res = await list('/books/', query);
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: books(...names) });
  }

  it('lists everything without filters', async () => {
    await expectBooks({}, ALL_BOOKS);
  });

  describe('generated mixins, applied in filter_mixins order', () => {
    it.each<[string, Record<string, string>, Book[]]>([
      ['Icontains: string values, case-insensitively', { title: 'PURE' }, ['pure_', 'pure']],
      ['Icontains: lower() folds non-ASCII letters on both databases', { title: 'élan VITAL' }, ['elan']],
      ['Boolean: exact', { in_print: 'false' }, ['pure', 'back']],
      ['Numeric: int exact (not contains)', { pages: '30' }, ['snake_']],
      ['Numeric: float exact', { rating: '4.50' }, ['snakeX']],
      ['GreaterEqualDate: a date', { published_on: '1960-06-06' }, ['pure', 'snakeX', 'back']],
      [
        'GreaterEqualDate: a datetime with an offset, compared in UTC',
        { added_at: '2024-01-01T05:00:00+05:00' },
        ['pure_', 'pure', 'snake_', 'snakeX', 'elan'],
      ],
      ['several mixins combine', { title: 'pure', in_print: 'true' }, ['pure_']],
    ])('%s', async (_name, query, expected) => {
      await expectBooks(query, expected);
    });
  });

  describe('lookup operators (RelationFilterViewSetMixin)', () => {
    it.each<[string, Record<string, string>, Book[]]>([
      ['exact', { title_exact: '100 Pure' }, ['pure']],
      ['exact is case-sensitive', { title_exact: '100 pure' }, []],
      ['iexact', { title_iexact: '100 PURE' }, ['pure']],
      ['iexact with non-ASCII letters', { title_iexact: 'élan vital' }, ['elan']],
      ['contains', { title_contains: 'Pure' }, ['pure_', 'pure']],
      ['contains is case-sensitive on both databases', { title_contains: 'pure' }, []],
      ['startswith', { title_startswith: 'snake' }, ['snake_', 'snakeX']],
      ['startswith is case-sensitive', { title_startswith: 'Snake' }, []],
      ['istartswith', { title_istartswith: 'SNAKE' }, ['snake_', 'snakeX']],
      ['endswith', { title_endswith: 'case' }, ['snake_', 'snakeX']],
      ['gt', { pages_gt: '120' }, ['pure', 'back']],
      ['gte', { pages_gte: '120' }, ['pure_', 'pure', 'back']],
      ['lt', { pages_lt: '13' }, ['elan']],
      ['lte', { pages_lte: '13' }, ['snakeX', 'elan']],
      ['gt the largest value the integer column holds', { pages_gt: '2147483647' }, []],
      ['gte the smallest value the integer column holds', { pages_gte: '-2147483648' }, ALL_BOOKS],
      ['in: a comma-separated list', { pages_in: '3,30,999' }, ['snake_', 'elan']],
      ['in: a repeated value', { pages_in: '13,13' }, ['snakeX']],
      ['range: low and high included', { pages_range: '13,120' }, ['pure_', 'snake_', 'snakeX']],
      ['float lt', { rating_lt: '2.5' }, ['elan']],
      ['isnull true', { no_subtitle: 'true' }, ['pure_', 'snakeX', 'elan']],
      ['isnull false', { no_subtitle: 'false' }, ['pure', 'snake_', 'back']],
      ['date range', { published_between: '1940-01-01,1960-12-31' }, ['pure_', 'back']],
      ['datetime lt', { added_before: '2024-01-01T00:00:00Z' }, ['back']],
      ['decimal exact', { price: '9.99' }, ['pure_']],
      ['decimal exact, written with another scale', { price: '20' }, ['back']],
      ['uuid exact', { isbn: ISBN }, ['pure_']],
      ['decimal gte', { min_price: '9.99' }, ['pure_', 'pure', 'back']],
      ['decimal gte between stored values', { min_price: '10' }, ['pure', 'back']],
    ])('%s', async (_name, query, expected) => {
      await expectBooks(query, expected);
    });
  });

  describe('LIKE escaping: % _ and \\ in the input match themselves', () => {
    it.each<[string, Record<string, string>, Book[]]>([
      ['% (icontains)', { title: '%' }, ['pure_']],
      ['100% (icontains)', { title: '100%' }, ['pure_']],
      ['_ (icontains)', { title: '_' }, ['snake_']],
      ['e_c (icontains): not snakeXcase', { title: 'e_c' }, ['snake_']],
      ['\\ (icontains)', { title: '\\' }, ['back']],
      ['% (contains)', { title_contains: '%' }, ['pure_']],
      ['snake_ (startswith)', { title_startswith: 'snake_' }, ['snake_']],
      ['_case (endswith)', { title_endswith: '_case' }, ['snake_']],
    ])('%s', async (_name, query, expected) => {
      await expectBooks(query, expected);
    });
  });

  describe('relation chains', () => {
    it.each<[string, () => Record<string, string>, Book[]]>([
      ['foreign key', () => ({ author: 'Ann' }), ['pure_', 'elan']],
      ['foreign key to the related primary key', () => ({ author_id: String(ids.authors.Bob) }), ['pure']],
      ['foreign key isnull', () => ({ no_author: 'true' }), ['snakeX']],
      ['foreign key not null', () => ({ no_author: 'false' }), ['pure_', 'pure', 'snake_', 'back', 'elan']],
      ['two foreign keys deep', () => ({ country: 'France' }), ['pure_', 'back', 'elan']],
      ['two foreign keys deep, in', () => ({ country_codes: 'DE,FR' }), ['pure_', 'pure', 'back', 'elan']],
      ['isnull through two foreign keys: a missing related row counts as null', () => ({ no_country: 'true' }), ['snake_', 'snakeX']],
      ['not null through two foreign keys', () => ({ no_country: 'false' }), ['pure_', 'pure', 'back', 'elan']],
      ['many-to-many: two matching genres, one row', () => ({ genre: 'fa' }), ['pure_', 'snakeX', 'back']],
      ['many-to-many in: three matching genres, one row', () => ({ genres: 'Fantasy,Fable,Poetry' }), ['pure_', 'snakeX', 'back', 'elan']],
      ['many-to-many by the related primary key', () => ({ genre_id: String(ids.genres.Pulp) }), ['pure', 'snakeX']],
      ['many-to-many isnull: no related row', () => ({ no_genres: 'true' }), ['snake_']],
      ['many-to-many not null', () => ({ no_genres: 'false' }), ['pure_', 'pure', 'snakeX', 'back', 'elan']],
    ])('%s', async (_name, query, expected) => {
      await expectBooks(query(), expected);
    });

    it('pages through a many-to-many lookup without repeats, with the count after filters', async () => {
      const first = await list('/books/', { genres: 'Fantasy,Fable,Poetry', page_size: '2' });
      const second = await list('/books/', { genres: 'Fantasy,Fable,Poetry', page_size: '2', page: '2' });
      expect([first.status, first.body]).toEqual([200, { items: books('pure_', 'snakeX').items, count: 4 }]);
      expect([second.status, second.body]).toEqual([200, { items: books('back', 'elan').items, count: 4 }]);
    });

    it('compiles hops to IN subqueries, never joins of the listed table', async () => {
      const sql: string[] = [];
      const listener = (q: { sql: string }) => sql.push(q.sql);
      svc.database.db.on('query', listener);
      try {
        await list('/books/', { country: 'France' });
        await list('/books/', { genre: 'fa' });
        await list('/books/', { author_id: '1' });
      } finally {
        svc.database.db.removeListener('query', listener);
      }
      expect(sql.filter((s) => s.includes(' order by ')).map(whereOf)).toEqual([
        'books.author_id in (select authors.id from authors where (authors.country_id in (select countries.id from countries where (countries.name = ?))))',
        `books.id in (select books_genres.book_id from books_genres inner join genres on genres.id = books_genres.genre_id where (${ilike('genres.name')}))`,
        'books.author_id = ?',
      ]);
    });
  });

  describe('match cases', () => {
    it.each<[string, Record<string, string>, Book[]]>([
      ['true applies the true case (include)', { long: 'true' }, ['pure', 'back']],
      ['false applies the false case (include: false excludes)', { long: 'false' }, ['pure_', 'snake_', 'snakeX', 'elan']],
      ['a composed or / and / not condition', { classic: 'true' }, ['pure_', 'back', 'elan']],
      ['excluding a composed condition keeps rows whose compared columns are null', { classic: 'false' }, ['pure', 'snake_', 'snakeX']],
      ['two match cases combine', { long: 'false', classic: 'true' }, ['pure_', 'elan']],
      ['with a lookup and a mixin', { classic: 'true', in_print: 'true', title: 'a' }, ['elan']],
    ])('%s', async (_name, query, expected) => {
      await expectBooks(query, expected);
    });
  });

  describe('query parameter types', () => {
    const entry = (name: string, type: string, msg: string) => ({ type, loc: ['query', name], msg });
    it.each<[string, Record<string, string>, ReturnType<typeof entry>[]]>([
      ['int', { pages: 'abc' }, [entry('pages', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer')]],
      [
        'float',
        { rating: 'high' },
        [entry('rating', 'float_parsing', 'Input should be a valid number, unable to parse string as a number')],
      ],
      ['bool', { in_print: 'maybe' }, [entry('in_print', 'bool_parsing', 'Input should be a valid boolean, unable to interpret input')]],
      [
        'date',
        { published_on: '2024-02-30' },
        [entry('published_on', 'date_parsing', 'Input should be a valid date in the format YYYY-MM-DD')],
      ],
      [
        'datetime',
        { added_at: 'yesterday' },
        [entry('added_at', 'datetime_parsing', 'Input should be a valid datetime in ISO 8601 format')],
      ],
      ['decimal', { price: '9,99' }, [entry('price', 'decimal_parsing', 'Input should be a valid decimal')]],
      ['uuid', { isbn: 'not-a-uuid' }, [entry('isbn', 'uuid_parsing', 'Input should be a valid UUID')]],
      [
        'an item of an in list',
        { pages_in: '1,x' },
        [entry('pages_in', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer')],
      ],
      [
        'int past its 32-bit column',
        { pages: '2147483648' },
        [entry('pages', 'less_than_equal', 'Input should be less than or equal to 2147483647')],
      ],
      [
        'gt past the column',
        { pages_gt: '99999999999' },
        [entry('pages_gt', 'less_than_equal', 'Input should be less than or equal to 2147483647')],
      ],
      [
        'lte below the column',
        { pages_lte: '-2147483649' },
        [entry('pages_lte', 'greater_than_equal', 'Input should be greater than or equal to -2147483648')],
      ],
      [
        'an item of an in list past the column',
        { pages_in: '1,2147483648' },
        [entry('pages_in', 'less_than_equal', 'Input should be less than or equal to 2147483647')],
      ],
      [
        'a bound of a range past the column',
        { pages_range: '-9999999999,5' },
        [entry('pages_range', 'greater_than_equal', 'Input should be greater than or equal to -2147483648')],
      ],
      [
        'range with one value',
        { pages_range: '1' },
        [entry('pages_range', 'too_short', 'Tuple should have at least 2 items after validation, not 1')],
      ],
      [
        'range with three values',
        { pages_range: '1,2,3' },
        [entry('pages_range', 'too_long', 'Tuple should have at most 2 items after validation, not 3')],
      ],
      [
        'a match case parameter',
        { long: 'perhaps' },
        [entry('long', 'bool_parsing', 'Input should be a valid boolean, unable to interpret input')],
      ],
      [
        'several at once, in declaration order',
        { classic: 'x', pages: 'x', published_between: '2024-01-01,nope' },
        [
          entry('pages', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer'),
          entry('published_between', 'date_parsing', 'Input should be a valid date in the format YYYY-MM-DD'),
          entry('classic', 'bool_parsing', 'Input should be a valid boolean, unable to interpret input'),
        ],
      ],
    ])('a bad %s is a 422 with loc ["query", name]', async (_name, query, detail) => {
      const res = await list('/books/', query);
      expect({ status: res.status, body: res.body }).toEqual({ status: 422, body: { detail } });
    });

    it('documents the filter parameters in OpenAPI, with types and defaults', async () => {
      const res = await request(svc.app).get('/openapi.json');
      expect(res.status).toBe(200);
      const params = (path: string) => res.body.paths[path].get.parameters as { name: string }[];
      expect(params('/authors/')).toEqual([
        {
          name: 'page',
          in: 'query',
          required: false,
          description: 'Page number, from 1',
          schema: { type: 'integer', description: 'Page number, from 1' },
        },
        {
          name: 'page_size',
          in: 'query',
          required: false,
          description: 'Items per page',
          schema: { type: 'integer', description: 'Items per page' },
        },
        {
          name: 'active',
          in: 'query',
          required: false,
          description: 'Lookup active.',
          schema: { type: 'boolean', description: 'Lookup active.', default: true },
        },
        {
          name: 'initial',
          in: 'query',
          required: false,
          description: 'First letter of the name.',
          schema: { type: 'string', description: 'First letter of the name.' },
        },
        {
          name: 'country',
          in: 'query',
          required: false,
          description: 'Lookup country__code__iexact.',
          schema: { type: 'string', description: 'Lookup country__code__iexact.' },
        },
        {
          name: 'ordering',
          in: 'query',
          required: false,
          description: 'Order by name; prefix with - for descending; separate several with commas (at most 16).',
          schema: {
            type: 'string',
            description: 'Order by name; prefix with - for descending; separate several with commas (at most 16).',
          },
        },
        // The list answers 304 to an If-None-Match naming its ETag (conditional requests).
        { name: 'If-None-Match', in: 'header', required: false, description: expect.any(String), schema: { type: 'string' } },
      ]);
      const byName = Object.fromEntries(params('/books/').map((p) => [p.name, p]));
      expect(params('/books/').map((p) => p.name)).toEqual([
        'page',
        'page_size',
        'title',
        'pages',
        'rating',
        'in_print',
        'published_on',
        'added_at',
        'price',
        'isbn',
        'title_exact',
        'title_iexact',
        'title_contains',
        'title_startswith',
        'title_istartswith',
        'title_endswith',
        'pages_gt',
        'pages_gte',
        'pages_lt',
        'pages_lte',
        'pages_in',
        'pages_range',
        'rating_lt',
        'no_subtitle',
        'published_between',
        'added_before',
        'min_price',
        'author',
        'author_id',
        'no_author',
        'country',
        'country_codes',
        'no_country',
        'genre',
        'genres',
        'genre_id',
        'no_genres',
        'long',
        'classic',
        'ordering',
        'search',
        'If-None-Match',
      ]);
      expect(byName.pages).toEqual({
        name: 'pages',
        in: 'query',
        required: false,
        description: 'Lookup pages.',
        schema: { type: 'integer', minimum: -2147483648, maximum: 2147483647, description: 'Lookup pages.' },
      });
      expect(byName.pages_in).toEqual({
        name: 'pages_in',
        in: 'query',
        required: false,
        description: 'Lookup pages__in. Several values, separated by commas.',
        schema: { type: 'string', description: 'Lookup pages__in. Several values, separated by commas.' },
      });
      expect(byName.long).toEqual({
        name: 'long',
        in: 'query',
        required: false,
        description: 'true: pages__gte=300; false: exclude pages__gte=300.',
        schema: { type: 'boolean', description: 'true: pages__gte=300; false: exclude pages__gte=300.' },
      });
    });
  });

  describe('a sync query_params_handler (authors)', () => {
    const authors = (...names: string[]) => ({ items: names.map((name) => ({ id: ids.authors[name], name })), count: names.length });

    it.each<[string, Record<string, string>, string[]]>([
      ['applies the default of a query parameter', {}, ['Ann', 'Bob']],
      ['an explicit value replaces the default', { active: 'false' }, ['Cid', 'Dee']],
      ['the relation mixin, through a foreign key, iexact', { country: 'fr' }, ['Ann']],
      ['the relation mixin with the boolean one', { country: 'FR', active: 'false' }, ['Dee']],
      ['its own parameter that names no field', { initial: 'B' }, ['Bob']],
    ])('%s', async (_name, query, names) => {
      const res = await list('/authors/', query);
      expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: authors(...names) });
    });

    it('never runs the query the hook returns: one count and one page query', async () => {
      let status = 0;
      const n = await countQueries(svc.database.db, async () => {
        status = (await list('/authors/', {})).status;
      });
      expect([status, n]).toEqual([200, 2]);
    });
  });

  describe('an async query_params_handler calling the mixins in its own order (probes)', () => {
    const probes = (...n: number[]) => ({
      items: n.map((i) => ({ id: ids.probes[i], label: ['alpha 3', 'beta', 'gamma 30'][i] })),
      count: n.length,
    });
    const ALL = [0, 1, 2];

    it.each<[string, Record<string, string>, number[]]>([
      ['no mixin named: nothing applied', { label: 'beta', n: '3' }, ALL],
      ['Icontains applies a string value', { use: 'IcontainsFilterViewSetMixin', label: 'ALPHA' }, [0]],
      ['Icontains ignores an int value', { use: 'IcontainsFilterViewSetMixin', n: '3' }, ALL],
      ['Icontains ignores a bool value', { use: 'IcontainsFilterViewSetMixin', flag: 'true' }, ALL],
      ['Icontains ignores a date value', { use: 'IcontainsFilterViewSetMixin', day: '2024-01-10' }, ALL],
      ['Boolean applies a bool value', { use: 'BooleanFilterViewSetMixin', flag: 'true' }, [0, 2]],
      ['Boolean ignores an int and a string value', { use: 'BooleanFilterViewSetMixin', n: '0', label: 'x' }, ALL],
      ['Numeric applies an int value exactly', { use: 'NumericFilterViewSetMixin', n: '3' }, [0]],
      ['Numeric applies a float value exactly', { use: 'NumericFilterViewSetMixin', x: '1.5' }, [0, 2]],
      [
        'Numeric ignores bool, string and date values',
        { use: 'NumericFilterViewSetMixin', flag: 'true', label: '3', day: '2024-01-10' },
        ALL,
      ],
      ['Date (no date_compare_attr): a date exactly', { use: 'DateFilterViewSetMixin', day: '2024-01-20' }, [1]],
      ['Date (no date_compare_attr): a datetime exactly', { use: 'DateFilterViewSetMixin', at: '2024-01-20T08:00:00Z' }, [1]],
      [
        'Date (no date_compare_attr): the same instant in another offset',
        { use: 'DateFilterViewSetMixin', at: '2024-01-20T10:00:00+02:00' },
        [1],
      ],
      ['Date ignores string, int and bool values', { use: 'DateFilterViewSetMixin', label: '2024-01-20', n: '1', flag: 'false' }, ALL],
      ['GreaterDate: date', { use: 'GreaterDateFilterViewSetMixin', day: '2024-01-20' }, [2]],
      ['GreaterDate: datetime', { use: 'GreaterDateFilterViewSetMixin', at: '2024-01-20T08:00:00Z' }, [2]],
      [
        'GreaterDate ignores string, int and bool values',
        { use: 'GreaterDateFilterViewSetMixin', label: '2024-01-20', n: '1', flag: 'false' },
        ALL,
      ],
      ['LessDate: date', { use: 'LessDateFilterViewSetMixin', day: '2024-01-20' }, [0]],
      ['LessDate: datetime', { use: 'LessDateFilterViewSetMixin', at: '2024-01-20T08:00:00Z' }, [0]],
      ['GreaterEqualDate: date', { use: 'GreaterEqualDateFilterViewSetMixin', day: '2024-01-20' }, [1, 2]],
      ['GreaterEqualDate: datetime', { use: 'GreaterEqualDateFilterViewSetMixin', at: '2024-01-20T08:00:00Z' }, [1, 2]],
      ['LessEqualDate: date', { use: 'LessEqualDateFilterViewSetMixin', day: '2024-01-20' }, [0, 1]],
      ['LessEqualDate: datetime', { use: 'LessEqualDateFilterViewSetMixin', at: '2024-01-20T08:00:00Z' }, [0, 1]],
      ['two date mixins bound a window', { use: 'GreaterDateFilterViewSetMixin,LessEqualDateFilterViewSetMixin', day: '2024-01-10' }, []],
    ])('%s', async (_name, query, expected) => {
      const res = await list('/probes/', query);
      expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: probes(...expected) });
    });

    it('applies the mixins in the order the hook calls them', async () => {
      const sql: string[] = [];
      const listener = (q: { sql: string }) => sql.push(q.sql);
      const query = { n: '3', label: 'alpha' };
      svc.database.db.on('query', listener);
      let bodies: unknown[];
      try {
        bodies = [
          (await list('/probes/', { ...query, use: 'NumericFilterViewSetMixin,IcontainsFilterViewSetMixin' })).body,
          (await list('/probes/', { ...query, use: 'IcontainsFilterViewSetMixin,NumericFilterViewSetMixin' })).body,
        ];
      } finally {
        svc.database.db.removeListener('query', listener);
      }
      expect(bodies).toEqual([probes(0), probes(0)]);
      expect(sql.filter((s) => s.includes(' order by ')).map(whereOf)).toEqual([
        `probes.n = ? and ${ilike('probes.label')}`,
        `${ilike('probes.label')} and probes.n = ?`,
      ]);
    });

    it("a hook's own error is the response", async () => {
      const res = await list('/probes/', { use: 'NoSuchMixin' });
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { error: 'unknown mixin "NoSuchMixin"' } });
    });
  });
});

/**
 * The case-insensitive operators fold as PostgreSQL's lower() does, on both databases: these
 * expectations hold on PostgreSQL, and SQLite must answer the same, whether it compares natively
 * (a value of ASCII only) or with its Unicode lower().
 */
describe.each(DIALECTS)('list filters: case-insensitive matches equal PostgreSQL (%s)', (dialect) => {
  let svc: RunningService;
  const TITLES = {
    ecole: 'École normale',
    ECOLE: 'ECOLE',
    strasse: 'Straße',
    STRASSE: 'STRASSE',
    kelvin: '273 \u212a', // KELVIN SIGN: lowercase k
    istanbul: '\u0130stanbul', // LATIN CAPITAL LETTER I WITH DOT ABOVE: lowercase i on PostgreSQL
    odos: 'ΟΔΟΣ', // a final capital sigma: σ on PostgreSQL, not ς
    ascii: 'Plain ASCII',
  } as const;
  type Title = keyof typeof TITLES;
  const ids = {} as Record<Title, number>;

  beforeAll(async () => {
    svc = await startQuerying(dialect);
    for (const name of Object.keys(TITLES) as Title[]) {
      const [id] = await insertRows(svc.database.db, 'books', [{ title: TITLES[name], added_at: '2024-01-01T00:00:00.000Z' }]);
      ids[name] = Number(id);
    }
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  it.each<[string, Record<string, string>, Title[]]>([
    ['an ASCII value does not match an accented letter', { title: 'ecole' }, ['ECOLE']],
    ['a lowercase accented value matches its capital', { title: 'école' }, ['ecole']],
    ['a capital accented value matches its lowercase', { title: 'ÉCOLE' }, ['ecole']],
    ['ASCII of mixed case across a space', { title: 'CoLe NoR' }, ['ecole']],
    ['mixed ASCII and non-ASCII', { title: 'éCOLE n' }, ['ecole']],
    ['ß is not ss', { title: 'ß' }, ['strasse']],
    ['ss is not ß', { title: 'SS' }, ['STRASSE']],
    ['the Kelvin sign folds to k', { title: 'k' }, ['kelvin']],
    ['İ folds to i', { title: 'ISTANBUL' }, ['istanbul']],
    ['a capital sigma folds to σ wherever it stands', { title: 'οδοσ' }, ['odos']],
    ['so a final ς matches no capital sigma', { title: 'ος' }, []],
    ['a Greek value of capitals', { title: 'ΟΣ' }, ['odos']],
    ['ASCII matching every title with an a', { title: 'A' }, ['ecole', 'strasse', 'STRASSE', 'istanbul', 'ascii']],
    ['iexact, ASCII', { title_iexact: 'plain ascii' }, ['ascii']],
    ['iexact, the Kelvin sign', { title_iexact: '273 K' }, ['kelvin']],
    ['iexact, non-ASCII', { title_iexact: 'STRAßE' }, ['strasse']],
    ['istartswith, non-ASCII', { title_istartswith: 'éCo' }, ['ecole']],
    ['istartswith, İ', { title_istartswith: 'i' }, ['istanbul']],
  ])('%s', async (_name, query, expected) => {
    const res = await request(svc.app)
      .get('/books/')
      .query({ ...query, page_size: '100' });
    expect({ status: res.status, ids: res.body.items?.map((b: { id: number }) => b.id) }).toEqual({
      status: 200,
      ids: expected.map((name) => ids[name]).sort((a, b) => a - b),
    });
  });
});

describe.each(DIALECTS)('list filters: the blog articles (%s)', (dialect) => {
  let svc: RunningService;
  let alice: TestUser;
  let bob: TestUser;
  const ids: Record<string, number> = {};
  const rows: Record<
    string,
    { title: string; author_id: number; category_id: number | null; is_published: boolean; created_at: string; views: number }
  > = {};

  beforeAll(async () => {
    svc = await startBlog(dialect);
    const db = svc.database.db;
    alice = await createUser(svc, { username: 'alice' });
    bob = await createUser(svc, { username: 'bob' });
    const [tech, life] = (
      await insertRows(db, 'categories', [
        { name: 'Tech', description: '' },
        { name: 'Life', description: '' },
      ])
    ).map(Number);
    const [js, sql] = (await insertRows(db, 'tags', [{ name: 'js' }, { name: 'db' }])).map(Number);
    ids.tech = tech;
    ids.life = life;
    Object.assign(rows, {
      intro: {
        title: 'Intro to JS',
        author_id: alice.id,
        category_id: tech,
        is_published: true,
        created_at: '2026-01-10T09:00:00.000Z',
        views: 150,
      },
      cooking: {
        title: 'Cooking',
        author_id: bob.id,
        category_id: life,
        is_published: true,
        created_at: '2026-01-05T09:00:00.000Z',
        views: 20,
      },
      tips: {
        title: 'SQL tips',
        author_id: alice.id,
        category_id: null,
        is_published: true,
        created_at: '2026-01-01T00:00:00.000Z',
        views: 100,
      },
      draft: {
        title: 'Draft JS',
        author_id: bob.id,
        category_id: tech,
        is_published: false,
        created_at: '2026-01-12T00:00:00.000Z',
        views: 500,
      },
    });
    const tags: Record<string, number[]> = { intro: [js, sql], cooking: [], tips: [sql], draft: [js] };
    for (const [name, row] of Object.entries(rows)) {
      const [id] = await insertRows(db, 'articles', [{ content: 'Content', summary: '', ...row }]);
      ids[name] = Number(id);
      for (const tag of tags[name]) await insertRows(db, 'articles_tags', [{ article_id: id, tag_id: tag }], 'article_id');
    }
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  /** The list page of these articles, in the default order (-created_at). */
  const articles = (...names: string[]) => ({
    items: names.map((n) => ({
      id: ids[n],
      title: rows[n].title,
      summary: '',
      author: rows[n].author_id,
      category: rows[n].category_id,
      is_published: rows[n].is_published,
      created_at: rows[n].created_at,
      views: rows[n].views,
    })),
    count: names.length,
  });

  it.each<[string, () => Record<string, string>, string[]]>([
    ['no filter: the published articles', () => ({}), ['intro', 'cooking', 'tips']],
    ['title: contains, case-insensitive', () => ({ title: 'js' }), ['intro']],
    ['is_published: exact (drafts stay hidden without a token)', () => ({ is_published: 'false' }), []],
    ['views: exact', () => ({ views: '100' }), ['tips']],
    ['created_at: on or after the date', () => ({ created_at: '2026-01-05' }), ['intro', 'cooking']],
    ['category: the category id', () => ({ category: String(ids.tech) }), ['intro']],
    ["author: the author's username", () => ({ author: 'alice' }), ['intro', 'tips']],
    ['tag: has a tag with this name', () => ({ tag: 'db' }), ['intro', 'tips']],
    ['popular=true: views ≥ 100', () => ({ popular: 'true' }), ['intro', 'tips']],
    ['popular=false: views < 100', () => ({ popular: 'false' }), ['cooking']],
    ['filters combine', () => ({ author: 'alice', popular: 'false' }), []],
    ['filters combine with ordering', () => ({ tag: 'db', ordering: 'views' }), ['tips', 'intro']],
  ])('%s', async (_name, query, names) => {
    const res = await request(svc.app).get('/api/articles/').query(query());
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: articles(...names) });
  });

  it("filters see the caller's own drafts with a token", async () => {
    const res = await request(svc.app).get('/api/articles/').query({ is_published: 'false', tag: 'js' }).set('Authorization', bob.bearer);
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: articles('draft') });
    const other = await request(svc.app).get('/api/articles/').query({ is_published: 'false' }).set('Authorization', alice.bearer);
    expect({ status: other.status, body: other.body }).toEqual({ status: 200, body: articles() });
  });

  it.each<[Record<string, string>, { type: string; loc: string[]; msg: string }]>([
    [
      { views: 'many' },
      { type: 'int_parsing', loc: ['query', 'views'], msg: 'Input should be a valid integer, unable to parse string as an integer' },
    ],
    [
      { category: '1.5' },
      { type: 'int_parsing', loc: ['query', 'category'], msg: 'Input should be a valid integer, unable to parse string as an integer' },
    ],
    [
      { views: '2147483648' },
      { type: 'less_than_equal', loc: ['query', 'views'], msg: 'Input should be less than or equal to 2147483647' },
    ],
    [
      { category: '-2147483649' },
      { type: 'greater_than_equal', loc: ['query', 'category'], msg: 'Input should be greater than or equal to -2147483648' },
    ],
    [
      { is_published: 'perhaps' },
      { type: 'bool_parsing', loc: ['query', 'is_published'], msg: 'Input should be a valid boolean, unable to interpret input' },
    ],
    [
      { created_at: '2026-02-30' },
      { type: 'date_parsing', loc: ['query', 'created_at'], msg: 'Input should be a valid date in the format YYYY-MM-DD' },
    ],
    [
      { popular: 'very' },
      { type: 'bool_parsing', loc: ['query', 'popular'], msg: 'Input should be a valid boolean, unable to interpret input' },
    ],
  ])('a bad filter value %j is a 422', async (query, entry) => {
    const res = await request(svc.app).get('/api/articles/').query(query);
    expect({ status: res.status, body: res.body }).toEqual({ status: 422, body: { detail: [entry] } });
  });
});
