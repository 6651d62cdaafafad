/**
 * Inserts that answer columns of the rows they insert, the same on every database: the insert is
 * built without Knex's `returning` and handed to its dialect (`returning`), which writes RETURNING
 * where Knex's compiler does (PostgreSQL, SQLite) and otherwise answers the columns itself (MySQL:
 * MariaDB's `INSERT … RETURNING`, MySQL's result header); `writeReturning` runs it.
 */
import type { Knex } from 'knex';
import { dialectOf, writeReturning, type Db } from './connection';

type Row = Record<string, any>;

/**
 * The `columns` of the rows `query`, an insert of `rows` built on `db` without `returning`, inserts
 * (none of a row an `onConflict(…).ignore()` skipped). On MySQL only the generated key, or a column
 * `rows` give, can be answered.
 */
export function insertReturning(db: Db, query: Knex.QueryBuilder, rows: Row | readonly Row[], columns: readonly string[]): Promise<Row[]> {
  return writeReturning(db, dialectOf(db).returning(query, rows, columns));
}
