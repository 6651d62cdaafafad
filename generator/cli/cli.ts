/**
 * The `svcgen` command line: validate, build, check, init, dev. `main` parses the command line and
 * runs one command function; each returns the exit status: 0 on success, 1 when the specs have
 * problems, the output is stale or init's folder is not empty, 2 on a usage error.
 */
import { DevError, startDev } from './dev';
import { formatDiagnostic, SpecError } from '../load/diagnostics';
import { drift } from '../output/drift';
import { IGNORE_FILE } from '../output/ignore';
import { initProject, InitError } from './init';
import { GENERATOR_VERSION } from '../output/manifest';
import { MigrationOptionError } from '../migrate/migrations';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { parseArgs as parseArgv, type ParseArgsConfig } from 'node:util';
import { accessOf, breakDiagnostics, generate, soundModel, validate, wideningDiagnostics } from '../pipeline';
import { loadSpecs } from '../load/load';
import { apiSurface } from '../api/surface';
import { API_JSON, apiBreaks, committedApi, parseApi } from '../api/breaks';
import { ACCESS_JSON, committedAccess, explain, parseAccess, unacknowledgedSince, wideningText, widenings } from '../access/gate';
import { accessMatrix } from '../access/matrix';
import { writeOutput } from '../output/write';
import { endpointsOf } from '../output/summary';
import { RUNTIME_PACKAGE } from '../render/output-imports';

const USAGE = `svcgen ${GENERATOR_VERSION}: generate an HTTP/JSON API service from YAML resource specs

usage: svcgen <command> [options]

commands:
  validate SPECS               check the specs; print every problem as file:line:column: message
  build SPECS [--out DIR]      validate, then render the service into DIR (default: generated),
                               with a new migration when the specs change the database schema
  check SPECS [--out DIR]      fail with a diff when DIR differs from what build would write
  explain-access CALLER OPERATION [SPECS]
                               which rule decides what CALLER gets from OPERATION
  init DIR                     scaffold a new project (specs, hooks, smoke test, package.json)
  dev [SPECS] [--out DIR]      build, compile and run the service; rebuild and restart on every change
  pull DATABASE_URL [--out DIR]  write specs (default into specs/) from an existing SQLite or PostgreSQL database

Run "svcgen <command> --help" for a command's options; "svcgen --version" prints the version.`;

/** Every command of `svcgen`, with its usage text and the options it takes (the CLI reference is checked against it). */
export const COMMANDS: Record<string, { usage: string; options: string[]; flags?: string[]; positional?: string }> = {
  pull: {
    usage: `usage: svcgen pull DATABASE_URL [--out DIR]

Reads the tables of an existing database (sqlite:PATH or postgres://user@host:port/db; it is only
read) and writes specs into DIR (default: specs), which must be new or empty: service.yaml and one
resource file per table, with columns, foreign keys, unique and composite indexes, and
many-to-many join tables as many_to_many fields with relation endpoints. Every resource is public.`,
    options: ['--out'],
    positional: 'DATABASE_URL',
  },
  validate: {
    usage: `usage: svcgen validate SPECS

Loads every YAML file in SPECS (service.yaml and one file per resource), checks it against the
spec language and prints every problem at once as file:line:column: message.
Exits 1 when there is any problem, 0 otherwise.`,
    options: [],
  },
  build: {
    usage: `usage: svcgen build SPECS [--out DIR]
       svcgen build SPECS [--out DIR] [--allow-destructive] [--default TABLE.FIELD=VALUE ...]

Validates SPECS, then renders the service into DIR (default: generated). Files are written only when
their content changes; files an earlier build rendered that no longer belong are removed (the list
lives in DIR/manifest.json). Prints what was written, unchanged and removed, and the resources,
endpoints and migration that changed.

Migrations: DIR/migrations/schema.json is the snapshot of the database schema the last build
generated. When the specs change it, build writes the next numbered migration for the difference
(DIR/migrations/0002_<slug>.ts, ...: new and dropped tables, columns and join tables; changed type,
null, unique, default, max_length, on_delete, index). Committed migrations are never rewritten.
A field renamed in the spec keeps its data only when it says so: renamed_from: old_name.

options:
  --out DIR                     output folder (default: generated)
  --allow-destructive           write steps that lose data: dropping a table or column, narrowing a
                                type or max_length (without it, build stops and names those steps)
  --default TABLE.FIELD=VALUE   a one-off value for the existing rows of a new NOT NULL field that
                                has no default (or of a field that becomes NOT NULL); repeatable
  --allow-widen                 accept changes that widen access: an operation opened to a caller it
                                refused (DIR/access.md, the access matrix), or a new operation anyone
                                may call without credentials; they are recorded in DIR/access.md
                                (without it, build stops and names each at its rule in the specs)
  --allow-breaking              accept changes that break the API's clients (DIR/api.json, the API
                                surface): an operation removed or renamed, a status or response
                                field removed, a request field made required, a type or enum
                                narrowed; they are recorded in DIR/api.json (without it, build stops
                                and names each at its place in the specs)`,
    options: ['--out', '--default'],
    flags: ['--allow-destructive', '--allow-widen', '--allow-breaking'],
  },
  'explain-access': {
    usage: `usage: svcgen explain-access CALLER OPERATION [SPECS]

Says what a kind of caller gets from an operation under the rules the specs in SPECS (default:
specs) declare, and which rules decide it, in the order they run. CALLER is a column of the
access matrix (DIR/access.md): anonymous, authenticated, role:NAME, staff or superuser. OPERATION
is an operation id (update_article) or a route as the matrix writes it ("PATCH /api/articles/{pk}/").`,
    options: [],
    positional: 'SPECS',
  },
  check: {
    usage: `usage: svcgen check SPECS [--out DIR] [--base REF]

Renders SPECS in memory and compares the result with DIR byte for byte. Exits 1 with a diff when
they differ (run "svcgen build SPECS" and commit the result), 0 when DIR is current.

options:
  --out DIR    output folder (default: generated)
  --base REF   also list the breaking changes of the API since the git revision REF (its
               DIR/api.json), and the access widened since (its DIR/access.json): those
               acknowledged since (build --allow-breaking, --allow-widen) are printed, any other
               fails the check`,
    options: ['--out', '--base'],
  },
  init: {
    usage: `usage: svcgen init DIR [--db sqlite|postgres|mysql] [--svcgen VERSION|PATH]

Scaffolds a new project in DIR (which must not exist or be empty): specs/service.yaml, one example
resource (specs/resources/notes.yaml) with its hooks module, a smoke test, package.json, tsconfig.json
and a README, then builds the service into DIR/generated. Then:

  cd DIR && npm install && npm start     serve the example on http://127.0.0.1:8000/api
  cd DIR && npm install && npm test      check the output, type-check, run the smoke test

The project depends on the runtime package, @svcgen/runtime, which its generated code imports,
and on svcgen (a devDependency), both at one exact version; and on the database driver of --db and
ioredis (compose.yaml's Redis), at the ranges the runtime names. npm start and npm test compile the
project's TypeScript into DIR/dist.

options:
  --db sqlite|postgres|mysql
                          the database the service runs on in production: its driver in
                          package.json and compose.yaml's database (mysql: MariaDB, or MySQL 8).
                          Tests and npm start without DATABASE_URL use SQLite on any. Default: sqlite
  --svcgen VERSION|PATH   the project's dependency on svcgen and its runtime: an exact version
                          (${GENERATOR_VERSION}), or the path of svcgen's package tarball or folder, with
                          the runtime's beside it (svcgen-runtime-VERSION.tgz, or the folder's
                          runtime/; written as file:, relative to DIR). Default: the tarballs this
                          svcgen was installed from, if it was; this checkout, when run from one;
                          else ${GENERATOR_VERSION}`,
    options: ['--svcgen', '--db'],
    positional: 'DIR',
  },
  dev: {
    usage: `usage: svcgen dev [SPECS] [--out DIR] [--tsconfig FILE] [--allow-destructive] [--allow-widen] [--allow-breaking] [-- SERVICE ARGS]

Builds SPECS (default: specs) into DIR (default: generated), compiles the project with FILE
(default: tsconfig.json; its outDir holds the compiled service) and runs DIR/main.js compiled, as a
child process. Then watches SPECS, the spec files and the hook modules inside it: a moment after a
change it builds, compiles and restarts the service again. It watches DIR too: whenever the
compiled service is older than a file of DIR (another svcgen build wrote it, say with
--allow-breaking), it compiles and restarts the service, which applies any new migration.
Problems in the specs or the TypeScript are printed as file:line:column: message; the last good
service keeps running until they are fixed. Stops on Ctrl-C. Migrations are written as by build:
a destructive step, a widened access or a breaking API change stops the build unless its flag
was given.

options:
  --out DIR             output folder (default: generated)
  --tsconfig FILE       the project's TypeScript configuration (default: tsconfig.json)
  --allow-destructive   as build's, for every build of the session
  --allow-widen         as build's, for every build of the session
  --allow-breaking      as build's, for every build of the session`,
    options: ['--out', '--tsconfig'],
    flags: ['--allow-destructive', '--allow-widen', '--allow-breaking'],
    positional: 'SPECS',
  },
};

interface Parsed {
  positional: string[];
  out: string;
  help: boolean;
  allowDestructive: boolean;
  allowWiden: boolean;
  allowBreaking: boolean;
  /** `--base REF` of check. */
  base?: string;
  /** `--default TABLE.FIELD=VALUE`, by `TABLE.FIELD`. */
  defaults: Record<string, string>;
  svcgen?: string;
  db?: string;
  /** Whether `--out` was given (svcgen pull writes into specs/ by default). */
  outGiven?: boolean;
  tsconfig: string;
  /** After `--`: passed on (svcgen dev's service arguments). */
  rest: string[];
}

class UsageError extends Error {}

function parseArgs(command: string, args: string[]): Parsed {
  const { options: allowed, flags = [], positional = 'SPECS' } = COMMANDS[command];
  const parsed: Parsed = {
    positional: [],
    out: 'generated',
    help: false,
    allowDestructive: false,
    allowWiden: false,
    allowBreaking: false,
    defaults: {},
    tsconfig: 'tsconfig.json',
    rest: [],
  };
  const options: NonNullable<ParseArgsConfig['options']> = { help: { type: 'boolean', short: 'h' } };
  for (const name of allowed) options[name.slice(2)] = { type: 'string' };
  for (const name of flags) options[name.slice(2)] = { type: 'boolean' };
  // Not strict: every argument comes back as a token, in order, and is checked here.
  const { tokens } = parseArgv({ args, options, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    const unknown = () => new UsageError(`unknown option "${args[token.index]}" for svcgen ${command}`);
    if (token.kind === 'option-terminator') {
      // svcgen dev passes what follows `--` to the service.
      if (command !== 'dev') throw unknown();
      parsed.rest = args.slice(token.index + 1);
      break;
    }
    if (token.kind === 'positional') {
      if (token.value.startsWith('-')) throw unknown();
      parsed.positional.push(token.value);
      continue;
    }
    const option = Object.hasOwn(options, token.name) ? options[token.name] : undefined;
    const name = `--${token.name}`;
    if (!option) throw unknown();
    if (option.type === 'boolean') {
      if (token.value !== undefined) throw unknown();
      if (name === '--help') parsed.help = true;
      else if (name === '--allow-widen') parsed.allowWiden = true;
      else if (name === '--allow-breaking') parsed.allowBreaking = true;
      else parsed.allowDestructive = true;
    } else {
      const value = token.value;
      if (value === undefined || value === '') throw new UsageError(`${name} needs a value`);
      if (name === '--default') {
        const m = /^([A-Za-z_][\w]*)\.([A-Za-z_][\w]*)=(.*)$/s.exec(value);
        if (!m) throw new UsageError(`--default ${value}: write it as TABLE.FIELD=VALUE, e.g. --default articles.rating=0`);
        parsed.defaults[`${m[1]}.${m[2]}`] = m[3];
      } else if (name === '--svcgen') parsed.svcgen = value;
      else if (name === '--db') parsed.db = value;
      else if (name === '--tsconfig') parsed.tsconfig = value;
      else if (name === '--base') parsed.base = value;
      else {
        parsed.out = value;
        parsed.outGiven = true;
      }
    }
  }
  // svcgen dev works on the project's specs folder unless told otherwise.
  if (command === 'dev' && !parsed.positional.length) parsed.positional.push('specs');
  if (command === 'explain-access') {
    if (!parsed.help && (parsed.positional.length < 2 || parsed.positional.length > 3))
      throw new UsageError('svcgen explain-access takes a CALLER, an OPERATION and optionally a SPECS folder');
    return parsed;
  }
  if (!parsed.help && parsed.positional.length !== 1) {
    throw new UsageError(
      parsed.positional.length ? `svcgen ${command} takes one ${positional} folder` : `svcgen ${command} needs a ${positional} folder`,
    );
  }
  return parsed;
}

function printDiagnostics(err: SpecError): void {
  for (const d of err.diagnostics) console.error(formatDiagnostic(d));
  console.error(`${err.diagnostics.length} problem${err.diagnostics.length === 1 ? '' : 's'} found`);
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || !COMMANDS[command]) return answerWithoutCommand(command);
  let args: Parsed;
  try {
    args = parseArgs(command, rest);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`svcgen: ${err.message}\n\n${COMMANDS[command].usage}`);
    return 2;
  }
  if (args.help) {
    console.log(COMMANDS[command].usage);
    return 0;
  }
  try {
    if (command === 'explain-access') return explainAccess(args.positional);
    return await RUN[command](args.positional[0], args);
  } catch (err) {
    return reportFailure(err);
  }
}

/** No command, or `--help`, `--version` or an unknown word where the command goes. */
function answerWithoutCommand(word: string | undefined): number {
  if (!word) {
    // A usage error: the usage goes to stderr, like every other one.
    console.error(USAGE);
    return 2;
  }
  if (word === '--help' || word === '-h' || word === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (word === '--version' || word === '-v') {
    console.log(GENERATOR_VERSION);
    return 0;
  }
  console.error(`svcgen: unknown command "${word}"\n\n${USAGE}`);
  return 2;
}

/** The function that runs each command, given its one folder argument. */
const RUN: Record<string, (folder: string, args: Parsed) => Promise<number>> = {
  init: createProject,
  validate: listSpecProblems,
  build: buildService,
  check: checkOutput,
  dev: runDev,
  pull: pullSpecs,
};

/** `svcgen pull DATABASE_URL`: specs from an existing database. */
async function pullSpecs(url: string, args: Parsed): Promise<number> {
  const out = args.outGiven ? args.out : 'specs';
  // Loaded here only: it brings Knex and the database drivers, which no other command needs.
  const { pull, PullError } = require('./pull') as typeof import('./pull');
  let files: string[];
  try {
    files = await pull(url, out);
  } catch (err) {
    if (!(err instanceof PullError)) throw err;
    console.error(`svcgen pull: ${err.message}`);
    return 1;
  }
  for (const f of files) console.log(`  wrote      ${out}/${f}`);
  console.log(`svcgen pull: ${files.length - 1} resources from the database; check them, add auth, then "svcgen build ${out}"`);
  return 0;
}

/** Problems that end a command with a message instead of a stack trace; anything else is a bug and is thrown. */
function reportFailure(err: unknown): number {
  if (err instanceof SpecError) {
    printDiagnostics(err);
    return 1;
  }
  if (err instanceof MigrationOptionError || err instanceof InitError || err instanceof DevError) {
    console.error(`svcgen: ${err.message}`);
    return err instanceof MigrationOptionError ? 2 : 1;
  }
  throw err;
}

/** `svcgen init DIR`: a new project, then how to run it. */
async function createProject(dir: string, args: Parsed): Promise<number> {
  const created = await initProject(dir, { svcgen: args.svcgen, db: args.db });
  for (const f of created.files) console.log(`  created    ${dir}/${f}`);
  console.log(
    `svcgen init: a new project in ${dir} (depends on "${RUNTIME_PACKAGE}": "${created.dependencies.runtime}", ` +
      Object.entries(created.packages.dependencies)
        .map(([name, range]) => `"${name}": "${range}", `)
        .join('') +
      `and "svcgen": "${created.dependencies.svcgen}")\n\n` +
      `  cd ${dir} && npm install && npm start    # serves ${created.url}\n` +
      `  cd ${dir} && npm install && npm test     # checks the output, type-checks, runs the smoke test\n\n` +
      'Edit specs/, then "npx svcgen build specs" writes the service and its next migration.',
  );
  return 0;
}

/** `svcgen validate SPECS`: every problem, or a line saying there is none. */
async function listSpecProblems(specsDir: string): Promise<number> {
  const diagnostics = validate(specsDir);
  if (diagnostics.length) {
    printDiagnostics(new SpecError(diagnostics));
    return 1;
  }
  console.log(`${specsDir}: no problems found`);
  return 0;
}

/** `svcgen build SPECS`: writes the output and says what changed. */
async function buildService(specsDir: string, args: Parsed): Promise<number> {
  const { files, model, migration, changes } = await generate({
    specsDir,
    outDir: args.out,
    allowDestructive: args.allowDestructive,
    allowWiden: args.allowWiden,
    allowBreaking: args.allowBreaking,
    defaults: args.defaults,
  });
  const result = writeOutput(args.out, files);
  for (const f of result.written) console.log(`  wrote      ${args.out}/${f}`);
  for (const f of result.removed) console.log(`  removed    ${args.out}/${f}`);
  for (const r of changes.resourcesAdded) console.log(`  resource   + ${r}`);
  for (const r of changes.resourcesRemoved) console.log(`  resource   - ${r}`);
  for (const e of changes.endpointsAdded) console.log(`  endpoint   + ${e}`);
  for (const e of changes.endpointsRemoved) console.log(`  endpoint   - ${e}`);
  if (migration) {
    console.log(`  migration  ${args.out}/migrations/${migration.name}.ts:`);
    for (const c of migration.changes) console.log(`               ${c}`);
  }
  // Every route the specs declare: CRUD, bulk, restore, actions, relations and custom endpoints.
  const endpoints = endpointsOf(model).length;
  const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
  console.log(
    `svcgen build: ${count(model.resources.length, 'resource')}, ${count(endpoints, 'endpoint')}; ` +
      `${result.written.length} written, ${result.unchanged.length} unchanged, ${result.removed.length} removed`,
  );
  return 0;
}

/** `svcgen check SPECS`: compares what build would write with the output folder; a diff and a hint when they differ. */
async function checkOutput(specsDir: string, args: Parsed): Promise<number> {
  // The breaks since the base first: a break not acknowledged also stops the render below.
  const broken =
    args.base === undefined ? 0 : reportBreaksSince(args.base, specsDir, args.out) + reportWideningsSince(args.base, specsDir, args.out);
  const { files, migration } = await generate({
    specsDir,
    outDir: args.out,
    // check only compares: it shows a pending destructive migration, breaking change or widening
    // too, and says which flags build needs for them.
    allowDestructive: true,
    allowBreaking: true,
    allowWiden: true,
    defaults: args.defaults,
  });
  const d = drift(args.out, files);
  const due = d.newMigrations ?? [];
  if (!d.changed.length && !d.missing.length && !d.extra.length && !due.length && !d.others.length) {
    console.log(`svcgen check: ${args.out} is up to date with ${specsDir}`);
    return broken ? 1 : 0;
  }
  for (const f of d.others)
    console.error(
      `not generated by svcgen: ${args.out}/${f} (build leaves it alone; list it in ${args.out}/${IGNORE_FILE} to keep it there)`,
    );
  for (const c of d.changed) console.error(`${c.diff}\n`);
  for (const f of d.missing) console.error(`missing: ${args.out}/${f}`);
  for (const f of d.extra)
    console.error(`${d.stray.includes(f) ? 'not generated from these specs' : 'no longer generated'}: ${args.out}/${f}`);
  for (const f of due) {
    console.error(`missing migration: ${args.out}/${f}: the specs change the database schema since the last build:`);
    for (const c of migration?.changes ?? []) console.error(`  ${c}`);
  }
  // What build will refuse, at its positions: destructive steps, breaking changes, widened access.
  const refused = await printGateProblems(specsDir, args);
  const destructive = due.length > 0 && (migration?.changes ?? []).some((c) => c.endsWith('(destructive)'));
  const flags = [
    ...(destructive ? [' --allow-destructive'] : []),
    ...(refused.some((m) => m.startsWith('breaking change:')) ? [' --allow-breaking'] : []),
    ...(refused.some((m) => m.startsWith('access widened:')) ? [' --allow-widen'] : []),
  ].join('');
  if (!d.changed.length && !d.missing.length && !d.extra.length && !due.length) {
    const n = d.others.length;
    console.error(
      `svcgen check: ${args.out} holds ${n} file${n === 1 ? '' : 's'} no build wrote; remove ${n === 1 ? 'it' : 'them'} or list ${n === 1 ? 'it' : 'them'} in ${args.out}/${IGNORE_FILE}`,
    );
    return 1;
  }
  console.error(
    `svcgen check: ${args.out} is stale (${d.changed.length} changed, ${d.missing.length} missing, ${d.extra.length} extra${d.others.length ? `, ${d.others.length} not svcgen's` : ''})` +
      `${due.length ? `; no migration was generated for the schema change (${due.join(', ')})` : ''}; ` +
      `run "svcgen build ${specsDir}${args.out === 'generated' ? '' : ` --out ${args.out}`}${flags}" and commit the result` +
      `${destructive ? ' (the migration drops data: read it first)' : ''}`,
  );
  return 1;
}

/**
 * `check --base REF`: the breaking changes from REF's api.json to what the specs render now, each at
 * its place in the specs; those the current api.json acknowledges are printed as such. Returns how
 * many are not acknowledged.
 */
function reportBreaksSince(ref: string, specsDir: string, outDir: string): number {
  const shown = spawnSync('git', ['show', `${ref}:./${path.posix.join(outDir.split(path.sep).join('/'), API_JSON)}`], { encoding: 'utf8' });
  if (shown.status !== 0) {
    console.error(`svcgen check: no ${API_JSON} in ${outDir} at ${ref}: ${shown.stderr.trim()}`);
    return 1;
  }
  const before = parseApi(shown.stdout);
  const loaded = loadSpecs(specsDir, process.cwd());
  const { surface, sources } = apiSurface(soundModel(loaded));
  const breaks = apiBreaks(before, surface, sources);
  // Acknowledged: by a build with --allow-breaking, in the api.json committed now.
  const acknowledged = new Set((committedApi(outDir)?.acknowledged ?? []).map((b) => `${b.operationId} ${b.message}`));
  const open = breaks.filter((b) => !acknowledged.has(`${b.brk.operationId} ${b.brk.message}`));
  for (const b of breaks.filter((x) => !open.includes(x))) console.log(`acknowledged breaking change since ${ref}: ${b.brk.message}`);
  for (const d of breakDiagnostics(loaded, open, `; not acknowledged since ${ref}`)) console.error(formatDiagnostic(d));
  console.log(
    `svcgen check: ${breaks.length} breaking change${breaks.length === 1 ? '' : 's'} since ${ref}, ${open.length} not acknowledged`,
  );
  return open.length;
}

/**
 * `check --base REF`: the access widened from REF's access.json to what the specs declare now (a
 * cell opened, a new operation open to anonymous callers), each at the rule that decides it; those
 * acknowledged since REF (build --allow-widen, in the access.json committed now) are printed as
 * such. Returns how many are not acknowledged.
 */
function reportWideningsSince(ref: string, specsDir: string, outDir: string): number {
  const shown = spawnSync('git', ['show', `${ref}:./${path.posix.join(outDir.split(path.sep).join('/'), ACCESS_JSON)}`], {
    encoding: 'utf8',
  });
  if (shown.status !== 0) {
    console.error(`svcgen check: no ${ACCESS_JSON} in ${outDir} at ${ref}: ${shown.stderr.trim()}`);
    return 1;
  }
  const before = parseAccess(shown.stdout);
  const loaded = loadSpecs(specsDir, process.cwd());
  const widened = widenings(before, accessMatrix(soundModel(loaded), 'service.yaml'));
  const open = unacknowledgedSince(before, committedAccess(outDir), widened);
  for (const w of widened.filter((x) => !open.includes(x)))
    console.log(`acknowledged access widened since ${ref}: ${wideningText(w.widening)}`);
  for (const d of wideningDiagnostics(loaded, open, `; not acknowledged since ${ref}`)) console.error(formatDiagnostic(d));
  console.log(
    `svcgen check: ${widened.length} access widening${widened.length === 1 ? '' : 's'} since ${ref}, ${open.length} not acknowledged`,
  );
  return open.length;
}

/**
 * What build will refuse without its flags, at the positions in the specs: the steps of a pending
 * migration that lose data, breaking changes of the API, widened access. Returns their messages.
 */
async function printGateProblems(specsDir: string, args: Parsed): Promise<string[]> {
  try {
    await generate({ specsDir, outDir: args.out, defaults: args.defaults });
    return [];
  } catch (err) {
    if (!(err instanceof SpecError)) throw err;
    for (const diag of err.diagnostics) console.error(formatDiagnostic(diag));
    return err.diagnostics.map((d) => d.message);
  }
}

/** `svcgen explain-access CALLER OPERATION [SPECS]`: the cell and the rules that decide it. */
function explainAccess([caller, operation, specsDir = 'specs']: string[]): number {
  const matrix = accessOf(specsDir);
  const answer = explain(matrix, caller, operation);
  if (answer) {
    console.log(answer);
    return 0;
  }
  const callers = matrix.callers.map((c) => c.name).join(', ');
  const known = matrix.rows.some((r) => r.operationId === operation || r.route === operation);
  console.error(known ? `svcgen: unknown caller "${caller}": one of ${callers}` : `svcgen: no operation "${operation}" in ${specsDir}`);
  return 1;
}

/** `svcgen dev SPECS`: builds, runs and rebuilds until SIGINT or SIGTERM. */
async function runDev(specsDir: string, args: Parsed): Promise<number> {
  const session = startDev({
    specsDir,
    outDir: args.out,
    tsconfig: args.tsconfig,
    serviceArgs: args.rest,
    allowDestructive: args.allowDestructive,
    allowWiden: args.allowWiden,
    allowBreaking: args.allowBreaking,
  });
  await session.ready;
  await new Promise<void>((resolve) => {
    const end = () => {
      process.off('SIGINT', end);
      process.off('SIGTERM', end);
      resolve();
    };
    process.on('SIGINT', end);
    process.on('SIGTERM', end);
  });
  await session.stop();
  return 0;
}
