/**
 * Cookie-only authentication (`auth.cookies: only`), the backend-for-frontend setting: register,
 * login and refresh set the same three cookies as `auth.cookies: true`, but their bodies carry no
 * token (`{"token_type": "bearer", "expires_in": 900}`), so no script of the page can read a token
 * and carry it away; the OpenAPI document says so. A project made by `svcgen init`, its service file
 * switched to cookie-only with `CookieAuth` beside `JWTAuth`, built and run on each database.
 * The blog keeps `auth.cookies: true`: test/http/cookie-auth.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Express } from 'express';
import request from 'supertest';
import { initProject } from '../../generator/cli/init';
import { writeOutput } from '../../generator/output/write';
import { generate } from '../../generator/pipeline';
import { loadSettings, migrateLatest, type Migration, type Settings } from '../../runtime';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';
import { testKeys } from '../support/keys';
import { scratchDir } from '../support/scratch';

const ROOT = path.resolve(__dirname, '../..');
const VERSION: string = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;

/** What register, login and refresh answer: no token, the tokens are in the cookies. */
const NO_TOKENS = { token_type: 'bearer', expires_in: 900 };
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

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

beforeAll(async () => {
  const dir = path.join(scratchDir('cookie-only'), 'app');
  await initProject(dir, { svcgen: VERSION });
  const file = path.join(dir, 'specs', 'service.yaml');
  const service = fs
    .readFileSync(file, 'utf8')
    .replace('  default_write_auth: [JWTAuth]\n', '  default_write_auth: [JWTAuth]\n  cookies: only\n')
    .replace('  - account: me\n', '  - {account: me, auth: [JWTAuth, CookieAuth]}\n');
  fs.writeFileSync(file, service);
  const built = await generate({ specsDir: 'specs', outDir: 'generated', cwd: dir, allowWiden: true, allowBreaking: true });
  writeOutput(path.join(dir, 'generated'), built.files);
  project = {
    dir,
    createService: require(path.join(dir, 'generated', 'app')).createService,
    migrations: require(path.join(dir, 'generated', 'migrations')).migrations,
    defaults: require(path.join(dir, 'generated', 'settings')).DEFAULT_SETTINGS,
  };
});
afterAll(() => fs.rmSync(path.dirname(project.dir), { recursive: true, force: true }));

it('the service file says cookies: only', () => {
  expect(fs.readFileSync(path.join(project.dir, 'specs', 'service.yaml'), 'utf8')).toContain('\n  cookies: only\n');
});

describe.each(DIALECTS)('cookie-only authentication (%s)', (dialect) => {
  let database: TestDatabase;
  let app: Express;
  const errors: unknown[] = [];
  beforeAll(async () => {
    database = await createDatabase(dialect);
    await migrateLatest(database.db, project.migrations);
    const settings = loadSettings(project.defaults, {}, { SVC_DOCS: true } as Partial<Settings>);
    app = project.createService({ db: database.db, keys: testKeys(), settings, logError: (e) => errors.push(e) }).app;
  });
  afterAll(() => database.drop());
  afterEach(() => expect(errors).toEqual([]));

  let n = 0;
  const newUser = () => {
    const username = `user${++n}_${dialect}`;
    return { username, email: `${username}@example.com`, password: 'correct horse', first_name: 'Ada', last_name: 'Lovelace' };
  };
  const api = () => request(app);

  /** The cookies a response sets, by name (with its prefix). */
  function cookiesOf(res: request.Response): Record<string, string> {
    const header = (res.headers['set-cookie'] as unknown as string[] | undefined) ?? [];
    return Object.fromEntries(
      header.map((c) => c.split(';')[0]).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    );
  }
  const names = (res: request.Response) => Object.keys(cookiesOf(res));
  const valueOf = (res: request.Response, suffix: string) => Object.entries(cookiesOf(res)).find(([name]) => name.endsWith(suffix))![1];
  const cookieHeader = (res: request.Response) =>
    Object.entries(cookiesOf(res))
      .map(([name, value]) => `${name}=${value}`)
      .join('; ');

  it('register answers no token in its body, no-store, and sets the access, refresh and CSRF cookies', async () => {
    const res = await api().post('/api/auth/register/').send(newUser());
    expect({ status: res.status, body: res.body, cache: res.headers['cache-control'] }).toEqual({
      status: 201,
      body: NO_TOKENS,
      cache: 'no-store',
    });
    expect(names(res)).toEqual(['__Secure-access_token', '__Secure-refresh_token', '__Host-csrftoken']);
    expect(valueOf(res, 'access_token')).toMatch(JWT);
    expect(valueOf(res, 'refresh_token')).toMatch(JWT);
  });

  it('login answers no token in its body; its access cookie authenticates me', async () => {
    const user = newUser();
    await api().post('/api/auth/register/').send(user);
    const res = await api().post('/api/auth/login/').send({ username: user.username, password: user.password });
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: NO_TOKENS });
    const me = await api().get('/api/auth/me/').set('Cookie', cookieHeader(res));
    expect({ status: me.status, username: me.body.username }).toEqual({ status: 200, username: user.username });
  });

  it('a refresh by the cookie answers no token in its body and rotates the cookies; the old refresh cookie is refused', async () => {
    const user = newUser();
    const reg = await api().post('/api/auth/register/').send(user);
    const csrf = valueOf(reg, 'csrftoken');
    const res = await api().post('/api/auth/refresh/').set('Cookie', cookieHeader(reg)).set('X-CSRF-Token', csrf);
    expect({ status: res.status, body: res.body, cache: res.headers['cache-control'] }).toEqual({
      status: 200,
      body: NO_TOKENS,
      cache: 'no-store',
    });
    expect(valueOf(res, 'refresh_token')).toMatch(JWT);
    expect(valueOf(res, 'refresh_token')).not.toBe(valueOf(reg, 'refresh_token'));
    const again = await api().post('/api/auth/refresh/').set('Cookie', cookieHeader(reg)).set('X-CSRF-Token', csrf);
    expect({ status: again.status, body: again.body }).toEqual({ status: 401, body: { detail: 'Invalid refresh token' } });
  });

  it('logout by the cookie spends the refresh token and clears the cookies, as with auth.cookies: true', async () => {
    const reg = await api().post('/api/auth/register/').send(newUser());
    const csrf = valueOf(reg, 'csrftoken');
    const out = await api().post('/api/auth/logout/').set('Cookie', cookieHeader(reg)).set('X-CSRF-Token', csrf);
    expect({ status: out.status, body: out.body, cleared: Object.values(cookiesOf(out)) }).toEqual({
      status: 204,
      body: {},
      cleared: ['', '', ''],
    });
    const refresh = await api().post('/api/auth/refresh/').set('Cookie', cookieHeader(reg)).set('X-CSRF-Token', csrf);
    expect({ status: refresh.status, body: refresh.body }).toEqual({ status: 401, body: { detail: 'Invalid refresh token' } });
  });

  it('the OpenAPI document answers CookieTokenResponse, without tokens, for register, login and refresh', async () => {
    const doc = (await api().get('/api/openapi.json')).body;
    expect(doc.components.schemas.CookieTokenResponse).toEqual({
      type: 'object',
      properties: { token_type: { type: 'string' }, expires_in: { type: 'integer' } },
      required: ['token_type', 'expires_in'],
    });
    expect(doc.components.schemas.TokenResponse).toBeUndefined();
    const answer = (p: string, status: string) => doc.paths[p].post.responses[status].content['application/json'].schema;
    expect([answer('/api/auth/register/', '201'), answer('/api/auth/login/', '200'), answer('/api/auth/refresh/', '200')]).toEqual(
      Array(3).fill({ $ref: '#/components/schemas/CookieTokenResponse' }),
    );
  });
});
