/**
 * `svcgen pull`: specs written from the blog's own database (migrated by the blog's migrations) build
 * into a service that serves the same routes as the blog, its custom code aside (the account
 * endpoints, the `publish` and `feed` actions): every resource's CRUD routes and the articles' tags
 * relation, found from the join table. The pulled service then works on a database of its own.
 * Real SQLite and PostgreSQL.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import request from 'supertest';
import { pull, specsFromTables } from '../../generator/cli/pull';
import { listColumnType, loadSettings, migrateLatest } from '../../runtime';
import { introspect } from '../../runtime/db/introspect';
import { build, loadService, type Workspace } from '../migrations/helpers';
import { createDatabase, DIALECTS } from '../support/databases';
import { testKeys } from '../support/keys';
import { startBlog } from '../support/services';

const ROOT = path.resolve(__dirname, '../..');

jest.setTimeout(120_000);

/** `METHOD path` of every operation of an OpenAPI document. */
function routes(doc: { paths: Record<string, Record<string, unknown>> }): string[] {
  return Object.entries(doc.paths)
    .flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`))
    .sort();
}

/** The blog's routes that come from its custom code, which no database holds. */
const CUSTOM = /^(POST|GET) \/api\/(auth\/|articles\/feed\/|articles\/\{pk\}\/publish\/)/;

describe.each(DIALECTS)('svcgen pull on the blog database (%s)', (dialect) => {
  let ws: Workspace;
  afterAll(() => ws?.remove());

  it('writes specs that build into a service serving the blog routes', async () => {
    const blog = await startBlog(dialect);
    const blogRoutes = routes((await request(blog.app).get('/api/openapi.json')).body).filter((r) => !CUSTOM.test(r));
    const tmp = path.join(ROOT, 'test', '.tmp');
    fs.mkdirSync(tmp, { recursive: true });
    const root = fs.mkdtempSync(path.join(tmp, 'pull-'));
    ws = { root, specs: path.join(root, 'specs'), out: path.join(root, 'generated'), remove: () => fs.rmSync(root, { recursive: true, force: true }) };
    let files: string[];
    try {
      files = await pull(blog.database.url, ws.specs);
    } finally {
      await blog.close();
    }
    expect(files).toEqual(['service.yaml', 'resources/articles.yaml', 'resources/categories.yaml', 'resources/tags.yaml', 'resources/users.yaml']);
    const articles = fs.readFileSync(path.join(ws.specs, 'resources/articles.yaml'), 'utf8');
    expect(articles).toContain('  author: {type: foreign_key, to: User, on_delete: cascade}\n');
    expect(articles).toContain('  category: {type: foreign_key, to: Category, on_delete: set_null, null: true}\n');
    expect(articles).toContain('  tags: {type: many_to_many, to: Tag}\n');
    expect(articles).toContain('indexes:\n  - [author, created_at]\n  - [is_published, created_at]\n');
    expect(fs.readFileSync(path.join(ws.specs, 'resources/users.yaml'), 'utf8')).toContain('  username: {type: string, max_length: 150, unique: true}\n');

    await build(ws);
    const pulled = loadService(ws);
    const database = await createDatabase(dialect);
    try {
      await migrateLatest(database.db, pulled.migrations);
      const { app } = pulled.createService({ db: database.db, keys: testKeys(), settings: loadSettings(pulled.defaults, {}, {}) });
      const doc = (await request(app).get('/api/openapi.json')).body;
      expect(routes(doc)).toEqual(blogRoutes);
      // And it serves them: a tag, an article with the tag through the relation endpoint.
      const tag = await request(app).post('/api/tags/').send({ name: 'intro' });
      expect({ status: tag.status, body: tag.body }).toEqual({ status: 201, body: { id: 1, name: 'intro' } });
      const list = await request(app).get('/api/tags/');
      expect(list.status).toBe(200);
      expect(JSON.stringify(list.body)).toContain('"intro"');
    } finally {
      await database.drop();
    }
  });
});

describe.each(DIALECTS)('svcgen pull of list columns (%s)', (dialect) => {
  it('writes a list field for an array column where the database has arrays, and what a JSON column pulls as elsewhere', async () => {
    const database = await createDatabase(dialect);
    try {
      const knex = database.db;
      await knex.schema.createTable('bookmarks', (t) => {
        t.increments('id');
        t.specificType('tags', listColumnType(knex, 'string')).notNullable();
        t.specificType('ratings', listColumnType(knex, 'integer')).nullable();
        t.specificType('visits', listColumnType(knex, 'date')).nullable();
      });
      const specs = specsFromTables(await introspect(knex), 'Pulled');
      // MariaDB's JSON is a LONGTEXT with a check: pulled as text, as a json field's column is.
      const fields = {
        postgres: '  tags: {type: list, of: string}\n  ratings: {type: list, of: integer, null: true}\n  visits: {type: list, of: date, null: true}\n',
        sqlite: '  tags: {type: json}\n  ratings: {type: json, null: true}\n  visits: {type: json, null: true}\n',
        mysql: '  tags: {type: text}\n  ratings: {type: text, null: true}\n  visits: {type: text, null: true}\n',
      };
      expect(specs.get('resources/bookmarks.yaml')).toContain(fields[dialect]);
    } finally {
      await database.drop();
    }
  });
});
