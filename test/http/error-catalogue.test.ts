/**
 * The error catalogue (docs/reference/errors.md) against the services: every row of its tables is
 * provoked here on each database, and the whole body answered must be the row's body, its
 * placeholders filled in with what the request provoked. A row without a request here, or a request
 * without its row, fails the test too: the page and the services cannot drift apart.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
import request from 'supertest';
import { loginThrottle } from '../../runtime';
import { MAX_URL_LENGTH } from '../../runtime/http/server';
import { AUDIENCE, ISSUER, makeUser, nowSeconds, REFRESH_LIFETIME, signRs256, unique } from '../support/blog-fixtures';
import { DIALECTS } from '../support/databases';
import { insertWidget, takeErrors } from '../support/fixtures';
import { startBlog, startShowcase, type RunningService } from '../support/services';
import { insertReturning } from '../../runtime/db/inserts';

const PAGE = path.join(__dirname, '..', '..', 'docs', 'reference', 'errors.md');

interface Row {
  table: string;
  status: number;
  when: string;
  body: string;
}

/** The rows of the page's status tables (those whose header is `| Status | When | Body |`), by section. */
function catalogueRows(page = fs.readFileSync(PAGE, 'utf8')): Row[] {
  const rows: Row[] = [];
  let section = '';
  let inTable = false;
  for (const line of page.split('\n')) {
    if (line.startsWith('## ')) section = line.slice(3);
    if (line === '| Status | When | Body |') inTable = true;
    else if (!line.startsWith('|')) inTable = false;
    else if (inTable && !line.startsWith('|---')) {
      const [status, when, body] = line.slice(2, -2).split(' | ');
      rows.push({ table: section, status: Number(status), when, body });
    }
  }
  return rows;
}

/**
 * A row's body as JSON, its placeholders filled: `<name>` by `values.name`, a list of validation
 * entries (`[{type, loc, msg}, ...]`) by `values.entries`. The cell is code: `` `{…}` ``; anything
 * after it (a note on a setting) is not part of the body.
 */
function bodyOf(row: Row, values: Record<string, unknown> = {}): unknown {
  const code = /^`([^`]*)`/.exec(row.body)?.[1];
  if (code === undefined) throw new Error(`the body of "${row.when}" is not code: ${row.body}`);
  let text = code.replace('[{type, loc, msg}, ...]', () => JSON.stringify(values.entries));
  text = text.replace(/<([a-z_]+)>/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`no value for <${name}> in "${row.when}"`);
    return String(values[name]).replace(/"/g, '\\"');
  });
  return JSON.parse(text);
}

/** A body as the suites write it: `{ detail: 'Service Unavailable' }`. */
const literal = (body: unknown) =>
  `{ ${Object.entries(body as Record<string, string>)
    .map(([k, v]) => `${k}: '${v}'`)
    .join(', ')} }`;

interface Services {
  showcase: RunningService;
  blog: RunningService;
}

interface Answer {
  status: number;
  body: unknown;
  values?: Record<string, unknown>;
  /** The suite that provokes the row, when this one cannot (a database's connections cut). */
  elsewhere?: string;
}

const answer = (res: request.Response, values?: Record<string, unknown>): Answer => ({ status: res.status, body: res.body, values });

/** The answer to a request written byte for byte (`head`: its request line and headers), as HTTP clients cannot send it. */
async function rawAnswer(svc: RunningService, head: string): Promise<Answer> {
  const server = http.createServer(svc.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const text = await new Promise<string>((resolve, reject) => {
      const socket = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString('utf8')));
      socket.on('end', () => resolve(received));
      socket.on('error', reject);
      socket.write(`${head}Connection: close\r\n\r\n`);
    });
    const [statusLine] = text.split('\r\n');
    return { status: Number(statusLine.split(' ')[1]), body: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) };
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

/** How each row is provoked, by its table and its "When". */
const PROVOKE: Record<string, Record<string, (s: Services) => Promise<Answer>>> = {
  'Standard responses': {
    'the body is not valid JSON (or not valid UTF-8, or not what its `Content-Encoding` says)': async ({ showcase }) =>
      answer(await request(showcase.app).post('/v/widgets/').set('Content-Type', 'application/json').send('{"name": ')),
    'validation fails in custom code: `validateData(schema, value)`, or a `ZodError` a hook throws': async ({ showcase }) =>
      answer(
        await request(showcase.app)
          .post('/v/widgets/')
          .send({ name: unique('counted') }),
        {
          entries: [{ type: 'greater_than_equal', loc: ['count'], msg: 'Input should be greater than or equal to 1' }],
        },
      ),
    'an empty PATCH body where the resource sets `require_update_fields`': async ({ showcase }) => {
      const id = await insertWidget(showcase.database.db, { name: unique('empty-patch') });
      return answer(await request(showcase.app).patch(`/v/widgets/${id}/`).send({}));
    },
    'a single-object lookup of custom code matches several objects (`MultipleObjectsError`)': async ({ showcase }) => {
      const id = await insertWidget(showcase.database.db, { name: 'twin' });
      const res = await request(showcase.app).delete(`/v/widgets/${id}/`);
      await showcase.database.db('widgets').where({ id }).delete();
      return answer(res, { model_key: 'widget' });
    },
    'authentication fails': async ({ blog }) =>
      answer(await request(blog.app).get('/api/auth/me/').set('Authorization', 'Bearer not-a-token')),
    'a permission check returns false': async ({ showcase }) =>
      answer(
        await request(showcase.app)
          .post('/v/widgets/')
          .send({ name: unique('forbid') }),
        { text: 'Widgets named forbid* are not allowed' },
      ),
    'the object, or a related object the body names, does not exist': async ({ showcase }) =>
      answer(await request(showcase.app).get('/v/widgets/987654/'), { model_key: 'widget' }),
    'a database constraint fails (a duplicate unique value, a protected delete, …)': async ({ blog }) => {
      const staff = await makeUser(blog, { is_staff: true });
      const name = unique('twice');
      await request(blog.app).post('/api/categories/').set('Authorization', staff.bearer).send({ name });
      return answer(await request(blog.app).post('/api/categories/').set('Authorization', staff.bearer).send({ name }));
    },
    'the body, a path parameter or a query parameter does not match its schema': async ({ showcase }) =>
      answer(await request(showcase.app).post('/v/widgets/').send({ count: 1 }), {
        entries: [{ type: 'missing', loc: ['body', 'data', 'name'], msg: 'Field required' }],
      }),
    'an unhandled exception': async ({ showcase }) => {
      const res = answer(await request(showcase.app).post('/v/widgets/').send({ name: 'explode' }));
      expect(takeErrors(showcase)).toEqual(['Error: exploded after the write']);
      return res;
    },
  },
  'Beyond the standard responses': {
    'a path that cannot be decoded (a bad `%` escape)': async ({ showcase }) =>
      answer(await request(showcase.app).get('/v/widgets/%E0%A4%A/')),
    'a request with more than one `Host` header': async ({ showcase }) =>
      rawAnswer(showcase, 'GET /v/widgets/ HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n'),
    'no route matches the path': async ({ showcase }) => answer(await request(showcase.app).get('/v/no-such-thing/')),
    'the route exists, for other methods': async ({ showcase }) => answer(await request(showcase.app).put('/v/widgets/')),
    '`If-Match` names no current version of the object': async ({ showcase }) => {
      const id = await insertWidget(showcase.database.db, { name: unique('if-match') });
      return answer(await request(showcase.app).patch(`/v/widgets/${id}/`).set('If-Match', '"not-a-version"').send({ count: 2 }));
    },
    "`If-None-Match` names the object's current version, or is `*`, on a write to it": async ({ showcase }) => {
      const id = await insertWidget(showcase.database.db, { name: unique('if-none-match') });
      return answer(await request(showcase.app).patch(`/v/widgets/${id}/`).set('If-None-Match', '*').send({ count: 2 }));
    },
    'a body larger than the limit (1 MB)': async ({ showcase }) =>
      answer(
        await request(showcase.app)
          .post('/v/widgets/')
          .set('Content-Type', 'application/json')
          .send(JSON.stringify({ name: 'big', notes: 'x'.repeat(1024 * 1024) })),
      ),
    'a request target longer than 8 KB': async ({ showcase }) =>
      answer(await request(showcase.app).get(`/v/widgets/?ordering=${'n'.repeat(MAX_URL_LENGTH)}`)),
    'a body in a media type or content coding the service does not read': async ({ showcase }) =>
      answer(await request(showcase.app).post('/v/widgets/').set('Content-Type', 'text/plain').send('{"name": "as text"}')),
    "a POST's `Idempotency-Key` was sent before with another request": async ({ blog }) => {
      const user = await makeUser(blog);
      const key = unique('idempotency');
      const create = (title: string) =>
        request(blog.app)
          .post('/api/articles/')
          .set('Authorization', user.bearer)
          .set('Idempotency-Key', key)
          .send({ title, content: 'x' });
      expect((await create('First')).status).toBe(201);
      return answer(await create('Another'));
    },
    'a write without `If-Match` to a resource that sets `require_if_match`': async ({ showcase }) => {
      const reading = { sensor: 'catalogue', value: 1, rank: 0, taken_at: new Date() };
      const [row] = await insertReturning(showcase.database.db, showcase.database.db('readings').insert(reading), reading, ['id']);
      const id = row.id;
      return answer(await request(showcase.app).patch(`/v/readings/${id}/`).send({ rank: 1 }));
    },
    'the login throttle refuses an attempt; with `Retry-After`': async ({ blog }) => {
      const user = await makeUser(blog);
      let res!: request.Response;
      for (let i = 0; i <= blog.settings.SVC_LOGIN_MAX_FAILURES_PER_USERNAME; i++) {
        res = await request(blog.app).post('/api/auth/login/').send({ username: user.username, password: 'wrong password' });
      }
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      return answer(res);
    },
    'a `throttle` rate of the resource is reached; with `Retry-After: <seconds>`': async ({ showcase }) => {
      // The beacons' create: once an hour per client address.
      expect((await request(showcase.app).post('/v/beacons/').set('X-User', 'ada').send({ name: 'one' })).status).toBe(201);
      const res = await request(showcase.app).post('/v/beacons/').set('X-User', 'ada').send({ name: 'two' });
      return answer(res, { seconds: res.headers['retry-after'] });
    },
    // Provoked by test/http/outage.test.ts, which cuts the connections of a running service.
    // The timeouts' 503: test/http/timeouts.test.ts and test/http/work-bounds.test.ts.
    'the database cannot be reached, a statement ran past `SVC_DB_STATEMENT_TIMEOUT`, or a transaction past `SVC_DB_TRANSACTION_TIMEOUT` (rolled back); with `Retry-After`':
      async () => ({
        status: 503,
        body: { detail: 'Service Unavailable' },
        elsewhere: 'test/http/outage.test.ts',
      }),
  },
  'The account endpoints': {
    'register: the username is taken': async ({ blog }) => {
      const user = await makeUser(blog);
      return answer(
        await request(blog.app)
          .post('/api/auth/register/')
          .send({ username: user.username, email: `${unique('other')}@example.com`, password: 'correct horse battery staple' }),
      );
    },
    'register: the email is registered': async ({ blog }) => {
      const user = await makeUser(blog);
      return answer(
        await request(blog.app)
          .post('/api/auth/register/')
          .send({ username: unique('other'), email: `${user.username}@example.com`, password: 'correct horse battery staple' }),
      );
    },
    'register: the client address made `SVC_REGISTRATIONS_PER_ADDRESS` accounts within the window; with `Retry-After`': async () => {
      const own = await startBlog(DIALECT, { SVC_REGISTRATIONS_PER_ADDRESS: 1 });
      const register = () => {
        const username = unique('many');
        return request(own.app)
          .post('/api/auth/register/')
          .send({ username, email: `${username}@example.com`, password: 'correct horse battery staple' });
      };
      expect((await register()).status).toBe(201);
      const res = await register();
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      await loginThrottle(own.context).close();
      await own.close();
      return answer(res);
    },
    'login: no such user, or a wrong password': async ({ blog }) =>
      answer(
        await request(blog.app)
          .post('/api/auth/login/')
          .send({ username: unique('nobody'), password: 'correct horse battery staple' }),
      ),
    'login: the user is not active': async ({ blog }) => {
      const user = await makeUser(blog, { is_active: false });
      return answer(
        await request(blog.app).post('/api/auth/login/').send({ username: user.username, password: 'correct horse battery staple' }),
      );
    },
    'refresh: the token is not a refresh token': async ({ blog }) => {
      const user = await makeUser(blog);
      return answer(await request(blog.app).post('/api/auth/refresh/').send({ refresh_token: user.token }));
    },
    'refresh: the refresh token has expired': async ({ blog }) => {
      const user = await makeUser(blog);
      const iat = nowSeconds() - REFRESH_LIFETIME - 120;
      const expired = signRs256({ sub: String(user.id), iss: ISSUER, aud: AUDIENCE, iat, exp: iat + REFRESH_LIFETIME, type: 'refresh' });
      return answer(await request(blog.app).post('/api/auth/refresh/').send({ refresh_token: expired }));
    },
    'refresh: any other failure of the token': async ({ blog }) =>
      answer(await request(blog.app).post('/api/auth/refresh/').send({ refresh_token: 'abc.def.ghi' })),
  },
};

const rows = catalogueRows();

/** The rows of the page no request here provokes, and the requests here whose row the page lacks. */
function unmatched(rows: readonly Row[]): { noRequest: string[]; noRow: string[] } {
  const listed = rows.map((r) => `${r.table}: ${r.when}`);
  const provoked = Object.entries(PROVOKE).flatMap(([table, whens]) => Object.keys(whens).map((w) => `${table}: ${w}`));
  return { noRequest: listed.filter((r) => !provoked.includes(r)), noRow: provoked.filter((r) => !listed.includes(r)) };
}

describe('the error catalogue page', () => {
  it('has its three tables, each row provoked here, and nothing provoked that the page does not list', () => {
    expect([...new Set(rows.map((r) => r.table))]).toEqual(Object.keys(PROVOKE));
    expect(unmatched(rows)).toEqual({ noRequest: [], noRow: [] });
    expect(rows.map((r) => `${r.table}: ${r.when}`)).toEqual(
      Object.entries(PROVOKE).flatMap(([table, whens]) => Object.keys(whens).map((w) => `${table}: ${w}`)),
    );
  });

  it('fails on a stale page: a row nothing provokes, a row gone, a body the services no longer answer', () => {
    const page = fs.readFileSync(PAGE, 'utf8');
    const [first, second] = rows;
    const line = (r: Row) => `| ${r.status} | ${r.when} | ${r.body} |`;
    expect(page).toContain(line(first));
    const stale = page
      .replace(line(first), `${line(first)}\n| 418 | a teapot was asked for | \`{"detail": "I'm a teapot"}\` |`)
      .replace(`${line(second)}\n`, '');
    expect(unmatched(catalogueRows(stale))).toEqual({
      noRequest: [`${first.table}: a teapot was asked for`],
      noRow: [`${second.table}: ${second.when}`],
    });
    // A row's test compares the whole body answered with the row's: a changed word is a failure.
    const changed = catalogueRows(page.replace(line(first), line({ ...first, body: first.body.replace(/[a-z]+/, 'stale') })));
    expect(bodyOf(changed[0])).not.toEqual(bodyOf(first));
  });
});

/** The database of the suite running, for the rows that start a service of their own. */
let DIALECT: (typeof DIALECTS)[number];

describe.each(DIALECTS)('the error catalogue on %s', (dialect) => {
  const services = {} as Services;
  beforeAll(async () => {
    DIALECT = dialect;
    services.showcase = await startShowcase(dialect);
    services.blog = await startBlog(dialect);
  });
  afterAll(async () => {
    for (const svc of [services.showcase, services.blog]) {
      await loginThrottle(svc.context).close();
      await svc.close();
    }
  });
  afterEach(() => {
    expect(takeErrors(services.showcase)).toEqual([]);
    expect(takeErrors(services.blog)).toEqual([]);
  });

  it.each(rows.map((r) => [`${r.status} ${r.when}`, r] as const))('%s', async (_, row) => {
    const got = await PROVOKE[row.table][row.when](services);
    expect({ status: got.status, body: got.body }).toEqual({ status: row.status, body: bodyOf(row, got.values) });
    // The suite named asserts the same body.
    if (got.elsewhere)
      expect(fs.readFileSync(path.join(__dirname, '..', '..', got.elsewhere), 'utf8')).toContain(
        `const UNAVAILABLE = ${literal(got.body)};`,
      );
  });

  it('the 404 key: the verbose name with _ for spaces, or the model name in snake_case with SVC_NOT_FOUND_ERROR_USE_VERBOSE_NAMES false', async () => {
    const row = rows.find((r) => r.status === 404 && r.body.includes('<model_key>'))!;
    const missing = '/v/tag-labels/00000000-0000-4000-8000-000000000000/';
    const verbose = await request(services.showcase.app).get(missing);
    expect([verbose.status, verbose.body]).toEqual([404, bodyOf(row, { model_key: 'tag_label' })]);
    const svc = await startShowcase(dialect, { SVC_NOT_FOUND_ERROR_USE_VERBOSE_NAMES: false });
    try {
      const byClass = await request(svc.app).get(missing);
      expect([byClass.status, byClass.body]).toEqual([404, bodyOf(row, { model_key: 'label' })]);
    } finally {
      await svc.close();
    }
  });

  it('a 500 with SVC_DEBUG shows the stack as text, and only then', async () => {
    const svc = await startShowcase(dialect, { SVC_DEBUG: true });
    try {
      const res = await request(svc.app).post('/v/widgets/').send({ name: 'explode' });
      expect([res.status, res.headers['content-type']]).toEqual([500, 'text/plain; charset=utf-8']);
      expect(res.text).toMatch(/^Error: exploded after the write\n {4}at /);
      expect(takeErrors(svc)).toEqual(['Error: exploded after the write']);
    } finally {
      await svc.close();
    }
  });
});
