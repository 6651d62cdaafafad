/**
 * Soft delete through migrations on a database with data, on SQLite, PostgreSQL and MySQL: a resource
 * with a unique field and a unique composite index gains `soft_delete` and its `deleted_at` field.
 * Its unique constraint becomes a partial unique index over the live rows (as does the composite
 * one, which then no longer serves the foreign key's lookups: the key gets its own index), so a
 * soft-deleted row's values may be used again while live rows stay unique; the down
 * migration brings the plain constraints back. The indexes are read back from the database's catalogue.
 */
import { migrateLatest, migrateRollback, type Db } from '../../runtime';
import { createDatabase, DIALECTS, mysqlIndexes, type TestDatabase } from '../support/databases';
import { build, failure, libraryWorkspace, loadService, rows, type LibraryWorkspace } from './helpers';

jest.setTimeout(300_000);

const SHELVES = `model: Shelf
fields:
  name: {type: string, max_length: 40}
viewset: {auth: null}
`;
const BOOKS_V1 = `model: Book
fields:
  isbn: {type: string, max_length: 13, unique: true}
  title: {type: string, max_length: 100}
  shelf: {type: foreign_key, to: Shelf, on_delete: cascade}
indexes:
  - {fields: [shelf, title], unique: true}
viewset: {auth: null}
`;
const BOOKS_V2 = BOOKS_V1.replace('  shelf: {', '  deleted_at: {type: datetime, null: true}\n  shelf: {').replace(
  'viewset: {auth: null}\n',
  'viewset:\n  auth: null\n  soft_delete: true\n',
);

/** The indexes of `table` the database knows, by name: unique or not, and partial or not. */
async function indexesOf(db: Db, dialect: string, table: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const kind = (unique: boolean, partial: boolean) => `${unique ? 'unique' : 'plain'}${partial ? ' partial' : ''}`;
  if (dialect === 'sqlite') {
    const list = (await db.raw('select name, "unique", partial from pragma_index_list(?)', [table])) as {
      name: string;
      unique: number;
      partial: number;
    }[];
    for (const i of list) if (!i.name.startsWith('sqlite_autoindex_')) out[i.name] = kind(i.unique === 1, i.partial === 1);
  } else if (dialect === 'mysql') {
    for (const i of await mysqlIndexes(db, table))
      out[i.name] = kind(
        i.unique,
        i.columns.some((c) => c.startsWith('svc_live_')),
      );
  } else {
    const result = await db.raw("select indexname, indexdef from pg_indexes where tablename = ? and indexname not like '%_pkey'", [table]);
    for (const i of result.rows as { indexname: string; indexdef: string }[])
      out[i.indexname] = kind(/^CREATE UNIQUE/.test(i.indexdef), / WHERE /.test(i.indexdef));
  }
  return out;
}

describe.each(DIALECTS)('soft delete migrations (%s)', (dialect) => {
  let ws: LibraryWorkspace;
  let database: TestDatabase;
  beforeAll(async () => {
    ws = libraryWorkspace(`soft-delete-${dialect}`);
    database = await createDatabase(dialect);
  });
  afterAll(async () => {
    await database?.drop();
    ws?.remove();
  });

  it('turns unique constraints into partial unique indexes over the live rows, and back', async () => {
    const db = database.db;
    ws.write({ 'shelves.yaml': SHELVES, 'books.yaml': BOOKS_V1 });
    await build(ws);
    await migrateLatest(db, loadService(ws).migrations);
    await db('shelves').insert({ name: 'A' });
    await db('books').insert([
      { isbn: '1', title: 'One', shelf_id: 1 },
      { isbn: '2', title: 'Two', shelf_id: 1 },
    ]);
    const books = await rows(db, 'books');
    // The unique index that starts with the foreign key serves its lookups: the key has no index of its own.
    expect(await indexesOf(db, dialect, 'books')).toEqual({
      books_isbn_unique: 'unique',
      books_shelf_id_title_unique: 'unique',
    });

    ws.write({ 'books.yaml': BOOKS_V2 });
    const v2 = await build(ws);
    expect(v2.migration!.changes).toEqual([
      'drop unique index books_shelf_id_title_unique on books (shelf_id, title)',
      'alter column books.isbn (not unique)',
      'alter column books.shelf_id (indexed)',
      'add column books.deleted_at',
      'add unique index books_isbn_unique on books (isbn) where deleted_at is null',
      'add unique index books_shelf_id_title_unique on books (shelf_id, title) where deleted_at is null',
    ]);
    const migrations2 = loadService(ws).migrations;
    expect(await migrateLatest(db, migrations2)).toEqual([v2.migration!.name]);
    expect(await indexesOf(db, dialect, 'books')).toEqual({
      books_isbn_unique: 'unique partial',
      books_shelf_id_index: 'plain',
      books_shelf_id_title_unique: 'unique partial',
    });
    expect(await rows(db, 'books')).toEqual(books.map((b) => ({ ...b, deleted_at: null })));

    // Live rows stay unique; a deleted row's values may be used again.
    expect(await failure(db('books').insert({ isbn: '1', title: 'Other', shelf_id: 1 }))).toMatch(/UNIQUE|duplicate key|Duplicate entry/i);
    expect(await failure(db('books').insert({ isbn: '3', title: 'One', shelf_id: 1 }))).toMatch(/UNIQUE|duplicate key|Duplicate entry/i);
    await db('books').where('id', 1).update({ deleted_at: new Date().toISOString() });
    await db('books').insert({ isbn: '1', title: 'One', shelf_id: 1 });
    expect((await db('books').where('isbn', '1')).length).toBe(2);

    // Down refuses while a value repeats; without the repeat, the plain constraints come back.
    expect(await failure(migrateRollback(db, migrations2))).toMatch(/UNIQUE|duplicate key|could not create unique index|Duplicate entry/i);
    await db('books').where('id', '>', 2).delete();
    expect(await migrateRollback(db, migrations2)).toEqual([v2.migration!.name]);
    expect(await indexesOf(db, dialect, 'books')).toEqual({
      books_isbn_unique: 'unique',
      books_shelf_id_title_unique: 'unique',
    });
    expect(await rows(db, 'books')).toEqual(books);
  });
});
