/**
 * The blog's generated access test (generated/access-test.ts) run as a project runs it, with Node's
 * test runner: every operation of generated/access.md called as every kind of caller on a fresh
 * in-memory SQLite database, and every checked cell answered as the matrix says. The runtime loads
 * from its sources (register.js).
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

const root = path.resolve(__dirname, '../..');

jest.setTimeout(180_000);

describe("the blog's access matrix test", () => {
  it('passes: 28 operations, 4 callers each, 4 cells only hooks can decide', () => {
    const script = "require('./generated/access-test.ts').testAccessMatrix();";
    const r = spawnSync(process.execPath, ['-r', './register.js', '-e', script], { cwd: root, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
    const summary = Object.fromEntries([...r.stdout.matchAll(/^# (tests|pass|fail|skipped) (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
    expect({ status: r.status, summary, failed: r.stdout.split('\n').filter((l) => /^\s*not ok /.test(l)) }).toEqual({
      status: 0,
      summary: { tests: 140, pass: 136, fail: 0, skipped: 4 },
      failed: [],
    });
    // The anonymous callers of the public register, login and refresh, and of the feed: decided by hooks, not called.
    expect(r.stdout.match(/^\s*ok \d+ - \w+ as anonymous: decided by hooks # SKIP/gm)).toHaveLength(4);
  });
});
