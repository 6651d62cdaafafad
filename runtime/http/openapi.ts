/**
 * The OpenAPI document, hand-written from the routes rather than by an OpenAPI library, since the
 * routes are data that already hold every part of it. Built once from the same Zod schemas that validate requests (written as
 * Schema Objects by openapi-schema.ts): paths in the order the routes are registered, each
 * operation's responses, parameters and body, and the components in the order they are first met.
 * The document is pinned byte for byte by test/http/openapi-golden.test.ts.
 */
import { STATUS_CODES } from 'node:http';
import { accepts, metadataOf, SchemaWriter, type SchemaObject } from './openapi-schema';
import { GenericMessageSchema, openApiPath, type Route, type RouteDoc } from './routes';
import { z } from '../core/zod';
import { cookieNames, CSRF_HEADER } from '../auth/cookies';

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
  /** `SVC_AUTH_COOKIE_SECURE`, which names the authentication cookies (auth/cookies.ts); absent, `Secure`. */
  settings?: { SVC_AUTH_COOKIE_SECURE: boolean };
}

export { GenericMessageSchema };

const ValidationErrorSchema = z
  .object({
    detail: z.array(z.object({ type: z.string(), loc: z.array(z.union([z.string(), z.number()])), msg: z.string() })),
  })
  .meta({ id: 'ValidationErrorSchema', example: { detail: [{ type: 'missing', loc: ['body', 'title'], msg: 'Field required' }] } });

/**
 * The errors the runtime answers by itself, with the body it sends. `errorSchema` marks the ones a
 * viewset's `error_schema` documents instead of the runtime's own shape (a default behaviour).
 */
interface ErrorResponse {
  description: string;
  example: Record<string, unknown>;
  errorSchema?: boolean;
}

const ERRORS: Record<number, ErrorResponse> = {
  400: {
    description: 'Bad Request: the body cannot be parsed as JSON',
    example: { detail: 'Cannot parse request body' },
    errorSchema: true,
  },
  401: { description: 'Unauthorized: no valid bearer token', example: { detail: 'Unauthorized' }, errorSchema: true },
  403: { description: 'Forbidden', example: { detail: 'You do not have permission to perform this action.' }, errorSchema: true },
  404: { description: 'Not Found', example: { detail: 'Not Found' }, errorSchema: true },
  409: {
    description: 'Conflict: the request violates a database constraint',
    example: { error: 'conflict', details: 'The request violates a database constraint.' },
  },
  414: { description: 'URI Too Long: the path and query string exceed 8192 bytes', example: { detail: 'URI Too Long' } },
  413: { description: 'Payload Too Large', example: { detail: 'Payload Too Large' } },
  415: { description: 'Unsupported Media Type: the body is not JSON', example: { detail: 'Unsupported Media Type' } },
  503: { description: 'Service Unavailable: the database cannot be reached', example: { detail: 'Service Unavailable' } },
};

const WRITES = new Set(['post', 'put', 'patch', 'delete']);

/**
 * The error statuses an operation can answer: 401 everywhere (a public operation still reads a
 * token sent to it), 400, 403 and 404 as the default behaviours document them, 409 on writes (a unique or foreign
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
export const COOKIE_SCHEME = 'CookieAuth';

/** The security requirements of an operation: the bearer token, and the cookie where CookieAuth is listed. */
function securityOf(doc: RouteDoc): Record<string, string[]>[] {
  if (doc.standalone) return [];
  const schemes: Record<string, string[]>[] = [{ [BEARER_SCHEME]: [] }, ...(doc.cookie ? [{ [COOKIE_SCHEME]: [] }] : [])];
  // A public operation reads a token when one is sent (`{}`: none needed; the scheme: optional).
  return doc.secured ? schemes : [{}, ...schemes];
}

/** A response as the route states it: a description, and its JSON body's schema and example. */
interface DocumentedResponse {
  description: string;
  headers?: Record<string, unknown>;
  schema?: z.core.$ZodType;
  example?: unknown;
}

/** Every response of an operation by status: its own, the errors its hook answers, the runtime's. */
function responsesOf(route: Route, doc: RouteDoc): Record<string, DocumentedResponse> {
  const responses: Record<string, DocumentedResponse> = {};
  for (const r of doc.responses) responses[String(r.status)] = { description: r.description, schema: r.schema };
  for (const [status, example] of Object.entries(doc.errors ?? {})) {
    responses[status] = { description: STATUS_CODES[Number(status)] ?? 'Error', schema: GenericMessageSchema, example };
  }
  for (const status of errorStatuses(route, doc)) {
    const error = ERRORS[status];
    const own = error.errorSchema && doc.errorSchema;
    // A viewset's own error_schema has its own shape: the runtime's example would not fit it.
    const example = own && doc.errorSchema !== GenericMessageSchema ? undefined : error.example;
    responses[String(status)] ??= { description: error.description, schema: own ? doc.errorSchema! : GenericMessageSchema, example };
  }
  if (doc.throttled) {
    responses['429'] ??= {
      description: 'Too Many Requests',
      headers: { 'Retry-After': { description: 'Seconds until a request is counted again.', schema: { type: 'integer' } } },
      schema: GenericMessageSchema,
    };
  }
  if (doc.params || doc.query || doc.body) responses['422'] ??= { description: 'Validation Error', schema: ValidationErrorSchema };
  return responses;
}

/** A JSON body: its example, if any, and its schema. */
function jsonContent(schemas: SchemaWriter, schema: z.core.$ZodType, example?: unknown) {
  return { 'application/json': { ...(example === undefined ? {} : { example }), schema: schemas.write(schema) } };
}

/** One Parameter Object per key of a path or query schema, in the schema's order. */
function parametersOf(schemas: SchemaWriter, schema: z.ZodObject | undefined, location: 'path' | 'query'): SchemaObject[] {
  if (!schema) return [];
  return Object.entries(schema.shape as Record<string, z.core.$ZodType>).map(([name, field]) => {
    const { description } = metadataOf(field);
    // A list the query string writes `a,b` (`style: form, explode: false`): said of the parameter, not its schema.
    const { style, explode, ...schema } = schemas.write(field);
    return {
      schema,
      ...(style !== undefined ? { style, explode } : {}),
      // Required unless it may be absent (or null, which a query string cannot say).
      required: !accepts(field, undefined) && !accepts(field, null),
      ...(description ? { description } : {}),
      name,
      in: location,
    };
  });
}

function operationOf(schemas: SchemaWriter, route: Route, doc: RouteDoc): SchemaObject {
  // Responses first, then parameters and body: components are listed in the order they are met.
  const responses: Record<string, SchemaObject> = {};
  for (const [status, r] of Object.entries(responsesOf(route, doc))) {
    responses[status] = {
      description: r.description,
      ...(r.headers ? { headers: r.headers } : {}),
      ...(r.schema ? { content: jsonContent(schemas, r.schema, r.example) } : {}),
    };
  }
  const parameters = [...parametersOf(schemas, doc.params, 'path'), ...parametersOf(schemas, doc.query, 'query')];
  const requestBody = doc.body ? { required: true, content: jsonContent(schemas, doc.body) } : undefined;
  const operation: SchemaObject = {
    operationId: doc.operationId,
    summary: doc.summary,
    description: doc.description,
    tags: doc.tags,
    security: securityOf(doc),
    parameters: parameters.length ? parameters : undefined,
    requestBody,
    responses,
  };
  return Object.fromEntries(Object.entries(operation).filter(([, v]) => v !== undefined));
}

export function buildOpenApi(info: ApiInfo, routes: readonly Route[]): unknown {
  const schemas = new SchemaWriter();
  const paths: Record<string, Record<string, SchemaObject>> = {};
  for (const route of routes) {
    if (!route.doc) continue;
    const path = info.basePath + openApiPath(route.path);
    paths[path] = { ...paths[path], [route.method]: operationOf(schemas, route, route.doc) };
  }
  // The Authorization header as an API key, so that Swagger UI's Authorize box takes the whole
  // value `Bearer <ACCESS_TOKEN>` (an `http bearer` scheme would prefix a second "Bearer").
  const issuers = (info.tokenPaths ?? []).map((p) => info.basePath + p);
  const bearer = {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: `HTTP bearer token: enter \`Bearer <ACCESS_TOKEN>\` (an RS256 JWT${issuers.length ? ` from ${issuers.join(' or ')}` : ''}).`,
  };
  // Declared only where an operation lists CookieAuth: the documents of other services stay as they were.
  const usesCookie = routes.some((r) => r.doc?.cookie);
  const names = cookieNames(info.settings?.SVC_AUTH_COOKIE_SECURE);
  const cookie = {
    type: 'apiKey',
    in: 'cookie',
    name: names.access,
    description: `The access token in the \`${names.access}\` cookie that the account endpoints set with \`auth.cookies\`. A write must also send the \`${names.csrf}\` cookie's value in the \`${CSRF_HEADER}\` header.`,
  };
  return {
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version,
      ...(info.description === undefined ? {} : { description: info.description }),
      ...(info.license ? { license: info.license } : {}),
      ...(info.contact ? { contact: info.contact } : {}),
    },
    // Paths carry the base path, so the server is the service's origin.
    servers: [
      { url: '/', description: info.basePath ? `This service; every path starts with its base path ${info.basePath}` : 'This service' },
    ],
    // No parameter components and no webhooks: both stay, empty, as the document has always had them.
    components: {
      securitySchemes: { [BEARER_SCHEME]: bearer, ...(usesCookie ? { [COOKIE_SCHEME]: cookie } : {}) },
      schemas: schemas.components,
      parameters: {},
    },
    paths,
    webhooks: {},
  };
}
