/**
 * SQL text by shape: for every kind of query the runtime and hooks build, the SQL and bindings are
 * Knex's own, on the first query of a shape and on later ones with other values; the later ones
 * are not compiled again, and a query whose shape cannot be read is compiled every time.
 */
import type { Knex } from 'knex';
import { dialectOf } from '../../runtime/db/connection';
import { databaseOfClient } from '../../runtime/db/database';
import { compiledQuery as compiledOn, SQL_SHAPES_KEPT } from '../../runtime/db/sql-shapes';
import { connect } from '../../runtime';
import { mysqlUrl, pgUrl } from '../support/databases';

/** The SQL text and bindings of `query`, from the shapes of the database it was built on. */
const compiledQuery = (query: Knex.QueryBuilder) => compiledOn(query, databaseOfClient(query.client));

type Build = (db: Knex, v: { id: number; text: string; ids: number[]; flag: boolean; page: number }) => Knex.QueryBuilder;

const CASES: [string, Build][] = [
  ['a key and a flag, first row', (db, v) => db('articles').select(['id', 'title']).where('articles.is_published', v.flag).where('articles.id', v.id).first() as unknown as Knex.QueryBuilder],
  ['a list of any length', (db, v) => db('articles').select('id').whereIn('id', v.ids).orderBy('id', 'desc')],
  ['a page: ordering, limit and offset', (db, v) => db('articles').select('id').where('views', '>=', v.id).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(20).offset(v.page * 20)],
  ['raw text with bindings', (db, v) => db('articles').select('id').whereRaw("lower(title) like ? escape '\\'", [`%${v.text}%`]).andWhere('author_id', v.id)],
  ['a count', (db, v) => db('articles').where('is_published', v.flag).count({ count: '*' })],
  ['a range and a pattern', (db, v) => db('articles').select('id').whereBetween('views', [v.id, v.id + 10]).whereLike('title', `${v.text}%`).orWhereNot('id', v.id)],
  ['a join', (db, v) => db('tags').join('articles_tags', 'articles_tags.tag_id', 'tags.id').select('tags.id', 'tags.name').where('articles_tags.article_id', v.id)],
  ['a column compared with a column', (db, v) => db('articles').select('id').where('views', '>', db.ref('id')).where('title', v.text)],
  ['an empty list', (db) => db('articles').select('id').whereIn('id', [])],
  ['a join built by a callback', (db, v) => db('tags').join('articles_tags', (j) => j.on('articles_tags.tag_id', '=', 'tags.id')).where('tags.id', v.id)],
  ['a date as a value', (db, v) => db('articles').select('id').where('created_at', '>', new Date(Date.UTC(2024, 0, (v.id % 28) + 1)))],
  ['a page from the start', (db, v) => db('articles').select('id').where('views', '>=', v.id).limit(20).offset(0)],
  ['grouped conditions', (db, v) => db('articles').select('id').where('title', v.text).where((q) => q.where('is_published', true).orWhere((r) => r.where('author_id', v.id).whereIn('id', v.ids)))],
  ['grouped conditions that are not', (db, v) => db('articles').select('id').whereNot((q) => q.where('views', '>', v.id).orWhere('id', v.id)).orderBy('id')],
  ['an insert returning its key', (db, v) => db('articles').insert({ title: v.text, views: v.id, is_published: v.flag, category_id: v.flag ? null : v.id }).returning('id')],
  ['an insert with a raw value', (db, v) => db('articles').insert({ created_at: db.raw('CURRENT_TIMESTAMP'), title: v.text }).returning(['id', 'title'])],
  ['an insert of rows', (db, v) => db('tags').insert(v.ids.map((id) => ({ id, name: `${v.text}-${id}` })))],
  ['nulls', (db, v) => db('articles').select('id').whereNull('category_id').whereNotNull('title').where('id', v.id)],
];

/** Not read as a shape: compiled by Knex every time. */
const UNREAD: [string, Build][] = [
  ['a subquery in grouped conditions', (db, v) => db('articles').select('id').where((q) => q.whereIn('author_id', db('users').select('id').where('username', v.text)))],
  ['a very long name', (db, v) => db('articles').select('x'.repeat(5000)).where('id', v.id)],
  ['a subquery', (db, v) => db('articles').select('id').whereIn('author_id', db('users').select('id').where('username', v.text))],
  ['a join on a value', (db, v) => db('tags').join('articles_tags', (j) => j.on('articles_tags.tag_id', '=', 'tags.id').andOnVal('articles_tags.article_id', '=', v.id))],
];

const values = (n: number) => ({ id: 1000 + n, text: `QuanTum ${n}`, ids: Array.from({ length: (n % 3) + 1 }, (_, i) => i + n), flag: n % 2 === 0, page: n });

describe.each([
  ['sqlite', () => connect('sqlite::memory:', ':memory:')],
  ['postgres', () => connect(pgUrl('postgres'), '')],
  ['mysql', () => connect(mysqlUrl('mysql'), '')],
])('compiledQuery (%s)', (_dialect, open) => {
  let db: Knex;
  beforeAll(() => {
    db = open();
  });
  afterAll(() => db.destroy());

  it.each(CASES)('%s: Knex’s SQL and bindings, compiled once per shape', (_name, build) => {
    for (let n = 0; n < 6; n++) {
      const query = build(db, values(n));
      const expected = query.clone().toSQL();
      const toSQL = jest.spyOn(query, 'toSQL');
      const got = compiledQuery(query);
      expect({ sql: got.sql, bindings: [...got.bindings] }).toEqual({ sql: expected.sql, bindings: expected.bindings });
      // The first query of a shape is compiled; lists of each new length are a shape of their own.
      if (n >= 3) expect(toSQL).not.toHaveBeenCalled();
    }
  });

  it.each(UNREAD)('%s: compiled by Knex every time', (_name, build) => {
    for (let n = 0; n < 3; n++) {
      const query = build(db, values(n));
      const expected = query.clone().toSQL();
      const toSQL = jest.spyOn(query, 'toSQL');
      const got = compiledQuery(query);
      expect({ sql: got.sql, bindings: [...got.bindings] }).toEqual({ sql: expected.sql, bindings: expected.bindings });
      expect(toSQL).toHaveBeenCalledTimes(1);
    }
  });

  it('writes a LIMIT as text on SQLite (each LIMIT a shape of its own) and binds it on PostgreSQL and MySQL; OFFSET is bound on all three', () => {
    const sqlite = dialectOf(db).limitAsText;
    const page = (limit: number, offset: number) => db('articles').select('id').where('views', '>', offset).limit(limit).offset(offset);
    for (const [limit, offset] of [[5, 10], [20, 40], [5, 15], [20, 60]]) {
      const query = page(limit, offset);
      const expected = query.clone().toSQL();
      const got = compiledQuery(query);
      expect({ sql: got.sql, bindings: [...got.bindings] }).toEqual({ sql: expected.sql, bindings: expected.bindings });
      expect(got.sql).toMatch(sqlite ? new RegExp(`limit ${limit} offset \\?$`) : /limit \? offset \?$/);
      expect(got.bindings).toEqual(sqlite ? [offset, offset] : [offset, limit, offset]);
    }
    // SQLite writes no OFFSET without a LIMIT: "no limit" is -1, as text too.
    const offsetOnly = db('articles').select('id').offset(30);
    expect(compiledQuery(offsetOnly).sql).toMatch(sqlite ? /limit -1 offset \?$/ : /offset \?$/);
  });

  it('writes a boolean as 1 or 0 on SQLite (each a part of the shape) and binds it on PostgreSQL and MySQL', async () => {
    const sqlite = dialectOf(db).booleansAsText;
    expect(sqlite).toBe(_dialect === 'sqlite');
    const published = (flag: boolean, views: number) => db('articles').select('id').where('is_published', flag).where('views', '>', views);
    for (const [flag, views] of [[true, 1], [false, 2], [true, 3], [false, 4]] as const) {
      const query = published(flag, views);
      const expected = query.clone().toSQL();
      const toSQL = jest.spyOn(query, 'toSQL');
      const got = compiledQuery(query);
      expect({ sql: got.sql, bindings: [...got.bindings] }).toEqual({ sql: expected.sql, bindings: expected.bindings });
      if (sqlite) {
        expect(got.sql).toContain(`= ${flag ? 1 : 0} and`);
        expect(got.bindings).toEqual([views]);
      } else expect(got.bindings).toEqual([flag, views]);
      // Each of the two flags is a shape of its own on SQLite: the third query and later are not compiled.
      if (views >= 3) expect(toSQL).not.toHaveBeenCalled();
    }
    if (!sqlite) return;
    // The same rows as bound values give.
    await db.schema.createTable('flags', (t) => {
      t.integer('id').primary();
      t.boolean('on');
    });
    try {
      await db('flags').insert([{ id: 1, on: true }, { id: 2, on: false }, { id: 3, on: true }]);
      expect(await db('flags').select('id').where('on', true).orderBy('id')).toEqual([{ id: 1 }, { id: 3 }]);
      expect(await db('flags').select('id').where('on', false)).toEqual([{ id: 2 }]);
      expect(await db('flags').select('id').whereRaw('"on" = ?', [true]).orderBy('id')).toEqual([{ id: 1 }, { id: 3 }]);
      expect(await db('flags').whereIn('on', [false]).count({ n: '*' })).toEqual([{ n: 1 }]);
      await db('flags').update({ on: false }).where('id', 3);
      expect(await db('flags').select('id', 'on').orderBy('id')).toEqual([{ id: 1, on: 1 }, { id: 2, on: 0 }, { id: 3, on: 0 }]);
    } finally {
      await db.schema.dropTable('flags');
    }
  });

  it(`keeps the ${SQL_SHAPES_KEPT} newest shapes: an older one is compiled again, as a new one`, async () => {
    const own = open(); // shapes are kept per database: this one starts with none
    try {
      // Shapes that share all but their last parts, then their ends.
      const query = (i: number) => own('articles').select('id').where('views', '>', i).where(`c${i}`, i + 1);
      const compiledAgain = (i: number) => {
        const q = query(i);
        const expected = q.clone().toSQL();
        const toSQL = jest.spyOn(q, 'toSQL');
        const got = compiledQuery(q);
        expect({ sql: got.sql, bindings: [...got.bindings] }).toEqual({ sql: expected.sql, bindings: expected.bindings });
        return toSQL.mock.calls.length > 0;
      };
      const extra = 5;
      for (let i = 0; i < SQL_SHAPES_KEPT + extra; i++) expect(compiledAgain(i)).toBe(true);
      for (let i = extra; i < SQL_SHAPES_KEPT + extra; i++) expect(compiledAgain(i)).toBe(false);
      for (let i = 0; i < extra; i++) expect(compiledAgain(i)).toBe(true);
      // Each of those was kept again in place of the oldest then: shapes `extra`… were dropped in turn.
      for (let i = 0; i < extra; i++) expect(compiledAgain(i)).toBe(false);
      expect(compiledAgain(extra)).toBe(true);
    } finally {
      await own.destroy();
    }
  });

  it('tells apart queries that differ only in a name, an operator or a flag', () => {
    const variants = [
      db('articles').select('id').where('views', '>', 5),
      db('articles').select('id').where('views', '<', 5),
      db('articles').select('id').where('likes', '>', 5),
      db('articles').select('id').whereNot('views', '>', 5),
      db('articles').select('id').orWhere('views', '>', 5),
      db('articles').select('title').where('views', '>', 5),
      db('articles').select('id').where('views', '>', 5).orderBy('id', 'desc'),
      db('articles').select('id').where('views', '>', 5).orderBy('id', 'asc'),
      db('articles').select('id').where('views', '>', 5).limit(5),
      // Names that hold what separates the parts of a shape.
      db('articles').select(['id', 'title']).where('views', '>', 5),
      db('articles').select(['id,title']).where('views', '>', 5),
      db('articles').select(['2:id']).where('views', '>', 5),
      db('articles').select(['number5']).where('views', '>', 5),
    ];
    for (let round = 0; round < 2; round++) {
      for (const query of variants) {
        const expected = query.clone().toSQL();
        const got = compiledQuery(query.clone());
        expect({ sql: got.sql, bindings: [...got.bindings] }).toEqual({ sql: expected.sql, bindings: expected.bindings });
      }
    }
  });
});
