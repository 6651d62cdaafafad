/**
 * The Knex a migration runs with on MySQL/MariaDB (`migrationKnex`): Knex's own, whose schema
 * builder writes three statements otherwise than Knex's stock MySQL compiler, so that a migration
 * does on MySQL what it does on PostgreSQL and SQLite:
 * - a unique index over the live rows (`t.unique(columns, { indexName, predicate })`: a partial
 *   index elsewhere, which MySQL lacks, and whose predicate Knex's MySQL compiler leaves out) is a
 *   unique index over its columns and an invisible stored generated column that is 1 where the
 *   predicate holds and NULL elsewhere: NULLs never clash, so deleted rows hold no value. Dropping
 *   the index drops that column;
 * - a text column's default (which Knex's MySQL compiler leaves out) is written as an expression,
 *   `default ('')`, the form MySQL takes on a text column;
 * - dropping an index a foreign key needs (InnoDB looks its rows up with one, and refuses, where
 *   PostgreSQL and SQLite need none) first gives the foreign key an index of its own.
 * Only Knex's public builders are used: the table builder's own methods called in place of those
 * (`specificType`, `unique` over one more column, a `knex.raw` default), the schema builder's
 * `toSQL()` to learn which indexes a statement drops before it runs, and `knex.raw` statements
 * before and after it. Generated migrations, those already on disk too, call Knex's schema builder
 * alone and need no change: the runtime hands them this Knex (`migrationKnex` in migrations.ts).
 */
import * as crypto from 'node:crypto';
import type { Knex } from 'knex';

/** The name of the invisible generated column behind a unique index over live rows. */
export function liveColumnOf(indexName: string): string {
  return `svc_live_${crypto.createHash('sha256').update(indexName).digest('hex').slice(0, 16)}`;
}

/** An index a schema statement drops. */
interface IndexDrop {
  table: string;
  name: string;
}

/** The methods of Knex's schema builder that build a table with a callback `(name, build)`. */
const TABLE_METHODS = new Set<PropertyKey>(['createTable', 'createTableIfNotExists', 'alterTable', 'table']);

/** `knex` (a database or a migration's transaction), its schema builder writing MySQL's statements as above. */
export function migrationKnex(knex: Knex): Knex {
  return new Proxy(knex, {
    get(target, property) {
      if (property === 'schema') return schemaBuilder(target, target.schema);
      return Reflect.get(target, property, target);
    },
  });
}

/**
 * The calls of `target` made through `proxy`: what returns `target` (a builder's chaining) returns
 * `proxy`, so that a chain stays on it.
 */
function forwarded(target: object, proxy: object, property: PropertyKey): unknown {
  const value = Reflect.get(target, property, target);
  if (typeof value !== 'function') return value;
  return (...args: unknown[]) => {
    const out = (value as (...a: unknown[]) => unknown).apply(target, args);
    return out === target ? proxy : out;
  };
}

function schemaBuilder(knex: Knex, builder: Knex.SchemaBuilder): Knex.SchemaBuilder {
  // The indexes its tables drop, recorded by their callbacks each time Knex compiles them.
  const drops: IndexDrop[] = [];
  async function run(): Promise<unknown> {
    drops.length = 0;
    builder.toSQL();
    const dropped = [...new Map(drops.map((d) => [`${d.table}\n${d.name}`, d])).values()];
    for (const drop of dropped) await keepForeignKeyIndexes(knex, drop.table, drop.name);
    const result = await builder;
    for (const drop of dropped) await dropLiveColumn(knex, drop.table, drop.name);
    return result;
  }
  const proxy: Knex.SchemaBuilder = new Proxy(builder, {
    get(target, property) {
      if (TABLE_METHODS.has(property)) {
        return (name: string, build?: (t: Knex.TableBuilder) => void) => {
          const method = Reflect.get(target, property, target) as (name: string, build?: (t: Knex.TableBuilder) => void) => unknown;
          method.call(target, name, build && ((t: Knex.TableBuilder) => build(tableBuilder(knex, name, t, drops))));
          return proxy;
        };
      }
      if (property === 'then')
        return (onFulfilled?: (v: unknown) => unknown, onRejected?: (e: unknown) => unknown) => run().then(onFulfilled, onRejected);
      if (property === 'catch') return (onRejected?: (e: unknown) => unknown) => run().catch(onRejected);
      return forwarded(target, proxy, property);
    },
  });
  return proxy;
}

/** Knex's MySQL text types by the name `t.text(name, textType)` takes. */
function textType(type: string | undefined): string {
  if (type === 'medium' || type === 'mediumtext') return 'mediumtext';
  if (type === 'long' || type === 'longtext') return 'longtext';
  return 'text';
}

/** Knex's name of an unnamed index of `table` over `columns`. */
function defaultIndexName(table: string, type: 'index' | 'unique', columns: string | readonly string[]): string {
  const list = typeof columns === 'string' ? [columns] : columns;
  return `${table.replace(/\.|-/g, '_')}_${list.join('_')}_${type}`.toLowerCase();
}

function tableBuilder(knex: Knex, table: string, builder: Knex.TableBuilder, drops: IndexDrop[]): Knex.TableBuilder {
  const proxy: Knex.TableBuilder = new Proxy(builder, {
    get(target, property) {
      switch (property) {
        case 'unique':
          return (columns: readonly string[], options?: unknown) => {
            const { indexName, predicate, ...rest } = (typeof options === 'object' && options !== null ? options : {}) as {
              indexName?: string;
              predicate?: Knex.QueryBuilder;
            };
            if (!predicate || !indexName) {
              target.unique(columns, options as never);
              return proxy;
            }
            const live = liveColumnOf(indexName);
            target.specificType(live, `tinyint as (case when ${predicateSql(predicate)} then 1 end) stored invisible`);
            target.unique([...columns, live], { ...rest, indexName });
            return proxy;
          };
        case 'dropIndex':
        case 'dropUnique':
          return (columns: string | readonly string[], indexName?: string) => {
            drops.push({ table, name: indexName ?? defaultIndexName(table, property === 'dropIndex' ? 'index' : 'unique', columns) });
            (target[property] as (c: unknown, n?: string) => unknown)(columns, indexName);
            return proxy;
          };
        case 'text':
          // A text column as its type's text (as Knex's `text` writes it), whose default Knex then keeps.
          return (name: string, type?: string) => columnBuilder(knex, target.specificType(name, textType(type)));
        default:
          return forwarded(target, proxy, property);
      }
    },
  });
  return proxy;
}

/** A text column's builder, whose default is written as an expression, `default ('…')`. */
function columnBuilder(knex: Knex, builder: Knex.ColumnBuilder): Knex.ColumnBuilder {
  const proxy: Knex.ColumnBuilder = new Proxy(builder, {
    get(target, property) {
      if (property !== 'defaultTo') return forwarded(target, proxy, property);
      return (value: unknown, options?: Knex.DefaultToOptions) => {
        const expression =
          value === null || value === undefined || (typeof value === 'object' && 'toSQL' in value)
            ? value
            : knex.raw('(?)', [value as Knex.Value]);
        target.defaultTo(expression as Knex.Value, options);
        return proxy;
      };
    },
  });
  return proxy;
}

/** The SQL of a unique index's predicate (`knex.whereNull('deleted_at')`): its WHERE clause, values written in. */
function predicateSql(predicate: Knex.QueryBuilder): string {
  const text = predicate.toQuery();
  const where = /^select \* where (.+)$/is.exec(text);
  if (!where) throw new Error(`a unique index's predicate must be a where clause alone (knex.whereNull(…)), not: ${text}`);
  return where[1];
}

/** After index `name` of `table` was dropped: the generated column of a unique index over live rows, where it had one. */
async function dropLiveColumn(knex: Knex, table: string, name: string): Promise<void> {
  const live = liveColumnOf(name);
  const [[{ n }]] = (await knex.raw(
    'select count(*) as n from information_schema.columns where table_schema = database() and table_name = ? and column_name = ?',
    [table, live],
  )) as [{ n: number }[]];
  if (Number(n) > 0) await knex.raw('alter table ?? drop column ??', [table, live]);
}

/**
 * Before index `indexName` of `table` is dropped: InnoDB refuses to drop the index a foreign key
 * looks its rows up with. So each foreign key of the table whose columns lead this index, and lead
 * no other, gets an index of its own first, named after the constraint (as InnoDB names the one it
 * makes for a foreign key created without an index).
 */
async function keepForeignKeyIndexes(knex: Knex, table: string, indexName: string): Promise<void> {
  const [rows] = (await knex.raw(
    `select 'fk' as kind, constraint_name as name, column_name as col, ordinal_position as pos
       from information_schema.key_column_usage
      where table_schema = database() and table_name = ? and referenced_table_name is not null
     union all
     select 'index', index_name, column_name, seq_in_index
       from information_schema.statistics
      where table_schema = database() and table_name = ?
      order by kind, name, pos`,
    [table, table],
  )) as [{ kind: string; name: string; col: string }[]];
  const group = (kind: string) => {
    const out = new Map<string, string[]>();
    for (const r of rows) if (r.kind === kind) out.set(r.name, [...(out.get(r.name) ?? []), r.col]);
    return out;
  };
  const indexes = group('index');
  const dropped = indexes.get(indexName);
  if (!dropped) return;
  const leads = (index: string[], fk: string[]) => fk.every((c, i) => index[i] === c);
  for (const [fk, cols] of group('fk')) {
    if (!leads(dropped, cols)) continue;
    if ([...indexes].some(([name, index]) => name !== indexName && leads(index, cols))) continue;
    await knex.raw(`alter table ?? add index ?? (${cols.map(() => '??').join(', ')})`, [table, fk, ...cols]);
    indexes.set(fk, cols);
  }
}
