// Smoke test of the generated service (made by svcgen init; yours to extend): migrate a fresh
// in-memory SQLite database, serve the app on a free port, check health and the OpenAPI document,
// and use the example resource over HTTP while the service has it (the notes test is skipped once
// specs/resources/notes.yaml is replaced). Runs with Node's test runner on the compiled service in
// dist/: npm test compiles it first.
'use strict';
const { once } = require('node:events');
const test = require('node:test');
const assert = require('node:assert/strict');
const { connect, generateKeyPair, loadSettings, migrateLatest } = require('@svcgen/runtime');
const { createService } = require('../dist/generated/app');
const { migrations } = require('../dist/generated/migrations');
const { DEFAULT_SETTINGS } = require('../dist/generated/settings');

/** A fresh service on a free port: `call(method, path, body, token)` answers `{status, body}`. */
async function serve(t) {
  const db = connect('sqlite::memory:', '');
  t.after(() => db.destroy());
  const applied = await migrateLatest(db, migrations);
  assert.deepEqual(applied, migrations.map((m) => m.name));

  const { app } = createService({ db, keys: generateKeyPair(), settings: loadSettings(DEFAULT_SETTINGS, {}) });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const base = `http://127.0.0.1:${server.address().port}/api`;
  return async (method, path, body, token) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
}

test('the generated service answers health and serves its OpenAPI document', async (t) => {
  const call = await serve(t);
  assert.deepEqual(await call('GET', '/health'), { status: 200, body: { status: 'ok' } });
  const doc = await call('GET', '/openapi.json');
  assert.equal(doc.status, 200);
  assert.equal(typeof doc.body.paths, 'object');
});

test('the example resource: notes', async (t) => {
  const call = await serve(t);
  const doc = await call('GET', '/openapi.json');
  if (!doc.body.paths['/api/notes/']) {
    t.skip('the service has no /api/notes/ any more: the example resource was replaced');
    return;
  }

  const created = await call('POST', '/notes/', { title: '  Buy milk  ' });
  assert.equal(created.status, 201);
  assert.equal(created.body.title, 'Buy milk', 'the tidyTitle hook trims the title');
  assert.equal(created.body.done, false);

  const list = await call('GET', '/notes/');
  assert.equal(list.status, 200);
  assert.equal(JSON.stringify(list.body).includes('Buy milk'), true);

  const id = created.body.id;
  assert.equal((await call('GET', `/notes/${id}/`)).body.title, 'Buy milk');
  // Changing and deleting a note take an account (or the notes API key).
  assert.equal((await call('PATCH', `/notes/${id}/`, { done: true })).status, 401);
  const registered = await call('POST', '/auth/register/', { username: 'ada', email: 'ada@example.com', password: 'correct horse' });
  const token = registered.body.access_token;
  const updated = await call('PATCH', `/notes/${id}/`, { done: true }, token);
  assert.equal(updated.status, 200);
  assert.equal(updated.body.done, true);
  assert.equal((await call('DELETE', `/notes/${id}/`, undefined, token)).status, 204);
  assert.equal((await call('GET', `/notes/${id}/`)).status, 404);

  assert.equal((await call('POST', '/notes/', {})).status, 422, 'a note needs a title');
});
