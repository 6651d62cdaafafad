/**
 * The blog under a seeded fuzzer (test/support/fuzz.ts, on fast-check) driven by its own OpenAPI document: every
 * operation, hostile values in every parameter and body field, without a token, with a garbage one,
 * as a plain user and as staff, then every query parameter alone with the edge of every column type.
 * Whatever comes back, it is never a 5xx and never a hang (10 s per request).
 */
import fc from 'fast-check';
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
 * to 5,000 levels (in lists and in objects), and nested writes of up to 3,000 children: fast-check
 * properties from a fixed seed. Every answer is a 2xx or a 4xx, within 10 s.
 */
describe.each(DIALECTS)('fuzzing the showcase with large work (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());

  it('answers long lists, deep JSON and big nested bodies without a 5xx', async () => {
    // Each property runs its number of requests from the fixed seed, and stops at its first failure.
    const runs = (numRuns: number) => ({ seed: SEED, numRuns, endOnFailure: true });
    /** `n` values of `value`, for each `n` of `lengths`. */
    const lists = <T>(lengths: number[], value: fc.Arbitrary<T>) =>
      fc.constantFrom(...lengths).chain((n) => fc.array(value, { minLength: n, maxLength: n }));
    const rating = fc.integer({ min: -2000, max: 1999 });
    const clerk = { 'X-Roles': 'clerk' };
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    /** Sends one request; false (and the failure noted) for a 5xx or an answer later than 10 s. */
    const send = async (what: string, run: () => request.Test) => {
      const started = Date.now();
      const res = await run().timeout(10_000);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const ok = res.status < 500 && Date.now() - started <= 10_000;
      if (!ok) failures.push(`${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      return { res, ok };
    };
    const bookmarks: number[] = [];
    let made = 0;
    await fc.assert(
      fc.asyncProperty(lists([0, 1, 999, 1000, 1001, 5000], rating), async (ratings) => {
        const n = ratings.length;
        const { res, ok } = await send(`bookmark of ${n} ratings`, () =>
          request(svc.app)
            .post('/v/bookmarks/')
            .send({ title: `f${made++}`, ratings, sizes: Array(Math.min(n, 2000)).fill('S') }),
        );
        if (res.status === 201) bookmarks.push(res.body.id);
        return ok;
      }),
      runs(12),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1000 }).chain((n) => fc.array(rating, { minLength: n, maxLength: n })),
        fc.constantFrom('contains', 'overlap'),
        async (list, lookup) => {
          const values = list.join(',');
          return (
            await send(`ratings__${lookup} of ${values.length} characters`, () =>
              request(svc.app).get(`/v/bookmarks/?ratings__${lookup}=${values}`),
            )
          ).ok;
        },
      ),
      runs(12),
    );
    let widgets = 0;
    await fc.assert(
      // Each level a list or an object, around a string or a number.
      fc.asyncProperty(lists([1, 19, 20, 21, 32, 100, 4100, 5000], fc.boolean()), fc.boolean(), async (levels, text) => {
        let extra: unknown = text ? 'x' : 1;
        for (const list of levels) extra = list ? [extra] : { k: extra };
        return (
          await send(`widget with json ${levels.length} deep`, () =>
            request(svc.app)
              .post('/v/widgets/')
              .send({ name: `fz-${dialect}-${widgets++}`, extra }),
          )
        ).ok;
      }),
      runs(16),
    );
    let order: number | undefined;
    let orders = 0;
    // A line's quantity: its index (two times in three) or a string of up to 49 x.
    const quantity = fc.oneof({ weight: 2, arbitrary: fc.constant(-1) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 49 }) });
    await fc.assert(
      fc.asyncProperty(lists([0, 1, 100, 101, 1000, 3000], quantity), async (quantities) => {
        const lines = quantities.map((q, j) => ({ product: `p${j}`, quantity: q < 0 ? j : 'x'.repeat(q) }));
        const { res, ok } = await send(`order of ${lines.length} lines`, () =>
          request(svc.app)
            .post('/v/orders/')
            .set(clerk)
            .send({ customer: `c${orders++}`, lines, notes: lines.map((l) => ({ text: l.product })) }),
        );
        if (res.status === 201) order = res.body.id;
        return ok;
      }),
      runs(10),
    );
    if (order !== undefined) {
      const id = order;
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(100, 101, 2000), async (n) => {
          return (
            await send(`order update of ${n} notes`, () =>
              request(svc.app)
                .patch(`/v/orders/${id}/`)
                .set(clerk)
                .send({ notes: Array.from({ length: n }, (_, j) => ({ text: `n${j}` })) }),
            )
          ).ok;
        }),
        runs(4),
      );
    }
    console.log(`large-work fuzz (${dialect}, seed ${SEED}): ${[...statuses].map(([s, n]) => `${s}×${n}`).join(', ')}`);
    expect(failures).toEqual([]);
    expect(takeErrors(svc)).toEqual([]);
  }, 180_000);
});
