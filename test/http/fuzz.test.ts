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
import { startBlog, type RunningService } from '../support/services';

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
