/**
 * Loading the related records of rows on real databases: `loadForeigns` reads the foreign keys of
 * one row with one statement (LEFT JOINs from a one-row source), answering what `loadForeign`
 * answers for each: the related record, nothing for a null key or a key without a row, and, for a
 * page of rows, each relation with its own query. The same answers on every database.
 */
import { loadForeign, loadForeigns, type Db, type ForeignSpec } from '../../runtime';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';

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

/** A spec of the same table whose columns leave its key out: read a relation at a time. */
const PERSON_NAME = { table: 'people', pk: 'id', columns: ['name'], shape: (row) => row.name } satisfies ForeignSpec<unknown, PersonRow>;

describe.each(DIALECTS)('loadForeigns (%s)', (dialect) => {
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
    db.on('query', (q: { sql: string }) => statements.push(q.sql));
  });
  afterAll(() => database.drop());
  beforeEach(() => statements.splice(0));

  it('reads the foreign keys of one row with one statement, as loadForeign reads each', async () => {
    const [people, places] = await loadForeigns(db, [
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
    const [people, places] = await loadForeigns(db, [
      [PERSON, [1, 1]],
      [PLACE, ['nowhere']],
    ]);
    expect([...people]).toEqual([[1, { id: 1, name: 'Ada', active: true }]]);
    expect(places.size).toBe(0);
    const [none, place] = await loadForeigns(db, [
      [PERSON, [999]],
      [PLACE, ['ldn']],
    ]);
    expect(none.size).toBe(0);
    expect(place.get('ldn')).toEqual({ code: 'ldn', label: "London's" });
    expect(new Set(statements).size).toBe(1);
  });

  it('reads a relation alone when the other keys are null', async () => {
    const [people, places] = await loadForeigns(db, [
      [PERSON, [null]],
      [PLACE, ['ldn', null]],
    ]);
    expect(people.size).toBe(0);
    expect([...places.keys()]).toEqual(['ldn']);
    expect(statements).toHaveLength(1);
    expect(statements[0]).not.toMatch(/people/);
  });

  it('reads a page of rows with one query per relation', async () => {
    const [people, places] = await loadForeigns(db, [
      [PERSON, [1, 2, 1]],
      [PLACE, ['ldn', null, 'ldn']],
    ]);
    expect([...people.keys()].sort()).toEqual([1, 2]);
    expect([...places.keys()]).toEqual(['ldn']);
    expect(statements).toHaveLength(2);
  });

  it('reads a spec without its key among its columns with its own query', async () => {
    const [names, places] = await loadForeigns(db, [
      [PERSON_NAME, [1]],
      [PLACE, ['ldn']],
    ]);
    expect(names).toEqual(await loadForeign(db, PERSON_NAME, [1]));
    expect(places.size).toBe(1);
  });

  it('reads in a transaction on its connection, seeing its writes', async () => {
    const rollback = new Error('roll back');
    let seen: unknown[] = [];
    await db
      .transaction(async (trx) => {
        const [inserted] = await trx('people').insert({ name: 'Linus', active: true }).returning('id');
        const id = typeof inserted === 'object' ? (inserted as { id: number }).id : (inserted as number);
        const [people, places] = await loadForeigns(trx, [
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
