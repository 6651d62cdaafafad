/**
 * PostgreSQL's reads outside transactions (dialects/postgres-reads.ts, named through Knex's `.options({ name })`) on a real server: each SQL
 * text is prepared once per connection under a name, and answers for new bindings; when the
 * connection no longer has the statement (as behind a transaction pooler that sends it to another
 * server connection), the read answers the same rows, and later reads are unnamed;
 * `SVC_PG_PREPARED_STATEMENTS=unnamed` names nothing. Reads run one at a time here, so the pool keeps
 * one connection and `pg_prepared_statements` (a session's own) shows that connection's statements.
 */
import { ConfigurationError, connect, type Db } from '../../runtime';
import { loadPostgresSettings } from '../../runtime/core/settings';
import { selectRows } from '../../runtime/db/connection';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';

const onPostgres = DIALECTS.includes('postgres') ? describe : describe.skip;

onPostgres('PostgreSQL reads outside transactions', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createDatabase('postgres');
    await database.db.schema.createTable('items', (t) => {
      t.increments('id');
      t.string('name').notNullable();
    });
    await database.db('items').insert([{ name: 'one' }, { name: 'two' }]);
  });
  afterAll(() => database.drop());

  const nameOf = async (db: Db, id: number) => (await selectRows(db, db('items').select('name').where('id', id))).map((r) => r.name);
  const prepared = async (db: Db) =>
    ((await db.raw("select statement from pg_prepared_statements where statement like '%items%'")).rows as { statement: string }[]).map(
      (r) => r.statement,
    );

  /** A second service on the test database, with `env` as its environment's prepared-statement setting. */
  async function withDb(value: string | undefined, run: (db: Db) => Promise<void>): Promise<void> {
    const before = process.env.SVC_PG_PREPARED_STATEMENTS;
    if (value === undefined) delete process.env.SVC_PG_PREPARED_STATEMENTS;
    else process.env.SVC_PG_PREPARED_STATEMENTS = value;
    const db = connect(database.url, '');
    if (before === undefined) delete process.env.SVC_PG_PREPARED_STATEMENTS;
    else process.env.SVC_PG_PREPARED_STATEMENTS = before;
    try {
      await run(db);
    } finally {
      await db.destroy();
    }
  }

  it('prepare each SQL text once under a name, which answers for new bindings', () =>
    withDb(undefined, async (db) => {
      expect(await nameOf(db, 1)).toEqual(['one']);
      expect(await nameOf(db, 2)).toEqual(['two']);
      expect(await prepared(db)).toEqual(['select "name" from "items" where "id" = $1']);
    }));

  it('answer the same rows when the connection lost the statement, and are unnamed from then on', () =>
    withDb(undefined, async (db) => {
      expect(await nameOf(db, 1)).toEqual(['one']);
      await db.raw('deallocate all');
      const errors: unknown[] = [];
      db.on('query-error', (err: unknown) => errors.push((err as { code?: unknown }).code));
      expect(await nameOf(db, 2)).toEqual(['two']);
      expect(await nameOf(db, 1)).toEqual(['one']);
      // Knex reports the named attempt that failed; the read itself answers.
      expect(errors).toEqual(['26000']);
      expect(await prepared(db)).toEqual([]);
    }));

  it('are unnamed with SVC_PG_PREPARED_STATEMENTS=unnamed', () =>
    withDb('unnamed', async (db) => {
      expect(await nameOf(db, 1)).toEqual(['one']);
      expect(await prepared(db)).toEqual([]);
    }));

  it('refuse any other value of SVC_PG_PREPARED_STATEMENTS', () => {
    expect(loadPostgresSettings({})).toEqual({ preparedStatements: 'named' });
    expect(loadPostgresSettings({ SVC_PG_PREPARED_STATEMENTS: ' Unnamed ' })).toEqual({ preparedStatements: 'unnamed' });
    expect(() => loadPostgresSettings({ SVC_PG_PREPARED_STATEMENTS: 'yes' })).toThrow(
      new ConfigurationError('SVC_PG_PREPARED_STATEMENTS must be named or unnamed, got "yes"'),
    );
  });
});
