/**
 * The `svcgen` command line: validate, build, check.
 */
import { formatDiagnostic, SpecError } from './diagnostics';
import { drift, generate, validate, writeOutput, GENERATOR_VERSION } from './pipeline';

const USAGE = `svcgen ${GENERATOR_VERSION}: generate an HTTP/JSON API service from YAML resource specs

usage: svcgen <command> [options]

commands:
  validate SPECS               check the specs; print every problem as file:line:column: message
  build SPECS [--out DIR]      validate, then render the service into DIR (default: generated)
  check SPECS [--out DIR]      fail with a diff when DIR differs from what build would write

Run "svcgen <command> --help" for a command's options.`;

const COMMANDS: Record<string, { usage: string; options: string[] }> = {
  validate: {
    usage: `usage: svcgen validate SPECS

Loads every YAML file in SPECS (service.yaml and one file per resource), checks it against the
spec language and prints every problem at once as file:line:column: message.
Exits 1 when there is any problem, 0 otherwise.`,
    options: [],
  },
  build: {
    usage: `usage: svcgen build SPECS [--out DIR]

Validates SPECS, then renders the service into DIR (default: generated). Files are written only when
their content changes; files an earlier build rendered that no longer belong are removed (the list
lives in DIR/manifest.json). Prints what was written, unchanged and removed.

options:
  --out DIR    output folder (default: generated)`,
    options: ['--out'],
  },
  check: {
    usage: `usage: svcgen check SPECS [--out DIR]

Renders SPECS in memory and compares the result with DIR byte for byte. Exits 1 with a diff when
they differ (run "svcgen build SPECS" and commit the result), 0 when DIR is current.

options:
  --out DIR    output folder (default: generated)`,
    options: ['--out'],
  },
};

interface Parsed {
  positional: string[];
  out: string;
  help: boolean;
}

class UsageError extends Error {}

function parseArgs(command: string, args: string[]): Parsed {
  const allowed = COMMANDS[command].options;
  const parsed: Parsed = { positional: [], out: 'generated', help: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--help' || arg === '-h') parsed.help = true;
    else if (arg.startsWith('-')) {
      const [name, inline] = arg.split(/=(.*)/s, 2);
      if (!allowed.includes(name)) throw new UsageError(`unknown option "${arg}" for svcgen ${command}`);
      const value = inline ?? args[++i];
      if (value === undefined || value === '') throw new UsageError(`${name} needs a value`);
      parsed.out = value;
    } else parsed.positional.push(arg);
  }
  if (!parsed.help && parsed.positional.length !== 1) {
    throw new UsageError(parsed.positional.length ? `svcgen ${command} takes one SPECS folder` : `svcgen ${command} needs a SPECS folder`);
  }
  return parsed;
}

function printDiagnostics(err: SpecError): void {
  for (const d of err.diagnostics) console.error(formatDiagnostic(d));
  console.error(`${err.diagnostics.length} problem${err.diagnostics.length === 1 ? '' : 's'} found`);
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command) {
    // A usage error: the usage goes to stderr, like every other one.
    console.error(USAGE);
    return 2;
  }
  if (command === '--help' || command === '-h' || command === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (command === '--version') {
    console.log(GENERATOR_VERSION);
    return 0;
  }
  if (!COMMANDS[command]) {
    console.error(`svcgen: unknown command "${command}"\n\n${USAGE}`);
    return 2;
  }
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
  const specsDir = args.positional[0];
  try {
    if (command === 'validate') {
      const diagnostics = validate(specsDir);
      if (diagnostics.length) {
        printDiagnostics(new SpecError(diagnostics));
        return 1;
      }
      console.log(`${specsDir}: no problems found`);
      return 0;
    }
    const { files, model } = generate({ specsDir, outDir: args.out });
    if (command === 'build') {
      const result = writeOutput(args.out, files);
      for (const f of result.written) console.log(`  wrote      ${args.out}/${f}`);
      for (const f of result.removed) console.log(`  removed    ${args.out}/${f}`);
      const endpoints = model.resources.reduce((n, r) => n + r.operations.length, 0);
      console.log(
        `svcgen build: ${model.resources.length} resources, ${endpoints} endpoints; ` +
          `${result.written.length} written, ${result.unchanged.length} unchanged, ${result.removed.length} removed`,
      );
      return 0;
    }
    const d = drift(args.out, files);
    if (!d.changed.length && !d.missing.length && !d.extra.length) {
      console.log(`svcgen check: ${args.out} is up to date with ${specsDir}`);
      return 0;
    }
    for (const c of d.changed) console.error(`${c.diff}\n`);
    for (const f of d.missing) console.error(`missing: ${args.out}/${f}`);
    for (const f of d.extra) console.error(`no longer generated: ${args.out}/${f}`);
    console.error(
      `svcgen check: ${args.out} is stale (${d.changed.length} changed, ${d.missing.length} missing, ${d.extra.length} extra); ` +
        `run "svcgen build ${specsDir}${args.out === 'generated' ? '' : ` --out ${args.out}`}" and commit the result`,
    );
    return 1;
  } catch (err) {
    if (err instanceof SpecError) {
      printDiagnostics(err);
      return 1;
    }
    throw err;
  }
}
