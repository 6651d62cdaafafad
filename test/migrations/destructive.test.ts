/**
 * Spec changes that need the user's say, on SQLite and PostgreSQL: dropping a field (written only
 * with --allow-destructive) and a new NOT NULL field without a default (a file:line:column error,
 * fixed by a one-off value for the existing rows with --default).
 */
// The API and access gates are open here (allowBreaking, allowWiden): these tests are about the
// migration gate; the others have their own (test/cases/api-*, access-*).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { formatDiagnostic, SpecError } from '../../generator/load/diagnostics';
import { generate } from '../../generator/pipeline';
import { migrateLatest } from '../../runtime';
import { createDatabase, DIALECTS, type TestDatabase } from '../support/databases';
import { blogWorkspace, build, columns, edit, failure, loadService, rows, type Workspace } from './helpers';
import { insertReturning } from '../../runtime/db/inserts';
import { shownPath } from '../support/scratch';

jest.setTimeout(300_000);

/** The SpecError `fn` rejects with. */
async function specError(fn: () => Promise<unknown>): Promise<SpecError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof SpecError) return err;
    throw err;
  }
  throw new Error('expected a SpecError');
}

/** 1-based line of the first line of `file` that starts with `prefix`. */
function lineOf(file: string, prefix: string): number {
  return (
    fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .findIndex((l) => l.startsWith(prefix)) + 1
  );
}

/** Every file below `dir` with its bytes. */
function snapshotFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (f.isFile()) out[path.relative(dir, path.join(f.parentPath, f.name))] = fs.readFileSync(path.join(f.parentPath, f.name), 'utf8');
  }
  return out;
}

describe.each(DIALECTS)('changes that need a decision (%s)', (dialect) => {
  let ws: Workspace;
  let database: TestDatabase;
  let categoriesSpec: string;
  /** The spec file as svcgen names it: relative to the working directory inside it, else absolute. */
  let shown: string;
  beforeEach(async () => {
    ws = blogWorkspace(`decisions-${dialect}`);
    database = await createDatabase(dialect);
    categoriesSpec = path.join(ws.specs, 'resources', 'categories.yaml');
    shown = shownPath(categoriesSpec, process.cwd());
    await build(ws);
    expect(await migrateLatest(database.db, loadService(ws).migrations)).toEqual(['0001_initial']);
    const u = { username: 'u', email: 'u@example.com', password: 'x', date_joined: '2026-01-01T00:00:00.000Z' };
    const [user] = await insertReturning(database.db, database.db('users').insert(u), u, ['id']);
    await database.db('categories').insert([
      { name: 'News', description: 'What happened' },
      { name: 'Notes', description: '' },
    ]);
    await database
      .db('articles')
      .insert({ title: 'T', content: 'C', author_id: user.id, category_id: 1, created_at: '2026-01-01T00:00:00.000Z' });
  });
  afterEach(async () => {
    await database?.drop();
    ws?.remove();
  });

  it('dropping a field stops the build without --allow-destructive; with it, the migration drops the column', async () => {
    const db = database.db;
    edit(categoriesSpec, '  description: {type: text, blank: true, default: ""}\n', '');
    edit(categoriesSpec, '[id, name, description]', '[id, name]');
    edit(categoriesSpec, '    optionals: [[description, str]]\n', '');
    edit(categoriesSpec, '[[name, str], [description, str]]', '[[name, str]]');

    const before = snapshotFiles(ws.out);
    const err = await specError(() => generate({ specsDir: ws.specs, outDir: ws.out, allowBreaking: true, allowWiden: true }));
    expect(err.diagnostics).toHaveLength(1);
    const [d] = err.diagnostics;
    // At the fields of the spec that lost the field, saying which step and what to do.
    expect(formatDiagnostic(d)).toBe(
      `${shown}:${lineOf(categoriesSpec, 'fields:')}:1: removing field description drops column categories.description and its data; ` +
        'run svcgen build with --allow-destructive to write it, or put the field back (to rename it instead, add renamed_from: description to the field with the new name)',
    );
    expect(snapshotFiles(ws.out)).toEqual(before);

    const allowed = await build(ws, { allowDestructive: true });
    expect(allowed.migration?.name).toBe('0002_remove_categories_description');
    expect(allowed.migration?.changes).toEqual(['drop column categories.description (destructive)']);
    const text = fs.readFileSync(path.join(ws.out, 'migrations/0002_remove_categories_description.ts'), 'utf8');
    expect(text).toContain(`t.dropColumn('description');`);
    expect(text).toContain('// Destructive (written with --allow-destructive)');

    const articles = await rows(db, 'articles');
    expect(await migrateLatest(db, loadService(ws).migrations)).toEqual(['0002_remove_categories_description']);
    expect(await columns(db, 'categories')).toEqual(['id', 'name']);
    expect(await rows(db, 'categories')).toEqual([
      { id: 1, name: 'News' },
      { id: 2, name: 'Notes' },
    ]);
    // Rebuilding categories on SQLite must not fire ON DELETE SET NULL on the articles that point at it.
    expect(await rows(db, 'articles')).toEqual(articles);
    expect(articles[0].category_id).toBe(1);
  });

  it('a new NOT NULL field without a default is an error at the field; --default gives the existing rows a value', async () => {
    const db = database.db;
    edit(
      categoriesSpec,
      '  name: {type: string, max_length: 100, unique: true}\n',
      '  name: {type: string, max_length: 100, unique: true}\n  priority: {type: integer}\n',
    );
    const err = await specError(() => generate({ specsDir: ws.specs, outDir: ws.out, allowBreaking: true, allowWiden: true }));
    expect(err.diagnostics.map(formatDiagnostic)).toEqual([
      `${shown}:${lineOf(categoriesSpec, '  priority:')}:3: new field priority is NOT NULL without a default, and the existing rows of categories need a value: ` +
        'add "default: ..." to the field, or "null: true", or give a one-off value for existing rows with svcgen build --default categories.priority=VALUE',
    ]);

    const fixed = await build(ws, { defaults: { 'categories.priority': '2' } });
    expect(fixed.migration?.name).toBe('0002_categories_priority');
    const articles = await rows(db, 'articles');
    expect(await migrateLatest(db, loadService(ws).migrations)).toEqual(['0002_categories_priority']);
    expect((await rows(db, 'categories')).map((c) => [c.name, c.priority])).toEqual([
      ['News', 2],
      ['Notes', 2],
    ]);
    expect(await rows(db, 'articles')).toEqual(articles);
    // The one-off value is not a default: new rows must give one.
    expect(await failure(db('categories').insert({ name: 'Other', description: '' }))).toMatch(/priority|NOT NULL|not-null/i);
    await db('categories').insert({ name: 'Other', description: '', priority: 5 });
    // The next build needs no --default: the snapshot has the column.
    expect((await build(ws)).migration).toBeUndefined();
  });
});

describe('where the migration history lives', () => {
  let ws: Workspace;
  beforeEach(async () => {
    ws = blogWorkspace('history');
    await build(ws);
  });
  afterEach(() => ws.remove());

  it('never rewrites a committed migration, even one edited by hand', async () => {
    const file = path.join(ws.out, 'migrations/0001_initial.ts');
    const edited = `${fs.readFileSync(file, 'utf8')}// reviewed\n`;
    fs.writeFileSync(file, edited);
    edit(
      path.join(ws.specs, 'resources/tags.yaml'),
      '  name: {type: string, max_length: 50, unique: true}\n',
      '  name: {type: string, max_length: 60, unique: true}\n',
    );
    const next = await build(ws);
    expect(next.migration?.name).toBe('0002_alter_tags_name');
    expect(fs.readFileSync(file, 'utf8')).toBe(edited);
    expect(next.files.get('migrations/0001_initial.ts')).toBe(edited);
  });

  it('stops when a migration the snapshot lists is missing, naming it', async () => {
    edit(
      path.join(ws.specs, 'resources/tags.yaml'),
      '  name: {type: string, max_length: 50, unique: true}\n',
      '  name: {type: string, max_length: 60, unique: true}\n',
    );
    await build(ws);
    fs.rmSync(path.join(ws.out, 'migrations/0002_alter_tags_name.ts'));
    const err = await specError(() => generate({ specsDir: ws.specs, outDir: ws.out, allowBreaking: true, allowWiden: true }));
    expect(err.diagnostics).toHaveLength(1);
    expect(err.diagnostics[0].file).toBe(shownPath(path.join(ws.out, 'migrations/schema.json')));
    expect(err.diagnostics[0].message).toContain(
      'migrations/0002_alter_tags_name.ts is listed here but missing; restore it from version control',
    );
    expect(err.diagnostics[0].line).toBeGreaterThan(1);
  });

  it('stops when the snapshot is missing but migrations exist', async () => {
    fs.rmSync(path.join(ws.out, 'migrations/schema.json'));
    const err = await specError(() => generate({ specsDir: ws.specs, outDir: ws.out, allowBreaking: true, allowWiden: true }));
    expect(err.diagnostics[0].message).toMatch(
      /^missing: migrations\/0001_initial\.ts exist but the snapshot of the schema they build does not/,
    );
  });

  it('reads a snapshot written before it listed its migrations as 0001_initial', async () => {
    const file = path.join(ws.out, 'migrations/schema.json');
    const { tables } = JSON.parse(fs.readFileSync(file, 'utf8'));
    fs.writeFileSync(file, `${JSON.stringify({ tables }, null, 2)}\n`);
    const again = await generate({ specsDir: ws.specs, outDir: ws.out, allowBreaking: true, allowWiden: true });
    expect(again.migration).toBeUndefined();
    expect(JSON.parse(again.files.get('migrations/schema.json')!).migrations).toEqual(['0001_initial']);
  });
});
