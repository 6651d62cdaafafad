/**
 * The OpenAPI document and the Swagger UI: metadata, operation ids, tags, summaries from the
 * *_docs attributes, the documented error responses, and security exactly where auth is required.
 */
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { takeErrors } from '../support/fixtures';
import { startBlog, startShowcase, type RunningService } from '../support/services';

interface Operation {
  operationId: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean; schema: Record<string, unknown> }[];
  requestBody?: { required: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown }>; headers?: Record<string, unknown> }>;
}

interface Document {
  openapi: string;
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; securitySchemes?: Record<string, unknown> };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Every operation as "METHOD path" → operation. */
function operations(doc: Document): Map<string, Operation> {
  const out = new Map<string, Operation>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) if (METHODS.includes(method)) out.set(`${method.toUpperCase()} ${path}`, op);
  }
  return out;
}

function byId(doc: Document, id: string): Operation {
  const op = [...operations(doc).values()].find((o) => o.operationId === id);
  if (!op) throw new Error(`no operation ${id}`);
  return op;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
/** The header parameter of reads that answer 304 (conditional requests). */
const IF_NONE_MATCH = { name: 'If-None-Match', in: 'header', required: false, description: expect.any(String), schema: { type: 'string' } };

/** The five CRUD operations of a blog resource: "METHOD path" → operation id. */
function crud(base: string, one: string, many: string): Record<string, string> {
  return {
    [`POST /api/${base}/`]: `create_${one}`,
    [`GET /api/${base}/`]: `list_${many}`,
    [`GET /api/${base}/{pk}/`]: `retrieve_${one}`,
    [`PATCH /api/${base}/{pk}/`]: `update_${one}`,
    [`DELETE /api/${base}/{pk}/`]: `delete_${one}`,
  };
}

const BLOG_CRUD: Record<string, string> = {
  ...crud('articles', 'article', 'articles'),
  ...crud('categories', 'category', 'categories'),
  ...crud('tags', 'tag', 'tags'),
  ...crud('users', 'user', 'users'),
};

const DEFAULT_SUMMARIES: Record<string, string> = {
  create: 'Create a new object.',
  list: 'List all objects.',
  retrieve: 'Retrieve a specific object by its primary key.',
  update: 'Update an object by its primary key.',
  delete: 'Delete an object by its primary key.',
};

describe.each(DIALECTS)('OpenAPI document of the blog (%s)', (dialect) => {
  let svc: RunningService;
  let doc: Document;
  beforeAll(async () => {
    svc = await startBlog(dialect);
    const res = await request(svc.app).get('/api/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body;
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  it('is served as JSON with openapi 3.1.0, title "Blog API" and version "1.0.0"', async () => {
    const res = await request(svc.app).get('/api/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBe('Blog API');
    expect(doc.info.version).toBe('1.0.0');
  });

  it('has the CRUD operations with their operation ids, at the slashed paths', () => {
    const ops = operations(doc);
    for (const [key, id] of Object.entries(BLOG_CRUD)) {
      expect({ key, id: ops.get(key)?.operationId }).toEqual({ key, id });
    }
  });

  it('has unique operation ids', () => {
    const ids = [...operations(doc).values()].map((o) => o.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('tags each CRUD operation with its resource', () => {
    const tagOf: Record<string, string> = { articles: 'Articles', categories: 'Categories', tags: 'Tags', users: 'Users' };
    const ops = operations(doc);
    for (const key of Object.keys(BLOG_CRUD)) {
      const resource = key.split('/')[2];
      expect({ key, tags: ops.get(key)?.tags }).toEqual({ key, tags: [tagOf[resource]] });
    }
  });

  it('uses the default *_docs as summaries', () => {
    const ops = operations(doc);
    for (const [key, id] of Object.entries(BLOG_CRUD)) {
      const kind = id.split('_')[0];
      expect({ id, summary: ops.get(key)?.summary }).toEqual({ id, summary: DEFAULT_SUMMARIES[kind] });
    }
  });

  it('documents 400, 401, 403 and 404 with the error schema on every generated operation', () => {
    const ops = operations(doc);
    for (const key of Object.keys(BLOG_CRUD)) {
      const op = ops.get(key)!;
      for (const status of ['400', '401', '403', '404']) {
        expect({ key, status, schema: op.responses[status]?.content?.['application/json']?.schema }).toEqual({
          key,
          status,
          schema: ref('GenericMessageSchema'),
        });
      }
    }
    expect(doc.components.schemas.GenericMessageSchema).toEqual({ type: 'object', additionalProperties: { type: 'string' } });
  });

  it('documents the success responses: 201 for create, 200 for list, retrieve and update, 204 for delete', () => {
    expect(byId(doc, 'create_category').responses['201'].content?.['application/json']?.schema).toEqual(ref('CategoryOut'));
    expect(byId(doc, 'retrieve_category').responses['200'].content?.['application/json']?.schema).toEqual(ref('CategoryOut'));
    expect(byId(doc, 'update_category').responses['200'].content?.['application/json']?.schema).toEqual(ref('CategoryOut'));
    expect(byId(doc, 'retrieve_article').responses['200'].content?.['application/json']?.schema).toEqual(ref('ArticleDetailExpandable'));
    expect(byId(doc, 'update_article').responses['200'].content?.['application/json']?.schema).toEqual(ref('ArticleOut'));
    expect(byId(doc, 'delete_category').responses['204']).toEqual({ description: expect.any(String) });
    expect(byId(doc, 'delete_category').responses['200']).toBeUndefined();
    expect(byId(doc, 'list_categories').responses['200'].content?.['application/json']?.schema).toEqual({
      type: 'object',
      properties: { items: { type: 'array', items: ref('CategoryOut') }, count: { type: 'integer' } },
      required: ['items', 'count'],
    });
  });

  it('puts security (BearerAuth) exactly on the operations that require auth', () => {
    expect(doc.components.securitySchemes?.BearerAuth).toBeDefined();
    const secured = new Set([
      'create_article',
      'update_article',
      'delete_article',
      'create_category',
      'update_category',
      'delete_category',
      'create_tag',
      'update_tag',
      'delete_tag',
      'create_user',
      'list_users',
      'retrieve_user',
      'update_user',
      'delete_user',
    ]);
    // The article writes also take the access-token cookie (CookieAuth): a second alternative.
    const withCookie = new Set(['create_article', 'update_article', 'delete_article']);
    const ops = operations(doc);
    for (const key of Object.keys(BLOG_CRUD)) {
      const op = ops.get(key)!;
      expect({ id: op.operationId, security: op.security }).toEqual({
        id: op.operationId,
        // Public operations read a token when one is sent: none needed, the scheme optional.
        security: withCookie.has(op.operationId)
          ? [{ BearerAuth: [] }, { CookieAuth: [] }]
          : secured.has(op.operationId)
            ? [{ BearerAuth: [] }]
            : [{}, { BearerAuth: [] }],
      });
    }
  });

  it('documents every error status an operation can answer, with the body the service sends', () => {
    const statuses = (id: string) => Object.keys(byId(doc, id).responses).map(Number);
    // A body: malformed (400), too large (413), not JSON (415); a write: a constraint (409); 503 when the database is down.
    expect(statuses('create_article')).toEqual([201, 400, 401, 403, 404, 409, 413, 415, 422, 503]);
    // Reads answer 304 to an If-None-Match naming their ETag; writes to a row 412 to a stale If-Match.
    expect(statuses('list_articles')).toEqual([200, 304, 400, 401, 403, 404, 422, 503]);
    expect(statuses('delete_tag')).toEqual([204, 400, 401, 403, 404, 409, 412, 422, 503]);
    const example = (id: string, status: number) =>
      byId(doc, id).responses[String(status)].content?.['application/json'] as { example?: unknown };
    expect(example('create_article', 401).example).toEqual({ detail: 'Unauthorized' });
    expect(example('create_article', 409).example).toEqual({ error: 'conflict', details: 'The request violates a database constraint.' });
    expect(example('create_article', 413).example).toEqual({ detail: 'Payload Too Large' });
    expect(example('create_article', 415).example).toEqual({ detail: 'Unsupported Media Type' });
    expect(example('create_article', 503).example).toEqual({ detail: 'Service Unavailable' });
    expect(doc.components.schemas.ValidationErrorSchema).toMatchObject({
      example: { detail: [{ type: 'missing', loc: ['body', 'title'], msg: 'Field required' }] },
    });
  });

  it("documents the errors hooks answer, from the spec's errors: a throttled login, a publish refused or repeated", () => {
    const json = (id: string, status: number) => byId(doc, id).responses[String(status)];
    expect(json('login', 429)).toEqual({
      description: 'Too Many Requests',
      content: {
        'application/json': {
          schema: ref('GenericMessageSchema'),
          example: { detail: 'Too many failed login attempts. Try again later.' },
        },
      },
    });
    expect(json('publish_article', 409).content?.['application/json']).toEqual({
      schema: ref('GenericMessageSchema'),
      example: { is_published: 'Article is already published' },
    });
    expect(json('publish_article', 403).content?.['application/json']).toEqual({
      schema: ref('GenericMessageSchema'),
      example: { error: 'forbidden', details: 'Only staff can publish' },
    });
    expect(json('register', 429)).toBeUndefined();
  });

  it('has the license, contact and server from service.yaml, and names the routes that issue tokens', () => {
    const full = doc as unknown as Record<string, any>;
    expect(full.info.license).toEqual({ name: 'MIT', identifier: 'MIT' });
    expect(full.info.contact).toEqual({ name: 'Blog API maintainers', email: 'blog-api@example.com' });
    expect(full.servers).toEqual([{ url: '/', description: 'This service; every path starts with its base path /api' }]);
    expect(doc.components.securitySchemes?.BearerAuth).toMatchObject({
      description:
        'HTTP bearer token: enter `Bearer <ACCESS_TOKEN>` (an RS256 JWT from /api/auth/register/ or /api/auth/login/ or /api/auth/refresh/).',
    });
  });

  it('says that a blank avatar is "" rather than a URL', () => {
    expect((doc.components.schemas.UserOut as { properties: Record<string, unknown> }).properties.avatar).toEqual({
      anyOf: [
        { type: 'string', enum: [''] },
        { type: 'string', format: 'uri' },
      ],
    });
  });

  it('documents conditional requests: ETag headers, If-None-Match and 304 on reads, If-Match and 412 on writes', () => {
    const etag = { ETag: { description: expect.any(String), schema: { type: 'string' } } };
    const retrieve = byId(doc, 'retrieve_article');
    expect(retrieve.responses['200'].headers).toEqual(etag);
    expect(retrieve.responses['304']).toEqual({
      description: 'Not Modified: the version named in If-None-Match is current',
      headers: etag,
    });
    const update = byId(doc, 'update_article');
    expect(update.responses['200'].headers).toEqual(etag);
    expect(update.parameters).toContainEqual({
      name: 'If-Match',
      in: 'header',
      required: false,
      description: expect.any(String),
      schema: { type: 'string' },
    });
    expect(update.responses['412'].content?.['application/json']).toEqual({
      schema: ref('GenericMessageSchema'),
      example: {
        error: 'precondition_failed',
        details: 'The object has changed since it was read: If-Match names none of its current versions.',
      },
    });
    expect(update.responses['428']).toBeUndefined();
    expect(byId(doc, 'create_article').responses['201'].headers).toEqual(etag);
    for (const id of ['delete_article', 'publish_article', 'manage_article_tags'])
      expect(Object.keys(byId(doc, id).responses)).toContain('412');
  });

  it('types the path key as an integer', () => {
    expect(byId(doc, 'retrieve_category').parameters).toEqual([
      { name: 'pk', in: 'path', required: true, schema: expect.objectContaining({ type: 'integer' }) },
      IF_NONE_MATCH,
    ]);
  });

  it('serves Swagger UI: /api/docs redirects to /api/docs/, which is HTML loading the document', async () => {
    const redirect = await request(svc.app).get('/api/docs');
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toBe('/api/docs/');

    const page = await request(svc.app).get('/api/docs/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('<title>Blog API</title>');
    expect(page.text).toContain('swagger-ui');

    const init = await request(svc.app).get('/api/docs/swagger-ui-init.js');
    expect(init.status).toBe(200);
    expect(init.text).toContain('/api/openapi.json');
  });
});

describe.each(DIALECTS)('OpenAPI document of the blog with SVC_APPEND_SLASH false (%s)', (dialect) => {
  let svc: RunningService;
  beforeAll(async () => {
    svc = await startBlog(dialect, { SVC_APPEND_SLASH: false });
  });
  afterAll(() => svc.close());

  it('documents the unslashed create, list and retrieve paths and the slashed update and delete paths', async () => {
    const res = await request(svc.app).get('/api/openapi.json');
    expect(res.status).toBe(200);
    const ops = operations(res.body);
    expect(ops.get('POST /api/categories')?.operationId).toBe('create_category');
    expect(ops.get('GET /api/categories')?.operationId).toBe('list_categories');
    expect(ops.get('GET /api/categories/{pk}')?.operationId).toBe('retrieve_category');
    expect(ops.get('PATCH /api/categories/{pk}/')?.operationId).toBe('update_category');
    expect(ops.get('DELETE /api/categories/{pk}/')?.operationId).toBe('delete_category');
    expect(ops.has('POST /api/categories/')).toBe(false);
    expect(ops.has('GET /api/categories/{pk}/')).toBe(false);
    expect(takeErrors(svc)).toEqual([]);
  });
});

describe.each(DIALECTS)('OpenAPI document of the showcase (%s)', (dialect) => {
  let svc: RunningService;
  let doc: Document;
  beforeAll(async () => {
    svc = await startShowcase(dialect);
  });
  afterAll(() => svc.close());
  afterEach(() => expect(takeErrors(svc)).toEqual([]));

  /** The document; fetched by each test so a failure to build it is reported where it matters. */
  async function fetchDoc(): Promise<Document> {
    if (doc) return doc;
    const res = await request(svc.app).get('/v/openapi.json');
    expect({ status: res.status, body: res.status === 200 ? 'document' : res.body }).toEqual({ status: 200, body: 'document' });
    doc = res.body;
    return doc;
  }

  it('is served with the showcase title and version', async () => {
    const d = await fetchDoc();
    expect(d.openapi).toBe('3.1.0');
    expect(d.info.title).toBe('Showcase API');
    expect(d.info.version).toBe('2.1.0');
  });

  it('uses list_docs and retrieve_docs as descriptions, under the short default summary', async () => {
    const d = await fetchDoc();
    expect(byId(d, 'list_widgets')).toMatchObject({ summary: DEFAULT_SUMMARIES.list, description: 'List the widgets.' });
    expect(byId(d, 'retrieve_part')).toMatchObject({ summary: DEFAULT_SUMMARIES.retrieve, description: 'Retrieve one part.' });
    expect(byId(d, 'create_part').description).toBeUndefined();
    expect(byId(d, 'create_part').summary).toBe(DEFAULT_SUMMARIES.create);
    expect(byId(d, 'list_parts').summary).toBe(DEFAULT_SUMMARIES.list);
  });

  it('has only the operations each viewset generates', async () => {
    const ids = [...operations(await fetchDoc()).values()].map((o) => o.operationId);
    for (const id of ['create_widget', 'list_widgets', 'retrieve_widget', 'update_widget', 'delete_widget']) expect(ids).toContain(id);
    // ReadOnlyViewSet, WriteOnlyViewSet and `disable`.
    for (const id of [
      'list_shiny_gadgets',
      'retrieve_gadget',
      'create_note',
      'update_note',
      'delete_note',
      'create_label',
      'list_tag_labels',
      'create_part',
      'delete_part',
    ])
      expect(ids).toContain(id);
    for (const id of ['create_gadget', 'update_gadget', 'delete_gadget', 'list_notes', 'retrieve_note', 'delete_label', 'update_part'])
      expect(ids).not.toContain(id);
  });

  it('documents the bulk routes: their bodies, the list an atomic route answers, the results of one that is not', async () => {
    const d = await fetchDoc();
    const ops = operations(d);
    expect(ops.get('POST /v/crates/bulk/')?.operationId).toBe('bulk_create_crates');
    expect(ops.get('PATCH /v/crates/bulk/')?.operationId).toBe('bulk_update_crates');
    expect(ops.get('DELETE /v/crates/bulk/')?.operationId).toBe('bulk_delete_crates');
    const json = (op: Operation, status: string) => op.responses[status]?.content?.['application/json']?.schema;
    const create = byId(d, 'bulk_create_crates');
    expect(create.summary).toBe('Create several objects.');
    expect(create.description).toBe(
      'At most 3 items per request. All or nothing: the first invalid or failing item is the answer, and nothing is written.',
    );
    expect(create.requestBody).toEqual({
      required: true,
      content: { 'application/json': { schema: { type: 'array', items: ref('CrateIn'), maxItems: 3 } } },
    });
    expect(json(create, '201')).toEqual({ type: 'array', items: ref('CrateOut') });
    expect(Object.keys(create.responses).sort()).toEqual(['201', '400', '401', '403', '404', '409', '413', '415', '422', '503']);
    expect(byId(d, 'bulk_update_crates').requestBody?.content['application/json'].schema).toEqual({
      type: 'array',
      items: ref('CrateBulkUpdate'),
      maxItems: 3,
    });
    expect(d.components.schemas.CrateBulkUpdate).toMatchObject({
      required: ['id'],
      properties: { id: { type: 'integer' }, code: { type: 'string', maxLength: 12 } },
    });
    const remove = byId(d, 'bulk_delete_crates');
    expect(remove.requestBody?.content['application/json'].schema).toEqual({
      type: 'object',
      properties: { ids: { type: 'array', items: expect.objectContaining({ type: 'integer' }), maxItems: 3 } },
      required: ['ids'],
    });
    expect(remove.responses['204']).toEqual({ description: 'No Content' });
    expect(remove.description).toBe(
      'At most 3 items per request. All or nothing: the first invalid or failing item is the answer, and nothing is written.\n\nRequires the role staff.',
    );
    const results = json(byId(d, 'bulk_create_widgets'), '207');
    expect(results).toEqual({
      type: 'array',
      items: {
        anyOf: [
          {
            type: 'object',
            properties: { status: expect.objectContaining({ type: 'integer' }), data: ref('WidgetOut') },
            required: ['status', 'data'],
          },
          {
            type: 'object',
            properties: { status: expect.objectContaining({ type: 'integer' }) },
            required: ['status'],
            additionalProperties: {},
          },
        ],
      },
    });
  });

  it('serves the resources at their base paths', async () => {
    const ops = operations(await fetchDoc());
    expect(ops.get('GET /v/companies/{pk}/')?.operationId).toBe('retrieve_maker');
    expect(ops.get('GET /v/tag-labels/{pk}/')?.operationId).toBe('retrieve_label');
    expect(ops.get('GET /v/shiny-gadgets/')?.operationId).toBe('list_shiny_gadgets');
  });

  it('documents 400, 401, 403 and 404 on every operation; notes with its own error_schema, under its name', async () => {
    const d = await fetchDoc();
    for (const [key, op] of operations(d)) {
      // The health routes answer 200 or 503 only (health.test.ts).
      if (op.operationId.startsWith('health_')) continue;
      // Every operation of notes (CRUD and relation endpoints) documents its viewset's error_schema.
      const schema =
        /(^|_)[a-z]+_note(_|$)/.test(op.operationId) && !op.operationId.includes('_order_note')
          ? ref('NoteProblem')
          : ref('GenericMessageSchema');
      for (const status of ['400', '401', '403', '404']) {
        expect({ key, status, schema: op.responses[status]?.content?.['application/json']?.schema }).toEqual({ key, status, schema });
      }
    }
    expect(d.components.schemas.NoteProblem).toEqual({ type: 'object', properties: { error: { type: 'string' } }, required: ['error'] });
  });

  it("has security exactly on the operations that authenticate: custom endpoints, tickets' and crates' writes, every beacon and order route, order lines' deletes, coupons' deletes and restore", async () => {
    const secured = new Set([
      'GET /v/numbers/',
      'GET /v/scoped/',
      'PATCH /v/tickets/{pk}/',
      'DELETE /v/tickets/{pk}/',
      'PATCH /v/crates/{pk}/',
      'DELETE /v/crates/{pk}/',
      'PATCH /v/crates/bulk/',
      'DELETE /v/crates/bulk/',
      'POST /v/beacons/',
      'GET /v/beacons/',
      'GET /v/beacons/{pk}/',
      'PATCH /v/beacons/{pk}/',
      'DELETE /v/beacons/{pk}/',
      'GET /v/beacons/ping/',
      'DELETE /v/coupons/{pk}/',
      'POST /v/coupons/{pk}/restore/',
      'DELETE /v/coupons/{pk}/hard/',
      'POST /v/orders/',
      'GET /v/orders/',
      'GET /v/orders/{pk}/',
      'PATCH /v/orders/{pk}/',
      'DELETE /v/orders/{pk}/',
      'DELETE /v/order-lines/{pk}/',
    ]);
    for (const [key, op] of operations(await fetchDoc())) {
      // The health routes read no token at all; other public operations read one when it is sent.
      const open = /^GET \/v\/health/.test(key) ? [] : [{}, { BearerAuth: [] }];
      expect({ key, security: op.security }).toEqual({ key, security: secured.has(key) ? [{ BearerAuth: [] }] : open });
    }
  });

  it('mentions no login route in the security scheme: the showcase issues no tokens', async () => {
    const d = await fetchDoc();
    expect(d.components.securitySchemes?.BearerAuth).toMatchObject({
      description: 'HTTP bearer token: enter `Bearer <ACCESS_TOKEN>` (an RS256 JWT).',
    });
  });

  it('types string and uuid keys', async () => {
    const d = await fetchDoc();
    expect(byId(d, 'retrieve_maker').parameters).toEqual([
      { name: 'pk', in: 'path', required: true, schema: expect.objectContaining({ type: 'string' }) },
      expect.objectContaining({ name: 'expand', in: 'query', required: false, style: 'form', explode: false }),
      IF_NONE_MATCH,
    ]);
    expect(byId(d, 'retrieve_label').parameters).toEqual([
      { name: 'pk', in: 'path', required: true, schema: expect.objectContaining({ type: 'string', format: 'uuid' }) },
      IF_NONE_MATCH,
    ]);
  });

  it('serves Swagger UI under its base path', async () => {
    const redirect = await request(svc.app).get('/v/docs');
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toBe('/v/docs/');
    const page = await request(svc.app).get('/v/docs/');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<title>Showcase API</title>');
  });
});
