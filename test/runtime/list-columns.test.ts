/**
 * List columns on every database, below the service: the column type and default the adapter gives
 * a list (`listColumnType`, `listDefault`, as generated migrations call them), a list added to a table
 * that has rows (which take the default), arrays bound as values, items read back in their order,
 * and `contains` / `overlap` on the item types the showcase has no list of.
 */
import { asList, listColumnType, listDefault } from '../../runtime';
import { applyLookup, type Lookup } from '../../runtime/query/filters';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';

describe.each(DIALECTS)('list columns (%s)', (dialect) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createDatabase(dialect);
    const knex = database.db;
    await knex.schema.createTable('things', (t) => {
      t.increments('id');
      t.string('name', 20).notNullable();
    });
    await knex('things').insert({ name: 'before' });
    // The statements a migration adding two list fields writes.
    await knex.schema.alterTable('things', (t) => {
      t.specificType('words', listColumnType(knex, 'string'))
        .notNullable()
        .defaultTo(listDefault(knex, 'string', ['a', 'b "q" \\ {x},y']));
      t.specificType('numbers', listColumnType(knex, 'big_integer')).nullable();
      t.specificType('days', listColumnType(knex, 'date'))
        .notNullable()
        .defaultTo(listDefault(knex, 'date', []));
    });
  });
  afterAll(() => database.drop());

  const read = async (name: string) => {
    const row = await database.db('things').where({ name }).first();
    return { words: asList(row.words), numbers: row.numbers === null ? null : asList(row.numbers), days: asList(row.days) };
  };

  it('gives existing rows the default, with quotes, backslashes, braces and commas kept', async () => {
    expect(await read('before')).toEqual({ words: ['a', 'b "q" \\ {x},y'], numbers: null, days: [] });
  });

  it('stores arrays bound as values and reads them back in order, big integers and dates as JSON gives them', async () => {
    await database
      .db('things')
      .insert({ name: 'after', words: ['z', 'A', 'z'], numbers: [9007199254740991, -1], days: ['2026-01-31', '0001-01-01'] });
    expect(await read('after')).toEqual({ words: ['z', 'A', 'z'], numbers: [9007199254740991, -1], days: ['2026-01-31', '0001-01-01'] });
    await database.db('things').where({ name: 'after' }).update({ words: [], numbers: [] });
    expect(await read('after')).toEqual({ words: [], numbers: [], days: ['2026-01-31', '0001-01-01'] });
  });

  describe('contains and overlap on lists of floats, big integers, booleans and UUIDs', () => {
    const A = '0b0e2a4c-6b8e-4d5e-9f3a-1c2d3e4f5a6b';
    const B = 'f0e1d2c3-b4a5-4967-8877-665544332211';
    beforeAll(async () => {
      const knex = database.db;
      await knex.schema.createTable('items', (t) => {
        t.increments('id');
        t.string('name', 20).notNullable();
        t.specificType('floats', listColumnType(knex, 'float')).notNullable();
        t.specificType('bigs', listColumnType(knex, 'big_integer')).notNullable();
        t.specificType('flags', listColumnType(knex, 'boolean')).notNullable();
        t.specificType('keys', listColumnType(knex, 'uuid')).notNullable();
      });
      await knex('items').insert([
        { name: 'one', floats: [2, 1.5], bigs: [9007199254740991], flags: [true], keys: [A] },
        { name: 'two', floats: [-0.25], bigs: [1, 2], flags: [false, true], keys: [A, B] },
        { name: 'three', floats: [], bigs: [], flags: [], keys: [] },
      ]);
    });

    const names = async (column: string, items: Lookup['items'], op: 'contains' | 'overlap', value: unknown[]) => {
      const query = database.db('items').select('name').orderBy('id');
      applyLookup(query, { hops: [], column: `items.${column}`, kind: 'list', items, nullable: false, op }, value);
      return (await query).map((r: { name: string }) => r.name);
    };

    it.each([
      ['floats', 'float', 'contains', [2.0], ['one']],
      ['floats', 'float', 'contains', [1.5, 2], ['one']],
      ['floats', 'float', 'overlap', [-0.25, 7], ['two']],
      ['bigs', 'big_integer', 'contains', [9007199254740991], ['one']],
      ['bigs', 'big_integer', 'overlap', [2, 9007199254740991], ['one', 'two']],
      ['flags', 'boolean', 'contains', [true], ['one', 'two']],
      ['flags', 'boolean', 'contains', [true, false], ['two']],
      ['flags', 'boolean', 'overlap', [false], ['two']],
      ['keys', 'uuid', 'contains', [A.toUpperCase()], ['one', 'two']],
      ['keys', 'uuid', 'overlap', [B], ['two']],
      ['keys', 'uuid', 'overlap', ['not a uuid'], []],
    ] as const)('%s %s %s %j', async (column, items, op, value, expected) => {
      expect(await names(column, items, op, [...value])).toEqual(expected);
    });
  });
});
