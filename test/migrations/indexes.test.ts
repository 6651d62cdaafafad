/**
 * Composite indexes through migrations on a database with data, on SQLite, PostgreSQL and MySQL: declared
 * (one unique; the one that starts with the foreign key replaces the key's own index), then changed
 * by a renamed foreign key and a unique index made plain, each migration
 * reverted and applied again. The indexes are read back from the database's catalogue.
 */
import { migrateLatest, migrateRollback, type Db } from '../../runtime';
import { createDatabase, DIALECTS, mysqlIndexes, type TestDatabase } from '../support/databases';
import { build, failure, libraryWorkspace, loadService, rows, type LibraryWorkspace } from './helpers';

jest.setTimeout(300_000);

const AUTHORS = `model: Author
fields:
  name: {type: string, max_length: 100}
viewset: {auth: null}
`;
const BOOKS_V1 = `model: Book
fields:
  title: {type: string, max_length: 100}
  author: {type: foreign_key, to: Author, on_delete: cascade}
  pages: {type: integer, null: true}
viewset: {auth: null}
`;
const BOOKS_V2 = `${BOOKS_V1.replace('viewset: {auth: null}\n', '')}indexes:
  - [author, title]
  - {fields: [title, author], unique: true, name: books_title_per_author}
viewset: {auth: null}
`;
const BOOKS_V3 = `model: Book
fields:
  title: {type: string, max_length: 100}
  writer: {type: foreign_key, to: Author, on_delete: cascade, renamed_from: author}
  pages: {type: integer, null: true}
indexes:
  - [writer, title]
  - {fields: [title, writer], name: books_title_per_author}
viewset: {auth: null}
`;

/** The indexes of `table` the database knows, by name, with whether each is unique (Knex's single-column ones included). */
async function indexesOf(db: Db, dialect: string, table: string): Promise<Record<string, boolean>> {
  const out: Record<string, boolean> = {};
  if (dialect === 'sqlite') {
    const list = (await db.raw('select name, "unique" from pragma_index_list(?)', [table])) as { name: string; unique: number }[];
    for (const i of list) if (!i.name.startsWith('sqlite_autoindex_')) out[i.name] = i.unique === 1;
  } else if (dialect === 'mysql') {
    for (const i of await mysqlIndexes(db, table)) out[i.name] = i.unique;
  } else {
    const result = await db.raw("select indexname, indexdef from pg_indexes where tablename = ? and indexname not like '%_pkey'", [table]);
    for (const i of result.rows as { indexname: string; indexdef: string }[]) out[i.indexname] = /^CREATE UNIQUE/.test(i.indexdef);
  }
  return out;
}

describe.each(DIALECTS)('composite index migrations (%s)', (dialect) => {
  let ws: LibraryWorkspace;
  let database: TestDatabase;
  beforeAll(async () => {
    ws = libraryWorkspace(`indexes-${dialect}`);
    database = await createDatabase(dialect);
  });
  afterAll(async () => {
    await database?.drop();
    ws?.remove();
  });

  it('creates, changes and drops named indexes, keeping the rows', async () => {
    const db = database.db;
    ws.write({ 'authors.yaml': AUTHORS, 'books.yaml': BOOKS_V1 });
    await build(ws);
    await migrateLatest(db, loadService(ws).migrations);
    await db('authors').insert([{ name: 'Ann' }, { name: 'Bob' }]);
    await db('books').insert([
      { title: 'One', author_id: 1, pages: 100 },
      { title: 'One', author_id: 2, pages: null },
    ]);
    const books = await rows(db, 'books');
    expect(await indexesOf(db, dialect, 'books')).toEqual({ books_author_id_index: false });

    // Version 2: two indexes, one unique.
    ws.write({ 'books.yaml': BOOKS_V2 });
    const v2 = await build(ws);
    // The foreign key's own index goes: the new index starts with its column and serves its lookups.
    expect(v2.migration!.changes).toEqual([
      'alter column books.author_id (not indexed)',
      'add index books_author_id_title_index on books (author_id, title)',
      'add unique index books_title_per_author on books (title, author_id)',
    ]);
    const migrations2 = loadService(ws).migrations;
    expect(await migrateLatest(db, migrations2)).toEqual([v2.migration!.name]);
    expect(await indexesOf(db, dialect, 'books')).toEqual({
      books_author_id_title_index: false,
      books_title_per_author: true,
    });
    expect(await rows(db, 'books')).toEqual(books);
    expect(await failure(db('books').insert({ title: 'One', author_id: 1 }))).toMatch(/UNIQUE|duplicate key|Duplicate entry/i);

    // Down: the indexes are gone and the pair may repeat; up again refuses the repeated pair.
    expect(await migrateRollback(db, migrations2)).toEqual([v2.migration!.name]);
    expect(await indexesOf(db, dialect, 'books')).toEqual({ books_author_id_index: false });
    await db('books').insert({ title: 'One', author_id: 1 });
    expect(await failure(migrateLatest(db, migrations2))).toMatch(/UNIQUE|duplicate key|could not create unique index/i);
    await db('books').where('id', '>', 2).delete();
    expect(await migrateLatest(db, migrations2)).toEqual([v2.migration!.name]);

    // Version 3: the foreign key renamed (its index follows the new column) and the unique index made plain.
    ws.write({ 'books.yaml': BOOKS_V3 });
    const v3 = await build(ws);
    expect(v3.migration!.changes).toEqual([
      'drop index books_author_id_title_index on books (author_id, title)',
      'drop unique index books_title_per_author on books (title, author_id)',
      'rename column books.author_id to writer_id',
      'add index books_writer_id_title_index on books (writer_id, title)',
      'add index books_title_per_author on books (title, writer_id)',
    ]);
    const migrations3 = loadService(ws).migrations;
    expect(await migrateLatest(db, migrations3)).toEqual([v3.migration!.name]);
    expect(await indexesOf(db, dialect, 'books')).toEqual({
      books_writer_id_title_index: false,
      books_title_per_author: false,
    });
    expect(await rows(db, 'books')).toEqual(books.map(({ author_id, ...b }) => ({ ...b, writer_id: author_id })));
    await db('books').insert({ title: 'One', writer_id: 1 });
    await db('books').where('id', '>', 2).delete();

    expect(await migrateRollback(db, migrations3)).toEqual([v3.migration!.name]);
    expect(await indexesOf(db, dialect, 'books')).toEqual({
      books_author_id_title_index: false,
      books_title_per_author: true,
    });
    expect(await rows(db, 'books')).toEqual(books);
  });
});
