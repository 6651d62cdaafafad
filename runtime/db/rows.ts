/**
 * Loading related records for a page of rows: one query per relation, never one per row.
 */
import type { Knex } from 'knex';
import { dialectOf, selectFixed, type Db } from './connection';
import { databaseOf, type Database } from './database';

/**
 * A row as the database returns it. Generated code names its own row types (an interface per table,
 * column by column) and passes them as the `R` of the functions here, so that a misspelt column
 * fails to compile; a row read under an `R` is what the query selected.
 */
export type Row = Record<string, any>;

/** The names of the columns of rows of type `R`. */
export type ColumnOf<R extends Row> = keyof R & string;

export interface ForeignSpec<T, R extends Row = Row> {
  table: string;
  pk: ColumnOf<R>;
  columns: readonly ColumnOf<R>[];
  shape: (row: R) => T;
}

/** The related rows named by `keys` (nulls skipped, duplicates queried once), by primary key. */
export async function loadForeign<T, R extends Row = Row>(
  db: Db,
  spec: ForeignSpec<T, R>,
  keys: readonly unknown[],
): Promise<Map<unknown, T>> {
  const known = knownRelations.get(db)?.answer(spec, keys);
  if (known) return known as Map<unknown, T>;
  const wanted = [...new Set(keys.filter((k) => k !== null && k !== undefined))];
  const out = new Map<unknown, T>();
  if (wanted.length === 0) return out;
  for (const chunk of chunks(wanted)) {
    const rows = await selectFixed(
      db,
      spec,
      String(chunk.length),
      () => db(spec.table).select(spec.columns).whereIn(spec.pk, chunk),
      chunk,
    );
    for (const row of rows as R[]) out.set(row[spec.pk], spec.shape(row));
  }
  return out;
}

export interface ManyToManySpec<T, R extends Row = Row> extends ForeignSpec<T, R> {
  joinTable: string;
  /** Join-table column that points at the owner. */
  ownColumn: string;
  /** Join-table column that points at the related record. */
  otherColumn: string;
  /** The most related records one owner carries (the first by key); none: all of them. */
  limit?: number;
}

const OWNER = '__owner';

/**
 * For each owner key, its related records, ordered by the related primary key; with `spec.limit`,
 * the first `limit` of them, capped per owner in SQL (`ROW_NUMBER() OVER (PARTITION BY …)`, as
 * `loadReverse`), in the one statement of the page; for one owner, by a plain `LIMIT`.
 */
export async function loadManyToMany<T, R extends Row = Row>(
  db: Db,
  spec: ManyToManySpec<T, R>,
  owners: readonly unknown[],
): Promise<Map<unknown, T[]>> {
  const known = knownRelations.get(db)?.answer(spec, owners);
  if (known) return known as Map<unknown, T[]>;
  const wanted = [...new Set(owners)];
  const out = new Map<unknown, T[]>();
  if (wanted.length === 0) return out;
  const { limit } = spec;
  for (const chunk of chunks(wanted)) {
    const linked = () =>
      db(spec.joinTable)
        .join(spec.table, `${spec.table}.${spec.pk}`, '=', `${spec.joinTable}.${spec.otherColumn}`)
        .select([`${spec.joinTable}.${spec.ownColumn} as ${OWNER}`, ...spec.columns.map((c) => `${spec.table}.${c}`)])
        .whereIn(`${spec.joinTable}.${spec.ownColumn}`, chunk as any[]);
    const query = () => {
      if (limit === undefined)
        return linked().orderBy([{ column: `${spec.joinTable}.${spec.ownColumn}` }, { column: `${spec.table}.${spec.pk}` }]);
      // One owner (a retrieve's): a plain LIMIT caps it, without the window a page needs.
      if (chunk.length === 1) return linked().orderBy(`${spec.table}.${spec.pk}`).limit(limit, { skipBinding: true });
      const ranked = linked().rowNumber(RANK, (window) =>
        window.orderBy(`${spec.table}.${spec.pk}`).partitionBy(`${spec.joinTable}.${spec.ownColumn}`),
      );
      return db
        .select('*')
        .from(ranked.as('ranked'))
        .where(RANK, '<=', limit)
        .orderBy([{ column: OWNER }, { column: RANK }]);
    };
    // The spec's limit is written into the one-owner statement, a binding of the page's.
    const bindings = limit === undefined || chunk.length === 1 ? chunk : [...chunk, limit];
    for (const row of await selectFixed(db, spec, String(chunk.length), query, bindings)) {
      const list = out.get(row[OWNER]) ?? [];
      list.push(spec.shape(row as R));
      out.set(row[OWNER], list);
    }
  }
  return out;
}

/** One relation of `loadRelations`: its spec (a foreign key's or a many-to-many's) and the keys the rows hold (a foreign key's values, or the rows' own keys). */
export type RelationLoad = readonly [spec: ForeignSpec<any, any> | ManyToManySpec<any, any>, keys: readonly unknown[]];

/** What `loadRelations` answers for each relation: as `loadManyToMany` answers a many-to-many one, as `loadForeign` a foreign key. */
export type RelationsLoaded<L extends readonly RelationLoad[]> = {
  -readonly [K in keyof L]: L[K] extends readonly [ManyToManySpec<infer T, any>, readonly unknown[]]
    ? Map<unknown, T[]>
    : L[K] extends readonly [ForeignSpec<infer T, any>, readonly unknown[]]
      ? Map<unknown, T>
      : never;
};

const isManyToMany = (spec: ForeignSpec<any, any>): spec is ManyToManySpec<any, any> => 'joinTable' in spec;

/** Each relation with its own query (`loadForeign`, `loadManyToMany`), the queries run together. */
function eachAlone<L extends readonly RelationLoad[]>(db: Db, loads: L): Promise<RelationsLoaded<L>> {
  return Promise.all(
    loads.map(([spec, keys]) => (isManyToMany(spec) ? loadManyToMany(db, spec, keys) : loadForeign(db, spec, keys))),
  ) as Promise<RelationsLoaded<L>>;
}

/** One row's foreign keys joined (`loadRelations`), its many-to-many relations each with a query of its own. */
async function joinedForeignKeysOnly<L extends readonly RelationLoad[]>(
  db: Db,
  loads: L,
  foreignKeys: number,
): Promise<RelationsLoaded<L>> {
  if (foreignKeys < 2) return await eachAlone(db, loads);
  const foreign = loads.filter(([spec]) => !isManyToMany(spec));
  const [joined, ...many] = await Promise.all([
    loadTogether(db, foreign),
    ...loads.filter(([spec]) => isManyToMany(spec)).map(([spec, keys]) => loadManyToMany(db, spec as ManyToManySpec<any, any>, keys)),
  ]);
  let f = 0;
  let m = 0;
  return loads.map(([spec]) => (isManyToMany(spec) ? many[m++] : joined[f++])) as RelationsLoaded<L>;
}

/**
 * `name` as the engine keeps the names of properties (internalized): a name made at run time, such
 * as `__j0_1`, is otherwise looked up in the engine's string table each time it reads a property.
 */
const propertyName = (name: string): string => Object.keys({ [name]: 0 })[0];

/** One entry: a Map constructed from a list of pairs goes through the iterator protocol. */
function mapOf<K, V>(key: K, value: V): Map<K, V> {
  const map = new Map<K, V>();
  map.set(key, value);
  return map;
}

/** `__j{i}_{n}`: the name in a joined row of column `n` of the relation at index `i`, made once. */
const aliasNames: string[][] = [];
const aliasOf = (i: number, n: number): string => ((aliasNames[i] ??= [])[n] ??= propertyName(`__j${i}_${n}`));

/** A number for each spec `loadRelations` joins, naming the statement of each set of specs. */
const specIds = new WeakMap<object, number>();
let specCount = 0;
const specId = (spec: object) => {
  let id = specIds.get(spec);
  if (id === undefined) specIds.set(spec, (id = ++specCount));
  return id;
};

/**
 * The related records of several relations of the same rows, as `loadForeign` and `loadManyToMany`
 * answer each. For one row (a retrieve, the answer of a write) one statement reads them all: from
 * a one-row source, each related table LEFT JOINed on its key, and, where the database is a server
 * (`joinsManyToMany`), one many-to-many relation through its join table (a row per related record,
 * the others repeated on each): a round trip instead of one per relation. A page of rows, or a
 * second many-to-many relation, is one query per relation.
 *
 * The relations already known are not read again: those of the row `rows` holds when the statement
 * that read it read them too (`relationsJoin`), and those `withKnownRelations` gives.
 */
export async function loadRelations<const L extends readonly RelationLoad[]>(
  db: Db,
  loads: L,
  rows?: readonly Row[],
): Promise<RelationsLoaded<L>> {
  const known = knownRelations.get(db) ?? (rows?.length === 1 ? (rows[0] as ReadRow)[READ_WITH] : undefined);
  // `return await`: an async function that returns another's promise settles its own two turns later.
  if (!known) return await loadTogether(db, loads);
  const answers: (Map<unknown, unknown> | undefined)[] = loads.map(([spec, keys]) => known.answer(spec, keys));
  const unknown = loads.filter((_, i) => answers[i] === undefined);
  if (unknown.length > 0) {
    const loaded = await loadTogether(db, unknown);
    let next = 0;
    for (let i = 0; i < answers.length; i++) answers[i] ??= loaded[next++] as Map<unknown, unknown>;
  }
  return answers as RelationsLoaded<L>;
}

/** `loadRelations` of relations none of which is known. */
async function loadTogether<const L extends readonly RelationLoad[]>(db: Db, loads: L): Promise<RelationsLoaded<L>> {
  const only: unknown[] = [];
  let present = 0;
  let many = 0;
  for (const [spec, keys] of loads) {
    let key: unknown;
    for (const k of keys) {
      if (k === null || k === undefined || k === key) continue;
      if (key !== undefined) return await eachAlone(db, loads);
      key = k;
    }
    only.push(key);
    if (key === undefined) continue;
    present++;
    if (isManyToMany(spec)) many++;
    if (!spec.columns.includes(spec.pk)) return await eachAlone(db, loads);
  }
  if (many > 0 && !dialectOf(db).joinsManyToMany) return await joinedForeignKeysOnly(db, loads, present - many);
  if (present < 2 || many > 1) return await eachAlone(db, loads);
  const joined = loads.flatMap(([spec], i) => (only[i] === undefined ? [] : [{ spec, key: only[i], alias: `__j${i}`, index: i }]));
  const build = () => {
    const query = db.select(
      joined.flatMap(({ spec, alias, index }) => spec.columns.map((c: string, n: number) => `${alias}.${c} as ${aliasOf(index, n)}`)),
    );
    query.from(db.raw('(select 1 as ??) as ??', ['__one', '__keys']));
    for (const { spec, key, alias } of joined) {
      const value = db.raw('?', [key as Knex.Value]);
      if (!isManyToMany(spec)) {
        query.leftJoin(`${spec.table} as ${alias}`, (on) => on.on(`${alias}.${spec.pk}`, '=', value));
        continue;
      }
      const link = `${alias}_link`;
      query.leftJoin(`${spec.joinTable} as ${link}`, (on) => on.on(`${link}.${spec.ownColumn}`, '=', value));
      query.leftJoin(`${spec.table} as ${alias}`, `${alias}.${spec.pk}`, `${link}.${spec.otherColumn}`);
      query.orderBy(`${alias}.${spec.pk}`);
    }
    return query;
  };
  const rows = await selectFixed(
    db,
    joined[0].spec,
    `with ${joined.map((j) => specId(j.spec)).join(',')}`,
    build,
    joined.map((j) => j.key),
  );
  return loads.map(([spec], i) => {
    const out = new Map<unknown, unknown>();
    if (only[i] === undefined) return out;
    const keyAt = aliasOf(i, spec.columns.indexOf(spec.pk));
    const records: unknown[] = [];
    for (const row of isManyToMany(spec) ? rows : rows.slice(0, 1)) {
      if (row[keyAt] === null || row[keyAt] === undefined) continue;
      const related: Row = {};
      spec.columns.forEach((c: string, n: number) => (related[c] = row[aliasOf(i, n)]));
      if (!isManyToMany(spec)) out.set(related[spec.pk], spec.shape(related));
      // A many-to-many relation's first `limit` records (ordered by key): the rest are left out.
      else if (spec.limit === undefined || records.length < spec.limit) records.push(spec.shape(related));
    }
    if (records.length > 0) out.set(only[i], records);
    return out;
  }) as RelationsLoaded<L>;
}

/**
 * A reverse relation: the rows of `table` (the children) whose foreign key `owner` points at the
 * parent, or (`through`) that a many-to-many join table links to it.
 */
export interface ReverseSpec<T, R extends Row = Row> extends ForeignSpec<T, R> {
  /** The children's column holding the parent's key (a foreign key); unused with `through`. */
  owner?: ColumnOf<R>;
  /** A many-to-many relation of the children: its join table, the column of the child, the column of the parent. */
  through?: { table: string; childColumn: string; parentColumn: string };
  /** The children's order within one parent (their default ordering, then the key). */
  ordering: readonly { column: ColumnOf<R>; order: 'asc' | 'desc' }[];
  /** The most children one parent carries. */
  limit: number;
  /** A soft delete's column: children with a value in it are left out. */
  deletedColumn?: ColumnOf<R>;
}

const RANK = '__rank';

/**
 * For each parent key, its children in `spec.ordering`, at most `spec.limit` of them: one statement
 * for a page of parents, the cap applied per parent in SQL (`ROW_NUMBER() OVER (PARTITION BY …)`,
 * SQLite ≥ 3.25, PostgreSQL, MySQL 8, MariaDB ≥ 10.2), never a query per parent.
 */
export async function loadReverse<T, R extends Row = Row>(
  db: Db,
  spec: ReverseSpec<T, R>,
  owners: readonly unknown[],
): Promise<Map<unknown, T[]>> {
  const known = knownRelations.get(db)?.answer(spec, owners);
  if (known) return known as Map<unknown, T[]>;
  const wanted = [...new Set(owners)];
  const out = new Map<unknown, T[]>();
  if (wanted.length === 0) return out;
  const ownerColumn = spec.through ? `${spec.through.table}.${spec.through.parentColumn}` : `${spec.table}.${spec.owner!}`;
  for (const chunk of chunks(wanted)) {
    const query = () => {
      const ranked = db(spec.table)
        .select([...spec.columns.map((c) => `${spec.table}.${c}`), `${ownerColumn} as ${OWNER}`])
        .rowNumber(RANK, (window) =>
          window.orderBy(spec.ordering.map((o) => ({ column: `${spec.table}.${o.column}`, order: o.order }))).partitionBy(ownerColumn),
        )
        .whereIn(ownerColumn, chunk as any[]);
      if (spec.through)
        ranked.join(spec.through.table, `${spec.through.table}.${spec.through.childColumn}`, '=', `${spec.table}.${spec.pk}`);
      if (spec.deletedColumn) ranked.whereNull(`${spec.table}.${spec.deletedColumn}`);
      return db
        .select('*')
        .from(ranked.as('ranked'))
        .where(RANK, '<=', spec.limit)
        .orderBy([{ column: OWNER }, { column: RANK }]);
    };
    for (const row of await selectFixed(db, spec, String(chunk.length), query, [...chunk, spec.limit])) {
      const list = out.get(row[OWNER]) ?? [];
      list.push(spec.shape(row as R));
      out.set(row[OWNER], list);
    }
  }
  return out;
}

/**
 * The relations a representation nests, as a create's insert reads them with the row it writes
 * (context.ts `insertRow`): each foreign key's related record, by the column of the row holding its
 * key, and the relations that list what refers to the row (many-to-many, reverse), which a row just
 * inserted has none of: what refers to a row (a join table's link, a child's foreign key) can only
 * be written after it, and the constraints keep rows from referring to one that is not there.
 */
export interface StateRelations<R extends Row = Row> {
  foreign: readonly (readonly [spec: ForeignSpec<any, any>, column: ColumnOf<R>])[];
  children: readonly (ManyToManySpec<any, any> | ReverseSpec<any, any>)[];
}

/** The relations of one row, read with it: what `loadForeign`, `loadManyToMany`, `loadReverse` and `loadRelations` answer for them. */
export class KnownRelations {
  constructor(
    /** The row's key: its children are looked up by it. */
    private readonly key: unknown,
    /** Each foreign key's related record, shaped, by the spec and then the key. */
    private readonly foreign: ReadonlyMap<object, ReadonlyMap<unknown, unknown>>,
    /** The row's children, shaped, by the spec of their relation (none: an empty list). */
    private readonly children: ReadonlyMap<object, readonly unknown[]>,
  ) {}

  /** What a load of `spec` for `keys` answers, or undefined when it is not known. */
  answer(spec: object, keys: readonly unknown[]): Map<unknown, unknown> | undefined {
    const records = this.foreign.get(spec);
    if (records) {
      const out = new Map<unknown, unknown>();
      for (const key of keys) {
        if (key === null || key === undefined) continue;
        if (!records.has(key)) return undefined;
        out.set(key, records.get(key));
      }
      return out;
    }
    const children = this.children.get(spec);
    if (!children || !keys.every((key) => key === this.key)) return undefined;
    return children.length > 0 && keys.length > 0 ? mapOf(this.key, children) : new Map();
  }
}

/**
 * The key under which a row carries the relations the statement that read it read too
 * (`relationsJoin`): a symbol, which no column, JSON or enumeration of its columns sees.
 */
const READ_WITH: unique symbol = Symbol('relations read with the row');
type ReadRow = Row & { [READ_WITH]?: KnownRelations };

/** Per database (a transaction), the relations known while a row read with them is shaped (`withKnownRelations`). */
const knownRelations = new WeakMap<Db, KnownRelations>();

/** Runs `shape` on `db` with the relations `known` answering the loads they cover, without a query. */
export async function withKnownRelations<T>(db: Db, known: KnownRelations, shape: () => Promise<T>): Promise<T> {
  knownRelations.set(db, known);
  try {
    return await shape();
  } finally {
    knownRelations.delete(db);
  }
}

/**
 * The expressions an insert's RETURNING adds to read the related records of the foreign keys of
 * `relations` beside the row it writes into `table`, and the reading of them off the returned row.
 */
export interface RelatedColumns {
  /** `(select r.c from t as r where r.pk = table.fk) as __r{i}_{n}`, for column n of relation i, joined by commas. */
  sql: string;
  /**
   * The row with key `key` the statement returned, without the added columns, and the relations
   * they hold: none when a foreign key's value names no record, which the constraint rules out (its
   * relations are then read as those of any other row).
   */
  read(returned: Row, key: unknown): { row: Row; known: KnownRelations | undefined };
}

/** Per database, per `StateRelations` and table, the columns of `relatedColumns`, made once. */
const relatedColumnsMade = new WeakMap<Database, WeakMap<StateRelations<any>, Map<string, RelatedColumns>>>();

/** The columns of `relations`' foreign keys an insert into `table` returns (`RelatedColumns`), made once per database. */
export function relatedColumns(db: Db, table: string, relations: StateRelations<any>): RelatedColumns {
  const database = databaseOf(db);
  let byRelations = relatedColumnsMade.get(database);
  if (!byRelations) relatedColumnsMade.set(database, (byRelations = new WeakMap()));
  let byTable = byRelations.get(relations);
  if (!byTable) byRelations.set(relations, (byTable = new Map()));
  let made = byTable.get(table);
  if (!made) byTable.set(table, (made = makeRelatedColumns(db, table, relations)));
  return made;
}

function makeRelatedColumns(db: Db, table: string, relations: StateRelations<any>): RelatedColumns {
  const id = (name: string) => db.raw('??', [name]).toQuery();
  const foreign = relations.foreign.map(([spec, column], i) => {
    // The related table under an alias of its own: it may be the table written (a self-reference).
    const alias = `__r${i}`;
    const columns = spec.columns.includes(spec.pk) ? spec.columns : [...spec.columns, spec.pk];
    const names = columns.map((_, n) => `__r${i}_${n}`);
    const where = `${id(`${alias}.${spec.pk}`)} = ${id(`${table}.${column}`)}`;
    const sql = columns.map(
      (c, n) => `(select ${id(`${alias}.${c}`)} from ${id(spec.table)} as ${id(alias)} where ${where}) as ${id(names[n])}`,
    );
    return { spec, column, columns, names, sql };
  });
  const children = new Map<object, readonly unknown[]>(relations.children.map((spec) => [spec, []]));
  const added = new Set(foreign.flatMap((f) => f.names));
  return {
    sql: foreign.flatMap((f) => f.sql).join(', '),
    read(returned, key) {
      const row: Row = {};
      for (const name in returned) if (!added.has(name)) row[name] = returned[name];
      const records = new Map<object, Map<unknown, unknown>>();
      let consistent = true;
      for (const f of foreign) {
        // A key left null names no record: its load answers none.
        if (row[f.column] === null || row[f.column] === undefined) {
          records.set(f.spec, new Map());
          continue;
        }
        const related: Row = {};
        f.columns.forEach((c, n) => (related[c] = returned[f.names[n]]));
        const found = related[f.spec.pk];
        if (found === null || found === undefined) consistent = false;
        else records.set(f.spec, mapOf(found, f.spec.shape(related)));
      }
      return { row, known: consistent ? new KnownRelations(key, records, children) : undefined };
    },
  };
}

/**
 * How a retrieve reads its row and the related records of its representation in one statement
 * (`selectAround`). The row's own SELECT, as hooks narrowed it, is a derived table: its names stay
 * its own, and, as it only filters rows by their key (no LIMIT), the databases flatten it into the
 * statement. Each foreign key's related table is LEFT JOINed on its key and, where the database is
 * a server (`joinsManyToMany`), so is the first many-to-many relation, through its join table (a
 * row per related record, ordered by its key as `loadManyToMany` orders them). What it does not
 * join (a reverse relation, a second many-to-many one, one on SQLite) is loaded as for any row.
 */
export interface RelationsJoin {
  /** The statement around the row's SELECT, whose SQL text is `sql`. */
  around(sql: string): string;
  /**
   * The row the statement's rows hold (undefined when they are none): its columns, and the related
   * records' under names of their own (`__r0_1`), which its representation does not read. Its
   * relations are known to the `loadRelations` that shapes it; not when a foreign key's value names
   * no record, which the constraint rules out (its relations are then read as for any other row).
   */
  read(rows: readonly Row[]): Row | undefined;
}

/** Per database, per `StateRelations` and list of the row's columns, the join of `relationsJoin`, made once (null: none). */
const relationsJoins = new WeakMap<Database, WeakMap<StateRelations<any>, WeakMap<readonly string[], RelationsJoin | null>>>();

/**
 * The join reading the row of key column `pk` with `columns` and the relations of `relations`
 * (`RelationsJoin`), made once per database; undefined when there is nothing to join, or a column
 * is not a plain name.
 */
export function relationsJoin(db: Db, pk: string, columns: readonly string[], relations: StateRelations<any>): RelationsJoin | undefined {
  const database = databaseOf(db);
  let byRelations = relationsJoins.get(database);
  if (!byRelations) relationsJoins.set(database, (byRelations = new WeakMap()));
  let byColumns = byRelations.get(relations);
  if (!byColumns) byRelations.set(relations, (byColumns = new WeakMap()));
  let made = byColumns.get(columns);
  if (made === undefined) byColumns.set(columns, (made = makeRelationsJoin(db, pk, columns, relations)));
  return made ?? undefined;
}

const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function makeRelationsJoin(db: Db, pk: string, columns: readonly string[], relations: StateRelations<any>): RelationsJoin | null {
  if (!columns.includes(pk) || !columns.every((c) => PLAIN_NAME.test(c))) return null;
  const id = (name: string) => db.raw('??', [name]).toQuery();
  const row = id('__row');
  // Each related table under an alias of its own: it may be the row's own table (a self-reference).
  const joined = (spec: ForeignSpec<any>, alias: string) => {
    const related = spec.columns.includes(spec.pk) ? spec.columns : [...spec.columns, spec.pk];
    const names = related.map((_, n) => propertyName(`${alias}_${n}`));
    return {
      spec,
      related,
      names,
      key: names[related.indexOf(spec.pk)],
      select: related.map((c, n) => `${id(`${alias}.${c}`)} as ${id(names[n])}`),
    };
  };
  const foreign = relations.foreign
    .filter(([, column]) => columns.includes(column))
    .map(([spec, column], i) => ({
      ...joined(spec, `__r${i}`),
      column,
      join: `left join ${id(spec.table)} as ${id(`__r${i}`)} on ${id(`__r${i}.${spec.pk}`)} = ${row}.${id(column)}`,
    }));
  const spec = dialectOf(db).joinsManyToMany ? relations.children.find(isManyToMany) : undefined;
  const many = spec && {
    ...joined(spec, '__m'),
    join:
      `left join ${id(spec.joinTable)} as ${id('__m_link')} on ${id(`__m_link.${spec.ownColumn}`)} = ${row}.${id(pk)} ` +
      `left join ${id(spec.table)} as ${id('__m')} on ${id(`__m.${spec.pk}`)} = ${id(`__m_link.${spec.otherColumn}`)} order by ${id(`__m.${spec.pk}`)}`,
  };
  if (foreign.length === 0 && !many) return null;
  // The row's columns by name, not `*`: SQLite's reads make the rows of a statement whose columns its text names with one call each.
  const select = [...columns.map((c) => `${row}.${id(c)}`), ...foreign.flatMap((f) => f.select), ...(many?.select ?? [])].join(', ');
  const head = `select ${select} from (`;
  const tail = `) as ${row} ${[...foreign.map((f) => f.join), ...(many ? [many.join] : [])].join(' ')}`;
  const relatedOf = (j: { related: readonly string[]; names: readonly string[] }, at: Row) => {
    const related: Row = {};
    for (let n = 0; n < j.related.length; n++) related[j.related[n]] = at[j.names[n]];
    return related;
  };
  return {
    around: (sql) => head + sql + tail,
    read(rows) {
      if (rows.length === 0) return undefined;
      const row = rows[0];
      const records = new Map<object, Map<unknown, unknown>>();
      for (const f of foreign) {
        // A key left null names no record: its load answers none.
        if (row[f.column] === null || row[f.column] === undefined) {
          records.set(f.spec, new Map());
          continue;
        }
        const found = row[f.key];
        if (found === null || found === undefined) return row;
        records.set(f.spec, mapOf(found, f.spec.shape(relatedOf(f, row))));
      }
      const children = new Map<object, unknown[]>();
      if (many) {
        const list: unknown[] = [];
        for (const at of rows) if (at[many.key] !== null && at[many.key] !== undefined) list.push(many.spec.shape(relatedOf(many, at)));
        children.set(many.spec, list);
      }
      (row as ReadRow)[READ_WITH] = new KnownRelations(row[pk], records, children);
      return row;
    },
  };
}

const EXISTS = {};

/** Whether a row with this primary key exists. */
export async function exists(db: Db, table: string, pk: string, value: unknown): Promise<boolean> {
  const rows = await selectFixed(
    db,
    EXISTS,
    `${table} ${pk}`,
    () =>
      db(table)
        .select(pk)
        .where(pk, value as any)
        .limit(1, { skipBinding: true }),
    [value],
  );
  return rows.length > 0;
}

/** The keys among `values` that have no row in `table`. */
export async function missingKeys(db: Db, table: string, pk: string, values: readonly unknown[]): Promise<unknown[]> {
  const wanted = [...new Set(values)];
  const found = new Set<unknown>();
  for (const chunk of chunks(wanted)) {
    const rows: Row[] = await db(table)
      .select(pk)
      .whereIn(pk, chunk as any[]);
    for (const row of rows) found.add(row[pk]);
  }
  return wanted.filter((v) => !found.has(v));
}

/** Replaces the related keys of one owner in a join table. */
export async function setRelated(
  db: Db,
  joinTable: string,
  ownColumn: string,
  otherColumn: string,
  owner: unknown,
  keys: readonly unknown[],
): Promise<void> {
  await db(joinTable)
    .where(ownColumn, owner as any)
    .delete();
  const unique = [...new Set(keys)];
  // SQLite's multi-row insert is a compound SELECT, limited to 500 terms.
  for (const chunk of chunks(unique, 200)) {
    await db(joinTable).insert(chunk.map((k) => ({ [ownColumn]: owner, [otherColumn]: k })));
  }
}

/** SQLite limits bound parameters per statement; 500 keeps well below every limit. */
export function* chunks<T>(values: readonly T[], size = 500): Generator<T[]> {
  for (let i = 0; i < values.length; i += size) yield values.slice(i, i + size);
}

/** The related record a required foreign key points at (the constraint guarantees it exists). */
export function related<T>(map: ReadonlyMap<unknown, T>, key: unknown): T {
  const value = map.get(key);
  if (value === undefined) throw new Error(`related row ${String(key)} is missing`);
  return value;
}

/**
 * The shape function (`shape<Schema>(db, rows)`, as routes and `?expand=` call it) of a
 * representation read from the row alone: each row mapped by `shape`; the database is not used.
 */
export function shapeRows<R extends Row, T>(shape: (row: R) => T): (db: Db, rows: readonly R[]) => Promise<T[]> {
  return async (_db, rows) => rows.map(shape);
}

/** The row without keys whose value is undefined, so the database applies its defaults to them. */
export function withoutUndefined<R extends Row = Row>(row: { [C in keyof R]?: R[C] | undefined }): Partial<R> {
  const out: Row = {};
  for (const [key, value] of Object.entries(row)) if (value !== undefined) out[key] = value;
  return out as Partial<R>;
}
