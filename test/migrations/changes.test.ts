/**
 * The kinds of change a migration carries, each applied to a database that has data, on SQLite and
 * PostgreSQL: unique and index switched, a foreign key renamed (renamed_from) with a new delete rule,
 * NULL → NOT NULL with a default, a longer max_length, a new many-to-many relation; then a relation
 * and a resource removed (destructive). Every step has a working `down`.
 */
// The API and access gates are open here (allowBreaking, allowWiden): these tests are about the
// migration gate; the others have their own (test/cases/api-*, access-*).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SpecError } from '../../generator/load/diagnostics';
import { generate } from '../../generator/pipeline';
import { migrateLatest, migrateRollback } from '../../runtime';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';
import { build, columns, failure, libraryWorkspace, loadService, rows, type LibraryWorkspace } from './helpers';

jest.setTimeout(300_000);

const AUTHORS_V1 = `model: Author
fields:
  name: {type: string, max_length: 100, unique: true}
  born: {type: date, null: true}
viewset: {auth: null}
`;
const BOOKS_V1 = `model: Book
fields:
  title: {type: string, max_length: 100}
  author: {type: foreign_key, to: Author, on_delete: cascade}
  pages: {type: integer, null: true}
  isbn: {type: string, max_length: 20, null: true}
viewset: {auth: null}
`;
const GENRES = `model: Genre
fields:
  name: {type: string, max_length: 50}
viewset: {auth: null}
`;
const AUTHORS_V2 = `model: Author
fields:
  name: {type: string, max_length: 100, db_index: true}
  born: {type: date, null: true}
viewset: {auth: null}
`;
const BOOKS_V2 = `model: Book
fields:
  title: {type: string, max_length: 100, db_index: true}
  writer: {type: foreign_key, to: Author, on_delete: protect, renamed_from: author}
  pages: {type: integer, default: 0}
  isbn: {type: string, max_length: 30, null: true}
  genres: {type: many_to_many, to: Genre}
viewset: {auth: null}
`;
const BOOKS_V3 = `model: Book
fields:
  title: {type: string, max_length: 100, db_index: true}
  writer: {type: foreign_key, to: Author, on_delete: protect, renamed_from: author}
  pages: {type: integer, default: 0}
  isbn: {type: string, max_length: 30, null: true}
viewset: {auth: null}
`;

describe.each(DIALECTS)('migration steps on a database with data (%s)', (dialect) => {
  let ws: LibraryWorkspace;
  let database: TestDatabase;
  beforeAll(async () => {
    ws = libraryWorkspace(`changes-${dialect}`);
    database = await createDatabase(dialect);
  });
  afterAll(async () => {
    await database?.drop();
    ws?.remove();
  });

  it('applies, reverts and re-applies each kind of change, keeping the rows', async () => {
    const db = database.db;
    ws.write({ 'authors.yaml': AUTHORS_V1, 'books.yaml': BOOKS_V1, 'genres.yaml': GENRES });
    await build(ws);
    await migrateLatest(db, loadService(ws).migrations);
    await db('authors').insert([{ name: 'Ann' }, { name: 'Bob', born: '1970-01-02' }]);
    await db('books').insert([
      { title: 'One', author_id: 1, pages: 100, isbn: '1234567890' },
      { title: 'Two', author_id: 1, pages: null, isbn: null },
      { title: 'Three', author_id: 2, pages: 300, isbn: '42' },
    ]);
    await db('genres').insert([{ name: 'Poetry' }, { name: 'Essays' }]);
    const authors = await rows(db, 'authors');
    const books = await rows(db, 'books');
    expect(await failure(db('authors').insert({ name: 'Ann' }))).toMatch(/UNIQUE|duplicate key/i);

    // Version 2: many changes in one migration.
    ws.write({ 'authors.yaml': AUTHORS_V2, 'books.yaml': BOOKS_V2 });
    const v2 = await build(ws);
    const name2 = v2.migration!.name;
    expect(v2.migration!.changes).toEqual([
      'create table books_genres',
      'alter column authors.name (not unique, indexed)',
      'rename column books.author_id to writer_id',
      'alter column books.title (indexed)',
      'alter column books.writer_id (references authors on delete RESTRICT)',
      'alter column books.pages (NOT NULL, default 0)',
      'alter column books.isbn (string(20) → string(30))',
    ]);
    // The foreign key's constraint is renamed by asking the database's adapter, not by testing the client's name.
    const text2 = fs.readFileSync(path.join(ws.out, `migrations/${name2}.ts`), 'utf8');
    expect(text2).toContain(`await renameForeignKey(knex, 'books', 'books_author_id_foreign', 'books_writer_id_foreign');`);
    expect(text2).toMatch(/^import \{ type Knex, renameForeignKey \} from '[^']+';$/m);
    expect(text2).not.toContain('client.config');
    const migrations2 = loadService(ws).migrations;
    expect(await migrateLatest(db, migrations2)).toEqual([name2]);
    expect(await rows(db, 'authors')).toEqual(authors);
    expect(await rows(db, 'books')).toEqual(books.map(({ author_id, ...b }) => ({ ...b, writer_id: author_id, pages: b.pages ?? 0 })));
    expect(await columns(db, 'books')).toEqual(['id', 'isbn', 'pages', 'title', 'writer_id']);
    // Names are no longer unique; an author with books cannot be deleted (RESTRICT); the join table takes links.
    await db('authors').insert({ name: 'Ann' });
    expect(await failure(db('authors').where('id', 1).delete())).toMatch(/FOREIGN KEY|foreign key/i);
    await db('books_genres').insert({ book_id: 1, genre_id: 2 });
    expect(await failure(db('books_genres').insert({ book_id: 1, genre_id: 2 }))).toMatch(/UNIQUE|duplicate key/i);
    expect(await failure(db('books').insert({ title: 'x'.repeat(30), writer_id: 99 }))).toMatch(/FOREIGN KEY|foreign key/i);
    await db('books').insert({ title: 'Four', writer_id: 2, isbn: 'x'.repeat(30) });
    expect(await failure(db('books').insert({ title: 'Five', writer_id: 2, pages: null }))).toMatch(/NOT NULL|not-null|cannot be null/i);
    await db('authors').where('name', 'Ann').andWhere('id', '>', 2).delete();
    await db('books').where('title', 'Four').delete();
    await db('books_genres').delete();
    const booksV2 = await rows(db, 'books');

    // Down, then up again: the renamed key, its index and (PostgreSQL) its constraint follow both ways.
    expect(await migrateRollback(db, migrations2)).toEqual([name2]);
    expect(await columns(db, 'books')).toEqual(['author_id', 'id', 'isbn', 'pages', 'title']);
    expect(await db.schema.hasTable('books_genres')).toBe(false);
    expect(await failure(db('authors').insert({ name: 'Ann' }))).toMatch(/UNIQUE|duplicate key/i);
    expect(await migrateLatest(db, migrations2)).toEqual([name2]);
    expect(await rows(db, 'books')).toEqual(booksV2);
    expect(await failure(db('authors').where('id', 1).delete())).toMatch(/FOREIGN KEY|foreign key/i);

    // Version 3: the relation and the resource go; destructive, so only with --allow-destructive.
    ws.write({ 'books.yaml': BOOKS_V3, 'genres.yaml': null });
    let err: unknown;
    try {
      await generate({ specsDir: ws.specs, outDir: ws.out, allowBreaking: true, allowWiden: true });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SpecError);
    const found = (err as SpecError).diagnostics.map((d) => ({ file: path.basename(d.file), message: d.message, line: d.line }));
    expect(found).toEqual([
      expect.objectContaining({
        file: 'books.yaml',
        line: 2,
        message:
          'removing a many-to-many field of books drops its join table books_genres and its rows; run svcgen build with --allow-destructive to write it, or restore the spec',
      }),
      expect.objectContaining({
        file: 'schema.json',
        message:
          'removing the resource of table genres drops the table and its rows; run svcgen build with --allow-destructive to write it, or restore the spec',
      }),
    ]);
    expect(found[1].line).toBeGreaterThan(1);
    const v3 = await build(ws, { allowDestructive: true });
    expect(v3.migration!.changes).toEqual(['drop table books_genres (destructive)', 'drop table genres (destructive)']);
    const migrations3 = loadService(ws).migrations;
    expect(await migrateLatest(db, migrations3)).toEqual([v3.migration!.name]);
    expect(await db.schema.hasTable('genres')).toBe(false);
    expect(await db.schema.hasTable('books_genres')).toBe(false);
    expect(await rows(db, 'books')).toEqual(booksV2);
    // Its down brings the tables back, empty.
    expect(await migrateRollback(db, migrations3)).toEqual([v3.migration!.name]);
    expect(await rows(db, 'genres')).toEqual([]);
    expect(await migrateLatest(db, migrations3)).toEqual([v3.migration!.name]);
    // A stale renamed_from (the rename is in the snapshot) is no change.
    expect((await build(ws)).migration).toBeUndefined();
  });
});

describe('a step that cannot be undone', () => {
  let ws: LibraryWorkspace;
  let database: TestDatabase;
  beforeAll(async () => {
    ws = libraryWorkspace('irreversible');
    database = await createDatabase('sqlite');
  });
  afterAll(async () => {
    await database?.drop();
    ws?.remove();
  });

  it('gets a down that throws, saying why, and changes nothing', async () => {
    const db = database.db;
    ws.write({ 'authors.yaml': AUTHORS_V1 });
    await build(ws);
    await migrateLatest(db, loadService(ws).migrations);
    await db('authors').insert({ name: 'Ann' });
    ws.write({ 'authors.yaml': 'model: Author\nfields:\n  born: {type: date, null: true}\nviewset: {auth: null}\n' });
    const next = await build(ws, { allowDestructive: true });
    expect(next.migration!.down).toEqual([
      `  throw new Error('migration ${next.migration!.name} cannot be reversed: it dropped column authors.name, which was NOT NULL without a default, ` +
        `and its values are gone; restore the database from a backup instead');`,
    ]);
    const migrations = loadService(ws).migrations;
    expect(await migrateLatest(db, migrations)).toEqual([next.migration!.name]);
    expect(await failure(migrateRollback(db, migrations))).toContain(
      `migration ${next.migration!.name} cannot be reversed: it dropped column authors.name`,
    );
    expect(await columns(db, 'authors')).toEqual(['born', 'id']);
    expect(await rows(db, 'authors')).toEqual([{ id: 1, born: null }]);
  });
});
