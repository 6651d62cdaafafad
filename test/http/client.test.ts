/**
 * The generated clients against the running services, listening on a real port so that the global
 * `fetch` reaches them. The blog's (`generated/client.ts`): auth, CRUD with filters and ordering,
 * the publish action, the tags relation, typed errors, the refresh-on-401 hook and aborted calls.
 * The querying fixture's: list filters that take lists and ranges. The showcase's: string keys in
 * paths, limit/offset and results pages, a custom endpoint with a path parameter.
 * Real SQLite and PostgreSQL, whole bodies.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, createClient, etagOf, type ArticleIn, type ClientOptions } from '../../generated/client';
import { ApiError as QueryingApiError, createClient as createQueryingClient } from '../fixtures/querying/generated/client';
import { createClient as createShowcaseClient } from '../fixtures/showcase/generated/client';
import { accessClaims, ISO_DATETIME, makeUser, nowSeconds, signRs256, unique } from '../support/blog-fixtures';
import { DIALECTS } from '../support/databases';
import { insertRows } from '../support/fixtures';
import { startBlog, startQuerying, startShowcase, type RunningService } from '../support/services';

/** Serves a test service on a free port of the loopback interface: its base URL, and how to stop it. */
async function listen(svc: RunningService, basePath: string): Promise<{ baseUrl: string; close(): Promise<void> }> {
  const server = await new Promise<Server>((resolve) => {
    const s = svc.app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}${basePath}`,
    async close() {
      // fetch keeps connections alive: close them, or the server would wait for them.
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** What a call rejected with, for asserting on an expected failure. */
async function failure(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (error) {
    return error;
  }
  throw new Error('the call succeeded');
}

/** The ApiError a call rejected with: status and whole body. */
async function apiError(call: Promise<unknown>): Promise<{ status: number; body: unknown }> {
  const error = await failure(call);
  expect(error).toBeInstanceOf(ApiError);
  const { status, body } = error as ApiError;
  return { status, body };
}

describe.each(DIALECTS)('generated client (%s)', (dialect) => {
  let svc: RunningService;
  let server: Awaited<ReturnType<typeof listen>>;
  let baseUrl: string;
  beforeAll(async () => {
    svc = await startBlog(dialect);
    server = await listen(svc, '/api');
    baseUrl = server.baseUrl;
  });
  afterAll(async () => {
    await server.close();
    await svc.close();
  });
  afterEach(() => expect(svc.errors).toEqual([]));

  /** A client of the running blog; `requests` records each request it sends. */
  function client(options: Partial<ClientOptions> = {}) {
    const requests: string[] = [];
    const api = createClient({
      baseUrl,
      fetch: (input, init) => {
        requests.push(
          `${init?.method} ${String(input).slice(baseUrl.length)} ${(init?.headers as Record<string, string>)?.Authorization ?? '-'}`,
        );
        return fetch(input, init);
      },
      ...options,
    });
    return { api, requests };
  }

  /** A registered user: the password, the tokens, and a client carrying the access token. */
  async function registered() {
    const username = unique('ada');
    const password = 'correct horse';
    const tokens = await client().api.register({ username, email: `${username}@example.com`, password });
    return { username, password, tokens, api: client({ token: tokens.access_token }).api };
  }

  it('registers, logs in, and reads the caller with a token given as a function', async () => {
    const { api } = client();
    const username = unique('ada');
    const tokens = await api.register({ username, email: `${username}@example.com`, password: 'correct horse' });
    expect(tokens).toEqual({ access_token: expect.any(String), refresh_token: expect.any(String), token_type: 'bearer', expires_in: 900 });

    const login = await api.login({ username, password: 'correct horse' });
    expect(login).toEqual({ access_token: expect.any(String), refresh_token: expect.any(String), token_type: 'bearer', expires_in: 900 });

    let current: string | undefined = undefined;
    const { api: signedIn } = client({ token: () => current });
    expect(await apiError(signedIn.me())).toEqual({ status: 401, body: { detail: 'Unauthorized' } });
    current = login.access_token;
    expect(await signedIn.me()).toEqual({
      id: expect.any(Number),
      username,
      email: `${username}@example.com`,
      first_name: '',
      last_name: '',
    });
  });

  it('creates articles, lists them with filters, ordering and pages, retrieves, updates and deletes one', async () => {
    const { api, username } = await registered();
    const me = await api.me();
    const hello = await api.createArticle({ title: 'Hello, svcgen', content: 'Generated from YAML.', summary: 'A first article' });
    expect(hello).toEqual({
      id: expect.any(Number),
      title: 'Hello, svcgen',
      summary: 'A first article',
      author: me.id,
      category: null,
      is_published: false,
      created_at: ISO_DATETIME,
      views: 0,
    });
    const second = await api.createArticle({ title: 'A second article', content: 'More text.' });
    await svc.database.db('articles').where('id', second.id).update({ views: 150 });

    const mine = { author: username };
    expect(await api.listArticles({ ...mine, title: 'HELLO' })).toEqual({ items: [hello], count: 1 });
    expect((await api.listArticles({ ...mine, ordering: 'title' })).items.map((a) => a.title)).toEqual([
      'A second article',
      'Hello, svcgen',
    ]);
    expect((await api.listArticles({ ...mine, ordering: ['-views', 'title'] })).items.map((a) => a.id)).toEqual([second.id, hello.id]);
    expect(await api.listArticles({ ...mine, popular: true })).toEqual({ items: [{ ...second, views: 150 }], count: 1 });
    expect(await api.listArticles({ ...mine, ordering: '-title', page: 2, page_size: 1 })).toEqual({
      items: [second].map((a) => ({ ...a, views: 150 })),
      count: 2,
    });
    // Drafts are the caller's own: without a token the list is empty.
    expect(await client().api.listArticles(mine)).toEqual({ items: [], count: 0 });

    expect(await api.retrieveArticle(hello.id)).toEqual({
      id: hello.id,
      title: 'Hello, svcgen',
      summary: 'A first article',
      content: 'Generated from YAML.',
      author: { id: me.id, username, first_name: '', last_name: '' },
      category: null,
      tags: [],
      is_published: false,
      created_at: hello.created_at,
      views: 0,
    });
    // Search and field selection, on the list and on retrieve.
    expect(await api.listArticles({ ...mine, search: 'first svcgen', fields: ['id', 'title'] })).toEqual({
      items: [{ id: hello.id, title: 'Hello, svcgen' }],
      count: 1,
    });
    expect(await api.retrieveArticle(hello.id, { fields: ['title', 'views'] })).toEqual({ title: 'Hello, svcgen', views: 0 });
    expect(await api.updateArticle(hello.id, { summary: 'Changed' })).toEqual({ ...hello, summary: 'Changed' });
    expect(await api.deleteArticle(second.id)).toEqual({ message: 'Article deleted' });
    expect(await apiError(api.retrieveArticle(second.id))).toEqual({ status: 404, body: { article: 'not found' } });
  });

  it('keeps the ETag of what it returns and sends it as If-Match when asked: a stale one is a 412', async () => {
    const { api } = await registered();
    const created = await api.createArticle({ title: 'Versioned', content: 'v1' });
    const read = await api.retrieveArticle(created.id);
    expect(etagOf(read)).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(etagOf(created)).toBe(etagOf(read));
    const updated = await api.updateArticle(read.id, { title: 'Versioned twice' }, { ifMatch: read });
    expect(updated.title).toBe('Versioned twice');
    expect(await apiError(api.updateArticle(read.id, { title: 'Lost' }, { ifMatch: read }))).toEqual({
      status: 412,
      body: {
        error: 'precondition_failed',
        details: 'The object has changed since it was read: If-Match names none of its current versions.',
      },
    });
    // The update's own ETag names the version it wrote; as text, it is sent as given.
    expect(await api.updateArticle(read.id, { summary: 'Kept' }, { ifMatch: etagOf(updated)! })).toMatchObject({
      title: 'Versioned twice',
      summary: 'Kept',
    });
    await expect(api.updateArticle(read.id, {}, { ifMatch: {} })).rejects.toThrow(TypeError);
  });

  it('publishes as staff; the state errors come back as ApiError with their bodies', async () => {
    const { api } = await registered();
    const staff = await makeUser(svc, { is_staff: true });
    const editor = client({ token: staff.token }).api;
    const draft = await api.createArticle({ title: unique('Draft '), content: 'Text' });

    expect(await apiError(api.publishArticle(draft.id))).toEqual({
      status: 403,
      body: { error: 'forbidden', details: 'Only staff can publish' },
    });
    expect(await editor.publishArticle(draft.id)).toEqual({ published: true });
    expect(await apiError(editor.publishArticle(draft.id))).toEqual({
      status: 409,
      body: { is_published: 'Article is already published' },
    });
    expect(await client().api.retrieveArticle(draft.id)).toMatchObject({ id: draft.id, is_published: true });
  });

  it('adds, lists and removes the tags of an article', async () => {
    const { api } = await registered();
    const editor = client({ token: (await makeUser(svc, { is_staff: true })).token }).api;
    const news = await editor.createTag({ name: unique('news') });
    const other = await editor.createTag({ name: unique('other') });
    const article = await api.createArticle({ title: unique('Tagged '), content: 'Text' });

    expect(await api.manageArticleTags(article.id, { add: [news.id, other.id, 999999] })).toEqual({
      results: { count: 2, details: [`tag ${news.id} added`, `tag ${other.id} added`] },
      errors: { count: 1, details: ['tag 999999 not found'] },
    });
    expect(await api.getArticleTags(article.id, { name: news.name.toUpperCase() })).toEqual({ items: [news], count: 1 });
    expect(await api.manageArticleTags(article.id, { add: [news.id], remove: [other.id, other.id] })).toEqual({
      results: { count: 1, details: [`tag ${other.id} removed`] },
      errors: { count: 1, details: [`tag ${news.id} is already related`] },
    });
    expect(await api.getArticleTags(article.id)).toEqual({ items: [news], count: 1 });
    expect((await api.listArticles({ tag: news.name })).items.map((a) => a.id)).toEqual([article.id]);
    expect(await apiError(client().api.manageArticleTags(article.id, { add: [other.id] }))).toEqual({
      status: 401,
      body: { detail: 'Unauthorized' },
    });
  });

  it('a 422 carries the validation list; 401 and 404 carry their details', async () => {
    const { api } = await registered();
    // The types forbid this body; a caller outside TypeScript could still send it.
    const error = await failure(api.createArticle({ content: 42 } as unknown as ArticleIn));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(422);
    expect((error as ApiError).issues).toEqual([
      { type: 'missing', loc: ['body', 'data', 'title'], msg: 'Field required' },
      { type: 'string_type', loc: ['body', 'data', 'content'], msg: 'Input should be a valid string' },
    ]);
    expect((error as ApiError).detail).toBeUndefined();

    const ordering = await apiError(api.listArticles({ ordering: 'content' as never }));
    expect(ordering.status).toBe(422);
    expect(ordering.body).toMatchObject({ detail: [{ loc: ['query', 'ordering'] }] });

    const unauthorized = (await failure(client().api.createArticle({ title: 'T', content: 'C' }))) as ApiError;
    expect([unauthorized.status, unauthorized.body, unauthorized.detail, unauthorized.issues]).toEqual([
      401,
      { detail: 'Unauthorized' },
      'Unauthorized',
      [],
    ]);
    expect(unauthorized.headers.get('www-authenticate')).toBe('Bearer');

    expect(await apiError(api.retrieveUser(999999))).toEqual({ status: 404, body: { user: 'not found' } });
  });

  it('on a 401 calls onUnauthorized once and retries once with the token it returns', async () => {
    const { tokens, username } = await registered();
    const me = await client({ token: tokens.access_token }).api.me();
    const past = nowSeconds() - 3600;
    const expired = signRs256(
      accessClaims(me.id, { username, email: `${username}@example.com`, is_staff: false, iat: past, exp: past + 60 }),
    );

    let calls = 0;
    const { api, requests } = client({
      token: expired,
      onUnauthorized: async () => {
        calls += 1;
        return (await api.refresh({ refresh_token: tokens.refresh_token }, { token: null })).access_token;
      },
    });
    expect(await api.me()).toEqual(me);
    expect(calls).toBe(1);
    expect(requests).toEqual([
      `GET /auth/me/ Bearer ${expired}`,
      'POST /auth/refresh/ -',
      expect.stringMatching(/^GET \/auth\/me\/ Bearer .+/),
    ]);
    expect(requests[2]).not.toBe(requests[0]);
    // The new token replaces the string token: the next call needs no refresh.
    expect(await api.me()).toEqual(me);
    expect(calls).toBe(1);
    expect(requests[3]).toBe(requests[2]);

    // A token that is refused again is not refreshed twice: the second 401 is the error.
    let again = 0;
    const { api: stuck, requests: stuckRequests } = client({
      token: expired,
      onUnauthorized: () => {
        again += 1;
        return expired;
      },
    });
    expect(await apiError(stuck.me())).toEqual({ status: 401, body: { detail: 'Unauthorized' } });
    expect(again).toBe(1);
    expect(stuckRequests).toHaveLength(2);

    // No token from the hook: the 401 stands, nothing is retried.
    const { api: none, requests: noneRequests } = client({ token: expired, onUnauthorized: () => undefined });
    expect(await apiError(none.me())).toEqual({ status: 401, body: { detail: 'Unauthorized' } });
    expect(noneRequests).toHaveLength(1);
  });

  it('an aborted call rejects with the abort, and nothing is created', async () => {
    const { api } = await registered();
    const title = unique('Aborted ');
    const before = new AbortController();
    before.abort();
    expect(await failure(api.createArticle({ title, content: 'Text' }, { signal: before.signal }))).toMatchObject({ name: 'AbortError' });
    expect(await api.listArticles({ title })).toEqual({ items: [], count: 0 });

    const during = new AbortController();
    const pending = api.listArticles({}, { signal: during.signal });
    during.abort();
    expect(await failure(pending)).toMatchObject({ name: 'AbortError' });
  });
});

describe.each(DIALECTS)('generated client, list filters (%s)', (dialect) => {
  let svc: RunningService;
  let server: Awaited<ReturnType<typeof listen>>;
  const ids: Record<string, number> = {};
  beforeAll(async () => {
    svc = await startQuerying(dialect);
    server = await listen(svc, '');
    const db = svc.database.db;
    const genres = await insertRows(db, 'genres', [{ name: 'Pulp' }, { name: 'Poetry' }]);
    const books: [string, number, string | null, string | null, number[]][] = [
      ['Short', 10, '1950-01-01', 'A subtitle', [0]],
      ['Middle', 20, '1995-06-15', null, [1]],
      ['Long', 30, '2005-03-03', null, [0, 1]],
    ];
    for (const [title, pages, published_on, subtitle, genreIndexes] of books) {
      const [id] = await insertRows(db, 'books', [{ title, pages, published_on, subtitle, added_at: '2024-01-01T00:00:00.000Z' }]);
      ids[title] = Number(id);
      for (const g of genreIndexes) await insertRows(db, 'books_genres', [{ book_id: id, genre_id: genres[g] }], 'book_id');
    }
  });
  afterAll(async () => {
    await server.close();
    await svc.close();
  });
  afterEach(() => expect(svc.errors).toEqual([]));

  const page = (...titles: string[]) => ({ items: titles.map((title) => ({ id: ids[title], title })), count: titles.length });

  it('sends lists separated by commas, ranges as two values, and booleans and numbers as text', async () => {
    const api = createQueryingClient({ baseUrl: server.baseUrl });
    expect(await api.listBooks({ pages_in: [10, 30], ordering: 'id' })).toEqual(page('Short', 'Long'));
    expect(await api.listBooks({ pages_range: [15, 30], ordering: '-title' })).toEqual(page('Middle', 'Long'));
    expect(await api.listBooks({ published_between: ['1990-01-01', '2010-12-31'], ordering: 'id' })).toEqual(page('Middle', 'Long'));
    expect(await api.listBooks({ genres: ['Poetry'], no_subtitle: true, ordering: ['title'] })).toEqual(page('Long', 'Middle'));
    expect(await api.listBooks({ pages_gte: 20, ordering: 'id', page: 2, page_size: 1 })).toEqual({ ...page('Long'), count: 2 });
    const error = await failure(api.listBooks({ pages_range: [1, 2, 3] as unknown as [number, number] }));
    if (!(error instanceof QueryingApiError)) throw error;
    expect([error.status, error.issues.map((i) => i.loc)]).toEqual([422, [['query', 'pages_range']]]);
  });
});

describe.each(DIALECTS)('generated client, keys and pages (%s)', (dialect) => {
  let svc: RunningService;
  let server: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
    server = await listen(svc, '/v');
  });
  afterAll(async () => {
    await server.close();
    await svc.close();
  });
  afterEach(() => expect(svc.errors).toEqual([]));

  it('escapes string keys in paths, and reads limit/offset and results pages', async () => {
    const api = createShowcaseClient({ baseUrl: server.baseUrl });
    for (const code of ['a b', 'c/d', 'e?f'])
      expect(await api.createMaker({ code, title: `Maker ${code}`, founded: null })).toEqual({ code, title: `Maker ${code}` });
    expect(await api.retrieveMaker('c/d')).toEqual({ code: 'c/d', title: 'Maker c/d', founded: null });
    expect(await api.updateMaker('e?f', { founded: 1999 })).toEqual({ code: 'e?f', title: 'Maker e?f' });
    expect(await api.listMakers({ page: 2, page_size: 2 })).toEqual({
      count: 3,
      next: null,
      previous: 1,
      results: [expect.objectContaining({ code: expect.any(String) })],
    });

    for (const name of ['gamma', 'alpha', 'beta']) await api.createWidget({ name, maker: 'a b', extra: { tags: [name] } });
    const page = await api.listWidgets({ ordering: '-name', limit: 1, offset: 1 });
    expect([page.count, page.items.map((w) => [w.name, w.maker, w.extra])]).toEqual([3, [['beta', 'a b', { tags: ['beta'] }]]]);

    expect(await api.echo('two words', { times: 2 })).toEqual({ words: ['two words', 'two words'] });
  });

  it('sends bulk requests: an atomic route answers the records, one that is not a result per item', async () => {
    const api = createShowcaseClient({ baseUrl: server.baseUrl });
    const crates = await api.bulkCreateCrates([{ code: 'k1' }, { code: 'k2', quantity: 4 }]);
    expect(crates.map((c) => [c.code, c.quantity])).toEqual([
      ['k1', 0],
      ['k2', 4],
    ]);
    const roles = { headers: { 'X-Roles': 'staff' } };
    expect(await api.bulkUpdateCrates([{ id: crates[0].id, quantity: 1 }], roles)).toEqual([{ ...crates[0], quantity: 1 }]);
    expect(await api.bulkDeleteCrates({ ids: crates.map((c) => c.id) }, roles)).toBeUndefined();

    const results = await api.bulkCreateWidgets([{ name: 'bulk-one' }, { name: 'bulk-one' }]);
    expect(results.map((r) => [r.status, r.data?.name])).toEqual([
      [201, 'bulk-one'],
      [409, undefined],
    ]);
  });
});
