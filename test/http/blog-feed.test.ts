/**
 * The blog's feed, `GET /api/articles/feed/`: a list-level action paged by CursorPagination, on
 * SQLite and PostgreSQL. Walking it forward and back gives the articles the caller may read (the
 * published ones; with a token the caller's drafts too) newest first, ties by id descending, each
 * once and shaped as the list shapes them; an article published during the walk does not shift the
 * pages still to come; `?ordering=` is not read; tampered cursors and bad page sizes are 422s; the
 * OpenAPI entry. Whole bodies, exact statuses.
 */
import { createServer } from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { type Cursor } from '../../runtime';
import { encodeCursor } from '../../runtime/query/pagination';
import { makeArticle, makeUser, type BlogUser } from '../support/blog-fixtures';
import { DIALECTS } from '../support/databases';
import { takeErrors } from '../support/fixtures';
import { httpSecuritySettings } from '../../runtime/http/security-headers';
import { startBlog, type RunningService } from '../support/services';

interface Item {
  id: number;
  created_at: string;
  [field: string]: unknown;
}

const FEED = '/api/articles/feed/';

const invalidCursor = (msg = 'Invalid cursor') => ({ detail: [{ type: 'value_error', loc: ['query', 'cursor'], msg }] });

/** Newest first, ties by id in the same direction. */
const newestFirst = (a: Item, b: Item) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : b.id - a.id);

describe.each(DIALECTS)('the blog feed (%s)', (dialect) => {
  let svc: RunningService;
  let alice: BlogUser;
  let bob: BlogUser;

  // Days of January 2026: several articles share a timestamp, so the id decides among them.
  const at = (day: number) => new Date(Date.UTC(2026, 0, day, 9, 0, 0, 0)).toISOString();

  beforeAll(async () => {
    svc = await startBlog(dialect);
    alice = await makeUser(svc);
    bob = await makeUser(svc);
    const db = svc.database.db;
    const days = [3, 5, 5, 1, 5, 2, 3, 4];
    for (const [i, day] of days.entries()) {
      await makeArticle(db, { author_id: i % 2 ? bob.id : alice.id, title: `Published ${i}`, created_at: at(day) });
    }
    await makeArticle(db, { author_id: alice.id, title: 'Alice draft new', is_published: false, created_at: at(6) });
    await makeArticle(db, { author_id: alice.id, title: 'Alice draft tie', is_published: false, created_at: at(5) });
    await makeArticle(db, { author_id: bob.id, title: 'Bob draft', is_published: false, created_at: at(4) });
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  /** GET of a path or of a page link (a path and query: without SVC_PUBLIC_URL, a relative reference). */
  async function get(target: string, bearer?: string): Promise<{ status: number; body: any }> {
    const req = request(svc.app).get(target);
    const res = await (bearer ? req.set('Authorization', bearer) : req);
    for (const key of ['next', 'previous'] as const) {
      const link = res.body?.[key];
      if (typeof link === 'string') expect(link.startsWith('/api/')).toBe(true);
    }
    return { status: res.status, body: res.body };
  }

  /** Every page from `start` following `next`, then back from the last following `previous`. */
  async function walk(start: string, bearer?: string): Promise<{ forward: Item[][]; backward: Item[][] }> {
    const forward: Item[][] = [];
    let page = await get(start, bearer);
    for (;;) {
      expect(page.status).toBe(200);
      forward.push(page.body.results);
      if (page.body.next === null) break;
      page = await get(page.body.next, bearer);
    }
    const backward: Item[][] = [page.body.results];
    while (page.body.previous !== null) {
      page = await get(page.body.previous, bearer);
      expect(page.status).toBe(200);
      backward.push(page.body.results);
    }
    return { forward, backward };
  }

  /** The list's items (default ordering -created_at, one page), as the caller sees them. */
  async function listed(bearer?: string): Promise<Item[]> {
    const res = await get('/api/articles/?page_size=100', bearer);
    expect(res.status).toBe(200);
    return res.body.items;
  }

  const cursorOf = (position: Cursor['position'], reverse = false, ordering = ['-created_at', '-id']) =>
    encodeCursor({ ordering, position, reverse });

  it('answers the first page newest first with a next link, no previous one and no count', async () => {
    const items = await listed();
    const page = await get(`${FEED}?page_size=3`);
    const last = items[2];
    expect(page).toEqual({
      status: 200,
      body: { next: `${FEED}?page_size=3&cursor=${cursorOf([last.created_at, last.id])}`, previous: null, results: items.slice(0, 3) },
    });
  });

  it('walks forward and back through the published articles alone without a token: each once, newest first, ties by id descending', async () => {
    const { forward, backward } = await walk(`${FEED}?page_size=3`);
    const all = forward.flat();
    expect(forward.map((p) => p.length)).toEqual([3, 3, 2]);
    expect(all.map((a) => a.title).sort()).toEqual([
      'Published 0',
      'Published 1',
      'Published 2',
      'Published 3',
      'Published 4',
      'Published 5',
      'Published 6',
      'Published 7',
    ]);
    expect(all.every((a) => a.is_published === true)).toBe(true);
    expect(all).toEqual([...all].sort(newestFirst));
    expect(new Set(all.map((a) => a.id)).size).toBe(all.length);
    // Shaped and ordered exactly as the list answers them.
    expect(all).toEqual(await listed());
    expect(backward.reverse().flat()).toEqual(all);
  });

  it("adds the caller's own drafts with a token, not another author's", async () => {
    for (const user of [alice, bob]) {
      const { forward, backward } = await walk(`${FEED}?page_size=4`, user.bearer);
      const all = forward.flat();
      const drafts = all.filter((a) => a.is_published === false);
      expect(drafts.map((a) => a.title).sort()).toEqual(user === alice ? ['Alice draft new', 'Alice draft tie'] : ['Bob draft']);
      expect(drafts.every((a) => a.author === user.id)).toBe(true);
      expect(all).toEqual([...all].sort(newestFirst));
      expect(all).toEqual(await listed(user.bearer));
      expect(backward.reverse().flat()).toEqual(all);
    }
  });

  it('keeps the pages still to come when an article is published during the walk', async () => {
    const before = await listed();
    const first = await get(`${FEED}?page_size=3`);
    expect(first.body.results).toEqual(before.slice(0, 3));
    // A new article (newest of all) and a draft published meanwhile: neither shifts the next page.
    const db = svc.database.db;
    const fresh = await makeArticle(db, { author_id: bob.id, title: 'Published during the walk', created_at: at(7) });
    const published = await db('articles').where('title', 'Bob draft').update({ is_published: true });
    expect(published).toBe(1);
    try {
      const rest: Item[] = [];
      let page = await get(first.body.next);
      for (;;) {
        expect(page.status).toBe(200);
        rest.push(...page.body.results);
        if (page.body.next === null) break;
        page = await get(page.body.next);
      }
      // The new article sits before the position reached, so it is not among the pages to come; the
      // published draft (4 January) takes its place in the order, after the position.
      const after = await listed();
      expect(after[0].id).toBe(fresh);
      const position = before[2];
      expect(rest).toEqual(after.filter((a) => newestFirst(a, position) > 0));
      expect(rest.map((a) => a.title)).toContain('Bob draft');
      expect(rest.map((a) => a.id)).not.toContain(fresh);
    } finally {
      await db('articles').where('id', fresh).delete();
      await db('articles').where('title', 'Bob draft').update({ is_published: false });
    }
  });

  it('reads in default_ordering alone: ?ordering= is not one of its parameters', async () => {
    const page = await get(`${FEED}?page_size=2&ordering=title`);
    const items = await listed();
    expect(page.status).toBe(200);
    expect(page.body.results).toEqual(items.slice(0, 2));
    expect(page.body.next).toBe(`${FEED}?page_size=2&ordering=title&cursor=${cursorOf([items[1].created_at, items[1].id])}`);
  });

  it.each<[string, string, object]>([
    ['not base64url', 'not a cursor!', invalidCursor()],
    ['not JSON', Buffer.from('{"ordering":').toString('base64url'), invalidCursor()],
    ['a datetime not written as the service writes it', cursorOf(['2026-01-05', 1]), invalidCursor()],
    ['a string for the integer key', cursorOf(['2026-01-05T09:00:00.000Z', '1']), invalidCursor()],
    ['a key past 32 bits', cursorOf(['2026-01-05T09:00:00.000Z', 2 ** 31]), invalidCursor()],
    ['too few values', cursorOf(['2026-01-05T09:00:00.000Z']), invalidCursor()],
    ['another ordering', cursorOf(['Published 1', 1], false, ['title', 'id']), invalidCursor('Cursor was made for another ordering')],
  ])('refuses a cursor with %s: 422 at query.cursor', async (_, cursor, body) => {
    expect(await get(`${FEED}?cursor=${encodeURIComponent(cursor)}`)).toEqual({ status: 422, body });
  });

  it('bounds page_size: at least 1, at most SVC_MAX_PER_PAGE_SIZE (100)', async () => {
    expect((await get(`${FEED}?page_size=1`)).body.results).toHaveLength(1);
    const all = await get(`${FEED}?page_size=1000`);
    expect(all.body).toEqual({ next: null, previous: null, results: await listed() });
    expect(await get(`${FEED}?page_size=0`)).toEqual({
      status: 422,
      body: { detail: [{ type: 'greater_than_equal', loc: ['query', 'page_size'], msg: 'Input should be greater than or equal to 1' }] },
    });
    expect(await get(`${FEED}?page_size=x`)).toEqual({
      status: 422,
      body: {
        detail: [
          {
            type: 'int_parsing',
            loc: ['query', 'page_size'],
            msg: 'Input should be a valid integer, unable to parse string as an integer',
          },
        ],
      },
    });
  });

  it('is documented in OpenAPI: public, cursor and page_size, the cursor page of the list items', async () => {
    const doc = (await request(svc.app).get('/api/openapi.json')).body;
    const op = doc.paths['/api/articles/feed/'].get;
    expect(op.operationId).toBe('feed_articles');
    expect(op.summary).toBe('Articles newest first, paged by cursor: stable while articles are published.');
    expect(op.tags).toEqual(['Articles']);
    expect(op.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(['query:cursor', 'query:page_size']);
    const list = doc.paths['/api/articles/'].get;
    expect(op.security).toEqual(list.security);
    const schema = op.responses['200'].content['application/json'].schema;
    expect(Object.keys(schema.properties)).toEqual(['next', 'previous', 'results']);
    expect(schema.required).toEqual(['next', 'previous', 'results']);
    expect(schema.properties.results).toEqual({ type: 'array', items: { $ref: '#/components/schemas/ArticleOut' } });
  });
});

describe.each(DIALECTS)("the blog feed's links and the Host header (%s)", (dialect) => {
  const services: RunningService[] = [];
  afterAll(async () => {
    for (const svc of services) await svc.close();
  });
  const start = async (env: Record<string, string>) => {
    const svc = await startBlog(dialect, {}, { security: httpSecuritySettings(env) });
    services.push(svc);
    const author = await makeUser(svc);
    for (let i = 0; i < 3; i++) await makeArticle(svc.database.db, { author_id: author.id, title: `Linked ${i}` });
    return svc;
  };
  const cursorOf = (item: { created_at: string; id: number }) =>
    encodeCursor({ ordering: ['-created_at', '-id'], position: [item.created_at, item.id], reverse: false });

  it('builds the links from the path and query alone, whatever Host (or absolute target) the request names', async () => {
    const svc = await start({});
    for (const host of ['evil.example', 'evil.example:8443', '127.0.0.1']) {
      const res = await request(svc.app).get(`${FEED}?page_size=2`).set('Host', host);
      expect(res.status).toBe(200);
      expect(res.body.next).toBe(`${FEED}?page_size=2&cursor=${cursorOf(res.body.results[1])}`);
      const back = await request(svc.app).get(res.body.next).set('Host', host);
      expect(back.body.previous).toBe(
        `${FEED}?page_size=2&cursor=${encodeCursor({ ordering: ['-created_at', '-id'], position: [back.body.results[0].created_at, back.body.results[0].id], reverse: true })}`,
      );
    }
    expect(takeErrors(svc)).toEqual([]);
  });

  it('with SVC_PUBLIC_URL, the links are absolute URLs on it', async () => {
    const svc = await start({ SVC_PUBLIC_URL: 'https://api.example.com/' });
    const res = await request(svc.app).get(`${FEED}?page_size=2`).set('Host', 'evil.example');
    expect(res.status).toBe(200);
    expect(res.body.next).toBe(`https://api.example.com${FEED}?page_size=2&cursor=${cursorOf(res.body.results[1])}`);
    expect(takeErrors(svc)).toEqual([]);
  });

  it('refuses a request with two Host headers: 400 {"detail": "Bad Request"}', async () => {
    const svc = await start({});
    const server = createServer(svc.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      const raw = (head: string) =>
        new Promise<string>((resolve, reject) => {
          const socket = net.connect(port, '127.0.0.1');
          let text = '';
          socket.on('data', (chunk) => (text += chunk.toString('latin1')));
          socket.on('end', () => resolve(text));
          socket.on('error', reject);
          socket.write(`${head}Connection: close\r\n\r\n`);
        });
      for (const hosts of [
        ['127.0.0.1', 'evil.example'],
        ['evil.example', '127.0.0.1'],
        ['127.0.0.1', '127.0.0.1'],
      ]) {
        const text = await raw(`GET ${FEED}?page_size=2 HTTP/1.1\r\n${hosts.map((h) => `Host: ${h}\r\n`).join('')}`);
        const [head, body] = text.split('\r\n\r\n');
        expect(head.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
        expect(JSON.parse(body)).toEqual({ detail: 'Bad Request' });
      }
      const one = await raw(`GET ${FEED}?page_size=2 HTTP/1.1\r\nHost: 127.0.0.1\r\n`);
      expect(one.split('\r\n')[0]).toBe('HTTP/1.1 200 OK');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(takeErrors(svc)).toEqual([]);
  });
});
