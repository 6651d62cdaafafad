/**
 * No bound value and no body in the logs: a registration and an article that meet a database
 * outage, or a statement that fails, are logged with the statement's SQL text (placeholders
 * unfilled) and the driver's code and message, never with the email, the password or its bcrypt
 * hash, the username, the title or the content they carried. On SQLite another connection holds
 * the write lock beyond the busy timeout; on PostgreSQL another transaction locks the table and
 * the service's waiting connection is terminated (57P01); on MySQL another session holds the
 * table's read lock and the service's waiting connection is killed. A failing statement: a column renamed
 * away under the service, and on PostgreSQL a column whose type refuses the value (a data
 * exception, whose message quotes the value).
 */
import knex, { type Knex } from 'knex';
import request from 'supertest';
import { createLogger, type Logger } from '../../runtime';
import { loggableError } from '../../runtime/db/outage';
import { makeUser, type BlogUser } from '../support/blog-fixtures';
import { DIALECTS, type Dialect } from '../support/databases';
import { startBlog, type RunningService } from '../support/services';

const SECRETS = {
  username: 'secretive_reader_4711',
  email: 'secret.reader.4711@example.com',
  password: 'Hunter2-Secret-Passphrase-9',
  title: 'Top-Secret-Title-8842',
  content: 'Secret-Content-5531 of the article',
};
const BCRYPT = /\$2[aby]\$\d\d\$/;

type Line = Record<string, any>;

function capture(): { logger: Logger; lines: Line[]; raw: string[] } {
  const raw: string[] = [];
  const lines: Line[] = [];
  const logger = createLogger(
    { SVC_LOG_LEVEL: 'error' },
    {
      write(text: string) {
        raw.push(text);
        lines.push(JSON.parse(text));
      },
    },
  );
  return { logger, lines, raw };
}

const register = () => ({ username: SECRETS.username, email: SECRETS.email, password: SECRETS.password });
const article = () => ({ title: SECRETS.title, content: SECRETS.content });
/** `insert into "users"` as the dialect quotes it. */
const insertInto = (dialect: Dialect, table: string) => (dialect === 'postgres' ? `insert into "${table}"` : `insert into \`${table}\``);

describe.each(DIALECTS)('logs hold no bound values (%s)', (dialect) => {
  let svc: RunningService;
  let log: ReturnType<typeof capture>;
  let author: BlogUser;
  let locker: Knex;

  beforeAll(async () => {
    log = capture();
    svc = await startBlog(dialect, {}, { logger: log.logger });
    author = await makeUser(svc);
    locker =
      dialect === 'sqlite'
        ? knex({
            client: 'better-sqlite3',
            connection: { filename: svc.database.url.slice('sqlite:'.length) },
            useNullAsDefault: true,
            pool: { min: 1, max: 1 },
          })
        : dialect === 'mysql'
          ? knex({ client: 'mysql2', connection: svc.database.url, pool: { min: 0, max: 3 } })
          : knex({ client: 'pg', connection: svc.database.url, pool: { min: 0, max: 3 } });
  });
  afterAll(async () => {
    await locker.destroy();
    await svc.close();
  });
  beforeEach(() => {
    log.lines.length = 0;
    log.raw.length = 0;
  });
  afterEach(() => {
    const text = log.raw.join('');
    for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
    expect(text).not.toMatch(BCRYPT);
  });

  /**
   * Sends `send()` while writes to `table` cannot go through: SQLite's write lock held by another
   * connection; on PostgreSQL the table locked by another transaction, and the service's connection
   * that waits for it terminated. Then the lock goes and a read ends the outage.
   */
  async function duringOutage(table: string, send: () => request.Test): Promise<request.Response> {
    const trx = await locker.transaction();
    try {
      if (dialect === 'sqlite') {
        await trx.raw('insert into categories (name, description) values (?, ?)', ['Held', '']);
        return await send();
      }
      if (dialect === 'mysql') {
        // Reads go on (the registration's checks), writes wait: the service's waiting connection is killed.
        await trx.raw(`lock tables ${table} read`);
        try {
          const pending = send().then((res) => res);
          for (let i = 0; i < 250; i++) {
            const [waiting] = await locker.raw(
              "select id from information_schema.processlist where state like 'Waiting for table%' and info like ?",
              [`${insertInto(dialect, table)}%`],
            );
            if (waiting.length) {
              for (const { id } of waiting) await locker.raw(`kill ${Number(id)}`);
              break;
            }
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          return await pending;
        } finally {
          await trx.raw('unlock tables');
        }
      }
      await trx.raw(`lock table ${table} in exclusive mode`);
      const pending = send().then((res) => res);
      for (let i = 0; i < 250; i++) {
        const waiting = await locker.raw("select pid from pg_stat_activity where wait_event_type = 'Lock' and query like ?", [
          `${insertInto(dialect, table)}%`,
        ]);
        if (waiting.rows.length) {
          for (const { pid } of waiting.rows) await locker.raw('select pg_terminate_backend(?)', [pid]);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return await pending;
    } finally {
      await trx.rollback();
      expect((await request(svc.app).get('/api/categories/')).status).toBe(200);
    }
  }

  const outageStart = () => log.lines.filter((l) => String(l.msg).startsWith('database outage: '));

  it('an outage met by a registration logs its insert without the email, the password or its hash', async () => {
    const res = await duringOutage('users', () => request(svc.app).post('/api/auth/register/').send(register()));
    expect({ status: res.status, body: res.body }).toEqual({ status: 503, body: { detail: 'Service Unavailable' } });
    const [line] = outageStart();
    expect(line.level).toBe(50);
    // PostgreSQL: the insert failed on its terminated connection, then so did the transaction's
    // ROLLBACK, whose error Knex rejects the transaction with; the line names both statements.
    expect(line.msg).toMatch(
      {
        sqlite: /^database outage: SQLITE_BUSY: database is locked, in insert into `users` \(/,
        postgres:
          /^database outage: (Connection terminated unexpectedly|Client has encountered a connection error and is not queryable|57P01: terminating connection due to administrator command), in (ROLLBACK after )?insert into "users" \(/,
        mysql:
          /^database outage: (ER_CONNECTION_KILLED: Connection was killed|PROTOCOL_CONNECTION_LOST: Connection lost: The server closed the connection\.|Can't add new command when connection is in closed state), in (ROLLBACK after )?insert into `users` \(/,
      }[dialect],
    );
    expect(line.msg).toMatch(dialect === 'postgres' ? /values \(\$1, \$2/ : /values \(\?, \?/);
  }, 30_000);

  it('an outage met by a new article logs its insert without the title or the content', async () => {
    const res = await duringOutage('articles', () =>
      request(svc.app).post('/api/articles/').set('Authorization', author.bearer).send(article()),
    );
    expect({ status: res.status, body: res.body }).toEqual({ status: 503, body: { detail: 'Service Unavailable' } });
    const [line] = outageStart();
    expect(line.msg).toMatch(new RegExp(`, in (ROLLBACK after )?${insertInto(dialect, 'articles').replace(/[`"]/g, '.')} \\(`));
  }, 30_000);

  /** Runs `send()` with `column` of `table` renamed away, so that the insert fails (a 500). */
  async function columnAway(table: string, column: string, send: () => request.Test): Promise<request.Response> {
    const db = svc.database.db;
    await db.raw(`alter table ${table} rename column ${column} to ${column}_away`);
    try {
      return await send();
    } finally {
      await db.raw(`alter table ${table} rename column ${column}_away to ${column}`);
    }
  }

  it('a failing insert of a registration is logged as an unhandled error with its statement, without its values', async () => {
    const res = await columnAway('users', 'password', () =>
      request(svc.app).post('/api/auth/register/').send(register()).set('X-Request-Id', 'reg-1'),
    );
    expect({ status: res.status, body: res.body }).toEqual({ status: 500, body: { detail: 'Internal Server Error' } });
    const [line] = log.lines;
    expect({
      level: line.level,
      reqId: line.reqId,
      msg: line.msg,
      type: line.err.type,
      code: line.err.code,
      message: line.err.message,
    }).toEqual({
      level: 50,
      reqId: 'reg-1',
      msg: 'unhandled error',
      ...{
        sqlite: { type: 'SqliteError', code: 'SQLITE_ERROR', message: 'table users has no column named password' },
        postgres: { type: 'error', code: '42703', message: 'column "password" of relation "users" does not exist' },
        mysql: { type: 'Error', code: 'ER_BAD_FIELD_ERROR', message: "Unknown column 'password' in 'INSERT INTO'" },
      }[dialect],
    });
    expect(line.err.statement).toMatch(new RegExp(`^${insertInto(dialect, 'users').replace(/[`"]/g, '.')} \\(`));
    expect(line.err.stack.split('\n')[0]).toBe(`${line.err.type}: ${line.err.message}`);
    expect(line.err.stack.split('\n')[1]).toMatch(/^\s+at /);
    expect(Object.keys(line.err).sort()).toEqual(['code', 'message', 'stack', 'statement', 'type']);
  });

  it('a failing insert of an article is logged without its title or content', async () => {
    const res = await columnAway('articles', 'content', () =>
      request(svc.app).post('/api/articles/').set('Authorization', author.bearer).send(article()),
    );
    expect(res.status).toBe(500);
    const [line] = log.lines;
    expect(line.msg).toBe('unhandled error');
    expect(line.err.statement).toMatch(new RegExp(`^${insertInto(dialect, 'articles').replace(/[`"]/g, '.')} \\(`));
  });

  if (dialect === 'mysql') {
    it("a duplicate key's message quotes the value: the quote is left out", async () => {
      const db = svc.database.db;
      const user = (email: string) => ({ ...register(), email, date_joined: new Date().toISOString() });
      await db.raw('alter table users drop index users_username_unique');
      try {
        await db('users').insert([user('one@example.com'), user('two@example.com')]);
        const err = await db.raw('alter table users add unique users_username_unique (username)').catch((e: unknown) => e);
        expect({ code: loggableError(err).code, message: loggableError(err).message }).toEqual({
          code: 'ER_DUP_ENTRY',
          message: "Duplicate entry '?' for key 'users_username_unique'",
        });
      } finally {
        await db('users').where('username', SECRETS.username).delete();
        await db.raw('alter table users add unique users_username_unique (username)');
      }
    });
  }

  if (dialect === 'postgres') {
    it('a data exception quotes the value at fault: the quote is left out', async () => {
      const db = svc.database.db;
      await db.raw('alter table users alter column email type integer using id');
      let res: request.Response;
      try {
        res = await request(svc.app).post('/api/auth/register/').send(register());
      } finally {
        await db.raw('alter table users alter column email type varchar(254) using email::text');
      }
      expect(res.status).toBe(500);
      const [line] = log.lines;
      expect({ code: line.err.code, message: line.err.message }).toEqual({
        code: '22P02',
        message: 'invalid input syntax for type integer: "?"',
      });
      expect(line.err.statement).toMatch(/^select /);
    });
  }
});

describe('loggableError', () => {
  it('keeps the type, code, message and stack frames of any error, and its cause the same way', () => {
    const cause = Object.assign(new Error('value "123456789012" is out of range for type integer'), {
      code: '22003',
      detail: 'Key (id)=(5)',
    });
    const err = Object.assign(new Error('wrapped', { cause }), { code: 'E_HOOK', secret: 'x' });
    const out = loggableError(err);
    expect({ ...out, stack: undefined, cause: { ...out.cause, stack: undefined } }).toEqual({
      type: 'Error',
      code: 'E_HOOK',
      message: 'wrapped',
      stack: undefined,
      cause: { type: 'Error', code: '22003', message: 'value "?" is out of range for type integer', stack: undefined },
    });
    expect(out.stack).toMatch(/^Error: wrapped\n\s+at /);
    expect(out.cause?.stack).toMatch(/^Error: value "\?" is out of range for type integer\n\s+at /);
    expect(loggableError('text')).toEqual({ type: 'string', message: 'text' });
  });
});
