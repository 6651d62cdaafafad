/**
 * The blog's composite indexes serve its list: the query the public list runs (published articles,
 * newest first) and the one a signed-in author's list runs (published or their own) are captured as
 * the service sends them, and each database's EXPLAIN names the indexes; a filter the visibility rule
 * already applies is not sent twice. PostgreSQL is told not to
 * prefer a sequential scan, which it would on tables this small; on MySQL, the indexes it may read
 * with count.
 */
import request from 'supertest';
import type { Knex } from 'knex';
import { makeArticle, makeUser } from '../support/blog-fixtures';
import { DIALECTS } from '../support/databases';
import { startBlog, type RunningService } from '../support/services';

interface Sent {
  sql: string;
  bindings: readonly unknown[];
}

describe.each(DIALECTS)('the blog list uses its composite indexes (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startBlog(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(svc.errors).toEqual([]));

  /** The statements on articles a GET of the list ran: the count, then the page. */
  async function listQueries(headers: Record<string, string> = {}, target = '/api/articles/'): Promise<{ count: Sent; page: Sent }> {
    const sent: Sent[] = [];
    // The statements that answered: behind a transaction pooler, a named read that met another
    // server connection fails once and runs again unnamed (dialects/postgres-reads.ts).
    const listener = (_response: unknown, q: Sent) => sent.push(q);
    svc.database.db.on('query-response', listener);
    try {
      const res = await request(svc.app).get(target).set(headers);
      expect(res.status).toBe(200);
    } finally {
      svc.database.db.off('query-response', listener);
    }
    const onArticles = sent.filter((q) => /from ["`]articles["`]/.test(q.sql));
    const pages = onArticles.filter((q) => /order by/i.test(q.sql));
    const counts = onArticles.filter((q) => /count\(\*\)/i.test(q.sql));
    expect([pages.length, counts.length]).toEqual([1, 1]);
    return { count: counts[0], page: pages[0] };
  }

  /** The page query (the ordered one, not the count) of a GET of the list. */
  async function listQuery(headers: Record<string, string> = {}): Promise<Sent> {
    return (await listQueries(headers)).page;
  }

  async function plan({ sql, bindings }: Sent): Promise<string> {
    const positional = sql.replace(/\$\d+/g, '?');
    return svc.database.db.transaction(async (trx: Knex.Transaction) => {
      if (dialect === 'sqlite') {
        const rows = (await trx.raw(`explain query plan ${positional}`, bindings as Knex.RawBinding[])) as { detail: string }[];
        return rows.map((r) => r.detail).join('\n');
      }
      if (dialect === 'mysql') {
        // The indexes MySQL may read the rows with (`possible_keys`) and the one it chose (`key`): on
        // tables this small it may choose a full scan, which no setting forbids as PostgreSQL's does.
        const [rows] = (await trx.raw(`explain ${positional}`, bindings as Knex.RawBinding[])) as [
          { possible_keys: string | null; key: string | null }[],
        ];
        return rows.map((r) => `${r.possible_keys ?? ''} ${r.key ?? ''}`).join('\n');
      }
      await trx.raw('set local enable_seqscan = off');
      const result = await trx.raw(`explain ${positional}`, bindings as Knex.RawBinding[]);
      return (result.rows as { 'QUERY PLAN': string }[]).map((r) => r['QUERY PLAN']).join('\n');
    });
  }

  it('the public list reads articles_is_published_created_at_index', async () => {
    const author = await makeUser(svc);
    for (let i = 0; i < 5; i++) await makeArticle(svc.database.db, { author_id: author.id, is_published: i % 2 === 0 });
    const text = await plan(await listQuery());
    expect(text).toContain('articles_is_published_created_at_index');
  });

  it('the public list is read in index order: ties by id run descending like created_at, with no sort step', async () => {
    const { page } = await listQueries();
    expect(page.sql).toMatch(/order by ["`]created_at["`] desc, ["`]id["`] desc/);
    if (dialect === 'sqlite') expect(await plan(page)).not.toContain('TEMP B-TREE');
  });

  it('?is_published=true, which the visibility rule already requires, is not compared twice per row', async () => {
    const { count, page } = await listQueries({}, '/api/articles/?is_published=true');
    const comparisons = (sql: string) => sql.match(/is_published["`] = /g) ?? [];
    for (const { sql } of [count, page]) expect(comparisons(sql)).toHaveLength(1);
    // Another value is a second condition (no row can match both).
    const other = await listQueries({}, '/api/articles/?is_published=false');
    expect(comparisons(other.count.sql)).toHaveLength(2);
  });

  it("a signed-in author's list reads both indexes: published ones and their own", async () => {
    const author = await makeUser(svc);
    await makeArticle(svc.database.db, { author_id: author.id, is_published: false });
    const text = await plan(await listQuery({ Authorization: author.bearer }));
    expect(text).toContain('articles_is_published_created_at_index');
    expect(text).toContain('articles_author_id_created_at_index');
  });

  // A search field or an `icontains` filter matches `lower(column) LIKE lower(pattern)`: on PostgreSQL
  // the migrations give each such column a trigram index of lower(column) that serves it (SQLite has
  // none: it reads every row, natively for ASCII text).
  // MySQL has no search index (its adapter makes none): the match reads every row there.
  (dialect === 'mysql' ? it.skip.each : it.each)([
    ['?title=', '/api/articles/?title=QuanTum', ['articles_title_search_index']],
    ['?search=', '/api/articles/?search=QuanTum', ['articles_title_search_index', 'articles_summary_search_index']],
  ])('%s is served by the search indexes of its columns on PostgreSQL', async (_name, target, indexes) => {
    const author = await makeUser(svc);
    await makeArticle(svc.database.db, { author_id: author.id, is_published: true, title: 'Quantum leaps' });
    // Enough published rows (of a kilobyte, as articles are), and their statistics, that reading
    // every published row costs more than reading the index.
    const rows = Array.from({ length: 2000 }, (_, i) => ({
      title: `Filler ${i}`,
      content: 'Content '.repeat(128),
      summary: '',
      is_published: true,
      views: 0,
      created_at: '2026-01-01T00:00:00.000Z',
      author_id: author.id,
    }));
    await svc.database.db.batchInsert('articles', rows, 500);
    if (dialect === 'postgres') await svc.database.db.raw('analyze articles');
    const { count, page } = await listQueries({}, target);
    for (const sent of [count, page]) {
      expect(sent.sql).toMatch(/lower\(["`]articles["`]\.["`](title|summary)["`]\) LIKE/);
      if (dialect === 'sqlite') continue;
      const text = await plan(sent);
      for (const index of indexes) expect(text).toContain(index);
    }
  });
});
