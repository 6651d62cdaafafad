/**
 * The API surface the breaking-change gate compares (`api.json`, generator/api/surface.ts) is
 * derived from the model, as the Zod schemas the OpenAPI document is built from are: this test
 * holds the two together on the running blog and showcase. Every operation of api.json is served
 * under its id at its route, and no other; its success statuses are documented; its request body
 * has the same fields, the same ones required; its responses (lists aside, which wrap their items
 * in a page) have the same fields; its path and query parameters are the document's, the same ones
 * required, of the same type and range.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import request from 'supertest';
import { startBlog, startShowcase, type RunningService } from '../support/services';

interface Schema {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  items?: Schema;
}
interface DocParameter {
  name: string;
  in: 'path' | 'query';
  required?: boolean;
  schema: { type?: string; minimum?: number; maximum?: number };
}
interface DocOperation {
  operationId: string;
  parameters?: DocParameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}
interface Doc {
  paths: Record<string, Record<string, DocOperation>>;
  components: { schemas: Record<string, Schema> };
}
interface SurfaceParam {
  type: string;
  required?: true;
  minimum?: number;
  maximum?: number;
}
interface Surface {
  operations: Record<
    string,
    {
      route: string;
      path?: Record<string, SurfaceParam>;
      query?: Record<string, SurfaceParam>;
      body?: Record<string, { required?: true }>;
      responses: Record<string, Record<string, unknown> | null>;
    }
  >;
}

/** A parameter as the document and the surface both can say it: its JSON type, whether required, its range. */
function docParam(p: DocParameter) {
  return { required: p.required === true, type: p.schema.type ?? 'string', minimum: p.schema.minimum, maximum: p.schema.maximum };
}
function surfaceParam(name: string, p: SurfaceParam, where: 'path' | 'query') {
  // The surface says `string:<format>`, `array<…>` and `range<…>`, all strings in a query string,
  // but for `expand`, which the document gives as an array written `a,b` (style form, not exploded).
  const type = /^(integer|number|boolean)$/.test(p.type) ? p.type : name === 'expand' ? 'array' : 'string';
  return { required: where === 'path' || p.required === true, type, minimum: p.minimum, maximum: p.maximum };
}

const ROOT = path.resolve(__dirname, '../..');

/** The object schema behind a $ref (and a nullable anyOf), or undefined when it is not an object. */
function objectOf(doc: Doc, schema: Schema | undefined): Schema | undefined {
  if (!schema) return undefined;
  if (schema.$ref) return objectOf(doc, doc.components.schemas[schema.$ref.split('/').pop()!]);
  if (schema.anyOf) return schema.anyOf.map((s) => objectOf(doc, s)).find((s) => s !== undefined);
  return schema.properties ? schema : undefined;
}

const LISTS = /^(list_|get_.*_(tags|labels|linked)$|feed_|bulk_)/;

/** Lists paged by a paginator of the hooks module: its parameters are its code's, not the spec's, and not in the surface. */
const HOOK_PAGED = ['list_shiny_gadgets'];

describe.each([
  ['blog', 'generated', startBlog, '/api'],
  ['showcase', 'test/fixtures/showcase/generated', startShowcase, '/v'],
] as const)('api.json of the %s against its OpenAPI document', (_, out, start, base) => {
  let svc: RunningService;
  let doc: Doc;
  const surface = JSON.parse(fs.readFileSync(path.join(ROOT, out, 'api.json'), 'utf8')) as Surface;
  beforeAll(async () => {
    svc = await start('sqlite');
    doc = (await request(svc.app).get(`${base}/openapi.json`)).body as Doc;
  });
  afterAll(() => svc.close());

  it('names every operation the document serves, at its route', () => {
    const served: Record<string, string> = {};
    for (const [p, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods))
        if (!['health_live', 'health_ready'].includes(op.operationId)) served[op.operationId] = `${method.toUpperCase()} ${p}`;
    }
    const routes = Object.fromEntries(Object.entries(surface.operations).map(([id, op]) => [id, op.route]));
    expect(routes).toEqual(served);
  });

  it('has the statuses, request fields and response fields the document has', () => {
    for (const [id, op] of Object.entries(surface.operations)) {
      const [method, p] = op.route.split(' ');
      const documented = doc.paths[p][method.toLowerCase()];
      for (const status of Object.keys(op.responses))
        expect({ id, status, documented: status in documented.responses }).toEqual({ id, status, documented: true });
      // A bulk create's or update's body is a list: the surface records its items' fields.
      const requestSchema = documented.requestBody?.content['application/json']?.schema;
      const body = objectOf(doc, id.startsWith('bulk_') ? (requestSchema?.items ?? requestSchema) : requestSchema);
      if (op.body && body) {
        expect({ id, fields: Object.keys(op.body).sort() }).toEqual({ id, fields: Object.keys(body.properties!).sort() });
        const required = Object.entries(op.body)
          .filter(([, f]) => f.required)
          .map(([name]) => name)
          .sort();
        expect({ id, required }).toEqual({ id, required: [...(body.required ?? [])].sort() });
      }
      for (const where of ['path', 'query'] as const) {
        const ownParams = (documented.parameters ?? []).filter(() => !(HOOK_PAGED.includes(id) && where === 'query'));
        const served = Object.fromEntries(ownParams.filter((p) => p.in === where).map((p) => [p.name, docParam(p)]));
        const recorded = Object.fromEntries(Object.entries(op[where] ?? {}).map(([name, p]) => [name, surfaceParam(name, p, where)]));
        expect({ id, where, params: recorded }).toEqual({ id, where, params: served });
      }
      if (LISTS.test(id)) continue;
      for (const [status, fields] of Object.entries(op.responses)) {
        const schema = objectOf(doc, documented.responses[status]?.content?.['application/json']?.schema);
        if (!fields || !schema) continue;
        expect({ id, status, fields: Object.keys(fields).sort() }).toEqual({ id, status, fields: Object.keys(schema.properties!).sort() });
      }
    }
  });
});
