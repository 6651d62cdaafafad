/**
 * What a query Knex built says, read from the SQL text it compiles (`toSQL()`): Knex has no public
 * API that lists a builder's clauses, and its compiled text is what the database runs. A small
 * scanner, not an SQL parser: it only tells the query's own (top-level) clauses from what its
 * parentheses and quotes hold, and answers "no" whenever the text is not one it recognizes.
 */
import type { Knex } from 'knex';

/**
 * `sql` with what its quotes hold replaced by `x`, and what its parentheses hold by `_` (their
 * placeholders `?` kept): the same length, so a position in it is a position in `sql`, and every
 * word left in it is one of the statement's own.
 */
export function topLevel(sql: string): string {
  let out = '';
  let depth = 0;
  let quote = '';
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i];
    if (quote) {
      if (c === quote) {
        if (sql[i + 1] === quote) {
          out += depth > 0 ? '__' : 'xx';
          i++;
          continue;
        }
        quote = '';
        out += depth > 0 ? '_' : c;
      } else out += depth > 0 ? '_' : 'x';
      continue;
    }
    if (c === '"' || c === '`' || c === "'") {
      quote = c;
      out += depth > 0 ? '_' : c;
      continue;
    }
    if (c === '(') depth++;
    else if (c === ')') depth = Math.max(0, depth - 1);
    out += depth > 0 && c !== '?' && !(c === '(' && depth === 1) ? '_' : c;
  }
  return out;
}

/** Clauses after which a query no longer answers each row of its table once, as it is. */
const NOT_A_FILTER =
  / (join|group by|having|order by|limit|offset|union|intersect|except|window|for update|for share|for no key update|for key share|lock in share mode) /i;

/**
 * Whether a query only filters the rows of its table: `select * from <table> [where …]`, with no
 * join, grouping, order, limit, offset, set operation or lock of its own (a subquery in a condition
 * may have any). Each row it answers is then a row of its table, answered once.
 */
export function onlyFilters(query: Knex.QueryBuilder): boolean {
  const text = topLevel(query.toSQL().sql);
  if (!/^select \* from (only )?[^ ]+( where |$)/i.test(text)) return false;
  return !NOT_A_FILTER.test(`${text} `);
}

/** Where the query's own WHERE clause ends: at its first clause of another kind, or at the end. */
const AFTER_WHERE = / (group by|having|order by|limit|offset|union|intersect|except|window|for|lock in share mode) /i;

/**
 * Whether the query already requires `column <operator> value` in a condition AND-ed at its top
 * level (with an OR at the top level, nothing is assumed): the condition as Knex writes it for
 * this client, text and bound values alike.
 */
export function requires(query: Knex.QueryBuilder, column: string, operator: string, value: Knex.Value): boolean {
  const { sql, bindings } = query.toSQL();
  const text = topLevel(sql);
  const where = text.indexOf(' where ');
  if (where < 0) return false;
  const after = AFTER_WHERE.exec(`${text.slice(where + 7)} `);
  const end = after ? where + 7 + after.index : text.length;
  const clause = text.slice(where + 7, end);
  if (/ or /i.test(clause)) return false;
  const probe = query.client.queryBuilder().where(column, operator, value).toSQL();
  const prefix = 'select * where ';
  if (!probe.sql.startsWith(prefix)) return false;
  const wanted = probe.sql.slice(prefix.length);
  let start = where + 7;
  for (const part of clause.split(/ and /i)) {
    if (sql.slice(start, start + part.length) === wanted) {
      const first = (text.slice(0, start).match(/\?/g) ?? []).length;
      if (probe.bindings.every((b, i) => bindings[first + i] === b)) return true;
    }
    start += part.length + 5;
  }
  return false;
}
