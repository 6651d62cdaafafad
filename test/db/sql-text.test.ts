/**
 * What runtime/db/sql-text.ts reads from the SQL text Knex compiles, on each database: whether a
 * query only filters its table's rows, and whether it already requires a condition.
 */
import type { Knex } from 'knex';
import { onlyFilters, requires, topLevel } from '../../runtime/db/sql-text';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';

describe('topLevel', () => {
  it('hides what quotes and parentheses hold, keeping positions and placeholders', () => {
    const sql = `select * from "a b" where "x" in (select "y" from "z" where "w" = ?) and 'it''s' = ?`;
    const text = topLevel(sql);
    expect(text.length).toBe(sql.length);
    expect(text).toBe(`select * from "xxx" where "x" in (${'_'.repeat(32)}?) and 'xxxxx' = ?`);
  });
});

describe.each(DIALECTS)('SQL text of Knex queries (%s)', (dialect) => {
  let database: TestDatabase;
  let db: Knex;
  beforeAll(async () => {
    database = await createDatabase(dialect);
    db = database.db;
  });
  afterAll(() => database.drop());

  it("onlyFilters tells a query of its table's rows filtered from one that selects, joins, groups, orders, limits or locks", () => {
    const table = dialect === 'postgres' ? db('items').withSchema('public') : db('items');
    const filtered = table.where('name', 'a').whereNull('id');
    expect(onlyFilters(filtered.where((q) => q.where('id', 1).orWhere('id', 2)))).toBe(true);
    expect(onlyFilters(db('items'))).toBe(true);
    expect(
      onlyFilters(db('items').whereIn('id', db('items').select('id').join('other', 'other.id', 'items.id').orderBy('id').limit(3))),
    ).toBe(true);
    const others: [string, Knex.QueryBuilder][] = [
      ['select', db('items').select('name').where('id', 1)],
      ['join', db('items').join('items as other', 'other.id', 'items.id')],
      ['groupBy', db('items').select('name').groupBy('name')],
      ['orderBy', db('items').orderBy('name')],
      ['distinct', db('items').distinct('name')],
      ['count', db('items').count('id')],
      ['limit', db('items').limit(2)],
      ['offset', db('items').offset(2)],
      // SQLite has no row locks: Knex writes none there, and the query only filters.
      ...(dialect === 'sqlite' ? [] : ([['forUpdate', db('items').forUpdate()]] as [string, Knex.QueryBuilder][])),
      ['first', db('items').first('id') as unknown as Knex.QueryBuilder],
      ['union', db('items').where('id', 1).union(db('items').where('id', 2))],
    ];
    for (const [name, query] of others) expect([name, onlyFilters(query)]).toEqual([name, false]);
  });

  it('requires finds a condition AND-ed at the top level, with its value, and nothing under an OR', () => {
    const q = () => db('articles').where('articles.is_published', true).where('views', '>=', 3);
    expect(requires(q(), 'articles.is_published', '=', true)).toBe(true);
    expect(requires(q(), 'views', '>=', 3)).toBe(true);
    expect(requires(q(), 'views', '>=', 4)).toBe(false);
    expect(requires(q(), 'articles.is_published', '=', false)).toBe(false);
    expect(requires(q(), 'is_published', '=', true)).toBe(false);
    expect(requires(q().orderBy('views').limit(2), 'views', '>=', 3)).toBe(true);
    expect(requires(q().whereIn('id', db('tags').where('views', '>=', 5).select('id')), 'views', '>=', 5)).toBe(false);
    expect(requires(q().orWhere('id', 1), 'views', '>=', 3)).toBe(false);
    expect(requires(db('articles').whereNot('views', '>=', 3), 'views', '>=', 3)).toBe(false);
    expect(
      requires(
        db('articles').where((w) => w.where('views', '>=', 3)),
        'views',
        '>=',
        3,
      ),
    ).toBe(false);
    expect(requires(db('articles').whereBetween('id', [1, 2]).where('views', '>=', 3), 'views', '>=', 3)).toBe(true);
  });
});
