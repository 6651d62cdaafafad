/**
 * The database schema the model implies, as plain data. It is written beside the migrations as a
 * snapshot, and migrations are rendered from it (the first one creates every table).
 */
import type { ConditionPlan, LookupPlan } from '../model/filter-plans';
import type { Field, Resource, ServiceModel } from '../model/model';
import { indexName } from '../model/resource-names';
import { literal } from '../model/names';

export interface DbColumn {
  name: string;
  /**
   * Knex column builder: increments, integer, bigInteger, double, decimal, string, text, boolean, date, timestamp, uuid, json;
   * or `list`, a list of `items` (a native array on PostgreSQL, JSON elsewhere: see `listColumnType` in the runtime).
   */
  type: string;
  /** A `list` column: the spec type of its items (`string`, `integer`, …). */
  items?: string;
  length?: number;
  precision?: number;
  scale?: number;
  nullable: boolean;
  unique: boolean;
  primary: boolean;
  index: boolean;
  default?: unknown;
  references?: { table: string; column: string; onDelete: 'CASCADE' | 'SET NULL' | 'RESTRICT' };
}

/** A named index of several columns (a resource's `indexes`, and a soft-deleted resource's unique fields). */
export interface DbIndex {
  name: string;
  columns: string[];
  unique: boolean;
  /** A partial index over the rows where this column is NULL: the live rows of a soft-deleted resource. */
  whereNull?: string;
  /**
   * An index serving case-insensitive substring matches on its one column (`lower(column) LIKE
   * lower(pattern)`: search fields and `icontains` lookups), created by the database's adapter
   * (PostgreSQL: a trigram GIN index on `lower(column)`; SQLite: none, see runtime/db/migrations.ts).
   */
  search?: true;
  /**
   * A unique index over its one column compared without ASCII case (a field's `ignore_case`),
   * created by the database's adapter (runtime/db/migrations.ts, `createFoldedUnique`).
   */
  folded?: true;
}

export interface DbTable {
  name: string;
  columns: DbColumn[];
  /** Composite unique constraints (join tables). */
  uniques: string[][];
  /** Named composite indexes; absent when there are none (and in snapshots written before indexes existed). */
  indexes?: DbIndex[];
}

export interface DbSchema {
  tables: DbTable[];
}

const ON_DELETE = { cascade: 'CASCADE', set_null: 'SET NULL', protect: 'RESTRICT' } as const;

function columnType(f: Field): Pick<DbColumn, 'type' | 'items' | 'length' | 'precision' | 'scale'> {
  switch (f.type) {
    case 'integer':
      return { type: f.autoIncrement ? 'increments' : 'integer' };
    case 'big_integer':
      return { type: f.autoIncrement ? 'bigIncrements' : 'bigInteger' };
    case 'float':
      return { type: 'double' };
    case 'decimal':
      return { type: 'decimal', precision: f.maxDigits, scale: f.decimalPlaces };
    case 'string':
      return f.maxLength === undefined ? { type: 'text' } : { type: 'string', length: f.maxLength };
    case 'email':
      return { type: 'string', length: f.maxLength ?? 254 };
    case 'url':
      return { type: 'string', length: f.maxLength ?? 200 };
    case 'password':
      return { type: 'string', length: 128 };
    case 'text':
      return { type: 'text' };
    case 'boolean':
      return { type: 'boolean' };
    case 'date':
      return { type: 'date' };
    case 'datetime':
      return { type: 'timestamp' };
    case 'uuid':
      return { type: 'uuid' };
    case 'json':
      return { type: 'json' };
    case 'list':
      return { type: 'list', items: f.list!.of };
    case 'foreign_key': {
      const target = columnType(f.relation!.targetPk);
      if (target.type === 'increments') return { type: 'integer' };
      if (target.type === 'bigIncrements') return { type: 'bigInteger' };
      return target;
    }
  }
}

function storedDefault(f: Field): unknown {
  if (!f.hasDefault) return undefined;
  if (f.type === 'json') return JSON.stringify(f.default);
  return f.default;
}

function keyColumn(name: string, table: string, pk: Field): DbColumn {
  return {
    name,
    ...columnType({ ...pk, type: 'foreign_key', relation: { target: '', targetTable: table, targetPk: pk, onDelete: 'cascade' } } as Field),
    nullable: false,
    unique: false,
    primary: false,
    index: true,
    references: { table, column: pk.column, onDelete: 'CASCADE' },
  };
}

export function dbSchemaOf(model: ServiceModel): DbSchema {
  const tables: DbTable[] = [];
  for (const r of model.resources) {
    tables.push({
      name: r.table,
      uniques: [],
      columns: r.fields.map((f) => ({
        name: f.column,
        ...columnType(f),
        nullable: f.nullable,
        // With soft delete, uniqueness holds among live rows: a partial index (indexesOf).
        unique: f.unique && !f.primaryKey && !r.softDelete && !f.ignoreCase,
        primary: f.primaryKey,
        index: f.index && !f.unique && !leadsAnIndex(r, f.column),
        default: storedDefault(f),
        references: f.relation
          ? { table: f.relation.targetTable, column: f.relation.targetPk.column, onDelete: ON_DELETE[f.relation.onDelete] }
          : undefined,
      })),
      ...indexesOf(r),
    });
  }
  addSearchIndexes(model, tables);
  for (const r of model.resources) {
    for (const m of r.m2m) {
      tables.push({
        name: m.joinTable,
        uniques: [[m.ownColumn, m.otherColumn]],
        columns: [
          { name: 'id', type: 'increments', nullable: false, unique: false, primary: true, index: false },
          keyColumn(m.ownColumn, r.table, r.pk),
          keyColumn(m.otherColumn, m.targetTable, m.targetPk),
        ],
      });
    }
  }
  return { tables: orderByDependencies(tables) };
}

/**
 * Whether one of the resource's composite indexes starts with `column` and holds every row: it
 * serves lookups by that column (a foreign key's, when its target row is deleted) as the column's
 * own index would, so the column gets none, and a write updates one index fewer.
 */
function leadsAnIndex(r: Resource, column: string): boolean {
  return r.indexes.some((i) => i.columns[0] === column && !(i.unique && r.softDelete));
}

/**
 * A resource's named indexes: its `indexes`, and one unique index per unique field (named like
 * Knex's unique constraint) that is compared without case (`ignore_case`) or belongs to a
 * soft-deleting resource, every unique index then partial over the live rows (`WHERE deleted_at IS
 * NULL`), so a soft-deleted row does not hold its values.
 */
function indexesOf(r: Resource): { indexes?: DbIndex[] } {
  const live = r.softDelete?.field.column;
  const own: DbIndex[] = r.indexes.map(({ name, columns, unique }) => ({
    name,
    columns,
    unique,
    ...(unique && live ? { whereNull: live } : {}),
  }));
  const fields: DbIndex[] = r.fields
    .filter((f) => f.unique && !f.primaryKey && (live || f.ignoreCase))
    .map((f) => ({
      name: indexName(r.table, [f.column], true),
      columns: [f.column],
      unique: true,
      ...(live ? { whereNull: live } : {}),
      ...(f.ignoreCase ? { folded: true as const } : {}),
    }));
  const all = [...fields, ...own];
  return all.length ? { indexes: all } : {};
}

/** The suffix of a search index's name: `articles_title_search_index`. */
export const SEARCH_INDEX_SUFFIX = 'search_index';

/**
 * Adds to `tables` one search index per text column that a search field or an `icontains` lookup
 * (a filter's, or one in a match case) matches case-insensitively, in the table the lookup reaches
 * (through relations, `author__username` matches users.username), after the table's other indexes,
 * in the order of its columns.
 */
function addSearchIndexes(model: ServiceModel, tables: DbTable[]): void {
  const wanted = new Map<string, Set<string>>();
  const add = (lookup: LookupPlan) => {
    if (lookup.op !== 'icontains' || lookup.kind !== 'text') return;
    const dot = lookup.column.lastIndexOf('.');
    const table = lookup.column.slice(0, dot);
    let columns = wanted.get(table);
    if (!columns) wanted.set(table, (columns = new Set()));
    columns.add(lookup.column.slice(dot + 1));
  };
  const inCondition = (c: ConditionPlan): void => {
    if ('lookup' in c) add(c.lookup);
    else if ('not' in c) inCondition(c.not);
    else for (const part of 'and' in c ? c.and : c.or) inCondition(part);
  };
  for (const r of model.resources) {
    for (const field of r.search?.fields ?? []) add(field.lookup);
    for (const mixin of r.filters?.mixins ?? []) {
      if (mixin.kind === 'lookups') for (const { lookup } of mixin.lookups) add(lookup);
      else for (const c of mixin.cases) for (const side of [c.true, c.false]) inCondition(side.condition);
    }
  }
  for (const t of tables) {
    const columns = wanted.get(t.name);
    if (!columns) continue;
    const search: DbIndex[] = t.columns
      .filter((c) => columns.has(c.name))
      .map((c) => ({ name: `${t.name}_${c.name}_${SEARCH_INDEX_SUFFIX}`, columns: [c.name], unique: false, search: true }));
    if (search.length) t.indexes = [...(t.indexes ?? []), ...search];
  }
}

/** Tables that others reference come first; otherwise the given order stays. */
function orderByDependencies(tables: DbTable[]): DbTable[] {
  const out: DbTable[] = [];
  const placed = new Set<string>();
  const pending = [...tables];
  while (pending.length) {
    const i = pending.findIndex((t) =>
      t.columns.every((c) => !c.references || c.references.table === t.name || placed.has(c.references.table)),
    );
    const [next] = pending.splice(i < 0 ? 0 : i, 1);
    out.push(next);
    placed.add(next.name);
  }
  return out;
}

/** One Knex column statement inside `createTable`/`alterTable`. */
export function columnStatement(c: DbColumn): string {
  if (c.type === 'list') return listColumnStatement(c);
  const args = [literal(c.name)];
  if (c.length !== undefined) args.push(String(c.length));
  if (c.precision !== undefined) args.push(String(c.precision), String(c.scale ?? 0));
  if (c.type === 'timestamp') args.push('{ useTz: true }');
  let s = `t.${c.type}(${args.join(', ')})`;
  if (c.primary && !c.type.endsWith('ncrements')) s += '.primary()';
  if (!c.primary) s += c.nullable ? '.nullable()' : '.notNullable()';
  if (c.unique) s += '.unique()';
  if (c.default !== undefined) s += `.defaultTo(${literal(c.default)})`;
  if (c.references)
    s += `.references(${literal(c.references.column)}).inTable(${literal(c.references.table)}).onDelete(${literal(c.references.onDelete)})`;
  return `${s};`;
}

/** The runtime functions a list column's statement calls: its type, and its default, as the database writes them. */
export const LIST_COLUMN_TYPE = 'listColumnType';
export const LIST_DEFAULT = 'listDefault';

/** A list column: the type and default its database gives it (runtime/db/migrations.ts). */
function listColumnStatement(c: DbColumn): string {
  let s = `t.specificType(${literal(c.name)}, ${LIST_COLUMN_TYPE}(knex, ${literal(c.items)}))`;
  s += c.nullable ? '.nullable()' : '.notNullable()';
  if (c.default !== undefined && c.default !== null) s += `.defaultTo(${LIST_DEFAULT}(knex, ${literal(c.items)}, ${literal(c.default)}))`;
  return `${s};`;
}

/** The runtime functions the statements of `columns` call. */
export function columnsRuntime(columns: readonly DbColumn[]): string[] {
  const lists = columns.filter((c) => c.type === 'list');
  return [
    ...(lists.length ? [LIST_COLUMN_TYPE] : []),
    ...(lists.some((c) => c.default !== undefined && c.default !== null) ? [LIST_DEFAULT] : []),
  ];
}

export function createTableStatements(t: DbTable): string[] {
  const lines = [`  await knex.schema.createTable(${literal(t.name)}, (t) => {`];
  for (const c of t.columns) lines.push(`    ${columnStatement(c)}`);
  for (const c of t.columns) if (c.index) lines.push(`    t.index([${literal(c.name)}]);`);
  for (const u of t.uniques) lines.push(`    t.unique(${literal(u)});`);
  for (const i of t.indexes ?? []) if (!i.search && !i.folded) lines.push(`    ${indexStatement(i)}`);
  lines.push('  });');
  for (const i of t.indexes ?? []) if (i.folded) lines.push(`  ${createFoldedUniqueStatement(t.name, i)}`);
  for (const i of t.indexes ?? []) if (i.search) lines.push(`  ${createSearchIndexStatement(t.name, i)}`);
  return lines;
}

/** The runtime functions a migration calls to create and drop a case-insensitive unique index (`DbIndex.folded`). */
export const CREATE_FOLDED_UNIQUE = 'createFoldedUnique';
export const DROP_FOLDED_UNIQUE = 'dropFoldedUnique';

/** The statement (outside `alterTable`) creating the case-insensitive unique index `i` of `table`. */
export function createFoldedUniqueStatement(table: string, i: DbIndex): string {
  const args = [table, i.columns[0], i.name, ...(i.whereNull ? [i.whereNull] : [])].map((a) => literal(a));
  return `await ${CREATE_FOLDED_UNIQUE}(knex, ${args.join(', ')});`;
}

/** The statement (outside `alterTable`) dropping the case-insensitive unique index `i` of `table`. */
export function dropFoldedUniqueStatement(table: string, i: DbIndex): string {
  return `await ${DROP_FOLDED_UNIQUE}(knex, ${literal(table)}, ${literal(i.name)});`;
}

/** The runtime functions a migration calls to create and drop a search index (`DbIndex.search`). */
export const CREATE_SEARCH_INDEX = 'createSearchIndex';
export const DROP_SEARCH_INDEX = 'dropSearchIndex';
export const RENAME_SEARCH_INDEX = 'renameSearchIndex';

/** The statement (outside `alterTable`) creating search index `i` of `table`. */
export function createSearchIndexStatement(table: string, i: DbIndex): string {
  return `await ${CREATE_SEARCH_INDEX}(knex, ${literal(table)}, ${literal(i.columns[0])}, ${literal(i.name)});`;
}

/** The statement (outside `alterTable`) dropping search index `i` of `table`. */
export function dropSearchIndexStatement(table: string, i: DbIndex): string {
  return `await ${DROP_SEARCH_INDEX}(knex, ${literal(table)}, ${literal(i.name)});`;
}

/** The runtime functions `createTableStatements(t)` calls. */
export function createTableRuntime(t: DbTable): string[] {
  return [
    ...columnsRuntime(t.columns),
    ...(t.indexes?.some((i) => i.folded) ? [CREATE_FOLDED_UNIQUE] : []),
    ...(t.indexes?.some((i) => i.search) ? [CREATE_SEARCH_INDEX] : []),
  ];
}

/**
 * The Knex statement creating a named index inside `createTable`/`alterTable`. A partial one is a
 * unique index with a predicate (PostgreSQL has no partial unique constraint).
 */
export function indexStatement(i: DbIndex): string {
  if (i.whereNull)
    return `t.unique(${literal(i.columns)}, { indexName: ${literal(i.name)}, predicate: knex.whereNull(${literal(i.whereNull)}) });`;
  return i.unique
    ? `t.unique(${literal(i.columns)}, { indexName: ${literal(i.name)} });`
    : `t.index(${literal(i.columns)}, ${literal(i.name)});`;
}

/** The Knex statement dropping a named index inside `alterTable` (a partial unique index is an index, not a constraint). */
export function dropIndexStatement(i: DbIndex): string {
  return i.unique && !i.whereNull
    ? `t.dropUnique(${literal(i.columns)}, ${literal(i.name)});`
    : `t.dropIndex(${literal(i.columns)}, ${literal(i.name)});`;
}

export function dropTableStatement(t: DbTable): string {
  return `  await knex.schema.dropTableIfExists(${literal(t.name)});`;
}
