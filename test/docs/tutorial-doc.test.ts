/**
 * The reading of the tutorial's pages (test/support/tutorial.ts) that test/docs/tutorial.test.ts
 * runs, on its own and without running anything: every page reads as a script, and the comparison
 * of a command's output with its page passes what only differs by the run's values (port, tarball
 * folder, tokens, timestamps) and fails when the page's output is stale.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { applyEdit, outputProblem, tutorialSteps, type Command, type Edit, type RunValues } from '../support/tutorial';

const ROOT = path.resolve(__dirname, '../..');
const PAGES = ['1-new-project.md', '2-a-resource.md', '3-a-change-with-data.md', '4-deploying.md', '../guides/typed-client-script.md'];
const read = (page: string) => fs.readFileSync(path.join(ROOT, 'docs/tutorial', page), 'utf8');

/** A run's own values, none of them the page's. */
const RUN: RunValues = { packages: '/tmp/svcgen-tutorial-Ab12Cd/packages', port: 43123 };

function command(page: string, text: string, pattern: RegExp): Command {
  const found = tutorialSteps(`docs/tutorial/${page}`, text).filter((s): s is Command => s.kind === 'command' && pattern.test(s.command));
  expect(found.length).toBe(1);
  return found[0];
}

/** What a run prints for a command whose page shows `expected`: the same, with the run's values, and npm's script lines. */
function printedByRun(expected: string[]): string {
  return ['', '> my-api@0.1.0 start', '> node scripts/compiled.js --build && node dist/generated/main.js', '', ...expected, '']
    .join('\n')
    .replace(/8000/g, String(RUN.port))
    .replace(/2026-12-07T10:51:08\.004Z/g, '2027-01-02T03:04:05.678Z')
    .replace(/eyJhbGciOiJSUzI1NiIs…/g, 'eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiIxIn0.c2lnbmF0dXJl');
}

describe('the tutorial as a script', () => {
  it('reads every page: commands with their output, hidden commands, file edits, the excerpt', () => {
    const steps = PAGES.flatMap((p) => tutorialSteps(`docs/tutorial/${p}`, read(p)));
    const kinds = steps.reduce<Record<string, number>>((n, s) => ({ ...n, [s.kind]: (n[s.kind] ?? 0) + 1 }), {});
    expect(kinds).toEqual({ command: expect.any(Number), edit: 5, excerpt: 1, sh: 2 });
    expect(kinds.command).toBeGreaterThan(25);
    const hidden = steps.filter((s): s is Command => s.kind === 'command' && s.expected === undefined);
    expect(hidden.map((s) => s.command)).toEqual([
      "sed -i.bak '/^  done:/d' specs/resources/notes.yaml",
      'mv specs/resources/notes.yaml.bak specs/resources/notes.yaml',
    ]);
    // A command continued over lines is one command.
    const login = steps.find((s): s is Command => s.kind === 'command' && s.command.startsWith('TOKEN='))!;
    expect(login.command).toMatch(/^TOKEN=\$\(curl -s -X POST \$API\/auth\/login\/ .* \| node -pe '.*'\)$/);
  });

  it('edits a file as the pages say: the whole file, lines under a key, a line replaced', () => {
    const [whole, under, replace, json, script] = PAGES.flatMap((p) => tutorialSteps(`docs/tutorial/${p}`, read(p))).filter(
      (s): s is Edit => s.kind === 'edit',
    );
    expect(applyEdit('', whole)).toMatch(/^model: Project\n/);
    const notes = 'model: Note\nfields:\n  title: {type: string}\n  done: {type: boolean}\nviewset:\n  auth: null\n';
    const added = applyEdit(notes, under);
    expect(added).toBe(
      'model: Note\nfields:\n  title: {type: string}\n  done: {type: boolean}\n  priority: {type: integer}\n' +
        '  project: {type: foreign_key, to: Project, null: true, on_delete: set_null}\nviewset:\n  auth: null\n',
    );
    expect(applyEdit(added, replace)).toContain('  done: {type: boolean}\n  priority: {type: integer, default: 2}\n  project:');
    // The typed client guide: a JSON key's line replaced, a TypeScript file written whole.
    expect(applyEdit('{\n  "compilerOptions": {},\n  "include": ["generated", "specs"]\n}\n', json)).toBe(
      '{\n  "compilerOptions": {},\n  "include": ["generated", "specs", "tools"]\n}\n',
    );
    expect(script.path).toBe('tools/report.ts');
    expect(applyEdit('', script)).toMatch(/^import \{ ApiError, createClient \} from '\.\.\/generated\/client';\n/);
  });

  it("passes a run's output that differs from the page only in port, paths, tokens and timestamps", () => {
    const page = '1-new-project.md';
    const start = command(page, read(page), /^npm start$/);
    expect(outputProblem(start, printedByRun(start.expected!), RUN)).toBeUndefined();
    const register = command(page, read(page), /auth\/register/);
    expect(register.expected!.join('\n')).toContain('eyJhbGciOiJSUzI1NiIs…');
    expect(outputProblem(register, printedByRun(register.expected!), RUN)).toBeUndefined();
    const init = command(page, read(page), /svcgen init my-api$/);
    const printed = printedByRun(init.expected!).replace(/\/home\/me\/svcgen\/dist\/packages/g, RUN.packages);
    // `…` stands for the lines the page leaves out.
    const listed = printed.replace('  …\n', '  created    my-api/generated/app.ts\n  created    my-api/package.json\n');
    expect(listed).not.toContain('…');
    expect(outputProblem(init, listed, RUN)).toBeUndefined();
  });

  it("fails when the page's output is stale: a count, a value, a line gone (the check itself)", () => {
    const page = '1-new-project.md';
    const start = command(page, read(page), /^npm start$/);
    const register = command(page, read(page), /auth\/register/);
    // The run printed what the page shows today; the pages below are altered copies, as if the service had changed since.
    const stale = read(page)
      .replace('2 resources, 16 endpoints', '2 resources, 15 endpoints')
      .replace('"token_type":"bearer"', '"token_type":"Bearer"');
    const oldStart = command(page, stale, /^npm start$/);
    expect(outputProblem(oldStart, printedByRun(start.expected!), RUN)).toMatch(
      new RegExp(
        `^docs/tutorial/1-new-project\\.md:\\d+: \\$ npm start\\n  the page shows:\\n    svcgen build: 2 resources, 15 endpoints;`,
      ),
    );
    const oldRegister = command(page, stale, /auth\/register/);
    expect(outputProblem(oldRegister, printedByRun(register.expected!), RUN)).toContain('"token_type":"Bearer"');
    // A line of output the page does not show (nor covers with `…`).
    expect(
      outputProblem(start, printedByRun([...start.expected!.slice(0, 1), 'compiled 12 files', ...start.expected!.slice(1)]), RUN),
    ).toContain('compiled 12 files');
  });
});
