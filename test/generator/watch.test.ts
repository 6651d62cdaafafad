/**
 * The watch of `svcgen dev` (generator/cli/watch.ts) notices every change of a spec however it is
 * saved: written in place, saved by rename (a new file moved over the old one, as editors that save
 * atomically do), edited with `sed -i`, again and again on the same file; in a folder created after
 * the watch began; and never in the ignored output folder.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { watchTree, type TreeWatch } from '../../generator/cli/watch';

let root: string;
let watch: TreeWatch | undefined;
let seen: string[];
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-watch-'));
  fs.mkdirSync(path.join(root, 'resources'));
  fs.mkdirSync(path.join(root, 'generated'));
  fs.writeFileSync(path.join(root, 'resources/notes.yaml'), 'model: Note\n');
  seen = [];
  watch = watchTree(
    root,
    (file) => seen.push(path.relative(root, file)),
    (dir) => dir === path.join(root, 'generated'),
  );
});
afterEach(() => {
  watch?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

/** Waits until `file` has been reported (the watch reports asynchronously), then forgets what was seen. */
async function reported(file: string): Promise<void> {
  for (let i = 0; i < 400 && !seen.includes(file); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(seen).toContain(file);
  seen = [];
}

/** Saves `file` as editors that save atomically do: a new file beside it, renamed over it. */
function renameSave(file: string, text: string): void {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.swp`);
  fs.writeFileSync(temp, text);
  fs.renameSync(temp, file);
}

it('notices a spec saved by rename, then by sed -i, then in place, again and again', async () => {
  const spec = path.join(root, 'resources/notes.yaml');
  for (let round = 0; round < 3; round++) {
    renameSave(spec, `model: Note\n# rename-save ${round}\n`);
    await reported('resources/notes.yaml');
    expect(spawnSync('sed', ['-i', `s/# rename-save ${round}/# sed ${round}/`, spec]).status).toBe(0);
    await reported('resources/notes.yaml');
    expect(fs.readFileSync(spec, 'utf8')).toBe(`model: Note\n# sed ${round}\n`);
    fs.appendFileSync(spec, `# in place ${round}\n`);
    await reported('resources/notes.yaml');
  }
});

it('notices a file in a folder made after the watch began, and nothing in the ignored folder', async () => {
  fs.mkdirSync(path.join(root, 'hooks'));
  await reported('hooks');
  renameSave(path.join(root, 'hooks/notes.ts'), 'export const x = 1;\n');
  await reported('hooks/notes.ts');
  fs.writeFileSync(path.join(root, 'generated/app.ts'), '// generated\n');
  fs.writeFileSync(path.join(root, 'resources/notes.yaml'), 'model: Note\n# after\n');
  await reported('resources/notes.yaml');
  expect(seen.filter((f) => f.startsWith('generated'))).toEqual([]);
});
