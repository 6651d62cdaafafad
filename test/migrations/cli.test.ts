/**
 * Migrations through the `svcgen` command, run the way a person runs it: what build prints, how it
 * stops (and says what to do) for destructive steps and NOT NULL fields, --allow-destructive and
 * --default, and check naming a migration that was never generated.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { libraryWorkspace, ROOT, type LibraryWorkspace } from './helpers';
import { shownPath } from '../support/scratch';

// Every run transpiles the generator on load.
jest.setTimeout(120_000);

function svcgen(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['bin/svcgen', ...args], { cwd: ROOT, encoding: 'utf8' });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const lines = (text: string) => text.split('\n').filter(Boolean);
const rel = (p: string) => shownPath(p);

const AUTHORS = `model: Author
fields:
  name: {type: string, max_length: 100}
  born: {type: date, null: true}
viewset: {auth: null}
`;

describe('svcgen build and check with migrations', () => {
  let ws: LibraryWorkspace;
  let specs: string;
  let out: string;
  beforeEach(() => {
    ws = libraryWorkspace('cli');
    ws.write({ 'authors.yaml': AUTHORS });
    specs = rel(ws.specs);
    out = rel(ws.out);
    const first = svcgen('build', specs, '--out', out);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    // A first build: the initial migration, and no resources or endpoints "added" (there was no previous build).
    expect(first.stdout).toContain(`  migration  ${out}/migrations/0001_initial.ts:\n               create table authors\n`);
    expect(first.stdout).not.toContain('  resource ');
  });
  afterEach(() => ws.remove());

  it('prints the resources, endpoints and migration a spec change brings, and nothing on a second build', () => {
    ws.write({
      'authors.yaml': AUTHORS.replace(
        '  born: {type: date, null: true}\n',
        '  born: {type: date, null: true}\n  country: {type: string, max_length: 2, default: "NZ"}\n',
      ),
      'books.yaml':
        'model: Book\nfields:\n  title: {type: string, max_length: 100}\n  author: {type: foreign_key, to: Author}\nviewset: {auth: null}\n',
    });
    // The books are public: a new resource anonymous callers may write widens access (the access gate's own tests: test/cases/access-*).
    const r = svcgen('build', specs, '--out', out, '--allow-widen');
    expect(r.status).toBe(0);
    const shown = lines(r.stdout).filter((l) => !l.startsWith('  wrote '));
    expect(shown).toEqual([
      '  resource   + books',
      '  endpoint   + DELETE /api/books/{pk}/',
      '  endpoint   + GET /api/books/',
      '  endpoint   + GET /api/books/{pk}/',
      '  endpoint   + PATCH /api/books/{pk}/',
      '  endpoint   + POST /api/books/',
      `  migration  ${out}/migrations/0002_books_authors_country.ts:`,
      '               create table books',
      '               add column authors.country',
      expect.stringMatching(/^svcgen build: 2 resources, 10 endpoints; \d+ written, \d+ unchanged, 0 removed$/),
    ]);
    expect(r.stdout).toContain(`  wrote      ${out}/migrations/0002_books_authors_country.ts\n`);
    expect(fs.readFileSync(path.join(ws.out, 'migrations/index.ts'), 'utf8')).toContain(
      `import * as m1 from './0002_books_authors_country';`,
    );

    const again = svcgen('build', specs, '--out', out);
    expect(lines(again.stdout)).toEqual([expect.stringMatching(/; 0 written, \d+ unchanged, 0 removed$/)]);
    expect(svcgen('check', specs, '--out', out)).toMatchObject({ status: 0 });
  });

  it('check fails naming the migration a spec change needs when it was never generated', () => {
    ws.write({
      'authors.yaml': AUTHORS.replace(
        '  born: {type: date, null: true}\n',
        '  born: {type: date, null: true}\n  alive: {type: boolean, default: true}\n',
      ),
    });
    const r = svcgen('check', specs, '--out', out);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `missing migration: ${out}/migrations/0002_authors_alive.ts: the specs change the database schema since the last build:\n  add column authors.alive\n`,
    );
    const last = lines(r.stderr).at(-1)!;
    expect(last).toMatch(new RegExp(`^svcgen check: ${out} is stale \\(\\d+ changed, 0 missing, 0 extra\\); `));
    expect(last).toContain(
      `; no migration was generated for the schema change (migrations/0002_authors_alive.ts); run "svcgen build ${specs} --out ${out}" and commit the result`,
    );
    expect(fs.existsSync(path.join(ws.out, 'migrations/0002_authors_alive.ts'))).toBe(false);
  });

  it('stops on a destructive step, naming the spec and what to do, and writes it with --allow-destructive', () => {
    ws.write({ 'authors.yaml': AUTHORS.replace('  born: {type: date, null: true}\n', '') });
    const manifest = fs.readFileSync(path.join(ws.out, 'manifest.json'), 'utf8');
    const stopped = svcgen('build', specs, '--out', out);
    expect(stopped.status).toBe(1);
    expect(stopped.stdout).toBe('');
    expect(lines(stopped.stderr)).toEqual([
      `${specs}/resources/authors.yaml:2:1: removing field born drops column authors.born and its data; run svcgen build with --allow-destructive ` +
        'to write it, or put the field back (to rename it instead, add renamed_from: born to the field with the new name)',
      // Clients sending born break too (the value would be dropped without a word), at the resource's fields.
      ...['create_author (POST /api/authors/)', 'update_author (PATCH /api/authors/{pk}/)'].map(
        (op) =>
          `${specs}/resources/authors.yaml:2:1: breaking change: operation ${op}: request body field "born" removed (clients may still send it); if intended, build with --allow-breaking (recorded in api.json)`,
      ),
      // Clients reading born break too: the API gate says so in the same run.
      ...[
        'create_author (POST /api/authors/): response 201',
        'list_authors (GET /api/authors/): response 200',
        'retrieve_author (GET /api/authors/{pk}/): response 200',
        'update_author (PATCH /api/authors/{pk}/): response 200',
      ].map(
        (op) =>
          `${specs}/resources/authors.yaml:4:1: breaking change: operation ${op} field "born" removed; if intended, build with --allow-breaking (recorded in api.json)`,
      ),
      '7 problems found',
    ]);
    expect(fs.readFileSync(path.join(ws.out, 'manifest.json'), 'utf8')).toBe(manifest);
    expect(fs.readdirSync(path.join(ws.out, 'migrations')).sort()).toEqual(['0001_initial.ts', 'index.ts', 'schema.json']);

    // check shows the pending migration, and that writing it takes the flag.
    const check = svcgen('check', specs, '--out', out);
    expect(check.status).toBe(1);
    expect(check.stderr).toContain(
      `missing migration: ${out}/migrations/0002_remove_authors_born.ts: the specs change the database schema since the last build:\n  drop column authors.born (destructive)\n`,
    );
    expect(lines(check.stderr).at(-1)).toContain(
      `run "svcgen build ${specs} --out ${out} --allow-destructive --allow-breaking" and commit the result (the migration drops data: read it first)`,
    );

    const allowed = svcgen('build', specs, '--out', out, '--allow-destructive', '--allow-breaking');
    expect(allowed.status).toBe(0);
    expect(allowed.stdout).toContain(
      `  migration  ${out}/migrations/0002_remove_authors_born.ts:\n               drop column authors.born (destructive)\n`,
    );
  });

  it('reports a new NOT NULL field without a default at its position, and --default fixes it', () => {
    ws.write({
      'authors.yaml': AUTHORS.replace('  born: {type: date, null: true}\n', '  born: {type: date, null: true}\n  rank: {type: integer}\n'),
    });
    const stopped = svcgen('build', specs, '--out', out);
    expect(stopped.status).toBe(1);
    expect(lines(stopped.stderr)).toEqual([
      `${specs}/resources/authors.yaml:5:3: new field rank is NOT NULL without a default, and the existing rows of authors need a value: ` +
        'add "default: ..." to the field, or "null: true", or give a one-off value for existing rows with svcgen build --default authors.rank=VALUE',
      // Creating an author now needs a rank: the API gate reports it in the same run.
      `${specs}/resources/authors.yaml:5:3: breaking change: operation create_author (POST /api/authors/): request body has a new required field "rank"; ` +
        'if intended, build with --allow-breaking (recorded in api.json)',
      '2 problems found',
    ]);

    expect(svcgen('build', specs, '--out', out, '--default', 'authors.rank=abc')).toMatchObject({
      status: 2,
      stderr: 'svcgen: --default authors.rank=abc: rank is integer, the value must be an integer\n',
    });
    expect(svcgen('build', specs, '--out', out, '--default', 'writers.rank=1').stderr).toBe(
      'svcgen: --default writers.rank=1: no table "writers" in the specs (tables: authors)\n',
    );
    const bad = svcgen('build', specs, '--out', out, '--default', 'rank');
    expect(bad.status).toBe(2);
    expect(lines(bad.stderr)[0]).toBe('svcgen: --default rank: write it as TABLE.FIELD=VALUE, e.g. --default articles.rating=0');

    const fixed = svcgen('build', specs, '--out', out, '--default=authors.rank=7', '--allow-breaking');
    expect(fixed.status).toBe(0);
    expect(fixed.stdout).toContain(`  migration  ${out}/migrations/0002_authors_rank.ts:\n               add column authors.rank\n`);
    const text = fs.readFileSync(path.join(ws.out, 'migrations/0002_authors_rank.ts'), 'utf8');
    expect(text).toContain(`t.integer('rank').notNullable().defaultTo(7);`);
    expect(text).toContain(`t.integer('rank').notNullable().alter();`);
    // The one-off value is needed once: the next build is clean without it.
    expect(svcgen('check', specs, '--out', out)).toMatchObject({ status: 0 });
  });
});

describe('svcgen usage for the migration options and init', () => {
  it('lists init and documents the options', () => {
    const usage = svcgen('--help');
    expect(usage.stdout).toContain('  init DIR ');
    const build = svcgen('build', '--help');
    expect(build.status).toBe(0);
    for (const s of ['--allow-destructive', '--default TABLE.FIELD=VALUE', 'renamed_from', 'migrations/schema.json'])
      expect(build.stdout).toContain(s);
    const init = svcgen('init', '--help');
    expect(init.status).toBe(0);
    expect(init.stdout.split('\n')[0]).toBe('usage: svcgen init DIR [--db sqlite|postgres|mysql] [--svcgen VERSION|PATH]');
    expect(init.stdout).toContain('npm install && npm start');
    expect(svcgen('init').stderr.split('\n')[0]).toBe('svcgen: svcgen init needs a DIR folder');
    expect(svcgen('init', 'app', '--db', 'oracle')).toMatchObject({
      status: 1,
      stderr: 'svcgen: --db oracle: give one of sqlite, postgres, mysql\n',
    });
    expect(svcgen('init', 'package.json')).toMatchObject({
      status: 1,
      stderr: 'svcgen: package.json already exists and is not an empty folder; give svcgen init a new folder\n',
    });
  });

  it('lists dev and documents its options', () => {
    expect(svcgen('--help').stdout).toContain('  dev [SPECS] [--out DIR] ');
    const dev = svcgen('dev', '--help');
    expect(dev.status).toBe(0);
    expect(dev.stdout.split('\n')[0]).toBe(
      'usage: svcgen dev [SPECS] [--out DIR] [--tsconfig FILE] [--allow-destructive] [--allow-widen] [--allow-breaking] [-- SERVICE ARGS]',
    );
    for (const s of [
      '--out DIR',
      '--tsconfig FILE',
      'file:line:column: message',
      "  --allow-breaking      as build's, for every build of the session",
    ])
      expect(dev.stdout).toContain(s);
    // The gate flags are the session's: accepted before the specs folder is looked at.
    expect(svcgen('dev', 'no-such-specs', '--allow-breaking', '--allow-widen', '--allow-destructive')).toMatchObject({
      status: 1,
      stderr: 'svcgen: no-such-specs: no such specs folder\n',
    });
    expect(svcgen('dev', 'no-such-specs')).toMatchObject({ status: 1, stderr: 'svcgen: no-such-specs: no such specs folder\n' });
  });
});
