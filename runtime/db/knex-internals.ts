/**
 * Every part of Knex the runtime reads that is not Knex's typed, documented API: private fields of
 * its query builder, its dialect classes under `knex/lib`, its client's way of handing out a
 * connection. Each assumption is named here, once, and checked
 * against the installed Knex by `test/runtime/knex-internals.test.ts`, so that an upgrade which
 * breaks one fails a test that names it and this file. The rest of the runtime reaches Knex's
 * internals only through what this module exports.
 */
import { createRequire } from 'node:module';
import type { Knex } from 'knex';

const requireKnex = createRequire(__filename);

/* -------------------------------------------------------------------------- MySQL classes */

/** What Knex's MySQL client hands `processResponse`: the compiled query, the driver's `[rows, fields]`. */
export interface MysqlClientQuery {
  sql: string;
  method?: string;
  output?: unknown;
  response?: [unknown, unknown];
  /** Set by the runtime's MySQL query compiler on an insert with `returning` (see mysql-client.ts). */
  returning?: { column: string; values: readonly Record<string, unknown>[] };
  /** Set by the runtime's MySQL query compiler on an insert it wrote RETURNING into (MariaDB). */
  returningRows?: boolean;
}

/**
 * Assumption "mysql2 client": `knex/lib/dialects/mysql2` exports Knex's client class for mysql2 (the
 * one `client: 'mysql2'` makes). It makes each query's compiler with `queryCompiler(builder,
 * formatter)`, each schema statement's with `tableCompiler(tableBuilder)` and
 * `columnCompiler(tableBuilder, columnBuilder)`, and reads a statement's result with
 * `processResponse(obj, runner)`, where `obj.response` is mysql2's `[rows, fields]`; an insert's
 * rows are the driver's result header (`insertId`, `affectedRows`).
 */
export const Mysql2Client = requireKnex('knex/lib/dialects/mysql2') as new (config: Knex.Config) => {
  readonly config: Knex.Config;
  queryCompiler(builder: unknown, formatter: unknown): unknown;
  tableCompiler(tableBuilder: unknown): unknown;
  columnCompiler(tableBuilder: unknown, columnBuilder: unknown): unknown;
  processResponse(obj: MysqlClientQuery, runner: unknown): unknown;
};

/**
 * Assumption "MySQL compilers": `knex/lib/dialects/mysql/{query/mysql-querycompiler,
 * schema/mysql-tablecompiler, schema/mysql-columncompiler}` export Knex's MySQL compilers, made with
 * `(client, builder, formatter)`, `(client, tableBuilder)` and `(client, tableBuilder,
 * columnBuilder)`. The query compiler keeps the builder's `_single` as `single` (`insert`,
 * `returning`), compiles an insert with `insert()` and warns from `_returningCheck()` that MySQL
 * has no RETURNING. The table compiler writes SQL with `pushQuery(sql | {sql, output})`
 * (an `output(rows)` runs with the runner as `this` and the statement's rows, which runs more SQL with
 * `query({sql, bindings})`), names the table with `tableName()` and quotes with `formatter`; its
 * `unique(columns, {indexName, predicate})` and `dropIndex(columns, name)` write an index's SQL. The
 * column compiler writes a column's default with `defaultTo(value)`, '' for a text column.
 */
export const MysqlQueryCompiler = requireKnex('knex/lib/dialects/mysql/query/mysql-querycompiler') as new (...args: unknown[]) => {
  single: Record<string, unknown>;
  client: unknown;
  insert(): string | { sql: string };
  _returningCheck(): void;
};
export const MysqlTableCompiler = requireKnex('knex/lib/dialects/mysql/schema/mysql-tablecompiler') as new (...args: unknown[]) => {
  single: Record<string, unknown>;
  client: unknown;
  formatter: { wrap(name: string): string; columnize(columns: unknown): string };
  tableNameRaw: string;
  tableName(): string;
  pushQuery(query: string | { sql: string; bindings?: unknown[]; output?: (this: MysqlRunner, response: unknown) => unknown }): void;
  unique(columns: string[], options?: unknown): void;
  dropIndex(columns: string[], indexName?: string): void;
  index(columns: string[], indexName?: unknown, options?: unknown): void;
  _indexCommand(type: string, table: string, columns: string[]): string;
};
export const MysqlColumnCompiler = requireKnex('knex/lib/dialects/mysql/schema/mysql-columncompiler') as new (...args: unknown[]) => {
  defaultTo(value: unknown, ...rest: unknown[]): string | undefined;
};

/** The runner a schema statement's `output` runs with (see "MySQL compilers"). */
export interface MysqlRunner {
  query(query: { sql: string; bindings?: unknown[]; output?: (response: unknown) => unknown }): Promise<unknown>;
}
