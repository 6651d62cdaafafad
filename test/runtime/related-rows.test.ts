/**
 * Loading the related records of rows on real databases: `loadRelations` reads the foreign keys of
 * one row with one statement (LEFT JOINs from a one-row source), and a many-to-many relation with
 * them on PostgreSQL and MySQL,
 * answering what `loadForeign` and `loadManyToMany` answer for each: the related record, nothing
 * for a null key or a key without a row, the linked records in key order, and, for a page of rows
 * (or a second many-to-many relation), each relation with its own query. The same answers on every database.
 */
import { loadForeign, loadManyToMany, loadRelations, type Db, type ForeignSpec, type ManyToManySpec } from '../../runtime';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';
import { insertReturning } from '../../runtime/db/inserts';

interface PersonRow {
  id: number;
  name: string;
  active: boolean | number;
}
interface PlaceRow {
  code: string;
  label: string;
}

const PERSON = {
  table: 'people',
  pk: 'id',
  columns: ['id', 'name', 'active'],
  shape: (row) => ({ id: row.id, name: row.name, active: Boolean(row.active) }),
} satisfies ForeignSpec<unknown, PersonRow>;

const PLACE = {
  table: 'places',
  pk: 'code',
  columns: ['code', 'label'],
  shape: (row) => ({ code: row.code, label: row.label }),
} satisfies ForeignSpec<unknown, PlaceRow>;

interface TagRow {
  id: number;
  name: string;
}
const TAGS = {
  joinTable: 'people_tags',
  ownColumn: 'person_id',
  otherColumn: 'tag_id',
  table: 'tags',
  pk: 'id',
  columns: ['id', 'name'],
  shape: (row) => ({ id: row.id, name: row.name }),
} satisfies ManyToManySpec<unknown, TagRow>;
const TAG_KEYS = { ...TAGS, columns: ['id'], shape: (row: TagRow) => row.id } satisfies ManyToManySpec<unknown, TagRow>;

/** A spec of the same table whose columns leave its key out: read a relation at a time. */
const PERSON_NAME = { table: 'people', pk: 'id', columns: ['name'], shape: (row) => row.name } satisfies ForeignSpec<unknown, PersonRow>;

describe.each(DIALECTS)('loadRelations (%s)', (dialect) => {
  let database: TestDatabase;
  let db: Db;
  const statements: string[] = [];
  beforeAll(async () => {
    database = await createDatabase(dialect);
    db = database.db;
    await db.schema.createTable('people', (t) => {
      t.increments('id');
      t.string('name').notNullable();
      t.boolean('active').notNullable();
    });
    await db.schema.createTable('places', (t) => {
      t.string('code', 8).primary();
      t.string('label').notNullable();
    });
    await db('people').insert([
      { name: 'Ada', active: true },
      { name: 'Grace', active: false },
    ]);
    await db('places').insert([{ code: 'ldn', label: "London's" }]);
    await db.schema.createTable('tags', (t) => {
      t.increments('id');
      t.string('name').notNullable();
    });
    await db.schema.createTable('people_tags', (t) => {
      t.integer('person_id').notNullable();
      t.integer('tag_id').notNullable();
    });
    await db('tags').insert([{ name: 'c' }, { name: 'a' }, { name: 'b' }]);
    await db('people_tags').insert([
      { person_id: 1, tag_id: 3 },
      { person_id: 1, tag_id: 1 },
      { person_id: 2, tag_id: 2 },
    ]);
    db.on('query', (q: { sql: string }) => statements.push(q.sql));
  });
  afterAll(() => database.drop());
  beforeEach(() => statements.splice(0));

  it('reads the foreign keys of one row with one statement, as loadForeign reads each', async () => {
    const [people, places] = await loadRelations(db, [
      [PERSON, [2]],
      [PLACE, ['ldn']],
    ]);
    expect(statements).toHaveLength(1);
    expect([...people]).toEqual([[2, { id: 2, name: 'Grace', active: false }]]);
    expect([...places]).toEqual([['ldn', { code: 'ldn', label: "London's" }]]);
    expect(people).toEqual(await loadForeign(db, PERSON, [2]));
    expect(places).toEqual(await loadForeign(db, PLACE, ['ldn']));
  });

  it('answers nothing for a key without a row, and binds new keys to the same statement', async () => {
    const [people, places] = await loadRelations(db, [
      [PERSON, [1, 1]],
      [PLACE, ['nowhere']],
    ]);
    expect([...people]).toEqual([[1, { id: 1, name: 'Ada', active: true }]]);
    expect(places.size).toBe(0);
    const [none, place] = await loadRelations(db, [
      [PERSON, [999]],
      [PLACE, ['ldn']],
    ]);
    expect(none.size).toBe(0);
    expect(place.get('ldn')).toEqual({ code: 'ldn', label: "London's" });
    expect(new Set(statements).size).toBe(1);
  });

  it('reads a relation alone when the other keys are null', async () => {
    const [people, places] = await loadRelations(db, [
      [PERSON, [null]],
      [PLACE, ['ldn', null]],
    ]);
    expect(people.size).toBe(0);
    expect([...places.keys()]).toEqual(['ldn']);
    expect(statements).toHaveLength(1);
    expect(statements[0]).not.toMatch(/people/);
  });

  it('reads a page of rows with one query per relation', async () => {
    const [people, places] = await loadRelations(db, [
      [PERSON, [1, 2, 1]],
      [PLACE, ['ldn', null, 'ldn']],
    ]);
    expect([...people.keys()].sort()).toEqual([1, 2]);
    expect([...places.keys()]).toEqual(['ldn']);
    expect(statements).toHaveLength(2);
  });

  it('reads a spec without its key among its columns with its own query', async () => {
    const [names, places] = await loadRelations(db, [
      [PERSON_NAME, [1]],
      [PLACE, ['ldn']],
    ]);
    expect(names).toEqual(await loadForeign(db, PERSON_NAME, [1]));
    expect(places.size).toBe(1);
  });

  it('reads a many-to-many relation with the foreign keys where the database is a server, its records in key order', async () => {
    const [people, tags, places] = await loadRelations(db, [
      [PERSON, [1]],
      [TAGS, [1]],
      [PLACE, ['ldn']],
    ]);
    // SQLite: the foreign keys joined, the many-to-many relation with its own query.
    expect(statements).toHaveLength(dialect === 'sqlite' ? 2 : 1);
    expect(tags.get(1)).toEqual([
      { id: 1, name: 'c' },
      { id: 3, name: 'b' },
    ]);
    expect(tags).toEqual(await loadManyToMany(db, TAGS, [1]));
    expect(people.get(1)).toEqual({ id: 1, name: 'Ada', active: true });
    expect(places.size).toBe(1);
  });

  it('answers no records for a row without links, as loadManyToMany does', async () => {
    await db('people').insert({ name: 'Edsger', active: true });
    const [people, tags] = await loadRelations(db, [
      [PERSON, [3]],
      [TAGS, [3]],
    ]);
    expect(people.get(3)).toEqual({ id: 3, name: 'Edsger', active: true });
    expect(tags.size).toBe(0);
    expect(tags).toEqual(await loadManyToMany(db, TAGS, [3]));
  });

  it('reads a second many-to-many relation, and a page, with one query per relation', async () => {
    const [tags, keys] = await loadRelations(db, [
      [TAGS, [2]],
      [TAG_KEYS, [2]],
    ]);
    expect(statements).toHaveLength(2);
    expect(tags.get(2)).toEqual([{ id: 2, name: 'a' }]);
    expect(keys.get(2)).toEqual([2]);
    statements.splice(0);
    const [people, pageTags] = await loadRelations(db, [
      [PERSON, [1, 2]],
      [TAGS, [1, 2]],
    ]);
    expect(statements).toHaveLength(2);
    expect(people.size).toBe(2);
    expect(pageTags).toEqual(await loadManyToMany(db, TAGS, [1, 2]));
  });

  it('reads in a transaction on its connection, seeing its writes', async () => {
    const rollback = new Error('roll back');
    let seen: unknown[] = [];
    await db
      .transaction(async (trx) => {
        const person = { name: 'Linus', active: true };
        const [inserted] = await insertReturning(trx, trx('people').insert(person), person, ['id']);
        const id = inserted.id as number;
        const [people, places] = await loadRelations(trx, [
          [PERSON, [id]],
          [PLACE, ['ldn']],
        ]);
        seen = [people.get(id), places.size];
        throw rollback;
      })
      .catch((err: unknown) => {
        if (err !== rollback) throw err;
      });
    expect(seen).toEqual([{ id: expect.any(Number), name: 'Linus', active: true }, 1]);
  });
});
