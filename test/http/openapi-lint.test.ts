/**
 * The blog's OpenAPI document under Redocly's recommended rules: no error, no warning. One rule is
 * turned off, on purpose: `no-path-trailing-slash`. The blog's contract fixes its paths with a
 * trailing slash (`/api/articles/`) and routing is strict, so the document must say so.
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import request from 'supertest';
import { DIALECTS } from '../support/databases';
import { takeErrors } from '../support/fixtures';
import { startBlog, startShowcase, type RunningService } from '../support/services';

interface Problem {
  severity: string;
  ruleId: string;
  message: string;
  pointer: string;
}

const LINTER = path.join(__dirname, '..', 'support', 'redocly-lint.mjs');

/** Every problem Redocly finds, as `severity rule pointer: message` lines. */
function lint(document: unknown): string[] {
  const run = spawnSync(process.execPath, [LINTER, 'no-path-trailing-slash'], { input: JSON.stringify(document), encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`the linter failed: ${run.stderr}`);
  return (JSON.parse(run.stdout) as Problem[]).map((p) => `${p.severity} ${p.ruleId} ${p.pointer}: ${p.message}`);
}

describe.each(DIALECTS)('OpenAPI document under Redocly recommended rules (%s)', (dialect) => {
  for (const [name, start] of [
    ['blog', startBlog],
    ['showcase', startShowcase],
  ] as const) {
    describe(name, () => {
      let svc: RunningService;
      let doc: Record<string, any>;
      beforeAll(async () => {
        svc = await start(dialect);
        const base = name === 'blog' ? '/api' : '/v';
        const res = await request(svc.app).get(`${base}/openapi.json`);
        expect(res.status).toBe(200);
        doc = res.body;
      });
      afterAll(() => svc.close());
      afterEach(() => expect(takeErrors(svc)).toEqual([]));

      it('has no error and no warning', () => {
        expect(lint(doc)).toEqual([]);
      });
    });
  }
});
