/**
 * The blog under a seeded fuzzer (test/support/fuzz.ts) driven by its own OpenAPI document: every
 * operation, hostile values in every parameter and body field, without a token, with a garbage one,
 * as a plain user and as staff, then every query parameter alone with the edge of every column type.
 * Whatever comes back, it is never a 5xx and never a hang (10 s per request).
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { makeArticle, makeCategory, makeTag, makeUser, relateTags } from '../support/blog-fixtures';
import { takeErrors } from '../support/fixtures';
import { formatStatuses, fuzz, type OpenApiDocument } from '../support/fuzz';
import { startBlog, startShowcase, type RunningService } from '../support/services';

const SEED = 20261123;

describe.each(DIALECTS)('fuzzing the blog (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startBlog(dialect);
  });
  afterAll(() => svc.close());

  it('answers every hostile request without a 5xx or a hang', async () => {
    const staff = await makeUser(svc, { is_staff: true });
    const user = await makeUser(svc);
    const others = [await makeUser(svc), await makeUser(svc)];
    const categories = [await makeCategory(svc.database.db), await makeCategory(svc.database.db)];
    const tags = [await makeTag(svc.database.db), await makeTag(svc.database.db), await makeTag(svc.database.db)];
    const articles = [
      await makeArticle(svc.database.db, { author_id: user.id, category_id: categories[0] }),
      await makeArticle(svc.database.db, { author_id: others[0].id, is_published: true }),
      await makeArticle(svc.database.db, { author_id: staff.id }),
    ];
    await relateTags(svc.database.db, articles[0], tags.slice(0, 2));

    const doc = (await request(svc.app).get('/api/openapi.json')).body as OpenApiDocument;
    const report = await fuzz(svc.app, doc, {
      seed: SEED,
      perOperation: 55,
      timeoutMs: 10_000,
      auths: [
        { name: 'none', header: undefined },
        { name: 'user', header: user.bearer },
        { name: 'staff', header: staff.bearer },
        { name: 'staff', header: staff.bearer },
        { name: 'garbage', header: 'Bearer not.a.token' },
      ],
      keys: { articles, categories, tags, users: others.map((u) => u.id) },
      sweepAuth: { name: 'staff', header: staff.bearer },
    });

    console.log(`fuzz (${dialect}, seed ${SEED}): ${report.requests} requests; ${formatStatuses(report.statuses)}`);
    expect(report.failures.slice(0, 20)).toEqual([]);
    expect(takeErrors(svc)).toEqual([]);
    expect(report.requests).toBeGreaterThan(1500);
  }, 180_000);
});

/**
 * The showcase under bodies and queries that make one request's work large: long lists (to past
 * the default cap of 1000), `contains`/`overlap` of up to 1000 values, `json` values nested from 1
 * to 5,000 levels (in lists and in objects), and nested writes of up to 3,000 children, from a fixed
 * seed. Every answer is a 2xx or a 4xx, within 10 s.
 */
describe.each(DIALECTS)('fuzzing the showcase with large work (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());

  it('answers long lists, deep JSON and big nested bodies without a 5xx', async () => {
    let state = SEED;
    const random = (n: number) => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state % n;
    };
    const deep = (depth: number): unknown => {
      let value: unknown = random(2) ? 'x' : 1;
      for (let i = 0; i < depth; i++) value = random(2) ? [value] : { k: value };
      return value;
    };
    const clerk = { 'X-Roles': 'clerk' };
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    const send = async (what: string, run: () => request.Test) => {
      const started = Date.now();
      const res = await run().timeout(10_000);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500 || Date.now() - started > 10_000) failures.push(`${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      return res;
    };
    const bookmarks: number[] = [];
    for (let i = 0; i < 12; i++) {
      const n = [0, 1, 999, 1000, 1001, 5000][random(6)];
      const ratings = Array.from({ length: n }, () => random(4000) - 2000);
      const res = await send(`bookmark of ${n} ratings`, () => request(svc.app).post('/v/bookmarks/').send({ title: `f${i}`, ratings, sizes: Array(Math.min(n, 2000)).fill('S') }));
      if (res.status === 201) bookmarks.push(res.body.id);
    }
    for (let i = 0; i < 12; i++) {
      const values = Array.from({ length: 1 + random(1000) }, () => random(4000) - 2000).join(',');
      const lookup = random(2) ? 'contains' : 'overlap';
      await send(`ratings__${lookup} of ${values.length} characters`, () => request(svc.app).get(`/v/bookmarks/?ratings__${lookup}=${values}`));
    }
    for (let i = 0; i < 16; i++) {
      const depth = [1, 19, 20, 21, 32, 100, 4100, 5000][random(8)];
      const extra = deep(depth);
      await send(`widget with json ${depth} deep`, () => request(svc.app).post('/v/widgets/').send({ name: `fz-${dialect}-${i}`, extra }));
    }
    let order: number | undefined;
    for (let i = 0; i < 10; i++) {
      const n = [0, 1, 100, 101, 1000, 3000][random(6)];
      const lines = Array.from({ length: n }, (_, j) => ({ product: `p${j}`, quantity: random(3) ? j : 'x'.repeat(random(50)) }));
      const res = await send(`order of ${n} lines`, () => request(svc.app).post('/v/orders/').set(clerk).send({ customer: `c${i}`, lines, notes: lines.map((l) => ({ text: l.product })) }));
      if (res.status === 201) order = res.body.id;
    }
    if (order !== undefined) {
      for (let i = 0; i < 4; i++) {
        const n = [100, 101, 2000][random(3)];
        await send(`order update of ${n} notes`, () => request(svc.app).patch(`/v/orders/${order}/`).set(clerk).send({ notes: Array.from({ length: n }, (_, j) => ({ text: `n${j}` })) }));
      }
    }
    console.log(`large-work fuzz (${dialect}, seed ${SEED}): ${[...statuses].map(([s, n]) => `${s}×${n}`).join(', ')}`);
    expect(failures).toEqual([]);
    expect(takeErrors(svc)).toEqual([]);
  }, 180_000);
});
