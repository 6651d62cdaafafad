/**
 * The whole workflow of editing the specs of a service that has data, on SQLite and PostgreSQL:
 * build the blog, migrate a fresh database, write data through the API; edit the specs (a new field
 * with a default, a new resource with a foreign key and its endpoints, a renamed field); rebuild
 * (a 0002 migration appears); migrate the SAME database: every row is still there, and the new
 * endpoints work. Then a change SQLite can only make by rebuilding a referenced table, and the
 * migrations rolled back and applied again.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import { loadSettings, migrateLatest, migrateRollback, type ServiceContext } from '../../runtime';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';
import { testKeys } from '../support/keys';
import { blogWorkspace, build, columns, edit, failure, loadService, rows, type Workspace } from './helpers';
import { insertReturning } from '../../runtime/db/inserts';

jest.setTimeout(300_000);

interface Api {
  app: Express;
  context: ServiceContext;
  errors: unknown[];
}

function serve(ws: Workspace, db: TestDatabase['db']): { api: Api; migrations: ReturnType<typeof loadService>['migrations'] } {
  const service = loadService(ws);
  const errors: unknown[] = [];
  const { app, context } = service.createService({
    db,
    keys: testKeys(),
    settings: loadSettings(service.defaults, {}),
    logError: (e) => errors.push(e),
  });
  return { api: { app, context, errors }, migrations: service.migrations };
}

const TABLES = ['users', 'categories', 'tags', 'articles', 'articles_tags'];

describe.each(DIALECTS)('editing the specs of a service with data (%s)', (dialect) => {
  let ws: Workspace;
  let database: TestDatabase;
  beforeAll(async () => {
    ws = blogWorkspace(`workflow-${dialect}`);
    database = await createDatabase(dialect);
  });
  afterAll(async () => {
    await database?.drop();
    ws?.remove();
  });

  it('keeps every row through a new field, a new resource and a rename, and serves the new endpoints', async () => {
    const db = database.db;
    const articlesSpec = path.join(ws.specs, 'resources', 'articles.yaml');

    // 1. The blog as it is: one migration, applied to a fresh database.
    const first = await build(ws);
    expect(first.migration?.name).toBe('0001_initial');
    const v1 = serve(ws, db);
    expect(await migrateLatest(db, v1.migrations)).toEqual(['0001_initial']);
    const initialBytes = fs.readFileSync(path.join(ws.out, 'migrations/0001_initial.ts'), 'utf8');

    // Data through the API: a staff user (inserted: there is no public sign-up in this test), a category, a tag, two articles.
    const ada = { username: 'ada', email: 'ada@example.com', password: 'x', is_staff: true, date_joined: '2026-01-02T03:04:05.000Z' };
    const [userRow] = await insertReturning(db, db('users').insert(ada), ada, ['id']);
    const userId = Number(userRow.id);
    const auth = `Bearer ${await v1.api.context.tokens.issueAccess(userId)}`;
    const app1 = v1.api.app;
    const category = await request(app1)
      .post('/api/categories/')
      .set('Authorization', auth)
      .send({ name: 'News', description: 'All the news' });
    expect(category.status).toBe(201);
    const tag = await request(app1).post('/api/tags/').set('Authorization', auth).send({ name: 'databases' });
    expect(tag.status).toBe(201);
    const hello = await request(app1)
      .post('/api/articles/')
      .set('Authorization', auth)
      .send({ title: 'Hello', content: 'World', summary: 'A short hello', category: category.body.id });
    expect(hello.status).toBe(201);
    const other = await request(app1).post('/api/articles/').set('Authorization', auth).send({ title: 'Other', content: 'Text' });
    expect(other.status).toBe(201);
    const tagged = await request(app1)
      .post(`/api/articles/${hello.body.id}/tags/`)
      .set('Authorization', auth)
      .send({ add: [tag.body.id] });
    expect(tagged.status).toBeLessThan(300);
    expect(v1.api.errors).toEqual([]);
    const before = Object.fromEntries(await Promise.all(TABLES.map(async (t) => [t, await rows(db, t)] as const)));
    expect(before.articles).toHaveLength(2);
    expect(before.articles_tags).toHaveLength(1);
    expect(before.articles[0]).toMatchObject({ title: 'Hello', summary: 'A short hello' });

    // 2. Edit the specs: a field with a default, a new resource with a foreign key, a renamed field.
    edit(
      articlesSpec,
      '  views: {type: integer, default: 0}\n',
      '  views: {type: integer, default: 0}\n  rating: {type: integer, default: 3}\n',
    );
    // The serializers name the field too (not the field's own key, nor the action's `summary:` doc key).
    edit(articlesSpec, /\bsummary\b(?!:)/g, 'abstract');
    edit(
      articlesSpec,
      '  summary: {type: string, max_length: 500, default: ""}\n',
      '  abstract: {type: string, max_length: 500, default: "", renamed_from: summary}\n',
    );
    edit(articlesSpec, '      - abstract\n', '      - abstract\n      - rating\n');
    fs.writeFileSync(
      path.join(ws.specs, 'resources', 'comments.yaml'),
      [
        'model: Comment',
        'verbose_name: comment',
        'verbose_name_plural: comments',
        'fields:',
        '  article: {type: foreign_key, to: Article, on_delete: cascade}',
        '  body: {type: text}',
        '  created_at: {type: datetime, auto_now_add: true}',
        'viewset:',
        '  auth: null',
        '',
      ].join('\n'),
    );

    const second = await build(ws);
    expect(second.migration).toBeDefined();
    const name2 = second.migration!.name;
    expect(name2).toMatch(/^0002_[a-z0-9_]+$/);
    // The searched column's index is named after it: renamed with it.
    expect(second.migration!.changes).toEqual([
      'create table comments',
      'rename column articles.summary to abstract',
      'rename search index articles_summary_search_index to articles_abstract_search_index',
      'add column articles.rating',
    ]);
    expect(second.changes.resourcesAdded).toEqual(['comments']);
    expect(second.changes.endpointsAdded).toContain('POST /api/comments/');
    // The first migration is never rewritten; the index lists both; the snapshot records both.
    expect(fs.readFileSync(path.join(ws.out, 'migrations/0001_initial.ts'), 'utf8')).toBe(initialBytes);
    const index = fs.readFileSync(path.join(ws.out, 'migrations/index.ts'), 'utf8');
    expect(index).toContain(`from './0001_initial'`);
    expect(index).toContain(`from './${name2}'`);
    expect(JSON.parse(fs.readFileSync(path.join(ws.out, 'migrations/schema.json'), 'utf8')).migrations).toEqual(['0001_initial', name2]);
    const migration2 = fs.readFileSync(path.join(ws.out, `migrations/${name2}.ts`), 'utf8');
    expect(migration2).toContain(`t.renameColumn('summary', 'abstract');`);
    // Building again changes nothing: no third migration.
    expect((await build(ws)).migration).toBeUndefined();

    // 3. Migrate the same database.
    const v2 = serve(ws, db);
    expect(await migrateLatest(db, v2.migrations)).toEqual([name2]);
    const after = Object.fromEntries(await Promise.all(TABLES.map(async (t) => [t, await rows(db, t)] as const)));
    for (const t of TABLES.filter((x) => x !== 'articles')) expect({ t, rows: after[t] }).toEqual({ t, rows: before[t] });
    expect(after.articles).toEqual(before.articles.map(({ summary, ...rest }) => ({ ...rest, abstract: summary, rating: 3 })));
    expect(await columns(db, 'articles')).not.toContain('summary');
    if (dialect === 'postgres') {
      const indexes = await db.raw(
        "select indexname from pg_indexes where tablename = 'articles' and indexname like '%search_index' order by 1",
      );
      expect(indexes.rows.map((r: { indexname: string }) => r.indexname)).toEqual([
        'articles_abstract_search_index',
        'articles_title_search_index',
      ]);
    }

    const app2 = v2.api.app;
    const detail = await request(app2).get(`/api/articles/${hello.body.id}/`).set('Authorization', auth);
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({
      title: 'Hello',
      abstract: 'A short hello',
      rating: 3,
      category: { id: category.body.id, name: 'News' },
    });
    expect(detail.body.tags).toEqual([{ id: tag.body.id, name: 'databases' }]);
    // The article is its author's draft: a comment may name it for its author, and for no one who cannot see it.
    const hidden = await request(app2).post('/api/comments/').send({ article: hello.body.id, body: 'Nice post' });
    expect([hidden.status, hidden.body]).toEqual([404, { article: 'not found' }]);
    const comment = await request(app2)
      .post('/api/comments/')
      .set('Authorization', auth)
      .send({ article: hello.body.id, body: 'Nice post' });
    expect(comment.status).toBe(201);
    expect(comment.body).toMatchObject({ article: hello.body.id, body: 'Nice post' });
    const comments = await request(app2).get('/api/comments/');
    expect(comments.status).toBe(200);
    expect(JSON.stringify(comments.body)).toContain('Nice post');
    expect((await request(app2).get(`/api/comments/${comment.body.id}/`)).body).toMatchObject({ body: 'Nice post' });
    // The new foreign key holds: a comment on a missing article is refused.
    expect((await request(app2).post('/api/comments/').send({ article: 999999, body: 'x' })).status).toBeGreaterThanOrEqual(400);
    const created = await request(app2)
      .post('/api/articles/')
      .set('Authorization', auth)
      .send({ title: 'New', content: 'C', abstract: 'Third' });
    expect(created.status).toBe(201);
    expect(v2.api.errors).toEqual([]);

    // 4. A change SQLite makes by rebuilding `articles`, which comments and articles_tags reference
    // with ON DELETE CASCADE: their rows must survive the rebuild.
    edit(articlesSpec, '  title: {type: string, max_length: 200}\n', '  title: {type: string, max_length: 300}\n');
    edit(articlesSpec, '  views: {type: integer, default: 0}\n', '  views: {type: integer, default: 5}\n');
    const third = await build(ws);
    const name3 = third.migration!.name;
    expect(name3).toMatch(/^0003_/);
    expect(third.migration!.changes).toEqual([
      'alter column articles.title (string(200) → string(300))',
      'alter column articles.views (default 5)',
    ]);
    const v3 = serve(ws, db);
    const commentsBefore = await rows(db, 'comments');
    const tagsBefore = await rows(db, 'articles_tags');
    const articlesBefore = await rows(db, 'articles');
    expect(await migrateLatest(db, v3.migrations)).toEqual([name3]);
    expect(await rows(db, 'comments')).toEqual(commentsBefore);
    expect(await rows(db, 'articles_tags')).toEqual(tagsBefore);
    expect(await rows(db, 'articles')).toEqual(articlesBefore);
    if (dialect === 'sqlite') expect(await db.raw('PRAGMA foreign_keys')).toEqual([{ foreign_keys: 1 }]);
    const long = 'x'.repeat(250);
    const patched = await request(v3.api.app).patch(`/api/articles/${other.body.id}/`).set('Authorization', auth).send({ title: long });
    expect(patched.status).toBe(200);
    expect(patched.body.title).toBe(long);
    const article = { title: 't', content: 'c', author_id: userId, created_at: '2026-01-01T00:00:00.000Z' };
    const [inserted] = await insertReturning(db, db('articles').insert(article), article, ['id']);
    expect(Number((await db('articles').select('views').where('id', inserted.id).first()).views)).toBe(5);

    // Foreign keys still act after the rebuild: deleting an article deletes its comments and tag links.
    const deleted = await request(v3.api.app).delete(`/api/articles/${hello.body.id}/`).set('Authorization', auth);
    expect(deleted.status).toBeLessThan(300);
    expect(await db('comments').where('article_id', hello.body.id)).toEqual([]);
    expect(await db('articles_tags').where('article_id', hello.body.id)).toEqual([]);
    expect(v3.api.errors).toEqual([]);

    // 5. Every step has a down: roll 0003 and 0002 back (the data stays), then apply them again.
    // Undoing the longer max_length refuses to cut the long title (a PostgreSQL cast would truncate it).
    expect(await failure(migrateRollback(db, v3.migrations))).toMatch('articles.title: some values are longer than 200 characters');
    expect((await rows(db, 'articles')).find((a) => a.id === other.body.id)).toMatchObject({ title: long });
    await db('articles')
      .where('id', other.body.id)
      .update({ title: long.slice(0, 200) });
    expect(await migrateRollback(db, v3.migrations)).toEqual([name3]);
    expect(await migrateRollback(db, v3.migrations)).toEqual([name2]);
    expect(await columns(db, 'articles')).toContain('summary');
    expect(await columns(db, 'articles')).not.toContain('rating');
    expect(await db.schema.hasTable('comments')).toBe(false);
    expect((await rows(db, 'articles')).find((a) => a.id === other.body.id)).toMatchObject({ title: long.slice(0, 200), summary: '' });
    expect(await migrateLatest(db, v3.migrations)).toEqual([name2, name3]);
    expect((await rows(db, 'articles')).find((a) => a.id === other.body.id)).toMatchObject({
      title: long.slice(0, 200),
      abstract: '',
      rating: 3,
    });
  });
});
