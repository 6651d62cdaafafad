/**
 * Reverting a rename (renamed_from) is judged by what its `down` really drops: the column renamed
 * back keeps every value, so the rollback is not refused as data loss; a `down` that does drop a
 * column with values is still refused, naming only that column, with `1 value` for one. On SQLite
 * and PostgreSQL, whose schema changes are tried and undone in a transaction (MySQL's are not
 * checked: test/runtime/migration-commands.test.ts).
 */
import { rollbackMigrations } from '../../runtime/db/migrations';
import { migrateLatest } from '../../runtime';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';
import { build, columns, failure, libraryWorkspace, loadService, rows, type LibraryWorkspace } from './helpers';

jest.setTimeout(300_000);

const V1 = `model: Issue
fields:
  title: {type: string, max_length: 100}
viewset: {auth: null}
`;
// 0002 adds a column, 0003 renames it.
const V2 = `model: Issue
fields:
  title: {type: string, max_length: 100}
  body: {type: text, null: true}
viewset: {auth: null}
`;
const V3 = `model: Issue
fields:
  title: {type: string, max_length: 100}
  details: {type: text, null: true, renamed_from: body}
viewset: {auth: null}
`;

describe.each(DIALECTS.filter((d) => d !== 'mysql'))('rolling back a rename (%s)', (dialect) => {
  let ws: LibraryWorkspace;
  let database: TestDatabase;
  beforeAll(async () => {
    ws = libraryWorkspace(`rollback-rename-${dialect}`);
    database = await createDatabase(dialect);
  });
  afterAll(async () => {
    await database.drop();
    ws.remove();
  });

  it('reverts the rename without --allow-data-loss and keeps every value; refuses the drop before it, naming only that column', async () => {
    ws.write({ 'issues.yaml': V1 });
    await build(ws);
    ws.write({ 'issues.yaml': V2 });
    const added = (await build(ws)).migration!.name;
    ws.write({ 'issues.yaml': V3 });
    const renamed = (await build(ws)).migration!.name;
    const { migrations } = loadService(ws);
    const db = database.db;
    await migrateLatest(db, migrations);
    await db('issues').insert([
      { title: 'a', details: 'first' },
      { title: 'b', details: null },
      { title: 'c', details: 'third' },
    ]);

    expect(await rollbackMigrations(db, migrations, 1)).toEqual([renamed]);
    expect(await columns(db, 'issues')).toEqual(['body', 'id', 'title']);
    expect((await rows(db, 'issues')).map((r) => r.body)).toEqual(['first', null, 'third']);

    // 0002's down drops body, which holds values: refused, and nothing of it reverted.
    await db('issues').whereNot('title', 'a').update({ body: null });
    expect(await failure(rollbackMigrations(db, migrations, 1))).toBe(`reverting ${added} would lose data: column issues.body (1 value)`);
    expect(await columns(db, 'issues')).toEqual(['body', 'id', 'title']);

    // Both at once, after applying the rename again: the rename's down passes, 0002's is refused, nothing reverted.
    await migrateLatest(db, migrations);
    expect(await failure(rollbackMigrations(db, migrations, 2))).toBe(`reverting ${added} would lose data: column issues.body (1 value)`);
    expect(await columns(db, 'issues')).toEqual(['details', 'id', 'title']);
    expect((await rows(db, 'issues')).map((r) => r.details)).toEqual(['first', null, null]);
  });
});
