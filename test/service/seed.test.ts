/**
 * `node main.js seed FILE...` of the compiled blog: YAML and JSON fixtures validated through the
 * create schemas (every problem listed, nothing written), then inserted in one transaction, with
 * passwords hashed, defaults and auto_now fields filled, explicit keys, foreign keys and flags a
 * create body cannot carry; the service then serves the rows and hands out the next key. Real
 * SQLite and PostgreSQL.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import bcrypt from 'bcrypt';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';
import { insertReturning } from '../../runtime/db/inserts';

const root = path.resolve(__dirname, '../..');
const main = path.join(root, 'dist/generated/main.js');

jest.setTimeout(180_000);

const GOOD = `# The blog's first content.
users:
  - {id: 1, username: ada, email: ada@example.com, password: correct horse, is_staff: true}
  - {username: bob, email: bob@example.com, password: battery staple, first_name: Bob}
categories:
  - {id: 7, name: News}
articles:
  - {title: Hello, content: First post, category: 7, author: 1, is_published: true, views: 3}
`;

const BAD = `users:
  - {username: ada, email: not-an-email, password: pw}
  - {username: bob, email: bob@example.com}
categories:
  - {name: News, colour: red}
authors:
  - {name: nobody}
`;

describe.each(DIALECTS)('seed (%s)', (dialect) => {
  let dir: string;
  let database: TestDatabase;
  const run = (...files: string[]) =>
    spawnSync(process.execPath, [main, 'seed', ...files], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: database.url },
      encoding: 'utf8',
    });

  beforeAll(() => {
    const build = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b', 'tsconfig.build.json'], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(build.stdout + build.stderr).toBe('');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-seed-'));
  });
  beforeEach(async () => {
    database = await createDatabase(dialect);
  });
  afterEach(() => database.drop());
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('lists every problem of the fixtures and writes nothing', async () => {
    const good = path.join(dir, 'good.yaml');
    const bad = path.join(dir, 'bad.yaml');
    fs.writeFileSync(good, GOOD);
    fs.writeFileSync(bad, BAD);
    const res = run(good, bad);
    expect(res.status).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr.split('\n').filter((l) => l.startsWith('seed:'))).toEqual([
      'seed: bad.yaml: users[0].email: value is not a valid email address',
      'seed: bad.yaml: users[1].password: Field required',
      'seed: bad.yaml: categories[0].colour: not a field of categories',
      'seed: bad.yaml: authors: not a resource of this service that can be created (articles, categories, tags, users)',
      'seed: 4 problems; nothing was written',
    ]);
    // The migrations ran; no row was written, good.yaml's neither.
    const [{ n }] = await database.db('users').count({ n: '*' });
    expect(Number(n)).toBe(0);
  });

  it('a row the database refuses rolls every row back', async () => {
    const file = path.join(dir, 'dangling.yaml');
    fs.writeFileSync(file, 'categories:\n  - {name: News}\narticles:\n  - {title: Orphan, content: x, author: 99}\n');
    const res = run(file);
    expect(res.status).toBe(1);
    expect(res.stderr.trim().split('\n').pop()).toMatch(/^seed: the database refused a row: .*; nothing was written$/);
    const [{ n }] = await database.db('categories').count({ n: '*' });
    expect(Number(n)).toBe(0);
  });

  it('inserts YAML and JSON fixtures through the create schemas, and the service goes on from there', async () => {
    const yaml = path.join(dir, 'blog.yaml');
    const json = path.join(dir, 'tags.json');
    fs.writeFileSync(yaml, GOOD);
    fs.writeFileSync(json, JSON.stringify({ tags: [{ name: 'intro' }, { name: 'news' }] }));
    const res = run(yaml, json);
    expect({ status: res.status, stdout: res.stdout }).toEqual({
      status: 0,
      stdout: 'seeded users: 2, categories: 1, articles: 1, tags: 2\n',
    });
    const users = await database
      .db('users')
      .select('id', 'username', 'password', 'first_name', 'last_name', 'is_staff', 'is_active', 'date_joined')
      .orderBy('id');
    expect(
      users.map((u: Record<string, unknown>) => [u.id, u.username, u.first_name, u.last_name, Boolean(u.is_staff), Boolean(u.is_active)]),
    ).toEqual([
      [1, 'ada', '', '', true, true],
      [2, 'bob', 'Bob', '', false, true],
    ]);
    expect(await bcrypt.compare('correct horse', users[0].password)).toBe(true);
    expect(users[1].date_joined).not.toBeNull();
    const [article] = await database.db('articles').select('title', 'category_id', 'author_id', 'is_published', 'views', 'summary');
    expect({ ...article, is_published: Boolean(article.is_published) }).toEqual({
      title: 'Hello',
      category_id: 7,
      author_id: 1,
      is_published: true,
      views: 3,
      summary: '',
    });
    // The next key follows the explicit ones (PostgreSQL's sequence was moved past them).
    const later = { name: 'Later', description: '' };
    const [next] = await insertReturning(database.db, database.db('categories').insert(later), later, ['id']);
    expect(Number(next.id)).toBe(8);
    expect((await database.db('tags').select('name').orderBy('id')).map((t: { name: string }) => t.name)).toEqual(['intro', 'news']);
  });
});
