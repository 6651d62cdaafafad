/**
 * `svcgen dev SPECS`: the edit–run loop. Builds the service, compiles the project's TypeScript
 * (its tsconfig.json) and runs `main.js` as a child process; then watches the specs folder (the
 * specs and the hook modules inside it, however they are saved: watch.ts) and, a moment after the
 * last change, builds again; when that changed the output or a hook module changed, it compiles
 * and restarts the service (a change of the specs that renders the same output, such as a comment,
 * leaves the service running). It watches the output folder too: whenever the compiled service is
 * older than a file of the output (written by another `svcgen build`, say one with
 * `--allow-breaking`), it compiles and restarts the service, whose start applies any new migration.
 * The gates of `build` (`allowDestructive`, `allowWiden`, `allowBreaking`) hold for the session.
 * Problems are printed as `file:line:column: message` lines, the specs' and the compiler's alike;
 * the command keeps running (and the last good service keeps serving) until they are fixed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as TS from 'typescript';
import { formatDiagnostic, SpecError } from '../load/diagnostics';
import { generate } from '../pipeline';
import { writeOutput } from '../output/write';
import { watchTree } from './watch';

export interface DevOptions {
  specsDir: string;
  outDir: string;
  /** The project's tsconfig.json (compiler options, rootDir and outDir of the compiled service). */
  tsconfig: string;
  /** Arguments of the service (`main.js ARGS`). */
  serviceArgs?: string[];
  cwd?: string;
  /** Quiet time after a change before rebuilding, in milliseconds. */
  debounceMs?: number;
  /** Where progress and problems go (default: the console). */
  log?: (line: string) => void;
  /** `build`'s gates, open for the whole session: destructive migration steps, widened access, breaking API changes. */
  allowDestructive?: boolean;
  allowWiden?: boolean;
  allowBreaking?: boolean;
}

/** A running `svcgen dev`: `stop()` ends the service and the watch. */
export interface DevSession {
  /** Settles after the first build (whether or not it found problems). */
  ready: Promise<void>;
  stop(): Promise<void>;
}

export class DevError extends Error {}

export function startDev(options: DevOptions): DevSession {
  const cwd = options.cwd ?? process.cwd();
  const log = options.log ?? ((line: string) => console.log(line));
  const specsDir = path.resolve(cwd, options.specsDir);
  const outDir = path.resolve(cwd, options.outDir);
  if (!fs.existsSync(specsDir) || !fs.statSync(specsDir).isDirectory()) throw new DevError(`${options.specsDir}: no such specs folder`);
  const compiler = new Compiler(path.resolve(cwd, options.tsconfig), cwd);
  const mainJs = compiler.outputOf(path.join(outDir, 'main.ts'));
  const insideOut = (p: string) => !path.relative(outDir, p).startsWith('..');

  let child: ChildProcess | undefined;
  let building: Promise<void> = Promise.resolve();
  let pending = false;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  /** Files changed since the last build began; undefined for the first build, which always compiles. */
  let changed: Set<string> | undefined;
  /** Whether the compiled service lags the sources: a compile failed, or nothing compiled yet. */
  let stale = true;
  /** When the last compile began: the output written before it is compiled, or its problems were printed. */
  let compiledAt = 0;

  async function stopService(): Promise<void> {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    const force = setTimeout(() => running.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(force);
  }

  function startService(): void {
    const started = spawn(process.execPath, [mainJs, ...(options.serviceArgs ?? [])], { cwd, stdio: 'inherit' });
    child = started;
    started.once('exit', (code, signal) => {
      if (child === started) log(`svcgen dev: the service stopped (${signal ?? `exit code ${code}`}); waiting for changes`);
    });
  }

  async function rebuild(): Promise<void> {
    const started = Date.now();
    const since = changed;
    changed = new Set();
    try {
      const { files } = await generate({
        specsDir: options.specsDir,
        outDir: options.outDir,
        cwd,
        allowDestructive: options.allowDestructive,
        allowWiden: options.allowWiden,
        allowBreaking: options.allowBreaking,
      });
      const written = writeOutput(outDir, files);
      for (const f of written.written) log(`  wrote      ${options.outDir}/${f}`);
      for (const f of written.removed) log(`  removed    ${options.outDir}/${f}`);
      // No code of the specs folder changed (specs, an editor's or sed's temporary files), the specs
      // render what is there already, and the compiled service is newer than every file of the
      // output (whoever wrote it): nothing to compile or restart.
      const outputOnly = since !== undefined && since.size > 0 && [...since].every(insideOut);
      const noCode = since !== undefined && ![...since].some((f) => !insideOut(f) && CODE_FILE.test(f));
      if (!written.written.length && !written.removed.length) {
        // The output changed as this session wrote it, and it was compiled (or tried) since: nothing to do or say.
        if (outputOnly && newestFile(outDir) <= compiledAt) return;
        if (!stale && noCode && !compiledOlderThanOutput()) {
          if (!outputOnly)
            log(`svcgen dev: the specs changed, the output did not (built in ${Date.now() - started} ms); the service keeps running`);
          return;
        }
      }
    } catch (err) {
      // What changed is still to compile once the specs are fixed.
      for (const f of since ?? []) changed.add(f);
      if (!(err instanceof SpecError)) throw err;
      for (const d of err.diagnostics) log(formatDiagnostic(d));
      log(`svcgen dev: ${problems(err.diagnostics.length)} in the specs; waiting for changes`);
      return;
    }
    stale = true;
    compiledAt = Date.now();
    const compileProblems = compiler.compile();
    if (compileProblems.length) {
      for (const line of compileProblems) log(line);
      log(`svcgen dev: ${problems(compileProblems.length)} in the TypeScript; waiting for changes`);
      return;
    }
    stale = false;
    await stopService();
    if (stopped) return;
    startService();
    log(`svcgen dev: built and compiled in ${Date.now() - started} ms; service restarted; watching ${options.specsDir}`);
  }

  /** Runs a rebuild after the one in progress, never two at once; changes during a build rebuild once more. */
  function schedule(): void {
    if (pending) return;
    pending = true;
    building = building.then(async () => {
      pending = false;
      if (stopped) return;
      try {
        await rebuild();
      } catch (err) {
        log(`svcgen dev: the build failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      }
    });
  }

  /** Whether a file of the output is newer than the compiled service (its main.js), or it has none. */
  function compiledOlderThanOutput(): boolean {
    let compiled: number;
    try {
      compiled = fs.statSync(mainJs).mtimeMs;
    } catch {
      return true;
    }
    return newestFile(outDir) > compiled;
  }

  const watcher = watchTree(
    specsDir,
    (file) => {
      if (insideOut(file)) return;
      changed?.add(file);
      clearTimeout(timer);
      timer = setTimeout(schedule, options.debounceMs ?? 150);
    },
    insideOut,
  );

  // The output folder, watched apart (another build may write it): see compiledOlderThanOutput.
  fs.mkdirSync(outDir, { recursive: true });
  const outWatcher = watchTree(outDir, (file) => {
    changed?.add(file);
    clearTimeout(timer);
    timer = setTimeout(schedule, options.debounceMs ?? 150);
  });

  schedule();
  const ready = building;
  return {
    ready,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      watcher.close();
      outWatcher.close();
      await building;
      await stopService();
    },
  };
}

/** The modification time of the newest file under `dir` (0 for none). */
function newestFile(dir: string): number {
  let newest = 0;
  let entries: fs.Dirent[] = [];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestFile(p));
    else if (e.isFile()) newest = Math.max(newest, fs.statSync(p, { throwIfNoEntry: false })?.mtimeMs ?? 0);
  }
  return newest;
}

/** A file the compile reads: a hook module or what it imports. */
const CODE_FILE = /\.([cm]?[jt]sx?|json)$/;

function problems(n: number): string {
  return `${n} problem${n === 1 ? '' : 's'}`;
}

/** The TypeScript compiler, loaded when dev starts (not by the other commands). */
const ts = (): typeof TS => require('typescript') as typeof TS;

/** The project's TypeScript, compiled again on every rebuild (reusing what did not change). */
class Compiler {
  private readonly config: TS.ParsedCommandLine;
  private program: TS.Program | undefined;

  constructor(
    tsconfig: string,
    private readonly cwd: string,
  ) {
    if (!fs.existsSync(tsconfig))
      throw new DevError(`${path.relative(cwd, tsconfig)}: no such tsconfig; svcgen dev compiles the project with it`);
    const host: TS.ParseConfigFileHost = {
      ...ts().sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new DevError(ts().flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    };
    const parsed = ts().getParsedCommandLineOfConfigFile(tsconfig, { noEmit: false }, host);
    if (!parsed) throw new DevError(`${tsconfig}: cannot read it`);
    if (!parsed.options.outDir) throw new DevError(`${path.relative(cwd, tsconfig)}: svcgen dev needs an outDir for the compiled service`);
    this.config = parsed;
  }

  /** The compiled JavaScript file of a source file (which the first build may not have written yet). */
  outputOf(source: string): string {
    const { rootDir, outDir, configFilePath } = this.config.options;
    const relative = path.relative(rootDir ?? path.dirname(configFilePath as string), source);
    return path.join(outDir!, relative.replace(/\.ts$/, '.js'));
  }

  /** Type-checks and, when there is no error, writes the JavaScript; the errors as `file:line:column: message`. */
  compile(): string[] {
    // The files of the project are listed again: a build may add or remove some.
    const files = ts().getParsedCommandLineOfConfigFile(
      this.config.options.configFilePath as string,
      { noEmit: false },
      { ...ts().sys, onUnRecoverableConfigFileDiagnostic: () => {} },
    );
    const rootNames = files?.fileNames ?? this.config.fileNames;
    // With the project references, an import of a referenced project's sources reads its declarations, as `tsc -b` does.
    const projectReferences = files?.projectReferences ?? this.config.projectReferences;
    this.program = ts().createProgram({ rootNames, options: this.config.options, projectReferences, oldProgram: this.program });
    const errors = ts()
      .getPreEmitDiagnostics(this.program)
      .filter((d) => d.category === ts().DiagnosticCategory.Error);
    if (errors.length) return errors.map((d) => this.format(d));
    this.program.emit();
    return [];
  }

  private format(d: TS.Diagnostic): string {
    const message = ts().flattenDiagnosticMessageText(d.messageText, ' ');
    if (!d.file || d.start === undefined) return `${message} (TS${d.code})`;
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    const file = path.relative(this.cwd, d.file.fileName).split(path.sep).join('/');
    return `${file}:${line + 1}:${character + 1}: ${message} (TS${d.code})`;
  }
}
