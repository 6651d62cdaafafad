/**
 * The OpenAPI document, built once from the same Zod schemas that validate requests.
 */
import { OpenApiGeneratorV31, OpenAPIRegistry, type ResponseConfig } from '@asteasolutions/zod-to-openapi';
import { openApiPath, type Route } from './routes';
import { z } from './zod';

export interface ApiInfo {
  title: string;
  version: string;
  description?: string;
  /** Mount point of every route, e.g. `/api`. */
  basePath: string;
}

/** The seed's GenericMessageSchema: an object with string values. */
export const GenericMessageSchema = z.record(z.string(), z.string()).openapi('GenericMessageSchema');

const ValidationErrorSchema = z
  .object({
    detail: z.array(
      z.object({ type: z.string(), loc: z.array(z.union([z.string(), z.number()])), msg: z.string() }),
    ),
  })
  .openapi('ValidationErrorSchema');

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
};

export const BEARER_SCHEME = 'BearerAuth';

export function buildOpenApi(info: ApiInfo, routes: readonly Route[]): unknown {
  const registry = new OpenAPIRegistry();
  // The Authorization header as an API key, so that Swagger UI's Authorize box takes the whole
  // value `Bearer <ACCESS_TOKEN>` (an `http bearer` scheme would prefix a second "Bearer").
  registry.registerComponent('securitySchemes', BEARER_SCHEME, {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'HTTP bearer token: enter `Bearer <ACCESS_TOKEN>` (an RS256 JWT from /auth/login/ or /auth/register/).',
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
    if (doc.errorSchema) {
      for (const status of [400, 401, 403, 404]) {
        responses[String(status)] ??= {
          description: ERROR_DESCRIPTIONS[status],
          content: { 'application/json': { schema: doc.errorSchema } },
        };
      }
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
      security: doc.secured ? [{ [BEARER_SCHEME]: [] }] : undefined,
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
    info: { title: info.title, version: info.version, description: info.description },
  });
}
