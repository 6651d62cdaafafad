/**
 * MatchCaseFilterViewSetMixin's two forms: a case written as its `true` and `false` sides, and one
 * written as a single condition that a true value applies as `include` says and a false value the
 * other way. The two build the same statement for every value. Nothing is run: the SQL is compared.
 */
import { matchCaseMixin, type Lookup } from '../../runtime';
import { connect } from '../../runtime/db/connection';

const db = connect('sqlite::memory:', '');

afterAll(() => db.destroy());

const views: Lookup = { hops: [], column: 'articles.views', kind: 'int', nullable: false, op: 'gte' };
const condition = { lookup: views, value: 100 };

function sql(mixin: ReturnType<typeof matchCaseMixin>, value: unknown): string {
  const query = db('articles').select('id');
  mixin(query, { popular: value });
  const { sql, bindings } = query.toSQL();
  return `${sql} ${JSON.stringify(bindings)}`;
}

describe('a match case', () => {
  it.each([true, false])('written once builds what its two sides build, for include: %s', (include) => {
    const once = matchCaseMixin({ popular: { condition, include } });
    const sides = matchCaseMixin({ popular: { true: { condition, include }, false: { condition, include: !include } } });
    for (const value of [true, false, undefined, null]) expect(sql(once, value)).toBe(sql(sides, value));
    expect(sql(once, true)).not.toBe(sql(once, false));
    expect(sql(once, undefined)).toBe(sql(once, null));
  });
});
