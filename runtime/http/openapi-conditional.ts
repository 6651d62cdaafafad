/**
 * Conditional requests in the OpenAPI document: what `buildOpenApi` (openapi.ts) builds from the
 * routes' schemas, completed for each operation that takes part in them (`RouteDoc.conditional`):
 * the `ETag` header of its success responses, `If-None-Match` and 304 on reads, `If-Match` (required
 * when the resource requires it) with 412 and 428 on writes to an existing row.
 */
import { openApiPath, type Route } from './routes';

interface DocOperation {
  parameters?: unknown[];
  responses: Record<string, { headers?: Record<string, unknown> }>;
}

const ETAG_HEADER = {
  description:
    "The ETag of the object's current version (a hash of its detail representation; of the body sent for a list or a `fields` selection).",
  schema: { type: 'string' },
};

/** The default behaviours' GenericMessageSchema, which every operation's 503 already names. */
const ERROR_BODY = { $ref: '#/components/schemas/GenericMessageSchema' };

/** The responses and parameters conditional requests add, written into `document` (what `buildOpenApi` returned). */
export function documentConditionalRequests(document: unknown, basePath: string, routes: readonly Route[]): unknown {
  const paths = (document as { paths?: Record<string, Record<string, DocOperation>> }).paths ?? {};
  for (const route of routes) {
    const conditional = route.doc?.conditional;
    const op = conditional && paths[basePath + openApiPath(route.path)]?.[route.method];
    if (!conditional || !op) continue;
    const parameters = (op.parameters ??= []);
    if (conditional.etag || conditional.read) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (status.startsWith('2') && status !== '204') response.headers = { ...response.headers, ETag: ETAG_HEADER };
      }
    }
    if (conditional.read) {
      parameters.push({
        name: 'If-None-Match',
        in: 'header',
        required: false,
        description: 'ETags of versions the client holds: when one is current, the answer is 304 without a body.',
        schema: { type: 'string' },
      });
      op.responses['304'] = {
        description: 'Not Modified: the version named in If-None-Match is current',
        headers: { ETag: ETAG_HEADER },
      } as never;
    }
    if (conditional.ifMatch) {
      const required = conditional.ifMatch === 'required';
      parameters.push({
        name: 'If-Match',
        in: 'header',
        required,
        description:
          'The ETag of the version the change applies to (several, comma-separated, for a bulk request: one per item); `*` for any. A stale one is a 412.',
        schema: { type: 'string' },
      });
      op.responses['412'] = {
        description: 'Precondition Failed: the object changed since the ETag given in If-Match',
        content: {
          'application/json': {
            schema: ERROR_BODY,
            example: {
              error: 'precondition_failed',
              details: 'The object has changed since it was read: If-Match names none of its current versions.',
            },
          },
        },
      } as never;
      if (required) {
        op.responses['428'] = {
          description: 'Precondition Required: the request has no If-Match',
          content: {
            'application/json': {
              schema: ERROR_BODY,
              example: {
                error: 'precondition_required',
                details: 'This request must be conditional: send If-Match with the ETag of the version it changes.',
              },
            },
          },
        } as never;
      }
    }
    if (parameters.length === 0) delete op.parameters;
  }
  return document;
}
