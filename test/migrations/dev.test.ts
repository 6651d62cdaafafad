/**
 * `svcgen dev` (generator/cli/dev.ts) and the gates of build: a rename (renamed_from) breaks the
 * API, so it stops the session's build; `svcgen build --allow-breaking` run beside the session
 * then writes the output, and the session, whose compiled service is now older than the output,
 * compiles and restarts the service, whose start applies the new migration. A session started with
 * the gate open (`allowBreaking`) builds the next rename at once. The service runs `main.js
 * migrate` here (it applies the migrations and exits), on its default SQLite file.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startDev, type DevSession } from '../../generator/cli/dev';
import { connect } from '../../runtime';
import { migrationStatus } from '../../runtime/db/migrations';
import { build, columns, libraryWorkspace, ROOT, type LibraryWorkspace } from './helpers';

jest.setTimeout(300_000);

const V1 = `model: Issue
fields:
  title: {type: string, max_length: 100}
  body: {type: text, null: true}
viewset: {auth: null}
`;
const V2 = V1.replace('  body: {type: text, null: true}', '  details: {type: text, null: true, renamed_from: body}');
const V3 = V1.replace('  body: {type: text, null: true}', '  text: {type: text, null: true, renamed_from: details}');

let ws: LibraryWorkspace;
let session: DevSession | undefined;
let logged: string[];

beforeAll(() => {
  ws = libraryWorkspace('dev');
  // The workspace compiles against the runtime's compiled declarations, as a project does.
  fs.writeFileSync(
    path.join(ws.root, 'tsconfig.json'),
    JSON.stringify({
      extends: path.join(ROOT, 'tsconfig.build.json'),
      compilerOptions: { outDir: 'dist', rootDir: '.', incremental: false },
      references: [{ path: path.join(ROOT, 'runtime') }],
      include: ['generated', 'specs'],
      exclude: ['dist'],
    }),
  );
  ws.write({ 'issues.yaml': V1 });
});
afterAll(async () => {
  await session?.stop();
  ws.remove();
});

function dev(options: { allowBreaking?: boolean } = {}): DevSession {
  logged = [];
  return startDev({
    specsDir: 'specs',
    outDir: 'generated',
    tsconfig: 'tsconfig.json',
    cwd: ws.root,
    serviceArgs: ['migrate'],
    debounceMs: 50,
    log: (l) => logged.push(l),
    ...options,
  });
}

/** Waits until the session has logged a line matching `pattern` `times` times. */
async function loggedTimes(pattern: RegExp, times: number): Promise<void> {
  for (let i = 0; i < 600 && logged.filter((l) => pattern.test(l)).length < times; i++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  expect(logged.filter((l) => pattern.test(l)).length).toBe(times);
}

/** The migrations applied to the service's SQLite file (its default, under the workspace), and the columns of issues. */
async function applied(): Promise<{ migrations: string[]; columns: string[] }> {
  const file = /DEFAULT_SQLITE_FILE = '([^']+)'/.exec(fs.readFileSync(path.join(ws.out, 'settings.ts'), 'utf8'))![1];
  const db = connect(`sqlite:${path.join(ws.root, file)}`, '');
  try {
    const status = await migrationStatus(db, []);
    return { migrations: status.unknown, columns: await columns(db, 'issues') };
  } finally {
    await db.destroy();
  }
}

const restarted = /^svcgen dev: built and compiled in \d+ ms; service restarted; watching specs$/;
const stopped = /^svcgen dev: the service stopped \(exit code 0\); waiting for changes$/;

it('restarts on the output a build with --allow-breaking wrote beside it, and takes the gate flags for the session', async () => {
  session = dev();
  await session.ready;
  await loggedTimes(stopped, 1);
  expect(await applied()).toEqual({ migrations: ['0001_initial'], columns: ['body', 'id', 'title'] });

  // The rename breaks the API: the session's build stops, the service is not restarted.
  ws.write({ 'issues.yaml': V2 });
  await loggedTimes(/^svcgen dev: \d+ problems? in the specs; waiting for changes$/, 1);
  expect(logged.filter((l) => l.includes('breaking change:')).length).toBeGreaterThan(0);
  expect(logged.filter((l) => restarted.test(l))).toHaveLength(1);

  // Another terminal: svcgen build --allow-breaking. The session compiles it and restarts.
  const next = (await build(ws)).migration!.name;
  expect(next).toBe('0002_rename_issues_body_details');
  await loggedTimes(restarted, 2);
  await loggedTimes(stopped, 2);
  expect(await applied()).toEqual({ migrations: ['0001_initial', next], columns: ['details', 'id', 'title'] });
  // Its own output written and compiled, the session rests: no third restart, nothing more said.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  expect(logged.filter((l) => restarted.test(l))).toHaveLength(2);
  expect(logged.filter((l) => /the output did not/.test(l))).toEqual([]);
  await session.stop();

  // A session with the gate open builds the next rename itself.
  session = dev({ allowBreaking: true });
  await session.ready;
  await loggedTimes(stopped, 1);
  ws.write({ 'issues.yaml': V3 });
  await loggedTimes(restarted, 2);
  await loggedTimes(stopped, 2);
  expect(logged).toContain('  wrote      generated/migrations/0003_rename_issues_details_text.ts');
  expect(await applied()).toEqual({
    migrations: ['0001_initial', next, '0003_rename_issues_details_text'],
    columns: ['id', 'text', 'title'],
  });
});
