/**
 * A resource's routes are records: `resourceRoute` serves one of the five operations at the method,
 * path, status and transaction of its kind (`CRUD_OPERATIONS`), and documents it with the generic
 * summary, the MCP title naming the resource, the resource's tag and error schema and the success
 * response of its status, unless the record says otherwise. Only start-up is exercised here: the
 * service context's settings and its authentication middleware, which the route puts first.
 */
import type { RequestHandler } from 'express';
import { GenericMessageSchema, resourceRoute, withSettingDefaults, z, type Route, type ServiceContext } from '../../runtime';

const Out = z.object({ id: z.int() }).meta({ id: 'NoteOut' });
const In = z.object({ text: z.string() }).meta({ id: 'NoteIn' });
const Own = z.object({ problem: z.string() }).meta({ id: 'NoteError' });
const noAuth: RequestHandler = (_req, _res, next) => next();

function service(appendSlash: boolean): ServiceContext {
  // The two members a route reads when it is built; a request would need the rest.
  return { settings: withSettingDefaults({ SVC_APPEND_SLASH: appendSlash }), auth: () => noAuth } as unknown as ServiceContext;
}

const nouns = { base: 'notes', tag: 'Notes', one: 'note', many: 'notes' };
const handle = async () => ({ id: 1 });

function served(route: Route) {
  const { method, path, doc } = route;
  return {
    method,
    path,
    summary: doc?.summary,
    title: doc?.title,
    tags: doc?.tags,
    responses: doc?.responses,
    errorSchema: doc?.errorSchema,
  };
}

describe('resourceRoute', () => {
  it('serves and documents a create by its kind', () => {
    const route = resourceRoute(
      service(true),
      nouns,
    )({
      kind: 'create',
      auth: null,
      operation: { operationId: 'create_note', body: In, handle },
      doc: { response: Out },
    });
    expect(served(route)).toEqual({
      method: 'post',
      path: '/notes/',
      summary: 'Create a new object.',
      title: 'Create a note',
      tags: ['Notes'],
      responses: [{ status: 201, description: 'Created', schema: Out }],
      errorSchema: GenericMessageSchema,
    });
  });

  it('puts the slash of SVC_APPEND_SLASH where the default behaviours put it', () => {
    const route = (kind: 'list' | 'retrieve' | 'update' | 'delete', slash: boolean) =>
      resourceRoute(service(slash), nouns)({ kind, auth: null, operation: { operationId: `${kind}_note`, handle } });
    expect(
      ['list', 'retrieve', 'update', 'delete'].map((k) => [k, route(k as never, false).method, route(k as never, false).path]),
    ).toEqual([
      ['list', 'get', '/notes'],
      ['retrieve', 'get', '/notes/:pk'],
      ['update', 'patch', '/notes/:pk/'],
      ['delete', 'delete', '/notes/:pk/'],
    ]);
    expect(route('retrieve', true).path).toBe('/notes/:pk/');
    expect(route('delete', false).doc?.responses).toEqual([{ status: 204, description: 'No Content', schema: undefined }]);
    expect(route('list', false).doc?.title).toBe('List notes');
  });

  it("keeps what the record says: the spec's summary, several responses, the resource's error schema", () => {
    const route = resourceRoute(service(true), { ...nouns, one: 'article', errorSchema: Own })({
      kind: 'delete',
      auth: null,
      operation: { operationId: 'delete_article', handle },
      doc: {
        summary: 'Delete an own article.',
        responses: [
          { status: 200, description: 'OK (the override answers with a body)' },
          { status: 204, description: 'No Content' },
        ],
      },
    });
    expect(served(route)).toEqual({
      method: 'delete',
      path: '/notes/:pk/',
      summary: 'Delete an own article.',
      title: 'Delete an article',
      tags: ['Notes'],
      responses: [
        { status: 200, description: 'OK (the override answers with a body)' },
        { status: 204, description: 'No Content' },
      ],
      errorSchema: Own,
    });
  });

  it('serves a route without a kind (an action) where the record says, with no generic summary or title', () => {
    const route = resourceRoute(
      service(true),
      nouns,
    )({
      method: 'post',
      path: '/notes/:pk/pin/',
      auth: null,
      operation: { operationId: 'pin_note', status: 200, handle },
      doc: { summary: 'Pin a note.', response: Out },
    });
    expect(served(route)).toEqual({
      method: 'post',
      path: '/notes/:pk/pin/',
      summary: 'Pin a note.',
      title: undefined,
      tags: ['Notes'],
      responses: [{ status: 200, description: 'OK', schema: Out }],
      errorSchema: GenericMessageSchema,
    });
  });
});
