/**
 * The typed client takes every query parameter the served OpenAPI document lists, on every
 * operation, and no other: for every committed output (the blog, the showcase, the querying
 * fixture, and the case folders whose output runs where it is committed), each client method's
 * `query` type (its members and those of the interfaces it extends) is compared with the query
 * parameters of the operation of the same id in the document the service serves.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import request from 'supertest';
import { camelCase } from '../../generator/model/names';
import { connect, loadSettings, type Settings } from '../../runtime';
import { testKeys } from '../support/keys';
import type { Express } from 'express';

const ROOT = path.resolve(__dirname, '../..');

/** The case folders whose output imports a hooks module by a path that exists only beside the specs they were built for. */
const WITH_HOOKS = new Set(['actions-and-endpoints', 'relation-hooks']);
/** The case folder whose output is wrong on purpose (a column misspelt in it). */
const BROKEN = new Set(['misspelt-column']);

const OUTPUTS = [
  'generated',
  'test/fixtures/showcase/generated',
  'test/fixtures/querying/generated',
  ...fs
    .readdirSync(path.join(ROOT, 'test/cases'))
    .filter((c) => fs.existsSync(path.join(ROOT, 'test/cases', c, 'expected/client.ts')) && !WITH_HOOKS.has(c) && !BROKEN.has(c))
    .sort()
    .map((c) => `test/cases/${c}/expected`),
];

/** The members of each interface and the parts of each type alias of the client, as written. */
function clientTypes(text: string): Map<string, { members: string[]; bases: string[] }> {
  const types = new Map<string, { members: string[]; bases: string[] }>();
  for (const m of text.matchAll(/^export interface (\w+)(?: extends ([\w, ]+))? \{\n([\s\S]*?)^\}/gm)) {
    const members = [...m[3].matchAll(/^ {2}(?:'([^']+)'|(\w+))\??:/gm)].map((x) => x[1] ?? x[2]);
    types.set(m[1], { members, bases: m[2] ? m[2].split(',').map((b) => b.trim()) : [] });
  }
  for (const m of text.matchAll(/^export type (\w+) =\s*([\w &]+);/gm)) {
    types.set(m[1], { members: [], bases: m[2].split('&').map((b) => b.trim()) });
  }
  return types;
}

/** The page parameters of a custom paginator: the client cannot tell which built-in kind it extends, so it takes both. */
const EITHER_PAGE = ['page', 'page_size', 'limit', 'offset'];

/** Each client method's query parameter names (none when it takes no query), and whether its page parameters are both kinds'. */
function clientQueries(text: string): Map<string, { names: string[]; eitherPage: boolean }> {
  const types = clientTypes(text);
  const membersOf = (name: string): string[] => {
    const t = types.get(name);
    if (!t) throw new Error(`the client has no type ${name}`);
    return [...t.bases.flatMap(membersOf), ...t.members];
  };
  const basesOf = (name: string): string[] => [name, ...(types.get(name)?.bases ?? []).flatMap(basesOf)];
  const out = new Map<string, { names: string[]; eitherPage: boolean }>();
  for (const m of text.matchAll(/^ {4}(\w+)\((.*)\): Promise<.*> \{$/gm)) {
    const query = /\bquery: (\w+) = \{\}/.exec(m[2]);
    const bases = query ? basesOf(query[1]) : [];
    out.set(m[1], {
      names: query ? [...new Set(membersOf(query[1]))].sort() : [],
      eitherPage: bases.includes('PageNumberQuery') && bases.includes('LimitOffsetQuery'),
    });
  }
  return out;
}

interface GeneratedApp {
  createService(options: { db: ReturnType<typeof connect>; keys: ReturnType<typeof testKeys>; settings: Settings }): { app: Express };
}

/** Each operation's query parameter names in the document `out`'s service serves, by the client method's name. */
async function documentQueries(out: string): Promise<{ basePath: string; queries: Map<string, string[]> }> {
  const { createService } = require(path.join(ROOT, out, 'app')) as GeneratedApp;
  const { DEFAULT_SETTINGS } = require(path.join(ROOT, out, 'settings')) as { DEFAULT_SETTINGS: Settings };
  const db = connect('sqlite::memory:', '');
  try {
    const { app } = createService({ db, keys: testKeys(), settings: loadSettings(DEFAULT_SETTINGS, {}) });
    const basePath = /at ([^ ]*)\/openapi\.json/.exec(fs.readFileSync(path.join(ROOT, out, 'app.ts'), 'utf8'))![1];
    const res = await request(app).get(`${basePath}/openapi.json`);
    expect(res.status).toBe(200);
    const queries = new Map<string, string[]>();
    for (const item of Object.values(
      res.body.paths as Record<string, Record<string, { operationId?: string; parameters?: { in: string; name: string }[] }>>,
    )) {
      for (const op of Object.values(item)) {
        if (!op || typeof op !== 'object' || !op.operationId) continue;
        queries.set(
          camelCase(op.operationId),
          [...new Set((op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name))].sort(),
        );
      }
    }
    return { basePath, queries };
  } finally {
    await db.destroy();
  }
}

describe.each(OUTPUTS)('the client of %s', (out) => {
  it('takes every query parameter of every operation the served document lists, and no other', async () => {
    const client = clientQueries(fs.readFileSync(path.join(ROOT, out, 'client.ts'), 'utf8'));
    const { queries } = await documentQueries(out);
    // Operations the client has no method for (health, the docs) are not compared.
    const served = new Map([...queries].filter(([name]) => client.has(name)));
    expect([...client.keys()].filter((name) => !queries.has(name))).toEqual([]);
    const taken = [...client].map(([name, { names, eitherPage }]) => {
      // Of both kinds' page parameters, those of the kind the custom paginator is.
      const served = queries.get(name) ?? [];
      return [name, eitherPage ? names.filter((n) => !EITHER_PAGE.includes(n) || served.includes(n)) : names] as const;
    });
    expect(Object.fromEntries(taken)).toEqual(Object.fromEntries(served));
  });
});
