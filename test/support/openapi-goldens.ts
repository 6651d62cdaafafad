/**
 * The OpenAPI documents pinned in test/fixtures/openapi/: the blog's, the showcase's and the
 * querying fixture's, as each service serves them. A golden is the served document laid out with
 * two-space indents, its key order kept, so that any change to a document is a diff in review;
 * test/http/openapi-golden.test.ts compares the served bytes with it, and `npm run update:openapi`
 * (update-openapi.ts) writes it again.
 */
import * as path from 'node:path';
import request from 'supertest';
import { startBlog, startQuerying, startShowcase, type RunningService } from './services';

export const OPENAPI_GOLDENS = path.resolve(__dirname, '../fixtures/openapi');

/** Each pinned service: how a test starts it, and where it serves its document. */
export const DOCUMENTED: Record<string, { start: (dialect: 'sqlite') => Promise<RunningService>; url: string }> = {
  blog: { start: startBlog, url: '/api/openapi.json' },
  showcase: { start: startShowcase, url: '/v/openapi.json' },
  querying: { start: startQuerying, url: '/openapi.json' },
};

export const goldenFile = (name: string) => path.join(OPENAPI_GOLDENS, `${name}.json`);

/** The served text of a JSON document, laid out as its golden is. */
export const layout = (json: string) => `${JSON.stringify(JSON.parse(json), null, 2)}\n`;

/**
 * The document a service serves, as the bytes it sends. It does not depend on the database: the
 * service runs on SQLite.
 */
export async function servedDocument(name: string): Promise<string> {
  const { start, url } = DOCUMENTED[name];
  const service = await start('sqlite');
  try {
    const res = await request(service.app).get(url);
    if (res.status !== 200) throw new Error(`${name}: GET ${url} answered ${res.status}`);
    return res.text;
  } finally {
    await service.close();
  }
}
