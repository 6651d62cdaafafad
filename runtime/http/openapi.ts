/**
 * The OpenAPI document, built once from the same Zod schemas that validate requests.
 */
import { STATUS_CODES } from 'node:http';
import { OpenApiGeneratorV31, OpenAPIRegistry, type ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { openApiPath, type Route } from './routes';
import { z } from '../core/zod';

export interface ApiInfo {
  title: string;
  version: string;
  description?: string;
  /** `info.license`: a name, with an SPDX `identifier` or a `url`. */
  license?: { name: string; identifier?: string; url?: string };
  /** `info.contact`. */
  contact?: { name?: string; url?: string; email?: string };
  /** Mount point of every route, e.g. `/api`. */
  basePath: string;
  /** Routes (below `basePath`) that issue access tokens, named in the security scheme's description. */
  tokenPaths?: readonly string[];
}

/** The seed's GenericMessageSchema: an object with string values. */
export const GenericMessageSchema = z.record(z.string(), z.string()).openapi('GenericMessageSchema');

const ValidationErrorSchema = z
  .object({
    detail: z.array(
      z.object({ type: z.string(), loc: z.array(z.union([z.string(), z.number()])), msg: z.string() }),
    ),
  })
  .openapi('ValidationErrorSchema', { example: { detail: [{ type: 'missing', loc: ['body', 'title'], msg: 'Field required' }] } });

/**
 * The errors the runtime answers by itself, with the body it sends. `errorSchema` marks the ones a
 * viewset's `error_schema` documents instead of the runtime's own shape (the seed's convention).
 */
interface ErrorResponse {
  description: string;
  example: Record<string, unknown>;
  errorSchema?: boolean;
}

const ERRORS: Record<number, ErrorResponse> = {
  400: { description: 'Bad Request: the body cannot be parsed as JSON', example: { detail: 'Cannot parse request body' }, errorSchema: true },
  401: { description: 'Unauthorized: no valid bearer token', example: { detail: 'Unauthorized' }, errorSchema: true },
  403: { description: 'Forbidden', example: { detail: 'You do not have permission to perform this action.' }, errorSchema: true },
  404: { description: 'Not Found', example: { detail: 'Not Found' }, errorSchema: true },
  409: { description: 'Conflict: the request violates a database constraint', example: { error: 'conflict', details: 'The request violates a database constraint.' } },
  414: { description: 'URI Too Long: the path and query string exceed 8192 bytes', example: { detail: 'URI Too Long' } },
  413: { description: 'Payload Too Large', example: { detail: 'Payload Too Large' } },
  415: { description: 'Unsupported Media Type: the body is not JSON', example: { detail: 'Unsupported Media Type' } },
  503: { description: 'Service Unavailable: the database cannot be reached', example: { detail: 'Service Unavailable' } },
};

const WRITES = new Set(['post', 'put', 'patch', 'delete']);

/**
 * The error statuses an operation can answer: 401 everywhere (a public operation still reads a
 * token sent to it), 400, 403 and 404 as the seed documents them, 409 on writes (a unique or foreign
 * key constraint), 413 and 415 where a body is read, 422 where anything is validated, 503 when the
 * database is down.
 */
function errorStatuses(route: Route, doc: NonNullable<Route['doc']>): number[] {
  // Before any route runs, every request may be a 414 (MAX_URL_LENGTH in server.ts): all a standalone route can add.
  if (doc.standalone) return [414];
  const statuses = [401, 503];
  if (doc.errorSchema) statuses.push(400, 403, 404);
  if (WRITES.has(route.method)) statuses.push(409);
  if (doc.body) statuses.push(400, 413, 415);
  return [...new Set(statuses)].sort((a, b) => a - b);
}

export const BEARER_SCHEME = 'BearerAuth';

export function buildOpenApi(info: ApiInfo, routes: readonly Route[]): unknown {
  const registry = new OpenAPIRegistry();
  // The Authorization header as an API key, so that Swagger UI's Authorize box takes the whole
  // value `Bearer <ACCESS_TOKEN>` (an `http bearer` scheme would prefix a second "Bearer").
  const issuers = (info.tokenPaths ?? []).map((p) => info.basePath + p);
  registry.registerComponent('securitySchemes', BEARER_SCHEME, {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: `HTTP bearer token: enter \`Bearer <ACCESS_TOKEN>\` (an RS256 JWT${issuers.length ? ` from ${issuers.join(' or ')}` : ''}).`,
  });
  for (const route of routes) {
    const doc = route.doc;
    if (!doc) continue;
    const responses: Record<string, ResponseConfig> = {};
    for (const r of doc.responses) {
      responses[String(r.status)] = r.schema
        ? { description: r.description, content: { 'application/json': { schema: r.schema } } }
        : { description: r.description };
    }
    for (const [status, example] of Object.entries(doc.errors ?? {})) {
      const description = STATUS_CODES[Number(status)] ?? 'Error';
      responses[status] = { description, content: { 'application/json': { schema: GenericMessageSchema, example } } };
    }
    for (const status of errorStatuses(route, doc)) {
      const error = ERRORS[status];
      const own = error.errorSchema && doc.errorSchema;
      const schema = own ? doc.errorSchema! : GenericMessageSchema;
      // A viewset's own error_schema has its own shape: the runtime's example would not fit it.
      const example = own && doc.errorSchema !== GenericMessageSchema ? {} : { example: error.example };
      responses[String(status)] ??= { description: error.description, content: { 'application/json': { schema, ...example } } };
    }
    if (doc.throttled) {
      responses['429'] ??= {
        description: 'Too Many Requests',
        headers: { 'Retry-After': { description: 'Seconds until a request is counted again.', schema: { type: 'integer' } } },
        content: { 'application/json': { schema: GenericMessageSchema } },
      };
    }
    if (doc.params || doc.query || doc.body) {
      responses['422'] ??= { description: 'Validation Error', content: { 'application/json': { schema: ValidationErrorSchema } } };
    }
    registry.registerPath({
      method: route.method,
      path: info.basePath + openApiPath(route.path),
      operationId: doc.operationId,
      summary: doc.summary,
      description: doc.description,
      tags: doc.tags,
      // A public operation reads a token when one is sent (`{}`: none needed; the scheme: optional).
      security: doc.standalone ? [] : doc.secured ? [{ [BEARER_SCHEME]: [] }] : [{}, { [BEARER_SCHEME]: [] }],
      request: {
        params: doc.params,
        query: doc.query,
        body: doc.body ? { required: true, content: { 'application/json': { schema: doc.body } } } : undefined,
      },
      responses,
    });
  }
  const generator = new OpenApiGeneratorV31(registry.definitions);
  return generator.generateDocument({
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version,
      description: info.description,
      ...(info.license ? { license: info.license } : {}),
      ...(info.contact ? { contact: info.contact } : {}),
    },
    // Paths carry the base path, so the server is the service's origin.
    servers: [{ url: '/', description: info.basePath ? `This service; every path starts with its base path ${info.basePath}` : 'This service' }],
  });
}
