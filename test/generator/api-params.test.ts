/**
 * The breaking-change gate on path and query parameters, for the changes the spec language cannot
 * write today (a required query parameter, a narrower range than a column's) and so no case folder
 * shows: the gate compares surfaces, whatever wrote them.
 */
import { apiBreaks } from '../../generator/api/breaks';
import type { ApiField, ApiSources, ApiSurface } from '../../generator/api/surface';

const ROUTE = 'GET /notes/{pk}/';
const AT = { file: 'resources/notes.yaml', path: ['viewset', 'query_params', 'rank'] };

function surface(query: Record<string, ApiField>, path: Record<string, ApiField> = { pk: { type: 'integer' } }): ApiSurface {
  return { operations: { retrieve_note: { route: ROUTE, path, query, responses: { 200: null }, errors: [] } } };
}

const sources: ApiSources = { operations: { retrieve_note: [] }, schemas: {}, fields: {}, params: { 'retrieve_note query rank': [AT] } };

const messages = (before: ApiSurface, after: ApiSurface) => apiBreaks(before, after, sources).map((b) => b.brk.message);

describe('the gate on parameters', () => {
  const rank: ApiField = { type: 'integer', minimum: 0, maximum: 100 };

  it('passes what only widens: a new optional parameter, a wider range, a wider enum', () => {
    const before = surface({ rank, ordering: { type: 'string', enum: ['text'] } });
    const after = surface({
      rank: { type: 'integer', minimum: -5 },
      ordering: { type: 'string', enum: ['text', 'rank'] },
      done: { type: 'boolean' },
    });
    expect(messages(before, after)).toEqual([]);
  });

  it('refuses a new required parameter and one made required, at the parameter', () => {
    const breaks = apiBreaks(
      surface({ rank }),
      surface({ rank: { ...rank, required: true }, done: { type: 'boolean', required: true } }),
      sources,
    );
    expect(breaks.map((b) => [b.brk.message, b.at[0]])).toEqual([
      [`operation retrieve_note (${ROUTE}): query parameter "rank" became required`, AT],
      [`operation retrieve_note (${ROUTE}): query has a new required parameter "done"`, undefined],
    ]);
  });

  it('refuses a narrower range, a changed type and an enum where any value was accepted', () => {
    expect(
      messages(
        surface({ rank, text: { type: 'string' } }),
        surface({ rank: { type: 'integer', minimum: 1, maximum: 50 }, text: { type: 'string', enum: ['a'] } }),
      ),
    ).toEqual([
      `operation retrieve_note (${ROUTE}): query parameter "rank" narrowed its minimum: 0 → 1`,
      `operation retrieve_note (${ROUTE}): query parameter "rank" narrowed its maximum: 100 → 50`,
      `operation retrieve_note (${ROUTE}): query parameter "text" narrowed its values: "any other value" no longer accepted`,
    ]);
    expect(messages(surface({}), surface({}, { pk: { type: 'string:uuid' } }))).toEqual([
      `operation retrieve_note (${ROUTE}): path parameter "pk" changed type: integer → string:uuid`,
    ]);
  });

  it('compares a surface recorded before parameters were as one without any: all of them are additions', () => {
    const before: ApiSurface = { operations: { retrieve_note: { route: ROUTE, responses: { 200: null }, errors: [] } } };
    expect(messages(before, surface({ rank }))).toEqual([]);
  });
});
