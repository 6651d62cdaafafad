/**
 * Small helpers for the HTTP suites: rows written straight to the database, tokens, and a query
 * counter. Everything goes through the real database of a running test service.
 */
import type { Knex } from 'knex';
import type { RunningService } from './services';
import { insertReturning } from '../../runtime/db/inserts';

/** An ISO 8601 datetime in UTC as the service renders it. */
export const ISO_DATETIME = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
/** A UUID in its canonical lowercase form. */
export const UUID = expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);

let userSeq = 0;

export interface TestUser {
  id: number;
  username: string;
  token: string;
  /** `Authorization` header value. */
  bearer: string;
}

/** A user row inserted directly (blog only), with an access token for it. */
export async function createUser(
  svc: RunningService,
  options: { username?: string; is_staff?: boolean; is_active?: boolean; first_name?: string; last_name?: string } = {},
): Promise<TestUser> {
  userSeq += 1;
  const username = options.username ?? `user${process.pid}_${userSeq}`;
  const user = {
    username,
    email: `${username}@example.com`,
    password: 'not-a-real-hash',
    first_name: options.first_name ?? '',
    last_name: options.last_name ?? '',
    is_staff: options.is_staff ?? false,
    is_active: options.is_active ?? true,
    date_joined: new Date().toISOString(),
  };
  const [row] = await insertReturning(svc.database.db, svc.database.db('users').insert(user), user, ['id']);
  const id = Number(row.id);
  const token = await svc.context.tokens.issueAccess(id);
  return { id, username, token, bearer: `Bearer ${token}` };
}

/** Inserts rows and returns their primary keys in insertion order. */
export async function insertRows(db: Knex, table: string, rows: Record<string, unknown>[], pk = 'id'): Promise<unknown[]> {
  const keys: unknown[] = [];
  for (const row of rows) {
    const [out] = await insertReturning(db, db(table).insert(row), row, [pk]);
    keys.push(out[pk]);
  }
  return keys;
}

/** A blog article inserted directly (published unless told otherwise). */
export async function insertArticle(db: Knex, values: Record<string, unknown> & { author_id: number }): Promise<number> {
  const [id] = await insertRows(db, 'articles', [
    { title: 'Title', content: 'Content', summary: '', is_published: true, views: 0, created_at: '2026-01-01T00:00:00.000Z', ...values },
  ]);
  return Number(id);
}

/** A showcase widget inserted directly with its defaults. */
export async function insertWidget(db: Knex, values: Record<string, unknown> & { name: string }): Promise<number> {
  const ts = '2026-01-01T00:00:00.000Z';
  const [id] = await insertRows(db, 'widgets', [{ created_at: ts, updated_at: ts, ...values }]);
  return Number(id);
}

/** The SQL statements `fn` sends through `db` (transactions included). */
export async function countQueries(db: Knex, fn: () => Promise<unknown>): Promise<number> {
  let n = 0;
  const listener = () => {
    n += 1;
  };
  // Behind a transaction pooler, the database's first named read that meets another server
  // connection fails once (26000, 42P05) and runs again unnamed (dialects/postgres-reads.ts): a
  // one-time discovery of the pooler, not a statement of the operation.
  const discovery = (err: unknown) => {
    const code = (err as { code?: unknown } | undefined)?.code;
    if (code === '26000' || code === '42P05') n -= 1;
  };
  db.on('query', listener);
  db.on('query-error', discovery);
  try {
    await fn();
  } finally {
    db.removeListener('query', listener);
    db.removeListener('query-error', discovery);
  }
  return n;
}

/** The unhandled errors the service logged since the last call (and forgets them). */
export function takeErrors(svc: RunningService): string[] {
  return svc.errors.splice(0).map((e) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e)));
}
