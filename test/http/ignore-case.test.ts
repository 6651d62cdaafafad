/**
 * `ignore_case` on a unique field: a project made by `svcgen init` turns it on for its users'
 * username and email (a new migration: the unique constraints become unique indexes over the
 * values with ASCII letters folded). On SQLite, PostgreSQL and MariaDB alike, registration then
 * answers the error catalogue's 400s for a name or an email that differs only in case, a write past
 * the API is refused by the database, letters beyond ASCII compare exactly, and the migration rolls
 * back to the case-sensitive constraints.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Express } from 'express';
import request from 'supertest';
import { initProject } from '../../generator/cli/init';
import { generate, writeOutput } from '../../generator/pipeline';
import { loadSettings, migrateLatest, migrateRollback, type Migration, type Settings } from '../../runtime';
import { isConstraintViolation } from '../../runtime/db/driver-errors';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';
import { testKeys } from '../support/keys';
import { scratchDir } from '../support/scratch';

const ROOT = path.resolve(__dirname, '../..');
const VERSION: string = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;

interface Project {
  dir: string;
  createService: (options: { db: TestDatabase['db']; keys: ReturnType<typeof testKeys>; settings: Settings }) => { app: Express };
  migrations: Migration[];
  defaults: Settings;
  /** The text of the migration the change wrote. */
  migration: string;
}

let project: Project;

beforeAll(async () => {
  const dir = path.join(scratchDir('ignore-case'), 'app');
  await initProject(dir, { svcgen: VERSION });
  const users = path.join(dir, 'specs/resources/users.yaml');
  const before = fs.readdirSync(path.join(dir, 'generated/migrations'));
  fs.writeFileSync(
    users,
    fs
      .readFileSync(users, 'utf8')
      .replace(
        'username: {type: string, max_length: 150, unique: true}',
        'username: {type: string, max_length: 150, unique: true, ignore_case: true}',
      )
      .replace('email: {type: email, unique: true}', 'email: {type: email, unique: true, ignore_case: true}'),
  );
  const { files } = await generate({ specsDir: 'specs', outDir: 'generated', cwd: dir, runtimeImport: '@svcgen/runtime' });
  writeOutput(path.join(dir, 'generated'), files);
  const added = fs.readdirSync(path.join(dir, 'generated/migrations')).filter((f) => !before.includes(f));
  expect(added).toHaveLength(1);
  project = {
    dir,
    createService: require(path.join(dir, 'generated', 'app')).createService,
    migrations: require(path.join(dir, 'generated', 'migrations')).migrations,
    defaults: require(path.join(dir, 'generated', 'settings')).DEFAULT_SETTINGS,
    migration: fs.readFileSync(path.join(dir, 'generated/migrations', added[0]), 'utf8'),
  };
});
afterAll(() => fs.rmSync(path.dirname(project.dir), { recursive: true, force: true }));

it('the migration swaps each unique constraint for a case-insensitive unique index of the same name, and back', () => {
  const body = project.migration.slice(project.migration.indexOf('export async function up'));
  expect(body).toContain("t.dropUnique(['username']);");
  expect(body).toContain("t.unique(['email']);");
  expect(body).toContain("await createFoldedUnique(knex, 'users', 'username', 'users_username_unique');");
  expect(body).toContain("await createFoldedUnique(knex, 'users', 'email', 'users_email_unique');");
  expect(body).toContain("await dropFoldedUnique(knex, 'users', 'users_email_unique');");
});

describe.each(DIALECTS)('ignore_case on the users of an init project (%s)', (dialect) => {
  let database: TestDatabase;
  let app: Express;
  beforeAll(async () => {
    database = await createDatabase(dialect);
    // The change as a release of its own, which a rollback takes back alone.
    await migrateLatest(database.db, project.migrations.slice(0, -1));
    await migrateLatest(database.db, project.migrations);
    app = project.createService({ db: database.db, keys: testKeys(), settings: loadSettings(project.defaults, {}, {}) }).app;
  });
  afterAll(() => database.drop());

  const register = (username: string, email: string) =>
    request(app).post('/api/auth/register/').send({ username, email, password: 'correct horse' });

  it('registration refuses a username or an email that differs only in case (400), as an exact one', async () => {
    expect((await register('Alice', 'alice@example.com')).status).toBe(201);
    const name = await register('aLICE', 'other@example.com');
    expect({ status: name.status, body: name.body }).toEqual({ status: 400, body: { username: 'Username already taken' } });
    const email = await register('bob', 'ALICE@Example.COM');
    expect({ status: email.status, body: email.body }).toEqual({ status: 400, body: { email: 'Email already registered' } });
    // The value is kept as it was sent.
    expect(await database.db('users').where('email', 'alice@example.com').first('username')).toEqual({ username: 'Alice' });
  });

  const user = (username: string, email: string) => ({
    username,
    email,
    password: 'x',
    first_name: '',
    last_name: '',
    is_active: true,
    is_staff: false,
    is_superuser: false,
    date_joined: new Date().toISOString(),
  });
  const insertFails = (row: object) =>
    database
      .db('users')
      .insert(row)
      .then(
        () => false,
        (err: unknown) => isConstraintViolation(err),
      );

  it('the database refuses a write past the API that differs only in case', async () => {
    await database.db('users').insert(user('CAROL', 'carol@example.com'));
    expect(await insertFails(user('carol', 'c2@example.com'))).toBe(true);
    expect(await insertFails(user('carol2', 'Carol@Example.com'))).toBe(true);
  });

  it('only the ASCII letters fold: É and é are different letters on every database', async () => {
    expect((await register('Élise', 'elise1@example.com')).status).toBe(201);
    expect((await register('élise', 'elise2@example.com')).status).toBe(201);
    expect((await register('éLISE', 'elise3@example.com')).status).toBe(400);
  });

  it('rolls back to the case-sensitive constraints', async () => {
    await migrateRollback(database.db, project.migrations);
    await database.db('users').del();
    await database.db('users').insert(user('dave', 'dave@example.com'));
    expect(await insertFails(user('DAVE', 'DAVE@example.com'))).toBe(false);
    expect(await insertFails(user('dave', 'dave2@example.com'))).toBe(true);
  });
});
