/**
 * The migration planner on list columns: a list column is created through the runtime's
 * `listColumnType` (a native array on PostgreSQL, JSON elsewhere) with its default written by
 * `listDefault`, and a change of its item type is a narrowing change. The code lines are asserted exactly.
 */
import type { DbColumn, DbTable } from '../../generator/migrate/db-schema';
import type { MigrationHistory } from '../../generator/migrate/history';
import { planMigrations } from '../../generator/migrate/migrations';
import type { ServiceModel } from '../../generator/model/model';

const column = (name: string, extra: Partial<DbColumn> = {}): DbColumn => ({
  name,
  type: 'integer',
  nullable: false,
  unique: false,
  primary: false,
  index: false,
  ...extra,
});

const BOOKS: DbTable = { name: 'books', uniques: [], columns: [column('id', { type: 'increments', primary: true })] };

function plan(before: DbColumn[], after: DbColumn[], allowDestructive = true) {
  const history: MigrationHistory = {
    snapshot: { tables: [{ ...BOOKS, columns: [...BOOKS.columns, ...before] }], migrations: ['0001_initial'] },
    snapshotFile: 'generated/migrations/schema.json',
    migrations: [{ name: '0001_initial', text: '' }],
  };
  const model = { resources: [] } as unknown as ServiceModel;
  const schema = { tables: [{ ...BOOKS, columns: [...BOOKS.columns, ...after] }] };
  return planMigrations(model, schema, history, { allowDestructive, at: () => ({ file: 'x', line: 1, column: 1, message: 'unexpected' }) })
    .next;
}

const TAGS = column('tags', { type: 'list', items: 'string', default: ['new', "it's"] });

describe('migration steps of list columns', () => {
  it('adds a list column with its type and default from the runtime, and names both functions', () => {
    expect(plan([], [TAGS, column('scores', { type: 'list', items: 'integer', nullable: true })])).toEqual({
      name: '0002_books_tags_books_scores',
      runtime: ['listColumnType', 'listDefault'],
      changes: ['add column books.tags', 'add column books.scores'],
      up: [
        "  await knex.schema.alterTable('books', (t) => {",
        "    t.specificType('tags', listColumnType(knex, 'string')).notNullable().defaultTo(listDefault(knex, 'string', ['new', 'it\\'s']));",
        '  });',
        "  await knex.schema.alterTable('books', (t) => {",
        "    t.specificType('scores', listColumnType(knex, 'integer')).nullable();",
        '  });',
      ],
      down: [
        "  await knex.schema.alterTable('books', (t) => {",
        "    t.dropColumn('scores');",
        '  });',
        "  await knex.schema.alterTable('books', (t) => {",
        "    t.dropColumn('tags');",
        '  });',
      ],
    });
  });

  it('changes a default in place, and refuses to change the item type without --allow-destructive', () => {
    const next = plan([TAGS], [{ ...TAGS, default: [] }]);
    expect(next?.up).toContain(
      "    t.specificType('tags', listColumnType(knex, 'string')).notNullable().defaultTo(listDefault(knex, 'string', [])).alter();",
    );
    expect(() => plan([TAGS], [{ ...TAGS, items: 'integer' }], false)).toThrow(
      /changing books\.tags \(type list of string → list of integer\) can lose data/,
    );
  });
});
