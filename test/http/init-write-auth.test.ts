/**
 * Secure writes by default in a project made by `svcgen init`: its service file sets
 * `auth.default_write_auth: [JWTAuth]`, so a resource added without any `auth` is readable by anyone
 * but writable only with a token. The access gate stops the build at the new operations anonymous
 * callers may call (the reads), and only those, until --allow-widen acknowledges them; the service
 * built then answers 401 to an anonymous write and 201 to one with a token, on each database.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Express } from 'express';
import request from 'supertest';
import { initProject } from '../../generator/cli/init';
import { writeOutput } from '../../generator/output/write';
import { generate } from '../../generator/pipeline';
import { formatDiagnostic, SpecError } from '../../generator/load/diagnostics';
import { loadSettings, migrateLatest, type Migration, type Settings } from '../../runtime';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';
import { testKeys } from '../support/keys';
import { scratchDir } from '../support/scratch';

const ROOT = path.resolve(__dirname, '../..');
const VERSION: string = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;

const DRAFTS = ['model: Draft', 'fields:', '  title: {type: string, max_length: 100}', ''].join('\n');

interface Project {
  dir: string;
  createService: (options: {
    db: TestDatabase['db'];
    keys: ReturnType<typeof testKeys>;
    settings: Settings;
    logError?: (e: unknown) => void;
  }) => { app: Express };
  migrations: Migration[];
  defaults: Settings;
}

let project: Project;
let refused: string[];

beforeAll(async () => {
  const dir = path.join(scratchDir('write-auth'), 'app');
  await initProject(dir, { svcgen: VERSION });
  fs.writeFileSync(path.join(dir, 'specs', 'resources', 'drafts.yaml'), DRAFTS);
  try {
    await generate({ specsDir: 'specs', outDir: 'generated', cwd: dir });
    refused = [];
  } catch (err) {
    if (!(err instanceof SpecError)) throw err;
    refused = err.diagnostics.map(formatDiagnostic);
  }
  const built = await generate({ specsDir: 'specs', outDir: 'generated', cwd: dir, allowWiden: true });
  writeOutput(path.join(dir, 'generated'), built.files);
  project = {
    dir,
    createService: require(path.join(dir, 'generated', 'app')).createService,
    migrations: require(path.join(dir, 'generated', 'migrations')).migrations,
    defaults: require(path.join(dir, 'generated', 'settings')).DEFAULT_SETTINGS,
  };
});
afterAll(() => fs.rmSync(path.dirname(project.dir), { recursive: true, force: true }));

it('svcgen init writes auth.default_write_auth: [JWTAuth] in the service file', () => {
  const service = fs.readFileSync(path.join(project.dir, 'specs', 'service.yaml'), 'utf8');
  expect(service).toContain('\n  default_write_auth: [JWTAuth]\n');
});

it('a new resource without auth: the gate refuses its public reads, not its writes, until --allow-widen', () => {
  const at = 'specs/resources/drafts.yaml:1:1';
  const hint = 'if intended, build with --allow-widen (recorded in access.md)';
  expect(refused).toEqual([
    `${at}: access widened: list_drafts (GET /api/drafts/) for anonymous: a new operation → 2xx; ${hint}`,
    `${at}: access widened: retrieve_draft (GET /api/drafts/{pk}/) for anonymous: a new operation → 2xx; ${hint}`,
  ]);
  const access = JSON.parse(fs.readFileSync(path.join(project.dir, 'generated', 'access.json'), 'utf8'));
  expect(access.operations.create_draft.access.anonymous).toBe('401');
  expect(access.acknowledged.map((w: { operationId: string }) => w.operationId)).toEqual(['list_drafts', 'retrieve_draft']);
});

describe.each(DIALECTS)('its writes need a token (%s)', (dialect) => {
  let database: TestDatabase;
  let app: Express;
  const errors: unknown[] = [];
  beforeAll(async () => {
    database = await createDatabase(dialect);
    await migrateLatest(database.db, project.migrations);
    app = project.createService({
      db: database.db,
      keys: testKeys(),
      settings: loadSettings(project.defaults, {}, {}),
      logError: (e) => errors.push(e),
    }).app;
  });
  afterAll(() => database.drop());
  afterEach(() => expect(errors).toEqual([]));

  it('answers an anonymous write 401, a write with a token 201, and reads to anyone', async () => {
    const anonymous = await request(app).post('/api/drafts/').send({ title: 'Hello' });
    expect({ status: anonymous.status, body: anonymous.body, challenge: anonymous.headers['www-authenticate'] }).toEqual({
      status: 401,
      body: { detail: 'Unauthorized' },
      challenge: 'Bearer',
    });
    const reg = await request(app)
      .post('/api/auth/register/')
      .send({ username: `ada_${dialect}`, email: `ada_${dialect}@example.com`, password: 'correct horse' });
    expect(reg.status).toBe(201);
    const created = await request(app)
      .post('/api/drafts/')
      .set('Authorization', `Bearer ${reg.body.access_token}`)
      .send({ title: 'Hello' });
    expect({ status: created.status, body: created.body }).toEqual({ status: 201, body: { id: created.body.id, title: 'Hello' } });
    const list = await request(app).get('/api/drafts/');
    expect({ status: list.status, body: list.body }).toEqual({
      status: 200,
      body: { count: 1, items: [{ id: created.body.id, title: 'Hello' }] },
    });
    const update = await request(app).patch(`/api/drafts/${created.body.id}/`).send({ title: 'Changed' });
    expect({ status: update.status, body: update.body }).toEqual({ status: 401, body: { detail: 'Unauthorized' } });
    const remove = await request(app).delete(`/api/drafts/${created.body.id}/`);
    expect({ status: remove.status, body: remove.body }).toEqual({ status: 401, body: { detail: 'Unauthorized' } });
  });
});
