/**
 * CursorPagination over HTTP on SQLite and PostgreSQL: the showcase's readings (a list ordered by
 * `-rank` with ties, `?ordering=` over an integer, a string, a datetime and a float), their labels
 * relation (uuid keys), and the `/letters/` endpoint (an array the hook returns). Walking the pages
 * forward and back gives every row once, in order; rows inserted meanwhile neither repeat nor skip
 * one; a cursor of another ordering, a tampered cursor or a bad page_size is a 422; no COUNT query;
 * the OpenAPI document. Whole bodies, exact statuses.
 */
import request from 'supertest';
import { type Cursor } from '../../runtime';
import { encodeCursor } from '../../runtime/query/pagination';
import { DIALECTS } from '../support/databases';
import { insertRows, takeErrors } from '../support/fixtures';
import { startShowcase, type RunningService } from '../support/services';

interface Reading {
  id: number;
  sensor: string;
  value: number;
  rank: number;
  taken_at: string;
}

const invalidCursor = (msg = 'Invalid cursor') => ({ detail: [{ type: 'value_error', loc: ['query', 'cursor'], msg }] });

/** base64url of any text, as a client could forge a cursor. */
const forged = (text: string) => Buffer.from(text).toString('base64url');

/** The readings in the list's default order: rank descending, then id. */
const byRankDesc = (a: Reading, b: Reading) => b.rank - a.rank || b.id - a.id;

describe.each(DIALECTS)('CursorPagination: the showcase readings (%s)', (dialect) => {
  let svc: RunningService;
  let readings: Reading[];
  // Ranks with ties (three 5s, three 3s, two 2s, two 1s), so the primary key decides within them.
  const RANKS = [5, 3, 5, 1, 3, 5, 2, 2, 4, 1, 3];
  const SENSORS = ['kappa', 'alpha', 'delta', 'alpha', 'echo', 'bravo', 'delta', 'golf', 'alpha', 'foxtrot', 'charlie'];

  async function addReading(values: Omit<Reading, 'id'>): Promise<Reading> {
    const [id] = await insertRows(svc.database.db, 'readings', [values]);
    return { id: Number(id), ...values };
  }

  beforeAll(async () => {
    svc = await startShowcase(dialect);
    readings = [];
    for (const [i, rank] of RANKS.entries()) {
      // taken_at descends as i grows, value is unrelated to both.
      const taken_at = new Date(Date.UTC(2026, 0, 20 - i, 8, 30, 15, 250)).toISOString();
      readings.push(await addReading({ sensor: SENSORS[i], value: ((i * 7) % 11) + 0.5, rank, taken_at }));
    }
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  /**
   * GET of a path with its query, or of a page link. Links are the path and query of the page
   * (without SVC_PUBLIC_URL, a relative reference: never on the host the request named).
   */
  async function get(target: string): Promise<{ status: number; body: any }> {
    const res = await request(svc.app).get(target);
    const body = res.body;
    for (const key of ['next', 'previous'] as const) {
      if (typeof body?.[key] === 'string') expect(body[key].startsWith('/v/')).toBe(true);
    }
    return { status: res.status, body };
  }

  /** Every page from `start` following `next`, then back from the last following `previous`. */
  async function walk<T>(start: string): Promise<{ forward: T[][]; backward: T[][] }> {
    const forward: T[][] = [];
    let page = await get(start);
    for (;;) {
      expect(page.status).toBe(200);
      forward.push(page.body.results);
      if (page.body.next === null) break;
      page = await get(page.body.next);
    }
    const backward: T[][] = [page.body.results];
    while (page.body.previous !== null) {
      page = await get(page.body.previous);
      expect(page.status).toBe(200);
      backward.push(page.body.results);
    }
    return { forward, backward };
  }

  const link = (query: string) => `/v/readings/?${query}`;
  const cursorOf = (ordering: string[], position: Cursor['position'], reverse = false) => encodeCursor({ ordering, position, reverse });

  it('answers the first page with a next link and no previous one, in the default order, without a count', async () => {
    const sorted = [...readings].sort(byRankDesc);
    const page = await get('/v/readings/');
    expect(page.status).toBe(200);
    const last = sorted[2];
    expect(page.body).toEqual({
      next: link(`cursor=${cursorOf(['-rank', '-id'], [last.rank, last.id])}`),
      previous: null,
      results: sorted.slice(0, 3),
    });
  });

  it('walks forward and back through every page: each row once, in order, ties by primary key', async () => {
    const sorted = [...readings].sort(byRankDesc);
    const { forward, backward } = await walk<Reading>('/v/readings/');
    expect(forward.map((p) => p.length)).toEqual([3, 3, 3, 2]);
    expect(forward.flat()).toEqual(sorted);
    // Each page going back is still in the list's order; together they are the list again.
    expect(backward.reverse().flat()).toEqual(sorted);
  });

  it('links the next page from a page reached backward, and a previous page from the first is none', async () => {
    const sorted = [...readings].sort(byRankDesc);
    const first = await get('/v/readings/');
    const second = await get(first.body.next);
    const back = await get(second.body.previous);
    expect(back.body.results).toEqual(sorted.slice(0, 3));
    expect(back.body.previous).toBeNull();
    const again = await get(back.body.next);
    expect(again.body).toEqual(second.body);
  });

  it.each<[string, (a: Reading, b: Reading) => number]>([
    ['rank', (a, b) => a.rank - b.rank || a.id - b.id],
    ['sensor', (a, b) => (a.sensor < b.sensor ? -1 : a.sensor > b.sensor ? 1 : a.id - b.id)],
    ['-taken_at', (a, b) => (a.taken_at < b.taken_at ? 1 : a.taken_at > b.taken_at ? -1 : a.id - b.id)],
    ['-value', (a, b) => b.value - a.value || a.id - b.id],
    ['-sensor,rank', (a, b) => (a.sensor < b.sensor ? 1 : a.sensor > b.sensor ? -1 : a.rank - b.rank || a.id - b.id)],
  ])('follows ?ordering=%s forward and back', async (ordering, compare) => {
    const sorted = [...readings].sort(compare);
    const { forward, backward } = await walk<Reading>(`/v/readings/?ordering=${ordering}&page_size=4`);
    expect(forward.map((p) => p.length)).toEqual([4, 4, 3]);
    expect(forward.flat()).toEqual(sorted);
    expect(backward.reverse().flat()).toEqual(sorted);
  });

  it('keeps ?ordering= and page_size in the links', async () => {
    const sorted = [...readings].sort((a, b) => a.rank - b.rank || a.id - b.id);
    const page = await get('/v/readings/?ordering=rank&page_size=2');
    const last = sorted[1];
    expect(page.body).toEqual({
      next: link(`ordering=rank&page_size=2&cursor=${cursorOf(['rank', 'id'], [last.rank, last.id])}`),
      previous: null,
      results: sorted.slice(0, 2),
    });
    const second = await get(page.body.next);
    expect(second.body.previous).toBe(
      link(`ordering=rank&page_size=2&cursor=${cursorOf(['rank', 'id'], [sorted[2].rank, sorted[2].id], true)}`),
    );
  });

  it('refuses a cursor made for another ordering', async () => {
    const first = await get('/v/readings/');
    const cursor = new URL(first.body.next, 'http://x').searchParams.get('cursor');
    expect(await get(`/v/readings/?ordering=sensor&cursor=${cursor}`)).toEqual({
      status: 422,
      body: invalidCursor('Cursor was made for another ordering'),
    });
    const bySensor = await get('/v/readings/?ordering=sensor');
    const sensorCursor = new URL(bySensor.body.next, 'http://x').searchParams.get('cursor');
    expect(await get(`/v/readings/?cursor=${sensorCursor}`)).toEqual({
      status: 422,
      body: invalidCursor('Cursor was made for another ordering'),
    });
    expect(await get(`/v/readings/?ordering=-sensor&cursor=${sensorCursor}`)).toEqual({
      status: 422,
      body: invalidCursor('Cursor was made for another ordering'),
    });
  });

  it.each<[string, string]>([
    ['garbage', 'not a cursor!'],
    ['base64 of text', forged('hello')],
    ['base64 of other JSON', forged('{"a":1}')],
    ['base64 of a JSON array', forged('[1,2]')],
    ['an extra key', forged('{"ordering":["-rank","-id"],"position":[5,1],"reverse":false,"x":1}')],
    ['a string direction', forged('{"ordering":["-rank","-id"],"position":[5,1],"reverse":"no"}')],
    ['an object in the position', forged('{"ordering":["-rank","-id"],"position":[{"a":1},1],"reverse":false}')],
    ['an empty position', forged('{"ordering":["-rank","-id"],"position":[],"reverse":false}')],
    ['a null value', forged('{"ordering":["-rank","-id"],"position":[null,1],"reverse":false}')],
    ['an empty ordering', forged('{"ordering":[],"position":null,"reverse":false}')],
    ['base64 with padding', `${forged('{"ordering":["-rank","-id"],"position":null,"reverse":true}')}=`],
  ])('refuses a tampered cursor (%s) with a 422', async (_label, cursor) => {
    expect(await get(`/v/readings/?cursor=${encodeURIComponent(cursor)}`)).toEqual({ status: 422, body: invalidCursor() });
  });

  it.each<[string, string, Cursor['position']]>([
    ['a string for an integer', '-rank,-id', ['five', 1]],
    ['an integer too large to be exact', '-rank,-id', [5, 2 ** 60]],
    ['an integer past the 32-bit column', '-rank,-id', [2 ** 31, 1]],
    ['a NUL character in a string', 'sensor,id', ['al\u0000pha', 1]],
    ['a datetime in year 0', '-taken_at,-id', ['0000-06-01T10:00:00.000Z', 1]],
    ['a fraction for an integer key', '-rank,-id', [5, 1.5]],
    ['a boolean for an integer', '-rank,-id', [true, 1]],
    ['too few values', '-rank,-id', [5]],
    ['too many values', '-rank,-id', [5, 1, 2]],
    ['a number for a string', 'sensor,id', [12, 1]],
    ['a date that is no datetime', '-taken_at,-id', ['2026-01-01', 1]],
    ['a datetime not in UTC', '-taken_at,-id', ['2026-01-01T10:00:00.000+02:00', 1]],
    ['an impossible datetime', '-taken_at,-id', ['2026-02-30T10:00:00.000Z', 1]],
    ['a string for a float', 'value,id', ['1.5', 1]],
  ])('refuses a cursor with %s with a 422', async (_label, ordering, position) => {
    const query = ordering === '-rank,-id' ? '' : `ordering=${ordering.replace(/,-?id$/, '')}&`;
    const cursor = cursorOf(ordering.split(','), position);
    expect(await get(`/v/readings/?${query}cursor=${cursor}`)).toEqual({ status: 422, body: invalidCursor() });
  });

  it('answers an empty page past the end with a previous link to the last page', async () => {
    const sorted = [...readings].sort(byRankDesc);
    const past = await get(`/v/readings/?cursor=${cursorOf(['-rank', '-id'], [0, 1])}`);
    expect(past.body).toEqual({ next: null, previous: link(`cursor=${cursorOf(['-rank', '-id'], null, true)}`), results: [] });
    const last = await get(past.body.previous);
    expect(last.body).toEqual({
      next: null,
      previous: link(`cursor=${cursorOf(['-rank', '-id'], [sorted[8].rank, sorted[8].id], true)}`),
      results: sorted.slice(8),
    });
    // Before the first row: nothing, and the next page is the first.
    const before = await get(`/v/readings/?cursor=${cursorOf(['-rank', '-id'], [99, 1], true)}`);
    expect(before.body).toEqual({ next: '/v/readings/', previous: null, results: [] });
  });

  it('bounds page_size: at least 1, at most the max_page_size option', async () => {
    expect((await get('/v/readings/?page_size=50')).body.results).toHaveLength(5);
    expect((await get('/v/readings/?page_size=1')).body.results).toHaveLength(1);
    expect(await get('/v/readings/?page_size=0')).toEqual({
      status: 422,
      body: { detail: [{ type: 'greater_than_equal', loc: ['query', 'page_size'], msg: 'Input should be greater than or equal to 1' }] },
    });
    expect(await get('/v/readings/?page_size=x')).toEqual({
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

  it('reads a page without counting the list', async () => {
    const statements: string[] = [];
    const listener = (q: { sql: string }) => statements.push(q.sql);
    svc.database.db.on('query', listener);
    try {
      const first = await get('/v/readings/');
      await get(first.body.next);
    } finally {
      svc.database.db.removeListener('query', listener);
    }
    expect(statements).toHaveLength(2);
    expect(statements.filter((sql) => /count\(/i.test(sql))).toEqual([]);
  });

  it('neither repeats nor skips a row when rows are inserted during the walk', async () => {
    const db = svc.database.db;
    const seen: Reading[] = [];
    let page = await get('/v/readings/?page_size=2');
    seen.push(...page.body.results);
    // After the first page (boundary rank 5): a row before it, one tied with it (a larger key: ties run
    // by descending key here, like the rank, so before it too), and rows further on; then more after
    // the second page.
    const before = await addReading({ sensor: 'new', value: 1, rank: 9, taken_at: '2026-02-01T00:00:00.000Z' });
    const tied = await addReading({ sensor: 'new', value: 1, rank: 5, taken_at: '2026-02-01T00:00:00.000Z' });
    const later = await addReading({ sensor: 'new', value: 1, rank: 0, taken_at: '2026-02-01T00:00:00.000Z' });
    page = await get(page.body.next);
    seen.push(...page.body.results);
    const between = await addReading({ sensor: 'new', value: 1, rank: 2, taken_at: '2026-02-01T00:00:00.000Z' });
    while (page.body.next !== null) {
      page = await get(page.body.next);
      seen.push(...page.body.results);
    }
    try {
      // Every row in the list's order, each once: the original ones and those inserted after the position reached.
      expect(seen).toEqual([...readings, later, between].sort(byRankDesc));
      expect(seen).not.toContainEqual(before);
      expect(seen).not.toContainEqual(tied);
    } finally {
      await db('readings').whereIn('id', [before.id, tied.id, later.id, between.id]).delete();
    }
  });

  it('pages a relation listing by its uuid keys, forward and back', async () => {
    const labels = ['red', 'green', 'blue', 'amber'].map((text, i) => ({ id: `0000000${i}-aaaa-4bbb-8ccc-00000000000${4 - i}`, text }));
    await insertRows(svc.database.db, 'labels', labels);
    const owner = readings[0].id;
    await insertRows(
      svc.database.db,
      'readings_labels',
      labels.map((l) => ({ reading_id: owner, label_id: l.id })),
      'reading_id',
    );
    const { forward, backward } = await walk<{ id: string; text: string }>(`/v/readings/${owner}/labels/`);
    expect(forward).toEqual([labels.slice(0, 3), labels.slice(3)]);
    expect(backward.reverse().flat()).toEqual(labels);
    const bad = await get(`/v/readings/${owner}/labels/?cursor=${cursorOf(['id'], ['not-a-uuid'])}`);
    expect(bad).toEqual({ status: 422, body: invalidCursor() });
  });

  it("pages an endpoint's array by position", async () => {
    const { forward, backward } = await walk<{ letter: string }>('/v/letters/');
    expect(forward).toEqual([[{ letter: 'a' }, { letter: 'b' }], [{ letter: 'c' }, { letter: 'd' }], [{ letter: 'e' }]]);
    expect(backward.reverse().flat()).toEqual(['a', 'b', 'c', 'd', 'e'].map((letter) => ({ letter })));
    // A position past the end: nothing after it, and the last page before it.
    const past = await get(`/v/letters/?cursor=${cursorOf(['index'], [99], true)}`);
    expect(past.body).toEqual({
      next: `/v/letters/?cursor=${cursorOf(['index'], [4])}`,
      previous: `/v/letters/?cursor=${cursorOf(['index'], [3], true)}`,
      results: [{ letter: 'd' }, { letter: 'e' }],
    });
    expect(await get(`/v/letters/?cursor=${cursorOf(['index'], [-1])}`)).toEqual({ status: 422, body: invalidCursor() });
    expect(await get(`/v/letters/?cursor=${cursorOf(['-rank', '-id'], [1, 1])}`)).toEqual({
      status: 422,
      body: invalidCursor('Cursor was made for another ordering'),
    });
  });

  it('documents the cursor and page_size parameters and the {next, previous, results} response', async () => {
    const doc = (await request(svc.app).get('/v/openapi.json')).body;
    for (const path of ['/v/readings/', '/v/readings/{pk}/labels/', '/v/letters/']) {
      const op = doc.paths[path].get;
      const names = op.parameters.filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name);
      expect(names.slice(0, 2)).toEqual(['cursor', 'page_size']);
      const cursor = op.parameters.find((p: { name: string }) => p.name === 'cursor');
      expect(cursor).toMatchObject({ in: 'query', required: false, schema: { type: 'string' } });
      const schema = op.responses['200'].content['application/json'].schema;
      expect(Object.keys(schema.properties)).toEqual(['next', 'previous', 'results']);
      expect(schema.required).toEqual(['next', 'previous', 'results']);
      expect(schema.properties.next).toMatchObject({ type: ['string', 'null'] });
    }
  });
});
