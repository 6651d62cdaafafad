/**
 * The references generated from, or written beside, their sources cannot drift from them:
 * - the settings (docs/reference/settings.md) name every `SVC_*` setting and environment variable
 *   the runtime and the generator read, and none they do not;
 * - the command line (docs/reference/cli.md) names every `svcgen` command and every option of each,
 *   and of the service's own commands, and no option that none takes;
 * - the diagnostics (docs/reference/diagnostics.md) are what the case folders print
 *   (`npm run update:diagnostics` writes them).
 * Each check has a probe: a stale entry it must report.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { COMMANDS } from '../../generator/cli/cli';
import { CREATEUSER_OPTIONS, ROLLBACK_OPTIONS } from '../../runtime/http/main';
import { DIAGNOSTICS_PAGE, diagnosticsReference, ROOT, staleLines } from '../support/diagnostics-reference';

function sourcesOf(dir: string, pattern: RegExp): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'dist' || e.name === 'node_modules' ? [] : sourcesOf(full, pattern);
    return pattern.test(e.name) && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** The environment variables other than `SVC_*` a service reads (its address, its database, its mode). */
const ENVIRONMENT = /\b(?:process\.)?env\.([A-Z][A-Z0-9_]*)\b/g;

/** The settings a text reads or names: every `SVC_*` word, and the variables it reads off `env`. */
function settingsIn(text: string, reads: boolean): Set<string> {
  const names = new Set<string>(text.match(/\bSVC_[A-Z0-9_]+\b/g) ?? []);
  if (reads) for (const m of text.matchAll(ENVIRONMENT)) names.add(m[1]);
  return names;
}

/**
 * What the settings page misses of what the sources read (`undocumented`), and names that nothing
 * reads (`dead`). `templates`: what `svcgen init` writes, whose `SVC_*` words count but whose
 * example hooks' own variables (`NOTES_API_KEY`) are the project's, not the service's.
 */
function settingsDrift(sources: string, page: string, templates = ''): { undocumented: string[]; dead: string[] } {
  const read = new Set([...settingsIn(sources, true), ...settingsIn(templates, false)]);
  // The page's names: every SVC_* word, and the first cell of each row of its tables.
  const named = settingsIn(page, false);
  for (const m of page.matchAll(/^\| `([A-Z][A-Z0-9_]*)`/gm)) named.add(m[1]);
  return { undocumented: [...read].filter((n) => !named.has(n)).sort(), dead: [...named].filter((n) => !read.has(n)).sort() };
}

/** The options the command line reference names that no command takes, and the commands and options it misses. */
function cliDrift(page: string, commands: Record<string, { options: string[]; flags?: string[] }>, serviceOptions: string[]) {
  const known = new Set([
    '--help',
    '--version',
    ...serviceOptions,
    ...Object.values(commands).flatMap((c) => [...c.options, ...(c.flags ?? [])]),
  ]);
  // npm's own options, in the install commands the page shows.
  const npm = new Set(['--omit', '--save-dev', '--save-exact', '--package']);
  const named = new Set(page.match(/(?<![\w-])--[a-z][a-z-]*/g) ?? []);
  return {
    unknown: [...named].filter((o) => !known.has(o) && !npm.has(o)).sort(),
    missingCommands: Object.keys(commands).filter((c) => !new RegExp(`svcgen ${c}\\b`).test(page)),
    missingOptions: [...known].filter((o) => !named.has(o)).sort(),
  };
}

describe('the settings reference', () => {
  const text = (files: string[]) => files.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
  const sources = text([...sourcesOf(path.join(ROOT, 'runtime'), /\.ts$/), ...sourcesOf(path.join(ROOT, 'generator'), /\.ts$/)]);
  const templates = text(sourcesOf(path.join(ROOT, 'templates'), /\.(ts|hbs)$/));
  const page = read('docs/reference/settings.md');

  it('names every setting the runtime and the generator read, and none they do not', () => {
    expect(settingsDrift(sources, page, templates)).toEqual({ undocumented: [], dead: [] });
  });

  it('reports a setting that is read but not named, and one named but not read', () => {
    const probe = settingsDrift(`${sources}\nprocess.env.SVC_MADE_UP_READ`, `${page}\n| \`SVC_MADE_UP_NAMED\` | x | y |\n`, templates);
    expect(probe).toEqual({ undocumented: ['SVC_MADE_UP_READ'], dead: ['SVC_MADE_UP_NAMED'] });
  });
});

describe('the command line reference', () => {
  const page = read('docs/reference/cli.md');
  const serviceOptions = [...Object.keys(CREATEUSER_OPTIONS), ...Object.keys(ROLLBACK_OPTIONS)].map((o) => `--${o}`);

  it('names every command and option of svcgen and of the service, and no other option', () => {
    expect(cliDrift(page, COMMANDS, serviceOptions)).toEqual({ unknown: [], missingCommands: [], missingOptions: [] });
  });

  it('reports an option no command takes, and a command or an option it does not name', () => {
    const commands = { ...COMMANDS, 'made-up': { options: ['--made-up-option'] } };
    expect(cliDrift(`${page}\nsvcgen build --made-up-flag`, commands, serviceOptions)).toEqual({
      unknown: ['--made-up-flag'],
      missingCommands: ['made-up'],
      missingOptions: ['--made-up-option'],
    });
  });
});

describe('the diagnostics reference', () => {
  it('is what the case folders print (npm run update:diagnostics)', () => {
    expect(staleLines(fs.readFileSync(DIAGNOSTICS_PAGE, 'utf8'), diagnosticsReference())).toEqual([]);
  });

  it('reports an entry that is no longer printed', () => {
    const page = fs.readFileSync(DIAGNOSTICS_PAGE, 'utf8');
    const stale = page.replace('unknown key "max_lenght" (did you mean "max_length"?)', 'unknown key "max_lenght"');
    expect(stale).not.toBe(page);
    expect(staleLines(stale, diagnosticsReference())).toHaveLength(1);
  });
});
