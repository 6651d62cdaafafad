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
import { scratchDir } from '../support/scratch';

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
    const root = scratchDir('pull');
    ws = {
      root,
      specs: path.join(root, 'specs'),
      out: path.join(root, 'generated'),
      remove: () => fs.rmSync(root, { recursive: true, force: true }),
    };
    let files: string[];
    try {
      files = await pull(blog.database.url, ws.specs);
    } finally {
      await blog.close();
    }
    expect(files).toEqual([
      'service.yaml',
      'resources/articles.yaml',
      'resources/categories.yaml',
      'resources/tags.yaml',
      'resources/users.yaml',
    ]);
    const articles = fs.readFileSync(path.join(ws.specs, 'resources/articles.yaml'), 'utf8');
    expect(articles).toContain('  author: {type: foreign_key, to: User, on_delete: cascade}\n');
    expect(articles).toContain('  category: {type: foreign_key, to: Category, on_delete: set_null, null: true}\n');
    expect(articles).toContain('  tags: {type: many_to_many, to: Tag}\n');
    expect(articles).toContain('indexes:\n  - [author, created_at]\n  - [is_published, created_at]\n');
    expect(fs.readFileSync(path.join(ws.specs, 'resources/users.yaml'), 'utf8')).toContain(
      '  username: {type: string, max_length: 150, unique: true}\n',
    );

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
        postgres:
          '  tags: {type: list, of: string}\n  ratings: {type: list, of: integer, null: true}\n  visits: {type: list, of: date, null: true}\n',
        sqlite: '  tags: {type: json}\n  ratings: {type: json, null: true}\n  visits: {type: json, null: true}\n',
        mysql: '  tags: {type: text}\n  ratings: {type: text, null: true}\n  visits: {type: text, null: true}\n',
      };
      expect(specs.get('resources/bookmarks.yaml')).toContain(fields[dialect]);
    } finally {
      await database.drop();
    }
  });
});

describe('svcgen pull of list defaults (postgres)', () => {
  const itPostgres = DIALECTS.includes('postgres') ? it : it.skip;
  itPostgres(
    "keeps an array column's default (a literal or an ARRAY constructor) as the list field's default, so the field stays optional",
    async () => {
      const database = await createDatabase('postgres');
      let specs: Map<string, string>;
      try {
        const knex = database.db;
        await knex.schema.createTable('bookmarks', (t) => {
          t.increments('id');
          t.specificType('tags', 'text[]').notNullable().defaultTo(knex.raw("'{}'"));
          t.specificType('sizes', 'text[]').notNullable().defaultTo(knex.raw(`'{M,"X \\"L\\"","a,b"}'`));
          t.specificType('ratings', 'integer[]').notNullable().defaultTo(knex.raw("'{1,-2}'"));
          t.specificType('flags', 'boolean[]').notNullable().defaultTo(knex.raw("'{t,f}'"));
          t.specificType('words', 'text[]').notNullable().defaultTo(knex.raw("ARRAY['x', 'it''s']"));
          t.specificType('computed', 'text[]').notNullable().defaultTo(knex.raw('ARRAY[current_user]::text[]'));
        });
        const columns = Object.fromEntries((await introspect(knex))[0].columns.map((c) => [c.name, c.defaultValue]));
        expect(columns.tags).toBe("'{}'::text[]");
        specs = specsFromTables(await introspect(knex), 'Pulled');
      } finally {
        await database.drop();
      }
      expect(specs.get('resources/bookmarks.yaml')).toContain(
        [
          '  tags: {type: list, of: string, default: []}',
          '  sizes: {type: list, of: string, default: [M, "X \\"L\\"", "a,b"]}',
          '  ratings: {type: list, of: integer, default: [1, -2]}',
          '  flags: {type: list, of: boolean, default: [true, false]}',
          '  words: {type: list, of: string, default: [x, "it\'s"]}',
          // An expression: no default the specs can say.
          '  computed: {type: list, of: string}',
        ].join('\n'),
      );
      // The pulled specs build, and a create without the defaulted lists is valid.
      const root = scratchDir('pull-list');
      const ws: Workspace = {
        root,
        specs: path.join(root, 'specs'),
        out: path.join(root, 'generated'),
        remove: () => fs.rmSync(root, { recursive: true, force: true }),
      };
      try {
        for (const [file, text] of specs) {
          fs.mkdirSync(path.dirname(path.join(ws.specs, file)), { recursive: true });
          fs.writeFileSync(path.join(ws.specs, file), text);
        }
        await build(ws);
        const api = JSON.parse(fs.readFileSync(path.join(ws.out, 'api.json'), 'utf8'));
        const body: Record<string, { required?: boolean }> = api.operations.create_bookmark.body;
        expect(Object.fromEntries(Object.entries(body).map(([name, field]) => [name, field.required ?? false]))).toEqual({
          tags: false,
          sizes: false,
          ratings: false,
          flags: false,
          words: false,
          computed: true,
        });
      } finally {
        ws.remove();
      }
    },
  );
});
