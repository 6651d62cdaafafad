/**
 * List columns on every database, below the service: the column type and default the adapter gives
 * a list (`listColumnType`, `listDefault`, as generated migrations call them), a list added to a table
 * that has rows (which take the default), arrays bound as values, and items read back in their order.
 */
import { asList, listColumnType, listDefault } from '../../runtime';
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
      t.specificType('words', listColumnType(knex, 'string')).notNullable().defaultTo(listDefault(knex, 'string', ['a', 'b "q" \\ {x},y']));
      t.specificType('numbers', listColumnType(knex, 'big_integer')).nullable();
      t.specificType('days', listColumnType(knex, 'date')).notNullable().defaultTo(listDefault(knex, 'date', []));
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
    await database.db('things').insert({ name: 'after', words: ['z', 'A', 'z'], numbers: [9007199254740991, -1], days: ['2026-01-31', '0001-01-01'] });
    expect(await read('after')).toEqual({ words: ['z', 'A', 'z'], numbers: [9007199254740991, -1], days: ['2026-01-31', '0001-01-01'] });
    await database.db('things').where({ name: 'after' }).update({ words: [], numbers: [] });
    expect(await read('after')).toEqual({ words: [], numbers: [], days: ['2026-01-31', '0001-01-01'] });
  });
});
