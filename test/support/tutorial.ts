/**
 * The tutorial (docs/tutorial/1-…4-*.md) read as a script: its shell commands and the output it
 * shows for each, its file edits, and the comparison of what a command printed with what the page
 * shows. Pure (no process, no file written): test/docs/tutorial.test.ts runs the script, and
 * test/docs/tutorial-doc.test.ts checks the reading and the comparison on their own.
 *
 * What the pages hold, and what each becomes:
 *
 * - A ```console block: lines starting `$ ` are commands (a line ending in `\` continues on the
 *   next), the lines after one are its output. A line `…` in an output stands for any lines.
 * - `<!-- $ command -->` (an HTML comment, not rendered): a command the prose asks for ("delete
 *   the line"), run with its output not compared.
 * - A ```yaml block whose first line is `# PATH` (the file, which is the lines after it), `# PATH, under KEY:` (lines to
 *   add at the end of the mapping KEY) or `# PATH, in place of the NAME line:` (the line of the
 *   key NAME, replaced).
 * - `<!-- excerpt: PATH -->` before a ```ts block: the block is part of that file of the project
 *   (the TypeScript check of the docs reads this as the mark of a block it leaves out).
 * - `<!-- file: PATH -->` before a block: the block is the whole file PATH of the project;
 *   `<!-- file: PATH, in place of the NAME line -->`: the block replaces the line of the key NAME
 *   (a JSON key, quoted, or a YAML one). A ```ts block so marked is compiled by the project.
 * - A ```sh block: commands to run somewhere other than the project (the checkout); returned for
 *   the runner to deal with explicitly.
 *
 * Any other block of a tutorial page is an error, so that nothing is skipped without saying so.
 */

export interface Command {
  kind: 'command';
  /** `file:line` of the command in the docs. */
  where: string;
  command: string;
  /** The output the page shows; undefined for a hidden command (an HTML comment). */
  expected?: string[];
}

export interface Edit {
  kind: 'edit';
  where: string;
  path: string;
  mode: { whole: true } | { under: string } | { replace: string };
  lines: string[];
}

export interface Excerpt {
  kind: 'excerpt';
  where: string;
  path: string;
  lines: string[];
}

export interface Shell {
  kind: 'sh';
  where: string;
  lines: string[];
}

export type Step = Command | Edit | Excerpt | Shell;

/** The steps of one tutorial page, in order; `file` names the page in `where`. */
export function tutorialSteps(file: string, text: string): Step[] {
  const steps: Step[] = [];
  const lines = text.split('\n');
  let excerpt: string | undefined;
  let target: { path: string; replace?: string; where: string } | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const where = `${file}:${i + 1}`;
    const hidden = line.match(/^<!-- \$ (.*) -->$/);
    if (hidden) {
      steps.push({ kind: 'command', where, command: hidden[1] });
      continue;
    }
    const mark = line.match(/^<!-- excerpt: (\S+) -->$/);
    if (mark) {
      excerpt = mark[1];
      continue;
    }
    const fileMark = line.match(/^<!-- file: ([^\s,]+)(?:, in place of the (\w+) line)? -->$/);
    if (fileMark) {
      target = { path: fileMark[1], replace: fileMark[2], where };
      continue;
    }
    const fence = line.match(/^```(\w*)\s*$/);
    if (!fence) continue;
    const lang = fence[1];
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    if (target) {
      const mode = target.replace ? { replace: target.replace } : { whole: true as const };
      steps.push({ kind: 'edit', where: target.where, path: target.path, mode, lines: body });
    } else if (lang === 'console') steps.push(...consoleCommands(file, i - body.length, body));
    else if (lang === 'yaml') steps.push(yamlEdit(where, body));
    else if ((lang === 'ts' || lang === 'typescript') && excerpt) steps.push({ kind: 'excerpt', where, path: excerpt, lines: body });
    else if (lang === 'sh') steps.push({ kind: 'sh', where, lines: body });
    else if (lang !== 'json' || !/4-deploying\.md$/.test(file))
      throw new Error(`${where}: a \`\`\`${lang} block the tutorial test cannot run`);
    excerpt = undefined;
    target = undefined;
  }
  return steps;
}

/** The commands of a console block whose first line is line `first` (1-based) of `file`. */
function consoleCommands(file: string, first: number, body: string[]): Command[] {
  const out: Command[] = [];
  for (let j = 0; j < body.length; j++) {
    if (!body[j].startsWith('$ ')) {
      if (out.length === 0) throw new Error(`${file}:${first + j}: output before any command`);
      out[out.length - 1].expected!.push(body[j]);
      continue;
    }
    const where = `${file}:${first + j}`;
    let command = body[j].slice(2);
    while (command.endsWith('\\') && j + 1 < body.length) command = `${command.slice(0, -1).trimEnd()} ${body[++j].trim()}`;
    out.push({ kind: 'command', where, command, expected: [] });
  }
  return out;
}

function yamlEdit(where: string, body: string[]): Edit {
  const head = body[0] ?? '';
  const lines = body.slice(1);
  let m: RegExpMatchArray | null;
  if ((m = head.match(/^# (\S+), under (\w+):$/))) return { kind: 'edit', where, path: m[1], mode: { under: m[2] }, lines };
  if ((m = head.match(/^# (\S+), in place of the (\w+) line:$/)))
    return { kind: 'edit', where, path: m[1], mode: { replace: m[2] }, lines };
  if ((m = head.match(/^# (\S+)$/))) return { kind: 'edit', where, path: m[1], mode: { whole: true }, lines };
  throw new Error(`${where}: a yaml block without "# PATH", "# PATH, under KEY:" or "# PATH, in place of the KEY line:"`);
}

/** A YAML file's text after an edit of mode `under` or `replace` (the whole file is the edit's lines). */
export function applyEdit(text: string, edit: Edit): string {
  if ('whole' in edit.mode) return `${edit.lines.join('\n')}\n`;
  const lines = text.replace(/\n$/, '').split('\n');
  if ('under' in edit.mode) {
    const start = lines.indexOf(`${edit.mode.under}:`);
    if (start < 0) throw new Error(`${edit.where}: no "${edit.mode.under}:" in ${edit.path}`);
    let end = start + 1;
    while (end < lines.length && /^\s+\S/.test(lines[end])) end++;
    lines.splice(end, 0, ...edit.lines);
  } else {
    const key = edit.mode.replace;
    const at = lines.findIndex((l) => new RegExp(`^\\s*("?)${key}\\1:`).test(l));
    if (at < 0) throw new Error(`${edit.where}: no line "${key}:" in ${edit.path}`);
    lines.splice(at, 1, ...edit.lines);
  }
  return `${lines.join('\n')}\n`;
}

/** What may differ between a run and the page, given the run's own values of them. */
export interface RunValues {
  /** The folder the run's tarballs are in (the page shows `/home/me/svcgen/dist/packages`). */
  packages: string;
  /** The port the run's service listens on (the page shows 8000). */
  port: number;
}

export const DOC_PACKAGES = '/home/me/svcgen/dist/packages';
export const DOC_PORT = 8000;

/**
 * Output lines as compared: a run's tarball folder and port as the page shows them; tokens
 * (`eyJ…`, in full or cut short with `…`), ISO timestamps and request ids as placeholders; npm's
 * lines naming the script it runs (`> my-api@0.1.0 start`) and blank lines dropped. Applied to
 * both sides.
 */
export function normalise(text: string, run?: RunValues): string[] {
  let t = text;
  if (run) t = t.split(run.packages).join(DOC_PACKAGES).split(`127.0.0.1:${run.port}`).join(`127.0.0.1:${DOC_PORT}`);
  return t
    .replace(/eyJ[\w-]*(?:\.[\w-]*)*…?/g, '<token>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z/g, '<time>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l !== '' && !/^> /.test(l));
}

/** Whether normalised output lines match the page's (where a line `…`, indented or not, stands for any lines, none included). */
export function matches(expected: string[], actual: string[]): boolean {
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const pattern = expected.map((l) => (l.trim() === '…' ? '(?:[^\\n]*\\n)*' : `${escape(l)}\\n`)).join('');
  return new RegExp(`^${pattern}$`).test(actual.map((l) => `${l}\n`).join(''));
}

/** The difference of a command's output from its page, or undefined when they match. */
export function outputProblem(command: Command, output: string, run?: RunValues): string | undefined {
  const expected = normalise((command.expected ?? []).join('\n'));
  const actual = normalise(output, run);
  if (matches(expected, actual)) return undefined;
  return [
    `${command.where}: $ ${command.command}`,
    '  the page shows:',
    ...expected.map((l) => `    ${l}`),
    '  the run printed:',
    ...actual.map((l) => `    ${l}`),
  ].join('\n');
}
