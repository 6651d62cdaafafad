/**
 * Generated access tests (access-test.ts) run as a project runs them, with Node's test runner: every
 * operation of access.md called as every kind of caller on a fresh in-memory SQLite database, and
 * every checked cell answered as the matrix says. The blog's, and the test case whose sample rows
 * need a uuid key, choices, a decimal, a date, JSON and foreign keys in order. The runtime loads
 * from its sources (tsx and the `@svcgen/source` condition).
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { FROM_SOURCES } from '../support/from-sources';

const root = path.resolve(__dirname, '../..');

jest.setTimeout(180_000);

/** Runs the access test of the output folder `dir`: its exit status, summary and failed tests. */
function runAccessTest(dir: string) {
  const script = `require('./${dir}/access-test.ts').testAccessMatrix();`;
  const r = spawnSync(process.execPath, [...FROM_SOURCES, '-e', script], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  const summary = Object.fromEntries([...r.stdout.matchAll(/^# (tests|pass|fail|skipped) (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
  return { status: r.status, summary, failed: r.stdout.split('\n').filter((l) => /^\s*not ok /.test(l)), out: r.stdout };
}

describe('generated access matrix tests', () => {
  it("the blog's passes: 29 operations, 4 callers each, 5 cells only hooks can decide", () => {
    const { out, ...r } = runAccessTest('generated');
    expect(r).toEqual({ status: 0, summary: { tests: 145, pass: 140, fail: 0, skipped: 5 }, failed: [] });
    // The anonymous callers of the public register, login, refresh and logout, and of the feed: decided by hooks, not called.
    expect(out.match(/^\s*ok \d+ - \w+ as anonymous: decided by hooks # SKIP/gm)).toHaveLength(5);
  });

  it('makes the sample rows a route needs from the model alone, and skips callers holding a role', () => {
    const { out, ...r } = runAccessTest('test/cases/access-test-samples/expected');
    // 15 operations with 5 callers each; role:manager is never called.
    expect(r).toEqual({ status: 0, summary: { tests: 90, pass: 75, fail: 0, skipped: 15 }, failed: [] });
    expect(out.match(/^\s*ok \d+ - \w+ as role:manager: not called # SKIP/gm)).toHaveLength(15);
    expect(out).toMatch(/^\s*ok \d+ - retrieve_project as anonymous: 401$/m);
    expect(out).toMatch(/^\s*ok \d+ - delete_task as authenticated: 403$/m);
  });
});
