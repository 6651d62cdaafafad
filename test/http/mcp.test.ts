/**
 * The MCP endpoint (`SVC_MCP`) of the blog, driven by the MCP SDK's own client over its streamable
 * HTTP transport against the service on a port: the tools are the operations of the OpenAPI
 * document, and each call answers what the HTTP route answers the same caller, status and body,
 * through the same authentication, permissions, validation and login throttle. Off, the endpoint
 * does not exist.
 */
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import request from 'supertest';
import { createLogger } from '../../runtime';
import { httpSecuritySettings } from '../../runtime/http/security-headers';
import { DIALECTS } from '../support/databases';
import { createUser, insertArticle, takeErrors, type TestUser } from '../support/fixtures';
import { startBlog, startShowcase, type RunningService } from '../support/services';

const UNAUTHORIZED = { detail: 'Unauthorized' };
const STAFF_REQUIRED = { error: 'forbidden', details: 'Staff privileges required' };

interface Reply {
  status: number;
  body: unknown;
}

/** The service on a port of its own, as MCP clients reach it. */
async function listen(svc: RunningService): Promise<{ server: Server; url: string }> {
  const server = createServer(svc.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** An MCP client of the service at `endpoint`, sending `headers` with every request. */
async function connect(endpoint: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers } }));
  return client;
}

/** Calls a tool and checks that its text is its structured content, and that an error status is an error. */
async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<Reply & { isError: boolean; headers?: Record<string, string> }> {
  const result = await client.callTool({ name, arguments: args });
  const text = (result.content as { type: string; text: string }[])[0];
  expect(text.type).toBe('text');
  expect(JSON.parse(text.text)).toEqual(result.structuredContent);
  const { status, body, headers } = result.structuredContent as Reply & { headers?: Record<string, string> };
  expect(result.isError).toBe(status >= 400);
  return { status, body, isError: result.isError === true, ...(headers ? { headers } : {}) };
}

describe.each(DIALECTS)('MCP endpoint (%s)', (dialect) => {
  let svc: RunningService;
  let url: string;
  let server: Server;
  const clients: Client[] = [];
  let user: TestUser;
  let staff: TestUser;

  beforeAll(async () => {
    svc = await startBlog(dialect, { SVC_MCP: true, SVC_LOGIN_MAX_FAILURES_PER_ADDRESS: 2 });
    ({ server, url } = await listen(svc));
    user = await createUser(svc);
    staff = await createUser(svc, { is_staff: true });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await new Promise((resolve) => server.close(resolve));
    await svc.close();
  });
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  const mcp = async (bearer?: string) => {
    const client = await connect(`${url}/api/mcp`, bearer ? { Authorization: bearer } : {});
    clients.push(client);
    return client;
  };
  const http = () => request(url);

  it('lists one tool per operation of the OpenAPI document, named by its operation id', async () => {
    const client = await mcp();
    expect(client.getServerVersion()).toEqual({ name: 'Blog API', version: '1.0.0' });
    const { tools } = await client.listTools();
    const openapi = (await http().get('/api/openapi.json').expect(200)).body;
    const operations = Object.values(openapi.paths as Record<string, Record<string, { operationId: string; security: unknown[] }>>)
      .flatMap((item) => Object.values(item))
      .filter((op) => op.security.length > 0)
      .map((op) => op.operationId);
    expect(tools.map((t) => t.name).sort()).toEqual([...operations].sort());
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['create_article', 'list_articles', 'publish_article', 'manage_article_tags', 'login', 'me']),
    );
    expect(tools.map((t) => t.name)).not.toContain('health_live');

    const create = tools.find((t) => t.name === 'create_article')!;
    expect(create.description).toBe('Create a new object.\n\nHTTP: POST /api/articles/');
    expect(create.annotations).toEqual({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false });
    expect(create.inputSchema).toEqual({
      type: 'object',
      properties: { body: { $ref: '#/$defs/ArticleIn', description: 'The request body (JSON).' } },
      required: ['body'],
      $defs: { ArticleIn: openapi.components.schemas.ArticleIn },
    });
    const retrieve = tools.find((t) => t.name === 'retrieve_article')!;
    expect(Object.keys(retrieve.inputSchema.properties!)).toEqual(['pk', 'fields', 'expand', 'If-None-Match']);
    expect(retrieve.inputSchema.required).toEqual(['pk']);
    expect(retrieve.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
  });

  it("titles each tool by its operation and resource; the OpenAPI summaries stay the seed's", async () => {
    const client = await mcp();
    const { tools } = await client.listTools();
    const titleOf = (name: string) => tools.find((t) => t.name === name)?.title;
    expect(
      [
        'list_articles',
        'create_article',
        'retrieve_article',
        'update_article',
        'delete_article',
        'list_categories',
        'create_category',
        'list_tags',
        'retrieve_user',
      ].map((n) => [n, titleOf(n)]),
    ).toEqual([
      ['list_articles', 'List articles'],
      ['create_article', 'Create an article'],
      ['retrieve_article', 'Retrieve an article'],
      ['update_article', 'Update an article'],
      ['delete_article', 'Delete an article'],
      ['list_categories', 'List categories'],
      ['create_category', 'Create a category'],
      ['list_tags', 'List tags'],
      ['retrieve_user', 'Retrieve a user'],
    ]);
    // No two tools share a title; an action or endpoint keeps its own summary as its title.
    const titles = tools.map((t) => t.title);
    expect(new Set(titles).size).toBe(titles.length);
    expect(titleOf('publish_article')).toBe('Publish a draft (staff only).');
    // The description still opens with the seed's summary, as the OpenAPI document has it.
    const openapi = (await http().get('/api/openapi.json').expect(200)).body;
    expect(openapi.paths['/api/articles/'].get.summary).toBe('List all objects.');
    expect(openapi.paths['/api/articles/'].get.title).toBeUndefined();
    expect(tools.find((t) => t.name === 'list_articles')!.description).toBe('List all objects.\n\nHTTP: GET /api/articles/');
  });

  it('titles bulk, restore and hard-delete tools by their resource too (the showcase)', async () => {
    const showcase = await startShowcase(dialect, { SVC_MCP: true });
    const { server: showServer, url: showUrl } = await listen(showcase);
    try {
      const client = await connect(`${showUrl}/v/mcp`);
      clients.push(client);
      const { tools } = await client.listTools();
      const titleOf = (name: string) => tools.find((t) => t.name === name)?.title;
      expect(
        ['bulk_create_widgets', 'bulk_update_widgets', 'bulk_delete_widgets', 'restore_coupon', 'hard_delete_coupon'].map((n) => [
          n,
          titleOf(n),
        ]),
      ).toEqual([
        ['bulk_create_widgets', 'Create several widgets'],
        ['bulk_update_widgets', 'Update several widgets'],
        ['bulk_delete_widgets', 'Delete several widgets'],
        ['restore_coupon', 'Restore a soft-deleted coupon'],
        ['hard_delete_coupon', 'Delete a coupon for good'],
      ]);
      // No tool is titled by the seed's "objects" any more.
      expect(tools.filter((t) => /\bobjects?\b/.test(t.title ?? '')).map((t) => [t.name, t.title])).toEqual([]);
      const titles = tools.map((t) => t.title);
      expect(new Set(titles).size).toBe(titles.length);
    } finally {
      await new Promise((resolve) => showServer.close(resolve));
      await showcase.close();
    }
  });

  it('create_article: 401 anonymous, 201 with a user token, as over HTTP', async () => {
    const article = { title: 'Over MCP', content: 'Body' };
    const anonymous = await call(await mcp(), 'create_article', { body: article });
    const overHttp = await http().post('/api/articles/').send(article);
    expect([overHttp.status, overHttp.body]).toEqual([401, UNAUTHORIZED]);
    expect(anonymous).toEqual({ status: 401, body: UNAUTHORIZED, isError: true });

    const created = await call(await mcp(user.bearer), 'create_article', { body: article });
    expect(created).toEqual({
      status: 201,
      isError: false,
      body: {
        id: expect.any(Number),
        title: 'Over MCP',
        summary: '',
        author: user.id,
        category: null,
        is_published: false,
        created_at: expect.any(String),
        views: 0,
      },
      headers: { etag: expect.any(String) },
    });
    const row = await svc.database
      .db('articles')
      .where({ id: (created.body as { id: number }).id })
      .first();
    expect(row.author_id).toBe(user.id);
  });

  it('create_category: 403 with a user token, 201 with a staff token, as over HTTP', async () => {
    const overHttp = await http().post('/api/categories/').set('Authorization', user.bearer).send({ name: 'http-refused' });
    expect([overHttp.status, overHttp.body]).toEqual([403, STAFF_REQUIRED]);
    expect(await call(await mcp(user.bearer), 'create_category', { body: { name: 'mcp-refused' } })).toEqual({
      status: 403,
      body: STAFF_REQUIRED,
      isError: true,
    });
    expect(await call(await mcp(), 'create_category', { body: { name: 'mcp-anonymous' } })).toEqual({
      status: 401,
      body: UNAUTHORIZED,
      isError: true,
    });
    const created = await call(await mcp(staff.bearer), 'create_category', { body: { name: 'Over MCP' } });
    expect(created).toMatchObject({ status: 201, isError: false, body: { id: expect.any(Number), name: 'Over MCP', description: '' } });
    expect(await svc.database.db('categories').where({ name: 'mcp-refused' }).first()).toBeUndefined();
  });

  it('list_articles takes the query parameters as arguments and answers the HTTP body', async () => {
    const author = await createUser(svc);
    await insertArticle(svc.database.db, { title: 'MCP filter one', content: 'x', author_id: author.id, is_published: true });
    await insertArticle(svc.database.db, { title: 'MCP filter two', content: 'x', author_id: author.id, is_published: false });
    const args = { author: author.username, is_published: true, page_size: 10 };
    const overMcp = await call(await mcp(), 'list_articles', args);
    const overHttp = await http().get(`/api/articles/?author=${author.username}&is_published=true&page_size=10`);
    expect(overHttp.status).toBe(200);
    expect(overMcp).toMatchObject({ status: 200, body: overHttp.body, isError: false });
    expect((overMcp.body as { items: { title: string }[] }).items.map((a) => a.title)).toEqual(['MCP filter one']);
  });

  it('retrieve_article takes the path parameter; an unknown key is the 404 of HTTP', async () => {
    const id = await insertArticle(svc.database.db, { title: 'By key', content: 'x', author_id: user.id });
    const overHttp = await http().get(`/api/articles/${id}/`);
    expect(await call(await mcp(), 'retrieve_article', { pk: id })).toMatchObject({ status: 200, body: overHttp.body });
    expect(await call(await mcp(), 'retrieve_article', { pk: 2147480000 })).toEqual({
      status: 404,
      body: { article: 'not found' },
      isError: true,
    });
  });

  it('an expand list is sent as the document writes it, names separated by commas', async () => {
    const id = await insertArticle(svc.database.db, { title: 'Expanded', content: 'x', author_id: user.id });
    const overHttp = await http().get(`/api/articles/${id}/?expand=author,tags`);
    expect(overHttp.status).toBe(200);
    expect((overHttp.body as { author: unknown }).author).toMatchObject({ id: user.id });
    expect(await call(await mcp(), 'retrieve_article', { pk: id, expand: ['author', 'tags'] })).toMatchObject({
      status: 200,
      body: overHttp.body,
      isError: false,
    });
  });

  it('a body failing validation is the 422 of HTTP, the same body', async () => {
    const body = { title: 't'.repeat(201) };
    const overHttp = await http().post('/api/articles/').set('Authorization', user.bearer).send(body);
    expect(overHttp.status).toBe(422);
    expect(await call(await mcp(user.bearer), 'create_article', { body })).toEqual({ status: 422, body: overHttp.body, isError: true });
    const badQuery = await http().get('/api/articles/?page_size=x');
    expect(await call(await mcp(), 'list_articles', { page_size: 'x' })).toEqual({ status: 422, body: badQuery.body, isError: true });
  });

  it('a missing path parameter is a 422 in the same shape; an unknown tool is a protocol error', async () => {
    const client = await mcp();
    expect(await call(client, 'retrieve_article', {})).toEqual({
      status: 422,
      body: { detail: [{ type: 'missing', loc: ['path', 'pk'], msg: 'Field required' }] },
      isError: true,
    });
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/Unknown tool: no_such_tool/);
  });

  it('an invalid token is the 401 of HTTP', async () => {
    const overHttp = await http().get('/api/auth/me/').set('Authorization', 'Bearer not-a-token');
    expect(overHttp.status).toBe(401);
    expect(await call(await mcp('Bearer not-a-token'), 'me')).toEqual({ status: 401, body: overHttp.body, isError: true });
    expect(await call(await mcp(user.bearer), 'me')).toMatchObject({ status: 200, body: { id: user.id, username: user.username } });
  });

  it('failed logins over MCP and over HTTP count against the same client address', async () => {
    const wrong = (n: number) => ({ username: `nobody-${dialect}-${n}`, password: 'not the password' });
    const first = await http().post('/api/auth/login/').send(wrong(1));
    expect(first.status).toBe(401);
    const second = await call(await mcp(), 'login', { body: wrong(2) });
    expect(second).toEqual({ status: 401, body: first.body, isError: true });
    // The address has had its two failures: the next attempt is refused, over either.
    const overMcp = await call(await mcp(), 'login', { body: wrong(3) });
    const overHttp = await http().post('/api/auth/login/').send(wrong(4));
    expect(overHttp.status).toBe(429);
    expect(overMcp).toEqual({ status: 429, body: overHttp.body, headers: { 'retry-after': expect.any(String) }, isError: true });
  });

  it('refuses a batch with 400 and the JSON-RPC Invalid Request, running none of its calls', async () => {
    const accept = 'application/json, text/event-stream';
    const call = (id: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'create_article', arguments: { body: { title: `Batched ${dialect} ${id}`, content: 'x' } } },
    });
    const batch = await http()
      .post('/api/mcp')
      .set('Accept', accept)
      .set('Authorization', user.bearer)
      .send([call(1), call(2), call(3)]);
    expect([batch.status, batch.body]).toEqual([
      400,
      {
        jsonrpc: '2.0',
        error: { code: -32600, message: 'Invalid Request: a POST carries one JSON-RPC message; batches are not supported' },
        id: null,
      },
    ]);
    const single = await http()
      .post('/api/mcp')
      .set('Accept', accept)
      .send([{ jsonrpc: '2.0', id: 1, method: 'tools/list' }]);
    expect(single.status).toBe(400);
    expect(Number((await svc.database.db('articles').where('title', 'like', 'Batched%').count({ n: '*' }).first())!.n)).toBe(0);
    // One message per POST, as the SDK's client sends them, is served.
    const one = await http().post('/api/mcp').set('Accept', accept).set('Authorization', user.bearer).send(call(4));
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ jsonrpc: '2.0', id: 4, result: { structuredContent: { status: 201 } } });
  });

  it('answers GET and DELETE with 405: the transport is stateless', async () => {
    const get = await http().get('/api/mcp');
    expect([get.status, get.body, get.headers.allow]).toEqual([405, { detail: 'Method Not Allowed' }, 'POST']);
    expect((await http().delete('/api/mcp')).status).toBe(405);
  });
});

describe.each(DIALECTS)('MCP endpoint: rate limits of the showcase (%s)', (dialect) => {
  let svc: RunningService;
  let server: Server;
  let url: string;
  const clients: Client[] = [];

  beforeEach(async () => {
    // A service per test: each starts with fresh counters.
    svc = await startShowcase(dialect, { SVC_MCP: true });
    ({ server, url } = await listen(svc));
  });
  afterEach(async () => {
    expect(takeErrors(svc)).toEqual([]);
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await new Promise((resolve) => server.close(resolve));
    await svc.close();
  });

  const throttled = (seconds: number) => ({
    detail: `Request was throttled. Expected available in ${seconds} second${seconds === 1 ? '' : 's'}.`,
  });

  /** A client whose every request names the showcase's user (its HeaderUserAuth reads X-User). */
  const mcp = async (user: string) => {
    const client = await connect(`${url}/v/mcp`, { 'X-User': user });
    clients.push(client);
    return client;
  };

  it('counts calls over MCP and requests over HTTP of one user on one counter', async () => {
    for (let i = 0; i < 2; i++) expect((await request(url).get('/v/beacons/').set('X-User', 'ada')).status).toBe(200);
    const ada = await mcp('ada');
    expect(await call(ada, 'list_beacons')).toMatchObject({ status: 200, body: { items: [], count: 0 }, isError: false });
    const overMcp = await call(ada, 'retrieve_beacon', { pk: 1 });
    const overHttp = await request(url).get('/v/beacons/1/').set('X-User', 'ada');
    expect(overHttp.status).toBe(429);
    // The body and Retry-After of HTTP's 429, with the seconds left when the call was counted.
    const seconds = overMcp.headers?.['retry-after'];
    expect(overMcp).toEqual({
      status: 429,
      headers: { 'retry-after': expect.stringMatching(/^\d+$/) },
      isError: true,
      body: throttled(Number(seconds)),
    });
    expect(overHttp.body).toEqual(throttled(Number(overHttp.headers['retry-after'])));
    // Another user has a counter of their own.
    expect(await call(await mcp('bob'), 'list_beacons')).toMatchObject({ status: 200 });
  });

  it("counts an operation's limit per client address: the MCP caller's, not the service's own", async () => {
    const first = await request(url).post('/v/beacons/').set('X-User', 'ada').send({ name: 'one' });
    expect(first.status).toBe(201);
    const second = await call(await mcp('bob'), 'create_beacon', { body: { name: 'two' } });
    expect(second).toMatchObject({ status: 429, isError: true, headers: { 'retry-after': expect.any(String) } });
    expect(await svc.context.db('beacons').pluck('name')).toEqual(['one']);
  });
});

describe.each(DIALECTS)('MCP endpoint: request logs (%s)', (dialect) => {
  it("logs a tool call's request beside the MCP request that carried it, under its id", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ SVC_LOG_LEVEL: 'info' }, { write: (text: string) => void lines.push(JSON.parse(text)) });
    const svc = await startBlog(dialect, { SVC_MCP: true }, { logger });
    const { server, url } = await listen(svc);
    try {
      const user = await createUser(svc);
      const client = await connect(`${url}/api/mcp`, { Authorization: user.bearer, 'X-Request-Id': 'mcp-call-1' });
      expect(await call(client, 'create_article', { body: { title: 'Logged', content: 'x' } })).toMatchObject({ status: 201 });
      await client.close();
      const requests = lines
        .filter((l) => l.msg === 'request' && l.reqId === 'mcp-call-1')
        .map(({ method, route, status, userId }) => ({ method, route, status, userId }));
      // The tool call's request ends before the MCP request that answers with it.
      expect(requests.slice(-2)).toEqual([
        { method: 'POST', route: '/api/articles/', status: 201, userId: user.id },
        { method: 'POST', route: '/api/mcp', status: 200, userId: undefined },
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await svc.close();
    }
  });
});

describe.each(DIALECTS)('MCP endpoint: tools/list follows SVC_DOCS (%s)', (dialect) => {
  const services: { svc: RunningService; server: Server }[] = [];
  const clients: Client[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    for (const { svc, server } of services) {
      await new Promise((resolve) => server.close(resolve));
      await svc.close();
    }
  });
  const start = async (docs: string) => {
    const svc = await startBlog(dialect, { SVC_MCP: true }, { security: httpSecuritySettings({ SVC_DOCS: docs }) });
    const { server, url } = await listen(svc);
    services.push({ svc, server });
    const mcp = async (bearer?: string) => {
      const client = await connect(`${url}/api/mcp`, bearer ? { Authorization: bearer } : {});
      clients.push(client);
      return client;
    };
    return { svc, url, mcp };
  };
  const listRequest = { jsonrpc: '2.0', id: 7, method: 'tools/list' };
  const accept = 'application/json, text/event-stream';

  it('off: tools/list is a method the server does not have; the tools can still be called', async () => {
    const { svc, url, mcp } = await start('off');
    const res = await request(url).post('/api/mcp').set('Accept', accept).send(listRequest);
    expect([res.status, res.body]).toEqual([200, { jsonrpc: '2.0', id: 7, error: { code: -32601, message: 'Method not found' } }]);
    const client = await mcp();
    await expect(client.listTools()).rejects.toThrow(/-32601/);
    const user = await createUser(svc);
    expect(await call(await mcp(user.bearer), 'me')).toMatchObject({ status: 200, body: { id: user.id } });
    expect(takeErrors(svc)).toEqual([]);
  });

  it('staff: tools/list answers a staff token, and the 401 or 403 of the document to anyone else', async () => {
    const { svc, url, mcp } = await start('staff');
    const anonymous = await request(url).post('/api/mcp').set('Accept', accept).send(listRequest);
    expect([anonymous.status, anonymous.body]).toEqual([401, UNAUTHORIZED]);
    const user = await createUser(svc);
    const notStaff = await request(url).post('/api/mcp').set('Accept', accept).set('Authorization', user.bearer).send(listRequest);
    expect([notStaff.status, notStaff.body]).toEqual([403, STAFF_REQUIRED]);
    await expect((await mcp(user.bearer)).listTools()).rejects.toThrow(/Staff privileges required/);
    const staff = await createUser(svc, { is_staff: true });
    const { tools } = await (await mcp(staff.bearer)).listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['create_article', 'list_articles']));
    // A tool call is the HTTP request's business: a user's call is served.
    expect(await call(await mcp(user.bearer), 'me')).toMatchObject({ status: 200, body: { id: user.id } });
    expect(takeErrors(svc)).toEqual([]);
  });
});

describe.each(DIALECTS)('MCP endpoint off by default (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startBlog(dialect);
  });
  afterAll(() => svc.close());

  it('does not exist: 404', async () => {
    expect(svc.settings.SVC_MCP).toBe(false);
    const res = await request(svc.app)
      .post('/api/mcp')
      .set('Accept', 'application/json, text/event-stream')
      .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect([res.status, res.body]).toEqual([404, { detail: 'Not Found' }]);
  });
});
