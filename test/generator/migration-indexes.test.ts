/**
 * The migration planner on composite indexes, from snapshot to snapshot: a new index, a dropped one,
 * a changed one (dropped and created again under its name), and the order of index steps around the
 * column steps of the same table. The code lines are asserted exactly.
 */
import type { DbColumn, DbIndex, DbTable } from '../../generator/migrate/db-schema';
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

const BOOKS: DbTable = {
  name: 'books',
  uniques: [],
  columns: [column('id', { type: 'increments', primary: true }), column('shelf'), column('position'), column('pages', { nullable: true })],
};

function plan(before: DbIndex[] | undefined, after: DbIndex[] | undefined, columns = BOOKS.columns) {
  const history: MigrationHistory = {
    snapshot: { tables: [{ ...BOOKS, ...(before ? { indexes: before } : {}) }], migrations: ['0001_initial'] },
    snapshotFile: 'generated/migrations/schema.json',
    migrations: [{ name: '0001_initial', text: '' }],
  };
  const model = { resources: [] } as unknown as ServiceModel;
  const schema = { tables: [{ ...BOOKS, columns, ...(after ? { indexes: after } : {}) }] };
  return planMigrations(model, schema, history, {
    allowDestructive: true,
    at: () => ({ file: 'x', line: 1, column: 1, message: 'unexpected' }),
  }).next;
}

const SHELF: DbIndex = { name: 'books_shelf_position_index', columns: ['shelf', 'position'], unique: false };

describe('migration steps of composite indexes', () => {
  it('adds an index, and its down drops it', () => {
    expect(plan(undefined, [SHELF])).toEqual({
      name: '0002_books_shelf_position',
      runtime: [],
      changes: ['add index books_shelf_position_index on books (shelf, position)'],
      up: [
        "  await knex.schema.alterTable('books', (t) => {",
        "    t.index(['shelf', 'position'], 'books_shelf_position_index');",
        '  });',
      ],
      down: [
        "  await knex.schema.alterTable('books', (t) => {",
        "    t.dropIndex(['shelf', 'position'], 'books_shelf_position_index');",
        '  });',
      ],
    });
  });

  it('drops an index that is gone, and its down creates it again', () => {
    const next = plan([SHELF], []);
    expect(next?.changes).toEqual(['drop index books_shelf_position_index on books (shelf, position)']);
    expect(next?.up).toContain("    t.dropIndex(['shelf', 'position'], 'books_shelf_position_index');");
    expect(next?.down).toContain("    t.index(['shelf', 'position'], 'books_shelf_position_index');");
  });

  it('writes nothing when the indexes are the same', () => {
    expect(plan([SHELF], [SHELF])).toBeUndefined();
  });

  it('drops and creates again an index whose uniqueness or columns change', () => {
    const unique = { ...SHELF, unique: true };
    const next = plan([SHELF], [unique]);
    expect(next?.changes).toEqual([
      'drop index books_shelf_position_index on books (shelf, position)',
      'add unique index books_shelf_position_index on books (shelf, position)',
    ]);
    expect(next?.up).toEqual([
      "  await knex.schema.alterTable('books', (t) => {",
      "    t.dropIndex(['shelf', 'position'], 'books_shelf_position_index');",
      '  });',
      "  await knex.schema.alterTable('books', (t) => {",
      "    t.unique(['shelf', 'position'], { indexName: 'books_shelf_position_index' });",
      '  });',
    ]);
    expect(next?.down).toEqual([
      "  await knex.schema.alterTable('books', (t) => {",
      "    t.dropUnique(['shelf', 'position'], 'books_shelf_position_index');",
      '  });',
      "  await knex.schema.alterTable('books', (t) => {",
      "    t.index(['shelf', 'position'], 'books_shelf_position_index');",
      '  });',
    ]);
    expect(plan([SHELF], [{ ...SHELF, columns: ['position', 'shelf'] }])?.changes).toEqual([
      'drop index books_shelf_position_index on books (shelf, position)',
      'add index books_shelf_position_index on books (position, shelf)',
    ]);
  });

  it('drops an old index before its column goes, and creates a new one after its column comes', () => {
    const byPages: DbIndex = { name: 'books_shelf_pages_index', columns: ['shelf', 'pages'], unique: false };
    const withoutPages = BOOKS.columns.filter((c) => c.name !== 'pages');
    expect(plan([byPages], [SHELF], withoutPages)?.changes).toEqual([
      'drop index books_shelf_pages_index on books (shelf, pages)',
      'drop column books.pages (destructive)',
      'add index books_shelf_position_index on books (shelf, position)',
    ]);
    const withoutPosition = BOOKS.columns.filter((c) => c.name !== 'position');
    const before = { tables: [{ ...BOOKS, columns: withoutPosition }] };
    const history: MigrationHistory = {
      snapshot: { ...before, migrations: ['0001_initial'] },
      snapshotFile: 's',
      migrations: [{ name: '0001_initial', text: '' }],
    };
    const model = { resources: [] } as unknown as ServiceModel;
    const columns = BOOKS.columns.map((c) => (c.name === 'position' ? { ...c, nullable: true } : c));
    const next = planMigrations(model, { tables: [{ ...BOOKS, columns, indexes: [SHELF] }] }, history, {
      at: () => ({ file: 'x', line: 1, column: 1, message: 'unexpected' }),
    }).next;
    expect(next?.changes).toEqual(['add column books.position', 'add index books_shelf_position_index on books (shelf, position)']);
  });
});

describe('migration steps of partial unique indexes (soft delete)', () => {
  const LIVE: DbIndex = { name: 'books_shelf_position_unique', columns: ['shelf', 'position'], unique: true, whereNull: 'pages' };

  it('creates a partial unique index with a predicate, and drops it as an index (PostgreSQL has no partial constraint)', () => {
    expect(plan(undefined, [LIVE])).toEqual({
      name: '0002_books_shelf_position',
      runtime: [],
      changes: ['add unique index books_shelf_position_unique on books (shelf, position) where pages is null'],
      up: [
        "  await knex.schema.alterTable('books', (t) => {",
        "    t.unique(['shelf', 'position'], { indexName: 'books_shelf_position_unique', predicate: knex.whereNull('pages') });",
        '  });',
      ],
      down: [
        "  await knex.schema.alterTable('books', (t) => {",
        "    t.dropIndex(['shelf', 'position'], 'books_shelf_position_unique');",
        '  });',
      ],
    });
  });

  it('drops and creates again an index that gains or loses its predicate', () => {
    const plain: DbIndex = { ...LIVE, whereNull: undefined };
    const next = plan([plain], [LIVE]);
    expect(next?.changes).toEqual([
      'drop unique index books_shelf_position_unique on books (shelf, position)',
      'add unique index books_shelf_position_unique on books (shelf, position) where pages is null',
    ]);
    expect(next?.up).toEqual([
      "  await knex.schema.alterTable('books', (t) => {",
      "    t.dropUnique(['shelf', 'position'], 'books_shelf_position_unique');",
      '  });',
      "  await knex.schema.alterTable('books', (t) => {",
      "    t.unique(['shelf', 'position'], { indexName: 'books_shelf_position_unique', predicate: knex.whereNull('pages') });",
      '  });',
    ]);
    expect(plan([LIVE], [LIVE])).toBeUndefined();
  });

  it('turns a unique column into a partial unique index after the column that marks deleted rows is added', () => {
    const withoutPages = BOOKS.columns.filter((c) => c.name !== 'pages');
    const uniqueShelf = withoutPages.map((c) => (c.name === 'shelf' ? { ...c, unique: true } : c));
    const history: MigrationHistory = {
      snapshot: { tables: [{ ...BOOKS, columns: uniqueShelf }], migrations: ['0001_initial'] },
      snapshotFile: 's',
      migrations: [{ name: '0001_initial', text: '' }],
    };
    const model = { resources: [] } as unknown as ServiceModel;
    const live: DbIndex = { name: 'books_shelf_unique', columns: ['shelf'], unique: true, whereNull: 'pages' };
    const next = planMigrations(model, { tables: [{ ...BOOKS, indexes: [live] }] }, history, {
      at: () => ({ file: 'x', line: 1, column: 1, message: 'unexpected' }),
    }).next;
    expect(next?.changes).toEqual([
      'alter column books.shelf (not unique)',
      'add column books.pages',
      'add unique index books_shelf_unique on books (shelf) where pages is null',
    ]);
  });
});
