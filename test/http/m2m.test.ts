/**
 * Many-to-many relation endpoints (seed "M2M relation configuration", "M2M request and response
 * shapes", "M2M endpoints", the membership state table): the blog's article tags (contract: GET and
 * POST on `/articles/{id}/tags/`, GET public, POST for the author or staff) and the showcase's
 * widget labels (`path: /labels`, `append_slash: true`, a `text` filter, a related_schema, UUID
 * keys, limit/offset pagination).
 * Every transition with the exact response body and the join table checked; both lists at once;
 * duplicates; unknown body keys; a missing main object; auth; trailing slashes; pagination and
 * filters; OpenAPI; and parallel POSTs whose reported results must add up to the final membership.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import {
  ARTICLE_NOT_FOUND,
  articleTagIds,
  makeArticle,
  makeTag,
  makeUser,
  m2m,
  METHOD_NOT_ALLOWED,
  NOT_FOUND,
  relateTags,
  sortDetails,
  UNAUTHORIZED,
  widgetLabelIds,
  type BlogUser,
} from '../support/blog-fixtures';
import { DIALECTS } from '../support/databases';
import { startBlog, startShowcase, type RunningService } from '../support/services';
import { insertReturning } from '../../runtime/db/inserts';

const ONLY_AUTHOR_OR_STAFF = { error: 'forbidden', details: 'Only the author or staff can change the tags of an article' };
const MISSING_ID = 2147480000;

let nameSeq = 0;
/** A letters-and-digits suffix unique in this process (no `_` or `%`, which the filter tests use). */
const suffix = () => `${process.pid}x${++nameSeq}`;

/** For each key: how many responses say it was added, and how many say it was removed. */
function tally(bodies: { results: { details: string[] } }[], label: string, keys: string[]) {
  const out = new Map(keys.map((k) => [k, { added: 0, removed: 0 }]));
  for (const body of bodies) {
    for (const detail of body.results.details) {
      const m = new RegExp(`^${label} (.+) (added|removed)$`).exec(detail);
      if (!m || !out.has(m[1])) throw new Error(`unexpected result detail: ${detail}`);
      out.get(m[1])![m[2] as 'added' | 'removed'] += 1;
    }
  }
  return out;
}

/** The bodies of 30 parallel POSTs mixing add and remove (and both) over `keys`, each checked to be a 200 M2M answer. */
async function parallelPosts(post: (body: { add: unknown[]; remove: unknown[] }) => request.Test, keys: unknown[]) {
  const bodies = Array.from({ length: 30 }, (_, i) => {
    const add: unknown[] = [];
    const remove: unknown[] = [];
    keys.forEach((key, j) => {
      const mode = (i * 7 + j * 3 + Math.floor(i / 4)) % 4;
      if (mode === 0 || mode === 2) add.push(key);
      if (mode === 1 || mode === 2) remove.push(key);
    });
    return { add, remove };
  });
  const responses = await Promise.all(bodies.map((body) => post(body)));
  responses.forEach((res, i) => {
    expect({ status: res.status }).toEqual({ status: 200 });
    const { results, errors } = res.body;
    expect(results.count).toBe(results.details.length);
    expect(errors.count).toBe(errors.details.length);
    // Every key of each list is reported exactly once, as a result or as an error.
    expect(results.count + errors.count).toBe(bodies[i].add.length + bodies[i].remove.length);
  });
  // The run really raced: some requests added and some removed.
  const details = responses.flatMap((r) => r.body.results.details as string[]);
  expect(details.some((d) => d.endsWith(' added'))).toBe(true);
  expect(details.some((d) => d.endsWith(' removed'))).toBe(true);
  return responses.map((r) => r.body);
}

describe.each(DIALECTS)('article tags relation (%s)', (dialect) => {
  let svc: RunningService;
  let author: BlogUser;
  let other: BlogUser;
  let staff: BlogUser;
  beforeAll(async () => {
    svc = await startBlog(dialect);
    author = await makeUser(svc);
    other = await makeUser(svc);
    staff = await makeUser(svc, { is_staff: true });
  });
  afterAll(() => svc.close());
  afterEach(() => expect(svc.errors).toEqual([]));

  const api = () => request(svc.app);
  const db = () => svc.database.db;
  const post = (article: number, body: unknown, user: BlogUser | null = author) => {
    const req = api().post(`/api/articles/${article}/tags/`);
    return (user ? req.set('Authorization', user.bearer) : req).send(body as object);
  };
  /** The relation's GET path: the contract's `/articles/{id}/tags/` (the relation sets append_slash). */
  const tagsUrl = (article: number, query = '') => `/api/articles/${article}/tags/${query}`;
  const newArticle = (values: Record<string, unknown> = {}) => makeArticle(db(), { author_id: author.id, ...values });
  const newTags = async (n: number) => {
    const ids: number[] = [];
    for (let i = 0; i < n; i++) ids.push(await makeTag(db(), `t${suffix()}`));
    return ids;
  };

  describe('membership state table', () => {
    it('not related + add, the tag exists → related; "tag <id> added" in results', async () => {
      const article = await newArticle();
      const [t] = await newTags(1);
      const res = await post(article, { add: [t] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(m2m([`tag ${t} added`]));
      expect(await articleTagIds(db(), article)).toEqual([t]);
    });

    it('related + remove, the tag exists → not related; "tag <id> removed" in results', async () => {
      const article = await newArticle();
      const [t, keep] = await newTags(2);
      await relateTags(db(), article, [t, keep]);
      const res = await post(article, { remove: [t] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(m2m([`tag ${t} removed`]));
      expect(await articleTagIds(db(), article)).toEqual([keep]);
    });

    it('related + add → still related (one row); "tag <id> is already related" in errors', async () => {
      const article = await newArticle();
      const [t] = await newTags(1);
      await relateTags(db(), article, [t]);
      const res = await post(article, { add: [t] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(m2m([], [`tag ${t} is already related`]));
      expect(await articleTagIds(db(), article)).toEqual([t]);
    });

    it('not related + remove → still not related; "tag <id> is not related" in errors', async () => {
      const article = await newArticle();
      const [t, other] = await newTags(2);
      await relateTags(db(), article, [other]);
      const res = await post(article, { remove: [t] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(m2m([], [`tag ${t} is not related`]));
      expect(await articleTagIds(db(), article)).toEqual([other]);
    });

    it('a related object that does not exist, in add or in remove → unchanged; "tag <id> not found" in errors', async () => {
      const article = await newArticle();
      const [t] = await newTags(1);
      await relateTags(db(), article, [t]);
      const add = await post(article, { add: [MISSING_ID] });
      expect(add.status).toBe(200);
      expect(add.body).toEqual(m2m([], [`tag ${MISSING_ID} not found`]));
      const remove = await post(article, { remove: [MISSING_ID + 1] });
      expect(remove.status).toBe(200);
      expect(remove.body).toEqual(m2m([], [`tag ${MISSING_ID + 1} not found`]));
      expect(await articleTagIds(db(), article)).toEqual([t]);
    });

    it('a full cycle on one key: add, add again, remove, remove again', async () => {
      const article = await newArticle();
      const [t] = await newTags(1);
      const steps: [unknown, unknown, number[]][] = [
        [{ add: [t] }, m2m([`tag ${t} added`]), [t]],
        [{ add: [t] }, m2m([], [`tag ${t} is already related`]), [t]],
        [{ remove: [t] }, m2m([`tag ${t} removed`]), []],
        [{ remove: [t] }, m2m([], [`tag ${t} is not related`]), []],
        [{ add: [t] }, m2m([`tag ${t} added`]), [t]],
      ];
      for (const [body, expected, membership] of steps) {
        const res = await post(article, body);
        expect(res.status).toBe(200);
        expect(res.body).toEqual(expected);
        expect(await articleTagIds(db(), article)).toEqual(membership);
      }
    });

    it('several keys in one list are reported in the order given', async () => {
      const article = await newArticle();
      const [a, b, c] = await newTags(3);
      await relateTags(db(), article, [b]);
      const res = await post(article, { add: [c, b, MISSING_ID, a] });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(m2m([`tag ${c} added`, `tag ${a} added`], [`tag ${b} is already related`, `tag ${MISSING_ID} not found`]));
      expect(await articleTagIds(db(), article)).toEqual([a, b, c]);
    });

    it('empty lists and an empty body change nothing', async () => {
      const article = await newArticle();
      const [t] = await newTags(1);
      await relateTags(db(), article, [t]);
      for (const body of [{}, { add: [], remove: [] }, { add: [] }, { remove: [] }]) {
        const res = await post(article, body);
        expect(res.status).toBe(200);
        expect(res.body).toEqual(m2m([]));
      }
      expect(await articleTagIds(db(), article)).toEqual([t]);
    });
  });

  describe('request shapes', () => {
    it('both lists at once: every transition in one request', async () => {
      const article = await newArticle();
      const [addNew, addRelated, removeRelated, removeUnrelated] = await newTags(4);
      await relateTags(db(), article, [addRelated, removeRelated]);
      const res = await post(article, { add: [addNew, addRelated, MISSING_ID], remove: [removeRelated, removeUnrelated, MISSING_ID + 1] });
      expect(res.status).toBe(200);
      // Additions and removals run concurrently: the order of details across the two lists is not fixed.
      expect(sortDetails(res.body)).toEqual(
        sortDetails(
          m2m(
            [`tag ${addNew} added`, `tag ${removeRelated} removed`],
            [
              `tag ${addRelated} is already related`,
              `tag ${MISSING_ID} not found`,
              `tag ${removeUnrelated} is not related`,
              `tag ${MISSING_ID + 1} not found`,
            ],
          ),
        ),
      );
      expect(await articleTagIds(db(), article)).toEqual([addNew, addRelated].sort((x, y) => x - y));
    });

    it('a key repeated inside one list is handled once', async () => {
      const article = await newArticle();
      const [a, b] = await newTags(2);
      await relateTags(db(), article, [b]);
      const res = await post(article, { add: [a, a, a, MISSING_ID, MISSING_ID], remove: [b, b] });
      expect(res.status).toBe(200);
      expect(sortDetails(res.body)).toEqual(sortDetails(m2m([`tag ${a} added`, `tag ${b} removed`], [`tag ${MISSING_ID} not found`])));
      expect(await articleTagIds(db(), article)).toEqual([a]);

      const again = await post(article, { add: [a, a], remove: [b, b, b] });
      expect(again.status).toBe(200);
      expect(sortDetails(again.body)).toEqual(sortDetails(m2m([], [`tag ${a} is already related`, `tag ${b} is not related`])));
      expect(await articleTagIds(db(), article)).toEqual([a]);
    });

    it('a key other than add and remove is a 422 and changes nothing', async () => {
      const article = await newArticle();
      const [t] = await newTags(1);
      const res = await post(article, { bogus: [] });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        detail: [{ type: 'extra_forbidden', loc: ['body', 'data', 'bogus'], msg: 'Extra inputs are not permitted' }],
      });
      const mixed = await post(article, { add: [t], set: [t] });
      expect(mixed.status).toBe(422);
      expect(mixed.body).toEqual({
        detail: [{ type: 'extra_forbidden', loc: ['body', 'data', 'set'], msg: 'Extra inputs are not permitted' }],
      });
      expect(await articleTagIds(db(), article)).toEqual([]);
    });

    it('keys that are not integers, or lists that are not arrays, are a 422', async () => {
      const article = await newArticle();
      const notInt = await post(article, { add: ['x'] });
      expect(notInt.status).toBe(422);
      expect(notInt.body).toEqual({
        detail: [{ type: 'int_type', loc: ['body', 'data', 'add', 0], msg: 'Input should be a valid integer' }],
      });
      const notList = await post(article, { remove: 5 });
      expect(notList.status).toBe(422);
      expect(notList.body).toEqual({
        detail: [{ type: 'list_type', loc: ['body', 'data', 'remove'], msg: 'Input should be a valid list' }],
      });
      const notObject = await post(article, [1, 2]);
      expect(notObject.status).toBe(422);
      expect(notObject.body).toEqual({
        detail: [
          {
            type: 'model_attributes_type',
            loc: ['body', 'data'],
            msg: 'Input should be a valid dictionary or object to extract fields from',
          },
        ],
      });
      expect(await articleTagIds(db(), article)).toEqual([]);
    });

    it('a missing article is a 404 of the article (not of the tag), for GET and POST', async () => {
      const [t] = await newTags(1);
      const get = await api().get(tagsUrl(MISSING_ID));
      expect(get.status).toBe(404);
      expect(get.body).toEqual(ARTICLE_NOT_FOUND);
      for (const user of [author, staff]) {
        const res = await post(MISSING_ID, { add: [t] }, user);
        expect(res.status).toBe(404);
        expect(res.body).toEqual(ARTICLE_NOT_FOUND);
      }
      const [{ n }] = await db()('articles_tags').where('tag_id', t).count({ n: '*' });
      expect(Number(n)).toBe(0);
    });
  });

  describe('auth', () => {
    it('GET is public; a valid token is accepted and an invalid one is a 401', async () => {
      const article = await newArticle();
      const [t] = await newTags(1);
      await relateTags(db(), article, [t]);
      for (const headers of [{}, { Authorization: other.bearer }]) {
        const res = await api().get(tagsUrl(article)).set(headers);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ items: [{ id: t, name: expect.any(String) }], count: 1 });
      }
      const bad = await api().get(tagsUrl(article)).set('Authorization', 'Bearer not-a-token');
      expect(bad.status).toBe(401);
      expect(bad.body).toEqual(UNAUTHORIZED);
    });

    it('POST without a token is a 401; by a user who is neither the author nor staff a 403; nothing changes', async () => {
      const article = await newArticle();
      const [t] = await newTags(1);
      const anonymous = await post(article, { add: [t] }, null);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body).toEqual(UNAUTHORIZED);
      const forbidden = await post(article, { add: [t] }, other);
      expect(forbidden.status).toBe(403);
      expect(forbidden.body).toEqual(ONLY_AUTHOR_OR_STAFF);
      expect(await articleTagIds(db(), article)).toEqual([]);
    });

    it('POST by the author and by staff is allowed', async () => {
      const article = await newArticle();
      const [a, b] = await newTags(2);
      const byAuthor = await post(article, { add: [a] }, author);
      expect(byAuthor.status).toBe(200);
      expect(byAuthor.body).toEqual(m2m([`tag ${a} added`]));
      const byStaff = await post(article, { add: [b], remove: [a] }, staff);
      expect(byStaff.status).toBe(200);
      expect(sortDetails(byStaff.body)).toEqual(sortDetails(m2m([`tag ${b} added`, `tag ${a} removed`])));
      expect(await articleTagIds(db(), article)).toEqual([b]);
    });

    it('the tags of a draft: 404 to callers who may not see it, 200 to its author', async () => {
      const draft = await newArticle({ is_published: false });
      const [t] = await newTags(1);
      await relateTags(db(), draft, [t]);
      for (const headers of [{}, { Authorization: other.bearer }]) {
        const res = await api().get(tagsUrl(draft)).set(headers);
        expect(res.status).toBe(404);
        expect(res.body).toEqual(ARTICLE_NOT_FOUND);
      }
      const own = await api().get(tagsUrl(draft)).set('Authorization', author.bearer);
      expect(own.status).toBe(200);
      expect(own.body).toEqual({ items: [{ id: t, name: expect.any(String) }], count: 1 });
      const edit = await post(draft, { remove: [t] }, author);
      expect(edit.status).toBe(200);
      expect(edit.body).toEqual(m2m([`tag ${t} removed`]));
    });
  });

  describe('staff and drafts', () => {
    it("staff may change the tags of another author's draft (only the author or staff)", async () => {
      const draft = await newArticle({ is_published: false });
      const [t] = await newTags(1);
      const res = await post(draft, { add: [t] }, staff);
      expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: m2m([`tag ${t} added`]) });
      expect(await articleTagIds(db(), draft)).toEqual([t]);
    });
  });

  describe('paths', () => {
    it('GET and POST share /articles/{pk}/tags/; without the trailing slash both are a 404', async () => {
      const article = await newArticle();
      const [t] = await newTags(1);
      const ok = await api().get(`/api/articles/${article}/tags/`);
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ items: [], count: 0 });
      const bareGet = await api().get(`/api/articles/${article}/tags`);
      expect(bareGet.status).toBe(404);
      expect(bareGet.body).toEqual(NOT_FOUND);
      const barePost = await api()
        .post(`/api/articles/${article}/tags`)
        .set('Authorization', author.bearer)
        .send({ add: [t] });
      expect(barePost.status).toBe(404);
      expect(barePost.body).toEqual(NOT_FOUND);
      expect(await articleTagIds(db(), article)).toEqual([]);
    });

    it('other methods on the relation path are a 405 that allows GET, HEAD and POST', async () => {
      const article = await newArticle();
      const res = await api().delete(`/api/articles/${article}/tags/`).set('Authorization', author.bearer);
      expect(res.status).toBe(405);
      expect(res.body).toEqual(METHOD_NOT_ALLOWED);
      expect(res.headers.allow).toBe('GET, HEAD, POST');
    });

    it('a non-integer article key is a 422 with loc path', async () => {
      const res = await api().get('/api/articles/abc/tags/');
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        detail: [
          { type: 'int_parsing', loc: ['path', 'pk'], msg: 'Input should be a valid integer, unable to parse string as an integer' },
        ],
      });
    });
  });

  describe('GET: pagination and the name filter', () => {
    let article: number;
    const names = ['Alpha', 'alphabet', 'Beta', 'GAMMA-ALP', 'delta', '100%', 'under_score'];
    const ids: Record<string, number> = {};
    beforeAll(async () => {
      article = await newArticle();
      const s = suffix();
      for (const name of names) ids[name] = await makeTag(db(), `${name}${s}`);
      await relateTags(db(), article, Object.values(ids));
      await makeTag(db(), `alpha-unrelated${s}`);
    });
    const item = (name: string) => ({
      id: ids[name],
      name: expect.stringMatching(new RegExp(`^${name.replace(/[%_]/g, '\\$&')}\\d+x\\d+$`)),
    });
    const inIdOrder = (list: string[]) => [...list].sort((a, b) => ids[a] - ids[b]);

    it('pages of {items, count} in primary-key order; count is the whole relation', async () => {
      const all = inIdOrder(names);
      const first = await api().get(tagsUrl(article, `?page=1&page_size=3`));
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ items: all.slice(0, 3).map(item), count: 7 });
      const third = await api().get(tagsUrl(article, `?page=3&page_size=3`));
      expect(third.body).toEqual({ items: all.slice(6).map(item), count: 7 });
      const past = await api().get(tagsUrl(article, `?page=4&page_size=3`));
      expect(past.status).toBe(200);
      expect(past.body).toEqual({ items: [], count: 7 });
      const whole = await api().get(tagsUrl(article));
      expect(whole.body).toEqual({ items: all.map(item), count: 7 });
    });

    it('name: case-insensitive contains, counted after the filter, only within the relation', async () => {
      const res = await api().get(tagsUrl(article, `?name=aLp`));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ items: inIdOrder(['Alpha', 'alphabet', 'GAMMA-ALP']).map(item), count: 3 });
      const paged = await api().get(tagsUrl(article, `?name=ALP&page=2&page_size=2`));
      expect(paged.body).toEqual({ items: inIdOrder(['Alpha', 'alphabet', 'GAMMA-ALP']).slice(2).map(item), count: 3 });
      const none = await api().get(tagsUrl(article, `?name=zeta`));
      expect(none.body).toEqual({ items: [], count: 0 });
    });

    it('name: % and _ match themselves, not as wildcards', async () => {
      const percent = await api().get(tagsUrl(article, `?name=${encodeURIComponent('%')}`));
      expect(percent.body).toEqual({ items: [item('100%')], count: 1 });
      const underscore = await api().get(tagsUrl(article, `?name=_`));
      expect(underscore.body).toEqual({ items: [item('under_score')], count: 1 });
    });

    it('bad page parameters are a 422', async () => {
      const res = await api().get(tagsUrl(article, `?page=0`));
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        detail: [{ type: 'greater_than_equal', loc: ['query', 'page'], msg: 'Input should be greater than or equal to 1' }],
      });
    });
  });

  describe('OpenAPI', () => {
    it('documents get_article_tags and manage_article_tags with their request and response schemas', async () => {
      const res = await api().get('/api/openapi.json');
      expect(res.status).toBe(200);
      const { paths, components } = res.body;
      expect(Object.keys(paths).filter((p) => p.startsWith('/api/articles/{pk}/tags'))).toEqual(['/api/articles/{pk}/tags/']);
      const get = paths['/api/articles/{pk}/tags/'].get;
      expect(get.operationId).toBe('get_article_tags');
      // Public: a token is optional (read when sent).
      expect(get.security).toEqual([{}, { BearerAuth: [] }]);
      expect(get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort()).toEqual([
        'path:pk',
        'query:name',
        'query:page',
        'query:page_size',
      ]);
      expect(get.responses['200'].content['application/json'].schema).toEqual({
        type: 'object',
        properties: { items: { type: 'array', items: { $ref: '#/components/schemas/TagOut' } }, count: { type: 'integer' } },
        required: ['items', 'count'],
      });
      expect(components.schemas.TagOut).toEqual({
        type: 'object',
        properties: { id: { type: 'integer' }, name: { type: 'string' } },
        required: ['id', 'name'],
      });

      const post = paths['/api/articles/{pk}/tags/'].post;
      expect(post.operationId).toBe('manage_article_tags');
      expect(post.security).toEqual([{ BearerAuth: [] }]);
      expect(post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ArticleTagsBody' });
      expect(post.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/M2MSchemaOut' });
      const key = expect.objectContaining({ type: 'integer' });
      expect(components.schemas.ArticleTagsBody).toEqual({
        type: 'object',
        properties: {
          add: expect.objectContaining({ type: 'array', items: key }),
          remove: expect.objectContaining({ type: 'array', items: key }),
        },
        additionalProperties: false,
      });
      const part = {
        type: 'object',
        properties: { count: { type: 'integer' }, details: { type: 'array', items: { type: 'string' } } },
        required: ['count', 'details'],
      };
      expect(components.schemas.M2MSchemaOut).toEqual({
        type: 'object',
        properties: { results: part, errors: part },
        required: ['results', 'errors'],
      });
    });
  });

  describe('concurrency', () => {
    it('30 parallel POSTs: each key ends related exactly when its reported adds outnumber its removes; no duplicate rows', async () => {
      const article = await newArticle();
      const keys = await newTags(4);
      const initial = new Set([keys[0], keys[1]]);
      await relateTags(db(), article, [...initial]);
      const bodies = await parallelPosts((body) => post(article, body), keys);
      const counts = tally(bodies, 'tag', keys.map(String));
      const final = await articleTagIds(db(), article);
      for (const key of keys) {
        const { added, removed } = counts.get(String(key))!;
        const expected = (initial.has(key) ? 1 : 0) + added - removed;
        expect({ key, membership: final.filter((k) => k === key).length }).toEqual({ key, membership: expected });
      }
      const duplicates = await db()('articles_tags')
        .select('article_id', 'tag_id')
        .count({ n: '*' })
        .groupBy('article_id', 'tag_id')
        .havingRaw('count(*) > 1');
      expect(duplicates).toEqual([]);
      const listed = await api().get(tagsUrl(article));
      expect(listed.body.items.map((t: { id: number }) => t.id)).toEqual(final);
    });
  });
});

describe.each(DIALECTS)('widget labels relation (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(svc.errors).toEqual([]));

  const api = () => request(svc.app);
  const db = () => svc.database.db;
  const post = (widget: number, body: unknown) =>
    api()
      .post(`/v/widgets/${widget}/labels/`)
      .send(body as object);

  async function newWidget(): Promise<number> {
    const ts = '2026-01-01T00:00:00.000Z';
    const widget = { name: `w${suffix()}`, created_at: ts, updated_at: ts };
    const [row] = await insertReturning(db(), db()('widgets').insert(widget), widget, ['id']);
    return Number(row.id);
  }

  async function newLabel(text = `label ${suffix()}`): Promise<string> {
    const res = await api().post('/v/tag-labels/').send({ text });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  async function relate(widget: number, labels: string[]): Promise<void> {
    for (const label of labels) await db()('widgets_labels').insert({ widget_id: widget, label_id: label });
  }

  it('every transition of the state table, messages naming the verbose name "tag label"', async () => {
    const widget = await newWidget();
    const [a, b, c] = [await newLabel(), await newLabel(), await newLabel()];
    const missing = randomUUID();
    await relate(widget, [b]);
    const steps: [unknown, unknown, string[]][] = [
      [{ add: [a] }, m2m([`tag label ${a} added`]), [a, b]],
      [{ add: [b] }, m2m([], [`tag label ${b} is already related`]), [a, b]],
      [{ remove: [b] }, m2m([`tag label ${b} removed`]), [a]],
      [{ remove: [c] }, m2m([], [`tag label ${c} is not related`]), [a]],
      [{ add: [missing] }, m2m([], [`tag label ${missing} not found`]), [a]],
      [{ remove: [missing] }, m2m([], [`tag label ${missing} not found`]), [a]],
    ];
    for (const [body, expected, membership] of steps) {
      const res = await post(widget, body);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(expected);
      expect(await widgetLabelIds(db(), widget)).toEqual([...membership].sort());
    }
  });

  it('both lists at once, with duplicates handled once', async () => {
    const widget = await newWidget();
    const [a, b, c, d] = [await newLabel(), await newLabel(), await newLabel(), await newLabel()];
    const missing = randomUUID();
    await relate(widget, [b, d]);
    const res = await post(widget, { add: [a, a, b, missing, missing], remove: [d, d, c, c] });
    expect(res.status).toBe(200);
    expect(sortDetails(res.body)).toEqual(
      sortDetails(
        m2m(
          [`tag label ${a} added`, `tag label ${d} removed`],
          [`tag label ${b} is already related`, `tag label ${missing} not found`, `tag label ${c} is not related`],
        ),
      ),
    );
    expect(await widgetLabelIds(db(), widget)).toEqual([a, b].sort());
  });

  it('an unknown body key or a key that is not a UUID is a 422; nothing changes', async () => {
    const widget = await newWidget();
    const bogus = await post(widget, { bogus: [] });
    expect(bogus.status).toBe(422);
    expect(bogus.body).toEqual({
      detail: [{ type: 'extra_forbidden', loc: ['body', 'data', 'bogus'], msg: 'Extra inputs are not permitted' }],
    });
    const notUuid = await post(widget, { add: [1] });
    expect(notUuid.status).toBe(422);
    expect(notUuid.body).toEqual({
      detail: [{ type: 'string_type', loc: ['body', 'data', 'add', 0], msg: 'Input should be a valid string' }],
    });
    const badUuid = await post(widget, { remove: ['not-a-uuid'] });
    expect(badUuid.status).toBe(422);
    expect(badUuid.body).toEqual({
      detail: [{ type: 'uuid_parsing', loc: ['body', 'data', 'remove', 0], msg: 'Input should be a valid UUID' }],
    });
    expect(await widgetLabelIds(db(), widget)).toEqual([]);
  });

  it('a missing widget is a 404 of the widget, for GET and POST', async () => {
    const label = await newLabel();
    const get = await api().get(`/v/widgets/${MISSING_ID}/labels/`);
    expect(get.status).toBe(404);
    expect(get.body).toEqual({ widget: 'not found' });
    const res = await post(MISSING_ID, { add: [label] });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ widget: 'not found' });
  });

  it('no auth configured on the relation: GET and POST are public', async () => {
    const widget = await newWidget();
    const label = await newLabel();
    const res = await post(widget, { add: [label] });
    expect(res.status).toBe(200);
    const get = await api().get(`/v/widgets/${widget}/labels/`);
    expect(get.status).toBe(200);
  });

  it('path "/labels" is normalised; append_slash: GET /widgets/{pk}/labels/ answers, /widgets/{pk}/labels is a 404', async () => {
    const widget = await newWidget();
    const label = await newLabel('only');
    await relate(widget, [label]);
    const slashed = await api().get(`/v/widgets/${widget}/labels/`);
    expect(slashed.status).toBe(200);
    expect(slashed.body).toEqual({ items: [{ id: label, text: 'only' }], count: 1 });
    const bare = await api().get(`/v/widgets/${widget}/labels`);
    expect(bare.status).toBe(404);
    expect(bare.body).toEqual(NOT_FOUND);
    const bareGetPost = await api()
      .post(`/v/widgets/${widget}/labels`)
      .send({ remove: [label] });
    expect(bareGetPost.status).toBe(404);
    expect(bareGetPost.body).toEqual(NOT_FOUND);
    const doubled = await api().get(`/v/widgets/${widget}//labels/`);
    expect(doubled.status).toBe(404);
    expect(await widgetLabelIds(db(), widget)).toEqual([label]);
  });

  describe('GET: limit/offset pagination, the related_schema and the text filter', () => {
    let widget: number;
    const texts = ['Red', 'dark red', 'Blue', 'REDDISH', 'green', 'teal', 'off-white'];
    const ids: Record<string, string> = {};
    beforeAll(async () => {
      widget = await newWidget();
      for (const text of texts) ids[text] = await newLabel(text);
      await relate(widget, Object.values(ids));
      await newLabel('red but unrelated');
    });
    const item = (text: string) => ({ id: ids[text], text });
    const inKeyOrder = (list: string[]) => [...list].sort((a, b) => (ids[a] < ids[b] ? -1 : 1));

    it('{items, count} with the related_schema {id, text}; default limit 5 (SVC_PAGINATION_PER_PAGE), then limit/offset', async () => {
      const all = inKeyOrder(texts);
      const first = await api().get(`/v/widgets/${widget}/labels/`);
      expect(first.status).toBe(200);
      expect(first.body).toEqual({ items: all.slice(0, 5).map(item), count: 7 });
      const window = await api().get(`/v/widgets/${widget}/labels/?limit=2&offset=3`);
      expect(window.body).toEqual({ items: all.slice(3, 5).map(item), count: 7 });
      const past = await api().get(`/v/widgets/${widget}/labels/?limit=2&offset=10`);
      expect(past.body).toEqual({ items: [], count: 7 });
    });

    it('a limit above SVC_PAGINATION_MAX_LIMIT (20) is a 422', async () => {
      const res = await api().get(`/v/widgets/${widget}/labels/?limit=21`);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        detail: [{ type: 'less_than_equal', loc: ['query', 'limit'], msg: 'Input should be less than or equal to 20' }],
      });
    });

    it('text: case-insensitive contains, counted after the filter, only within the relation', async () => {
      const res = await api().get(`/v/widgets/${widget}/labels/?text=RED`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ items: inKeyOrder(['Red', 'dark red', 'REDDISH']).map(item), count: 3 });
      const paged = await api().get(`/v/widgets/${widget}/labels/?text=red&limit=1&offset=1`);
      expect(paged.body).toEqual({ items: inKeyOrder(['Red', 'dark red', 'REDDISH']).slice(1, 2).map(item), count: 3 });
      const none = await api().get(`/v/widgets/${widget}/labels/?text=purple`);
      expect(none.body).toEqual({ items: [], count: 0 });
    });
  });

  it('OpenAPI names the operations get_widget_labels and manage_widget_labels on the normalised path', async () => {
    const res = await api().get('/v/openapi.json');
    // Taken out of svc.errors here so that a failure is reported once, by this test.
    const errors = svc.errors.splice(0).map(String);
    expect({ status: res.status, errors }).toEqual({ status: 200, errors: [] });
    const item = res.body.paths['/v/widgets/{pk}/labels/'];
    expect(item.get.operationId).toBe('get_widget_labels');
    expect(item.post.operationId).toBe('manage_widget_labels');
    expect(item.get.responses['200'].content['application/json'].schema.properties.items).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/WidgetLabelItem' },
    });
    expect(item.post.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/M2MSchemaOut' });
  });

  it('30 parallel POSTs: each key ends related exactly when its reported adds outnumber its removes; no duplicate rows', async () => {
    const widget = await newWidget();
    const keys = [await newLabel(), await newLabel(), await newLabel(), await newLabel()];
    const initial = new Set([keys[1], keys[3]]);
    await relate(widget, [...initial]);
    const bodies = await parallelPosts((body) => post(widget, body), keys);
    const counts = tally(bodies, 'tag label', keys);
    const final = await widgetLabelIds(db(), widget);
    for (const key of keys) {
      const { added, removed } = counts.get(key)!;
      const expected = (initial.has(key) ? 1 : 0) + added - removed;
      expect({ key, membership: final.filter((k) => k === key).length }).toEqual({ key, membership: expected });
    }
    const duplicates = await db()('widgets_labels')
      .select('widget_id', 'label_id')
      .count({ n: '*' })
      .groupBy('widget_id', 'label_id')
      .havingRaw('count(*) > 1');
    expect(duplicates).toEqual([]);
  });
});
