/**
 * The MCP endpoint's tools and the requests their calls become (runtime/http/mcp.ts), on routes
 * documented by the runtime's own OpenAPI builder: what the blog does not show.
 */
import { ConfigurationError } from '../../runtime/core/settings';
import { z } from '../../runtime/core/zod';
import { mcpTools, toolRequest, toolResult } from '../../runtime/http/mcp';
import { buildOpenApi } from '../../runtime/http/openapi';
import type { Route } from '../../runtime/http/routes';

const Note = z.object({ text: z.string().max(10) }).meta({ id: 'Note' });
const NoteOut = z.object({ id: z.number().int(), text: z.string(), tags: z.array(z.string()) }).meta({ id: 'NoteOut' });

const routes: Route[] = [
  {
    method: 'get',
    path: '/health',
    handlers: [],
    doc: { operationId: 'health_live', tags: [], responses: [{ status: 200, description: 'OK' }], secured: false, standalone: true },
  },
  {
    method: 'get',
    path: '/notes/',
    handlers: [],
    doc: {
      operationId: 'list_notes',
      summary: 'List the notes.',
      tags: ['Notes'],
      query: z.object({
        tag: z.array(z.string()).optional(),
        page: z.coerce.number().int().optional().meta({ description: 'A page number.' }),
      }),
      responses: [{ status: 200, description: 'OK', schema: z.array(NoteOut) }],
      secured: false,
    },
  },
  {
    method: 'patch',
    path: '/notes/:pk/',
    handlers: [],
    doc: {
      operationId: 'update_note',
      summary: 'Update a note.',
      description: 'Only its author may.',
      tags: ['Notes'],
      params: z.object({ pk: z.number().int() }),
      body: Note,
      responses: [{ status: 200, description: 'OK', schema: NoteOut }],
      secured: true,
    },
  },
];
const document = buildOpenApi({ title: 'Notes', version: '1', basePath: '/v' }, routes);

describe('mcpTools', () => {
  const tools = mcpTools(document, routes, '/v');

  it('makes one tool per documented operation, not the standalone routes, named and described by the document', () => {
    expect(tools.map((t) => t.tool.name)).toEqual(['list_notes', 'update_note']);
    expect(tools[1].tool).toMatchObject({
      title: 'Update a note.',
      description: 'Update a note.\n\nOnly its author may.\n\nHTTP: PATCH /v/notes/{pk}/',
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    });
    expect(tools.map(({ method, path, pathParameters, body }) => ({ method, path, pathParameters, body }))).toEqual([
      { method: 'get', path: '/v/notes/', pathParameters: [], body: false },
      { method: 'patch', path: '/v/notes/{pk}/', pathParameters: ['pk'], body: true },
    ]);
  });

  it('takes the parameters and the body as arguments, the components they name as $defs', () => {
    expect(tools[0].tool.inputSchema).toEqual({
      type: 'object',
      properties: { tag: { type: 'array', items: { type: 'string' } }, page: { type: ['integer', 'null'], description: 'A page number.' } },
    });
    expect(tools[1].tool.inputSchema).toEqual({
      type: 'object',
      properties: { pk: { type: 'integer' }, body: { $ref: '#/$defs/Note', description: 'The request body (JSON).' } },
      required: ['pk', 'body'],
      $defs: { Note: { type: 'object', properties: { text: { type: 'string', maxLength: 10 } }, required: ['text'] } },
    });
  });

  it('refuses to start when a parameter would take the place of the body', () => {
    const clash: Route[] = [{ ...routes[2], doc: { ...routes[2].doc!, query: z.object({ body: z.string().optional() }) } }];
    expect(() => mcpTools(buildOpenApi({ title: 'Notes', version: '1', basePath: '/v' }, clash), clash, '/v')).toThrow(
      new ConfigurationError('SVC_MCP: the operation update_note has a parameter named "body", the argument that holds its request body'),
    );
  });
});

describe('toolRequest and toolResult', () => {
  const [list, update] = mcpTools(document, routes, '/v');

  it('puts path parameters in the path, encoded, the body as JSON, any other argument in the query string', () => {
    expect(toolRequest(update, { pk: 'a/b', body: { text: 'hi' }, extra: 1 })).toEqual({
      method: 'patch',
      url: '/v/notes/a%2Fb/?extra=1',
      headers: {},
      body: { text: 'hi' },
    });
    expect(toolRequest(list, { tag: ['a', 'b'], page: 2, on: true, none: null, filter: { x: 1 } })).toEqual({
      method: 'get',
      url: '/v/notes/?tag=a&tag=b&page=2&on=true&filter=%7B%22x%22%3A1%7D',
      headers: {},
    });
  });

  it('answers a call without a path parameter with the 422 of a missing one', () => {
    expect(toolRequest(update, { body: {} })).toEqual({
      status: 422,
      headers: {},
      body: { detail: [{ type: 'missing', loc: ['path', 'pk'], msg: 'Field required' }] },
    });
  });

  it('makes a result of the status, headers and body, an error from 400 on', () => {
    const ok = { status: 200, headers: { etag: '"x"' }, body: { id: 1 } };
    expect(toolResult(ok)).toEqual({ content: [{ type: 'text', text: JSON.stringify(ok) }], structuredContent: ok, isError: false });
    const gone = { status: 404, headers: {}, body: { detail: 'Not Found' } };
    expect(toolResult(gone)).toEqual({
      content: [{ type: 'text', text: '{"status":404,"body":{"detail":"Not Found"}}' }],
      structuredContent: { status: 404, body: { detail: 'Not Found' } },
      isError: true,
    });
  });
});
