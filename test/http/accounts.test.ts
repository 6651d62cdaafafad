/**
 * The built-in account endpoints of a new project: `svcgen init` writes a users resource and the seven
 * `account:` entries in service.yaml; the project's specs built into a service (as init builds them)
 * register, log in, refresh (a second use refused), answer me, log out and change a password, on
 * real SQLite and PostgreSQL, with exact statuses and bodies. The blog's own account endpoints keep
 * the seed's contract: test/http/auth.test.ts and credentials.test.ts.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Express } from 'express';
import request from 'supertest';
import { initProject } from '../../generator/cli/init';
import { loadSettings, migrateLatest, type Migration, type Settings } from '../../runtime';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';
import { testKeys } from '../support/keys';
import { scratchDir } from '../support/scratch';

const ROOT = path.resolve(__dirname, '../..');
const VERSION: string = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;

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
  const dir = path.join(scratchDir('accounts'), 'app');
  await initProject(dir, { svcgen: VERSION });
  project = {
    dir,
    createService: require(path.join(dir, 'generated', 'app')).createService,
    migrations: require(path.join(dir, 'generated', 'migrations')).migrations,
    defaults: require(path.join(dir, 'generated', 'settings')).DEFAULT_SETTINGS,
  };
});
afterAll(() => fs.rmSync(path.dirname(project.dir), { recursive: true, force: true }));

const TOKENS = { access_token: expect.any(String), refresh_token: expect.any(String), token_type: 'bearer', expires_in: 900 };
const INVALID_REFRESH = { detail: 'Invalid refresh token' };
const INVALID_REFRESH_CHALLENGE = 'Bearer error="invalid_token", error_description="The refresh token is invalid"';

describe.each(DIALECTS)('the account endpoints of a project made by svcgen init (%s)', (dialect) => {
  let database: TestDatabase;
  let app: Express;
  const errors: unknown[] = [];
  beforeAll(async () => {
    database = await createDatabase(dialect);
    await migrateLatest(database.db, project.migrations);
    const settings = loadSettings(project.defaults, {}, {});
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
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  it('register answers 201 tokens for a new active user; me answers the caller; the password is stored hashed', async () => {
    const body = newUser();
    const reg = await api().post('/api/auth/register/').send(body);
    expect({ status: reg.status, body: reg.body }).toEqual({ status: 201, body: TOKENS });
    const me = await api().get('/api/auth/me/').set(bearer(reg.body.access_token));
    const row = await database.db('users').where({ username: body.username }).first();
    expect({ status: me.status, body: me.body }).toEqual({
      status: 200,
      body: { id: row.id, username: body.username, email: body.email, first_name: 'Ada', last_name: 'Lovelace' },
    });
    expect(row.password).toMatch(/^\$2[aby]\$10\$/);
    expect([Boolean(row.is_active), Boolean(row.is_staff), Boolean(row.is_superuser)]).toEqual([true, false, false]);
  });

  it('register refuses a taken username or email (400), and a short password (422)', async () => {
    const body = newUser();
    expect((await api().post('/api/auth/register/').send(body)).status).toBe(201);
    const again = await api()
      .post('/api/auth/register/')
      .send({ ...body, email: 'other@example.com' });
    expect({ status: again.status, body: again.body }).toEqual({ status: 400, body: { username: 'Username already taken' } });
    const email = await api()
      .post('/api/auth/register/')
      .send({ ...newUser(), email: body.email });
    expect({ status: email.status, body: email.body }).toEqual({ status: 400, body: { email: 'Email already registered' } });
    const short = await api()
      .post('/api/auth/register/')
      .send({ ...newUser(), password: 'short' });
    expect(short.status).toBe(422);
    expect(short.body.detail).toEqual([
      { type: 'string_too_short', loc: ['body', 'data', 'password'], msg: 'String should have at least 8 characters' },
    ]);
  });

  it('login answers tokens for the right password, 401 with a Bearer challenge otherwise', async () => {
    const body = newUser();
    await api().post('/api/auth/register/').send(body);
    const ok = await api().post('/api/auth/login/').send({ username: body.username, password: body.password });
    expect({ status: ok.status, body: ok.body }).toEqual({ status: 200, body: TOKENS });
    const wrong = await api().post('/api/auth/login/').send({ username: body.username, password: 'not the password' });
    expect({ status: wrong.status, body: wrong.body, challenge: wrong.headers['www-authenticate'] }).toEqual({
      status: 401,
      body: { detail: 'Invalid credentials' },
      challenge: 'Bearer',
    });
  });

  it('refresh exchanges a refresh token once: the second use is 401 "Invalid refresh token", and ends its family', async () => {
    const reg = await api().post('/api/auth/register/').send(newUser());
    const first = await api().post('/api/auth/refresh/').send({ refresh_token: reg.body.refresh_token });
    expect({ status: first.status, body: first.body }).toEqual({ status: 200, body: TOKENS });
    expect(first.body.refresh_token).not.toBe(reg.body.refresh_token);
    const second = await api().post('/api/auth/refresh/').send({ refresh_token: reg.body.refresh_token });
    expect({ status: second.status, body: second.body, challenge: second.headers['www-authenticate'] }).toEqual({
      status: 401,
      body: INVALID_REFRESH,
      challenge: INVALID_REFRESH_CHALLENGE,
    });
    // A reuse revokes the family: the token the first exchange answered is refused too.
    const next = await api().post('/api/auth/refresh/').send({ refresh_token: first.body.refresh_token });
    expect({ status: next.status, body: next.body }).toEqual({ status: 401, body: INVALID_REFRESH });
  });

  it('logout spends the refresh token (204): it can no longer be exchanged, nor logged out again', async () => {
    const reg = await api().post('/api/auth/register/').send(newUser());
    const out = await api().post('/api/auth/logout/').send({ refresh_token: reg.body.refresh_token });
    expect({ status: out.status, body: out.body, text: out.text }).toEqual({ status: 204, body: {}, text: '' });
    const refresh = await api().post('/api/auth/refresh/').send({ refresh_token: reg.body.refresh_token });
    expect({ status: refresh.status, body: refresh.body }).toEqual({ status: 401, body: INVALID_REFRESH });
    const again = await api().post('/api/auth/logout/').send({ refresh_token: reg.body.refresh_token });
    expect({ status: again.status, body: again.body }).toEqual({ status: 401, body: INVALID_REFRESH });
    const access = await api().post('/api/auth/logout/').send({ refresh_token: reg.body.access_token });
    expect({ status: access.status, body: access.body }).toEqual({ status: 401, body: { detail: 'Invalid token type' } });
  });

  it('me and password need an access token: 401 {"detail": "Unauthorized"} without one', async () => {
    for (const res of [
      await api().get('/api/auth/me/'),
      await api().post('/api/auth/password/').send({ current_password: 'x', new_password: 'y' }),
    ]) {
      expect({ status: res.status, body: res.body, challenge: res.headers['www-authenticate'] }).toEqual({
        status: 401,
        body: { detail: 'Unauthorized' },
        challenge: 'Bearer',
      });
    }
  });

  it('password change: the current password must match (400), the new one follows the policy (422); then only the new one logs in, and the old sessions end', async () => {
    const body = newUser();
    const reg = await api().post('/api/auth/register/').send(body);
    // Another session of the old password, on another device.
    const elsewhere = await api().post('/api/auth/login/').send({ username: body.username, password: body.password });
    const auth = bearer(reg.body.access_token);
    const wrong = await api()
      .post('/api/auth/password/')
      .set(auth)
      .send({ current_password: 'not the password', new_password: 'a new password' });
    expect({ status: wrong.status, body: wrong.body }).toEqual({ status: 400, body: { current_password: 'Incorrect password' } });
    const short = await api().post('/api/auth/password/').set(auth).send({ current_password: body.password, new_password: 'short' });
    expect({ status: short.status, body: short.body }).toEqual({
      status: 422,
      body: {
        detail: [{ type: 'string_too_short', loc: ['body', 'data', 'new_password'], msg: 'String should have at least 8 characters' }],
      },
    });
    const changed = await api()
      .post('/api/auth/password/')
      .set(auth)
      .send({ current_password: body.password, new_password: 'a new password' });
    expect({ status: changed.status, text: changed.text }).toEqual({ status: 204, text: '' });
    const old = await api().post('/api/auth/login/').send({ username: body.username, password: body.password });
    expect({ status: old.status, body: old.body }).toEqual({ status: 401, body: { detail: 'Invalid credentials' } });
    const fresh = await api().post('/api/auth/login/').send({ username: body.username, password: 'a new password' });
    expect({ status: fresh.status, body: fresh.body }).toEqual({ status: 200, body: TOKENS });
    // Issued after the change, even within its second: accepted.
    const mine = await api().get('/api/auth/me/').set(bearer(fresh.body.access_token));
    expect({ status: mine.status, username: mine.body.username }).toEqual({ status: 200, username: body.username });
    // The tokens issued before the change are refused: a thief's session does not outlive it.
    for (const token of [reg.body.refresh_token, elsewhere.body.refresh_token]) {
      const refreshed = await api().post('/api/auth/refresh/').send({ refresh_token: token });
      expect({ status: refreshed.status, body: refreshed.body }).toEqual({ status: 401, body: { detail: 'Invalid refresh token' } });
    }
    for (const token of [reg.body.access_token, elsewhere.body.access_token]) {
      const me = await api().get('/api/auth/me/').set(bearer(token));
      expect({ status: me.status, body: me.body }).toEqual({ status: 401, body: { detail: 'Unauthorized' } });
    }
  });

  it('logout everywhere (204) ends every session of the caller, access and refresh tokens alike; a login right after it is not refused', async () => {
    const body = newUser();
    const reg = await api().post('/api/auth/register/').send(body);
    const elsewhere = await api().post('/api/auth/login/').send({ username: body.username, password: body.password });
    const anonymous = await api().post('/api/auth/logout-all/');
    expect({ status: anonymous.status, body: anonymous.body }).toEqual({ status: 401, body: { detail: 'Unauthorized' } });
    const out = await api().post('/api/auth/logout-all/').set(bearer(elsewhere.body.access_token));
    expect({ status: out.status, text: out.text, cache: out.headers['cache-control'] }).toEqual({
      status: 204,
      text: '',
      cache: undefined,
    });
    for (const token of [reg.body.refresh_token, elsewhere.body.refresh_token]) {
      const refreshed = await api().post('/api/auth/refresh/').send({ refresh_token: token });
      expect({ status: refreshed.status, body: refreshed.body }).toEqual({ status: 401, body: INVALID_REFRESH });
    }
    for (const token of [reg.body.access_token, elsewhere.body.access_token]) {
      const me = await api().get('/api/auth/me/').set(bearer(token));
      expect({ status: me.status, body: me.body }).toEqual({ status: 401, body: { detail: 'Unauthorized' } });
    }
    // Within the second of the logout: the new session's tokens are issued after it, and accepted.
    const again = await api().post('/api/auth/login/').send({ username: body.username, password: body.password });
    expect({ status: again.status, body: again.body }).toEqual({ status: 200, body: TOKENS });
    const me = await api().get('/api/auth/me/').set(bearer(again.body.access_token));
    expect({ status: me.status, username: me.body.username }).toEqual({ status: 200, username: body.username });
    const refreshed = await api().post('/api/auth/refresh/').send({ refresh_token: again.body.refresh_token });
    expect({ status: refreshed.status, body: refreshed.body }).toEqual({ status: 200, body: TOKENS });
  });

  it('the users resource is staff-only, and creates no user (registration does)', async () => {
    const reg = await api().post('/api/auth/register/').send(newUser());
    const list = await api().get('/api/users/').set(bearer(reg.body.access_token));
    expect({ status: list.status, body: list.body }).toEqual({ status: 403, body: { error: 'forbidden', details: expect.any(String) } });
    const create = await api().post('/api/users/').set(bearer(reg.body.access_token)).send(newUser());
    expect(create.status).toBe(405);
  });
});
