/**
 * The model side of list filters: the lookup compiler (plans for fields, operators, foreign key
 * and many-to-many chains; its errors), composed conditions, a viewset's filter parameters and
 * mixins, the Zod code of a parameter, and the validator's positioned errors for bad lookups.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { buildModel } from '../../generator/model/build-model';
import { compileCondition, compileLookup, LookupError, modelGraph, type ModelGraph } from '../../generator/model/build-filters';
import type { ResourceFilters } from '../../generator/model/filter-plans';
import { formatDiagnostic } from '../../generator/load/diagnostics';
import { loadSpecs } from '../../generator/load/load';
import type { ServiceModel } from '../../generator/model/model';
import { checkSpecs, validate } from '../../generator/pipeline';
import { filterParamZod } from '../../generator/render/filters';

const SERVICE = 'title: Test API\nversion: 1.0.0\n';
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Writes `files` (plus a service.yaml) into a fresh specs directory. */
function specsDir(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-filters-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries({ 'service.yaml': SERVICE, ...files })) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

/** The model of valid specs (validated first, so a failure here is the compiler's). */
function modelOf(files: Record<string, string>): ServiceModel {
  const dir = specsDir(files);
  const { diagnostics, described } = checkSpecs(loadSpecs(dir, dir));
  expect(diagnostics.map(formatDiagnostic)).toEqual([]);
  return buildModel(described);
}

const resource = (name: string, ...lines: string[]) => ({ [`resources/${name}.yaml`]: lines.join('\n') + '\n' });

const COUNTRY = resource(
  'countries',
  'model: Country',
  'verbose_name_plural: countries',
  'fields:',
  '  code: {type: string, max_length: 2}',
);
const AUTHOR = resource(
  'authors',
  'model: Author',
  'fields:',
  '  name: {type: string, max_length: 100}',
  '  country: {type: foreign_key, to: Country, null: true, on_delete: set_null}',
);
const GENRE = resource(
  'genres',
  'model: Genre',
  'fields:',
  '  id: {type: big_integer, primary_key: true}',
  '  name: {type: string, max_length: 50}',
  '  parent: {type: foreign_key, to: Genre, null: true, on_delete: set_null}',
);
const BOOK_FIELDS = [
  'model: Book',
  'fields:',
  '  title: {type: string, max_length: 200}',
  '  pages: {type: integer}',
  '  rating: {type: float, null: true}',
  '  price: {type: decimal}',
  '  in_print: {type: boolean}',
  '  published_on: {type: date, null: true}',
  '  added_at: {type: datetime}',
  '  isbn: {type: uuid, null: true}',
  '  meta: {type: json, null: true}',
  '  author: {type: foreign_key, to: Author, null: true, on_delete: set_null}',
  '  genres: {type: many_to_many, to: Genre}',
];
const BOOK = resource('books', ...BOOK_FIELDS);

describe('compileLookup', () => {
  let graph: ModelGraph;
  beforeAll(() => {
    const model = modelOf({ ...COUNTRY, ...AUTHOR, ...GENRE, ...BOOK });
    graph = modelGraph(new Map(model.resources.map((r) => [r.model, r])), (r) => r.m2m);
  });
  const plan = (lookup: string) => compileLookup(graph, 'Book', lookup);

  it('compiles a field to an exact comparison of its column', () => {
    expect(plan('title')).toEqual({ hops: [], column: 'books.title', kind: 'text', nullable: false, op: 'exact' });
  });

  it.each([
    ['exact'],
    ['iexact'],
    ['contains'],
    ['icontains'],
    ['startswith'],
    ['istartswith'],
    ['endswith'],
    ['gt'],
    ['gte'],
    ['lt'],
    ['lte'],
    ['in'],
    ['isnull'],
    ['range'],
  ])('takes the operator %s', (op) => {
    expect(plan(`title__${op}`)).toEqual({ hops: [], column: 'books.title', kind: 'text', nullable: false, op });
  });

  it.each([
    ['pages', 'int', false],
    ['rating', 'float', true],
    ['price', 'decimal', false],
    ['in_print', 'bool', false],
    ['published_on', 'date', true],
    ['added_at', 'datetime', false],
    ['isbn', 'uuid', true],
    ['meta', 'json', true],
  ])('knows how %s compares: %s, nullable %s', (field, kind, nullable) => {
    expect(plan(field)).toEqual({ hops: [], column: `books.${field}`, kind, nullable, op: 'exact' });
  });

  it('compares a foreign key column itself for the related primary key, or a lookup ending at the relation', () => {
    const key = { hops: [], column: 'books.author_id', kind: 'int', nullable: true };
    expect(plan('author__id')).toEqual({ ...key, op: 'exact' });
    expect(plan('author')).toEqual({ ...key, op: 'exact' });
    expect(plan('author__in')).toEqual({ ...key, op: 'in' });
    expect(plan('author__id__isnull')).toEqual({ ...key, op: 'isnull' });
  });

  const authorHop = { from: 'books.author_id', nullable: true, table: 'authors', select: 'authors.id', many: false };

  it('walks a foreign key with an IN subquery hop', () => {
    expect(plan('author__name__startswith')).toEqual({
      hops: [authorHop],
      column: 'authors.name',
      kind: 'text',
      nullable: false,
      op: 'startswith',
    });
  });

  it('walks two foreign keys', () => {
    expect(plan('author__country__code__iexact')).toEqual({
      hops: [authorHop, { from: 'authors.country_id', nullable: true, table: 'countries', select: 'countries.id', many: false }],
      column: 'countries.code',
      kind: 'text',
      nullable: false,
      op: 'iexact',
    });
    expect(plan('author__country')).toEqual({ hops: [authorHop], column: 'authors.country_id', kind: 'int', nullable: true, op: 'exact' });
  });

  const genresHop = { from: 'books.id', nullable: false, table: 'books_genres', select: 'books_genres.book_id', many: true };
  const genresJoin = { table: 'genres', on: ['genres.id', 'books_genres.genre_id'] };

  it('walks a many-to-many through its join table, joined to the related table', () => {
    expect(plan('genres__name__icontains')).toEqual({
      hops: [{ ...genresHop, join: genresJoin }],
      column: 'genres.name',
      kind: 'text',
      nullable: false,
      op: 'icontains',
    });
  });

  it("compares a many-to-many's join column for the related primary key, without the join", () => {
    const key = { hops: [genresHop], column: 'books_genres.genre_id', kind: 'bigint', nullable: false };
    expect(plan('genres__id__in')).toEqual({ ...key, op: 'in' });
    expect(plan('genres')).toEqual({ ...key, op: 'exact' });
    expect(plan('genres__isnull')).toEqual({ ...key, op: 'isnull' });
  });

  it('walks a many-to-many, then a foreign key back to the same table', () => {
    expect(plan('genres__parent__name')).toEqual({
      hops: [
        { ...genresHop, join: genresJoin },
        { from: 'genres.parent_id', nullable: true, table: 'genres', select: 'genres.id', many: false },
      ],
      column: 'genres.name',
      kind: 'text',
      nullable: false,
      op: 'exact',
    });
  });

  it.each([
    [
      'titel',
      'unknown field "titel" (Book; fields: id, title, pages, rating, price, in_print, published_on, added_at, isbn, meta, author, genres) in lookup "titel"',
    ],
    ['author__nme', 'unknown field "nme" (Book → Author; fields: id, name, country) in lookup "author__nme"'],
    ['author__country__name', 'unknown field "name" (Book → Author → Country; fields: id, code) in lookup "author__country__name"'],
    [
      'title__icontain',
      'unknown operator "icontain" ("title" is not a relation; operators: exact, iexact, contains, icontains, startswith, istartswith, endswith, gt, gte, lt, lte, in, isnull, range, overlap) in lookup "title__icontain"',
    ],
    ['title__icontains__x', 'nothing may follow the operator "icontains" in lookup "title__icontains__x"'],
    ['author__id__gt__lt', 'nothing may follow the operator "gt" in lookup "author__id__gt__lt"'],
  ])('rejects %s', (lookup, message) => {
    expect(() => plan(lookup)).toThrow(new LookupError(message));
  });

  describe('compileCondition', () => {
    const cond = (expr: unknown) => compileCondition(graph, 'Book', expr);
    const pages = { hops: [], column: 'books.pages', kind: 'int', nullable: false };

    it('compiles a map of lookups to the AND of its lookups', () => {
      expect(cond({ pages__gte: 100 })).toEqual({ lookup: { ...pages, op: 'gte' }, value: 100 });
      expect(cond({ pages__gte: 100, pages__lt: 200 })).toEqual({
        and: [
          { lookup: { ...pages, op: 'gte' }, value: 100 },
          { lookup: { ...pages, op: 'lt' }, value: 200 },
        ],
      });
    });

    it('composes and / or / not', () => {
      expect(cond({ or: [{ pages__in: [1, 2] }, { and: [{ rating: null }, { not: { author__name__range: ['a', 'm'] } }] }] })).toEqual({
        or: [
          { lookup: { ...pages, op: 'in' }, value: [1, 2] },
          {
            and: [
              // `exact: null` is `isnull: true`.
              { lookup: { hops: [], column: 'books.rating', kind: 'float', nullable: true, op: 'isnull' }, value: true },
              {
                not: {
                  lookup: { hops: [authorHop], column: 'authors.name', kind: 'text', nullable: false, op: 'range' },
                  value: ['a', 'm'],
                },
              },
            ],
          },
        ],
      });
    });

    it.each([
      [{}, 'empty query: give at least one lookup, or and/or/not'],
      [{ and: [] }, '"and" needs a non-empty list of queries'],
      [{ or: [{ pages: 1 }], pages: 2 }, '"or" must be the only key of its map'],
      [{ pages__isnull: 'yes' }, '"isnull" takes true or false in lookup "pages__isnull"'],
      [{ pages__in: 3 }, '"in" takes a list of values in lookup "pages__in"'],
      [{ pages__range: [1, 2, 3] }, '"range" takes a list of two values [low, high] in lookup "pages__range"'],
      [{ pages__gt: null }, '"gt" cannot compare with null in lookup "pages__gt"'],
      [
        { not: { pagez: 1 } },
        'unknown field "pagez" (Book; fields: id, title, pages, rating, price, in_print, published_on, added_at, isbn, meta, author, genres) in lookup "pagez"',
      ],
    ])('rejects %j', (expr, message) => {
      expect(() => cond(expr)).toThrow(new LookupError(message));
    });
  });
});

describe('buildFilters (Resource.filters)', () => {
  const filtersOf = (...viewset: string[]): ResourceFilters | null => {
    const model = modelOf({
      ...COUNTRY,
      ...AUTHOR,
      ...GENRE,
      'hooks/books.ts': 'export function applyFilters(_args: unknown): void {}\n',
      ...resource('books', 'hooks: hooks/books.ts', ...BOOK_FIELDS, 'viewset:', ...viewset.map((l) => `  ${l}`)),
    });
    return model.resources.find((r) => r.model === 'Book')!.filters;
  };

  it('is null when the viewset configures no filter', () => {
    expect(filtersOf('ordering_fields: [title]')).toBeNull();
  });

  it('registers query_params, relations_filters and match cases as typed parameters, in that order', () => {
    const f = filtersOf(
      'query_params:',
      '  title: [str, null]',
      '  since: {type: datetime, default: "2024-01-01"}',
      '  pages: {type: int, default: 10, description: Exactly.}',
      // `since` names no field: only a handler can apply it.
      'query_params_handler: applyFilters',
      'relations_filters:',
      '  - {query_param: authors, query_filter: author__name__in, filter_type: [str, "a,b"]}',
      '  - {query_param: window, query_filter: pages__range, filter_type: [int, [1, 9]]}',
      '  - {query_param: anonymous, query_filter: author__isnull, filter_type: [str, null]}',
      'filters_match_cases:',
      '  - query_param: long',
      '    cases:',
      '      true: {query_filter: {pages__gte: 300}}',
      '      false: {query_filter: {or: [{pages__lt: 300}, {not: {rating: null}}]}, include: false}',
    )!;
    expect(f.params).toEqual([
      { name: 'title', type: 'str', default: null, description: undefined, from: 'query_params' },
      { name: 'since', type: 'datetime', default: '2024-01-01T00:00:00.000Z', description: undefined, from: 'query_params' },
      { name: 'pages', type: 'int', default: 10, description: 'Exactly.', from: 'query_params' },
      {
        name: 'authors',
        type: 'str',
        shape: 'in',
        default: ['a', 'b'],
        description: 'Lookup author__name__in.',
        from: 'relations_filters',
      },
      // Compared with a 32-bit column, so its values must fit one.
      {
        name: 'window',
        type: 'int',
        shape: 'range',
        bounds: 'int32',
        default: [1, 9],
        description: 'Lookup pages__range.',
        from: 'relations_filters',
      },
      // `isnull` takes a bool whatever the declared type.
      {
        name: 'anonymous',
        type: 'bool',
        shape: undefined,
        default: null,
        description: 'Lookup author__isnull.',
        from: 'relations_filters',
      },
      {
        name: 'long',
        type: 'bool',
        default: null,
        description: 'true: pages__gte=300; false: exclude (pages__lt=300 or not rating=null).',
        from: 'filters_match_cases',
      },
    ]);
    // Relation filters and match cases apply even when filter_mixins does not list their mixins.
    expect(f.mixins.map((m) => m.name)).toEqual(['RelationFilterViewSetMixin', 'MatchCaseFilterViewSetMixin']);
    expect(f.handler).toBe('applyFilters');
  });

  it('gives each type mixin the query_params of its types that name a field, in filter_mixins order', () => {
    const model = modelOf({
      ...COUNTRY,
      ...AUTHOR,
      ...GENRE,
      'hooks/books.ts': 'export function filterBooks(_args: unknown): void {}\n',
      ...resource(
        'books',
        'hooks: hooks/books.ts',
        ...BOOK_FIELDS,
        'viewset:',
        '  query_params:',
        '    title: [str, null]',
        '    pages: [int, null]',
        '    rating: [float, null]',
        '    in_print: [bool, null]',
        '    published_on: [date, null]',
        '    added_at: [datetime, null]',
        '    price: [decimal, null]',
        '    isbn: [uuid, null]',
        '    q: [str, null]',
        '  filter_mixins: [LessDateFilterViewSetMixin, NumericFilterViewSetMixin, IcontainsFilterViewSetMixin, BooleanFilterViewSetMixin]',
        '  query_params_handler: filterBooks',
      ),
    });
    const f = model.resources.find((r) => r.model === 'Book')!.filters!;
    const summary = f.mixins.map((m) =>
      m.kind === 'lookups' ? [m.name, m.accepts, m.lookups.map((l) => [l.param, l.source, l.lookup.column, l.lookup.op])] : [m.name],
    );
    expect(summary).toEqual([
      [
        'LessDateFilterViewSetMixin',
        'date',
        [
          ['published_on', 'published_on__lt', 'books.published_on', 'lt'],
          ['added_at', 'added_at__lt', 'books.added_at', 'lt'],
        ],
      ],
      [
        'NumericFilterViewSetMixin',
        'number',
        [
          ['pages', 'pages', 'books.pages', 'exact'],
          ['rating', 'rating', 'books.rating', 'exact'],
        ],
      ],
      // `q` names no field: it is left to the handler.
      ['IcontainsFilterViewSetMixin', 'string', [['title', 'title__icontains', 'books.title', 'icontains']]],
      ['BooleanFilterViewSetMixin', 'boolean', [['in_print', 'in_print', 'books.in_print', 'exact']]],
    ]);
    expect(f.handler).toBe('filterBooks');
    // Documented by what applies them; decimal and uuid values no mixin applies.
    expect(Object.fromEntries(f.params.map((p) => [p.name, p.description]))).toEqual({
      title: 'Lookup title__icontains.',
      pages: 'Lookup pages.',
      rating: 'Lookup rating.',
      in_print: 'Lookup in_print.',
      published_on: 'Lookup published_on__lt.',
      added_at: 'Lookup added_at__lt.',
      price: undefined,
      isbn: undefined,
      q: undefined,
    });
  });
});

describe("DateFilterViewSetMixin: the date mixins' base, with the operator of date_compare_attr", () => {
  const dateMixin = (...viewset: string[]) => {
    const model = modelOf({
      ...COUNTRY,
      ...AUTHOR,
      ...GENRE,
      ...resource(
        'books',
        ...BOOK_FIELDS,
        'viewset:',
        '  query_params:',
        '    published_on: [date, null]',
        '    added_at: [datetime, null]',
        ...viewset.map((l) => `  ${l}`),
      ),
    });
    const f = model.resources.find((r) => r.model === 'Book')!.filters!;
    return f.mixins.map((m) =>
      m.kind === 'lookups' ? [m.name, m.accepts, m.lookups.map((l) => [l.param, l.source, l.lookup.op])] : [m.name],
    );
  };

  it('compares exactly without date_compare_attr, as the base mixin does', () => {
    expect(dateMixin('filter_mixins: [DateFilterViewSetMixin]')).toEqual([
      [
        'DateFilterViewSetMixin',
        'date',
        [
          ['published_on', 'published_on', 'exact'],
          ['added_at', 'added_at', 'exact'],
        ],
      ],
    ]);
  });

  it.each([
    ['__gt', 'gt'],
    ['__lte', 'lte'],
    ['__exact', 'exact'],
  ])('appends date_compare_attr %s to each date or datetime parameter', (attr, op) => {
    const suffix = op === 'exact' ? '' : `__${op}`;
    expect(dateMixin('filter_mixins: [DateFilterViewSetMixin]', `date_compare_attr: ${attr}`)).toEqual([
      [
        'DateFilterViewSetMixin',
        'date',
        [
          ['published_on', `published_on${suffix}`, op],
          ['added_at', `added_at${suffix}`, op],
        ],
      ],
    ]);
  });

  it('reports date_compare_attr without the mixin, and an operator that is not a comparison', () => {
    const dir = specsDir({
      ...COUNTRY,
      ...AUTHOR,
      ...GENRE,
      ...resource('books', ...BOOK_FIELDS, 'viewset:', '  filter_mixins: [GreaterDateFilterViewSetMixin]', '  date_compare_attr: __gt'),
      ...resource(
        'others',
        'model: Other',
        'fields:',
        '  day: {type: date}',
        'viewset:',
        '  filter_mixins: [DateFilterViewSetMixin]',
        '  date_compare_attr: __icontains',
      ),
    });
    expect(validate(dir, dir).map(formatDiagnostic)).toEqual([
      'resources/books.yaml:16:3: date_compare_attr is the operator of DateFilterViewSetMixin: add it to filter_mixins, or remove this',
      'resources/others.yaml:6:22: unknown value "__icontains" (expected one of: __exact, __gt, __gte, __lt, __lte)',
    ]);
  });
});

describe('validate(): lookups in specs', () => {
  it('reports an unknown field in a lookup path at file:line:column', () => {
    const dir = specsDir({
      ...COUNTRY,
      ...AUTHOR,
      ...GENRE,
      ...resource(
        'books',
        ...BOOK_FIELDS,
        'viewset:',
        '  relations_filters:',
        '    - {query_param: writer, query_filter: author__nme, filter_type: [str, null]}',
        '    - {query_param: where, query_filter: author__country__name, filter_type: [str, null]}',
        '  filters_match_cases:',
        '    - query_param: odd',
        '      cases:',
        '        true: {query_filter: {genres__nam__icontains: x}}',
        '        false: {query_filter: {not: {pages__bigger: 1}}}',
      ),
    });
    expect(validate(dir, dir).map(formatDiagnostic)).toEqual([
      'resources/books.yaml:16:43: unknown field "nme" in lookup "author__nme" (Book → Author) (did you mean "name"?)',
      'resources/books.yaml:17:42: unknown field "name" in lookup "author__country__name" (Book → Author → Country)',
      'resources/books.yaml:21:31: unknown field "nam" in lookup "genres__nam__icontains" (Book → Genre) (did you mean "name"?)',
      'resources/books.yaml:22:38: unknown operator "bigger" in lookup "pages__bigger" ("pages" is a integer field, not a relation; operators: exact, iexact, contains, icontains, startswith, istartswith, endswith, gt, gte, lt, lte, in, isnull, range, overlap)',
    ]);
  });
});

describe('filterParamZod', () => {
  it.each([
    [{ type: 'int', default: null }, "queryParam('int').optional()"],
    [{ type: 'bool', default: true }, "queryParam('bool').default(true).meta({ default: true })"],
    [{ type: 'str', default: null, description: "Name's start." }, "queryParam('str').optional().meta({ description: 'Name\\'s start.' })"],
    [
      { type: 'int', shape: 'in', default: [1, 2] },
      "queryParam('int', 'in').default([1, 2]).meta({ description: 'Several values, separated by commas.', default: '1,2' })",
    ],
    [
      { type: 'date', shape: 'range', default: null },
      "queryParam('date', 'range').optional().meta({ description: 'Two values, low and high, separated by a comma.' })",
    ],
  ] as const)('%j', (param, code) => {
    expect(filterParamZod(param as Parameters<typeof filterParamZod>[0])).toBe(code);
  });
});
