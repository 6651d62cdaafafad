// Test of the account endpoints (made by svcgen init; yours to extend): register, me, a refresh
// token exchanged once, logout. A fresh in-memory SQLite database, served on a free port.
// Runs with Node's test runner on the compiled service in dist/: npm test compiles it first.
'use strict';
const { once } = require('node:events');
const test = require('node:test');
const assert = require('node:assert/strict');
const { connect, generateKeyPair, loadSettings, migrateLatest } = require('@svcgen/runtime');
const { createService } = require('../dist/generated/app');
const { migrations } = require('../dist/generated/migrations');
const { DEFAULT_SETTINGS } = require('../dist/generated/settings');

test('register, me, refresh once, logout', async (t) => {
  const db = connect('sqlite::memory:', '');
  t.after(() => db.destroy());
  await migrateLatest(db, migrations);
  const { app } = createService({ db, keys: generateKeyPair(), settings: loadSettings(DEFAULT_SETTINGS, {}) });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const base = `http://127.0.0.1:${server.address().port}/api`;
  const call = async (method, path, body, token) => {
    const headers = { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) };
    const res = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  const registered = await call('POST', '/auth/register/', { username: 'ada', email: 'ada@example.com', password: 'correct horse', first_name: 'Ada' });
  assert.equal(registered.status, 201);
  assert.equal(registered.body.token_type, 'bearer');

  const me = await call('GET', '/auth/me/', undefined, registered.body.access_token);
  assert.deepEqual(me, { status: 200, body: { id: 1, username: 'ada', email: 'ada@example.com', first_name: 'Ada', last_name: '' } });

  const refreshed = await call('POST', '/auth/refresh/', { refresh_token: registered.body.refresh_token });
  assert.equal(refreshed.status, 200);
  const reused = await call('POST', '/auth/refresh/', { refresh_token: registered.body.refresh_token });
  assert.deepEqual(reused, { status: 401, body: { detail: 'Invalid refresh token' } }, 'a refresh token is used once');
  // A reuse ends the token's whole family: the one the first exchange answered is refused too.
  const family = await call('POST', '/auth/refresh/', { refresh_token: refreshed.body.refresh_token });
  assert.equal(family.status, 401, 'a reused refresh token revokes its family');

  const login = await call('POST', '/auth/login/', { username: 'ada', password: 'correct horse' });
  assert.equal(login.status, 200);
  assert.equal((await call('POST', '/auth/logout/', { refresh_token: login.body.refresh_token })).status, 204);
  const afterLogout = await call('POST', '/auth/refresh/', { refresh_token: login.body.refresh_token });
  assert.equal(afterLogout.status, 401, 'a logged-out refresh token is spent');
});
