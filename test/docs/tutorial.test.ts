/**
 * The tutorial, run: the commands of docs/tutorial/1-new-project.md, 2-a-resource.md and
 * 3-a-change-with-data.md, then of docs/guides/typed-client-script.md (a script of the tutorial's
 * project), read from the pages (test/support/tutorial.ts), run in order in a scratch folder, each
 * printing what its page shows once tarball paths, the port, tokens and timestamps are normalised.
 * The service starts on a free port and answers the pages' requests; the guide's script reads that
 * port from `API_URL`, as the guide allows.
 *
 * Two things differ from a reader's run, on purpose:
 * - The checkout's commands (the ```sh block of step 1: `npm install`, `npm run pack:local`) run
 *   here as `npm run pack:local -- DIR` into the scratch folder; `npx --package …tgz svcgen init`
 *   then runs as the page says, from those tarballs. npx installs their dependencies into npm's
 *   own cache, as it does for a reader; the commands run with `npm_config_prefer_offline`, so that
 *   npm asks the registry only for what its cache lacks.
 * - The project's `npm install` unpacks the two tarballs into its node_modules and links the
 *   other packages to this repository's installed ones (the same versions a registry install
 *   would take), instead of a registry install with native builds (a minute or more, and the
 *   network); test/init/package.test.ts does the real install. npm's report (`added … packages`)
 *   is not compared.
 *
 * Step 4 (a production install, keys, the image) is not run here: its install, prune and
 * production start are what test/init/package.test.ts and test/init/scripts.test.ts check.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { applyEdit, DOC_PACKAGES, DOC_PORT, outputProblem, tutorialSteps, type Command, type RunValues } from '../support/tutorial';
import { freePort } from '../support/ports';

// pack:local builds both packages (about 20 s); each npm start compiles the service.
jest.setTimeout(10 * 60_000);

const ROOT = path.resolve(__dirname, '../..');
const PAGES = [
  'docs/tutorial/1-new-project.md',
  'docs/tutorial/2-a-resource.md',
  'docs/tutorial/3-a-change-with-data.md',
  'docs/guides/typed-client-script.md',
];

/** The checkout's commands the first page shows, which this test runs as pack:local into a scratch folder. */
const CHECKOUT_COMMANDS = ['cd svcgen            # the checkout', 'npm install', 'npm run pack:local'];

describe('the tutorial', () => {
  const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-tutorial-')));
  const packages = path.join(scratch, 'packages');
  const home = path.join(scratch, 'home');
  const state = path.join(scratch, 'shell-state');
  const cwdFile = path.join(scratch, 'shell-cwd');
  const servers: ChildProcess[] = [];
  let run: RunValues;

  /** The environment of the pages' commands: no variables of the npm running jest, the service on the run's port. */
  function env(): NodeJS.ProcessEnv {
    const out: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env))
      if (!/^npm_/i.test(k) && !['INIT_CWD', 'NODE_PATH', 'NODE_OPTIONS', 'DATABASE_URL'].includes(k) && !/^SVC_/.test(k)) out[k] = v;
    return {
      ...out,
      PORT: String(run.port),
      HOST: '127.0.0.1',
      API_URL: `http://127.0.0.1:${run.port}/api`,
      npm_config_prefer_offline: 'true',
      GIT_AUTHOR_NAME: 'Ada',
      GIT_AUTHOR_EMAIL: 'ada@example.com',
      GIT_COMMITTER_NAME: 'Ada',
      GIT_COMMITTER_EMAIL: 'ada@example.com',
      GIT_CONFIG_GLOBAL: '/dev/null',
    };
  }

  /**
   * A command as bash runs it for the reader: in the folder the commands before left it in, with
   * the variables they set (`API=…`, `TOKEN=$(…)`), stderr with stdout; the page's tarball folder
   * and port are the run's.
   */
  function script(command: string): string {
    const cmd = command.split(DOC_PACKAGES).join(packages).split(`127.0.0.1:${DOC_PORT}`).join(`127.0.0.1:${run.port}`);
    return [
      'set -a',
      `. '${state}'`,
      `cd "$(cat '${cwdFile}')"`,
      'exec 2>&1',
      cmd,
      '__status=$?',
      `export -p | grep -v -e ' PWD=' -e ' OLDPWD=' -e ' SHLVL=' > '${state}'`,
      `pwd > '${cwdFile}'`,
      'exit $__status',
    ].join('\n');
  }

  const cwd = () => fs.readFileSync(cwdFile, 'utf8').trim();

  function shell(command: string): string {
    const r = spawnSync('bash', ['-c', script(command)], { env: env(), encoding: 'utf8', timeout: 5 * 60_000 });
    if (r.error) throw r.error;
    return r.stdout;
  }

  /** A command that serves: started in its own process group, its output once it listens (or exits). */
  async function serve(command: string): Promise<string> {
    for (const s of servers.splice(0)) await stop(s);
    const child = spawn('bash', ['-c', script(command)], { env: env(), detached: true });
    servers.push(child);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    const until = Date.now() + 4 * 60_000;
    while (!/listening on /.test(out) && child.exitCode === null && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    return out;
  }

  async function stop(child: ChildProcess): Promise<void> {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        // Gone.
      }
      await exited;
    }
    child.stdout!.destroy();
    child.stderr!.destroy();
  }

  /** The project's `npm install`: the tarballs unpacked into node_modules, every other package linked to this repository's. */
  function install(project: string): void {
    const modules = path.join(project, 'node_modules');
    fs.mkdirSync(path.join(modules, '@svcgen'), { recursive: true });
    for (const name of fs.readdirSync(path.join(ROOT, 'node_modules'))) {
      if (!name.startsWith('.') && name !== '@svcgen' && name !== 'svcgen')
        fs.symlinkSync(path.join(ROOT, 'node_modules', name), path.join(modules, name));
    }
    const tarballs = fs.readdirSync(packages);
    for (const [pattern, into] of [
      [/^svcgen-\d.*\.tgz$/, 'svcgen'],
      [/^svcgen-runtime-.*\.tgz$/, '@svcgen/runtime'],
    ] as const) {
      const tarball = tarballs.find((t) => pattern.test(t))!;
      fs.mkdirSync(path.join(modules, into));
      const r = spawnSync('tar', ['-xzf', path.join(packages, tarball), '-C', path.join(modules, into), '--strip-components=1'], {
        encoding: 'utf8',
      });
      expect(r.stderr).toBe('');
    }
    fs.mkdirSync(path.join(modules, '.bin'));
    for (const bin of ['svcgen', 'svcgen-tsc']) fs.symlinkSync(`../svcgen/bin/${bin}`, path.join(modules, '.bin', bin));
  }

  beforeAll(async () => {
    run = { packages, port: await freePort() };
    fs.mkdirSync(home);
    fs.writeFileSync(state, '');
    fs.writeFileSync(cwdFile, home);
  });

  afterAll(async () => {
    for (const s of servers.splice(0)) await stop(s);
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('steps 1 to 3 and the typed client script print what their pages show', async () => {
    const problems: string[] = [];
    let commands = 0;
    const compare = (command: Command, output: string) => {
      commands++;
      const problem = outputProblem(command, output, run);
      if (problem) problems.push(problem);
    };
    for (const file of PAGES) {
      for (const step of tutorialSteps(file, fs.readFileSync(path.join(ROOT, file), 'utf8'))) {
        if (step.kind === 'sh') {
          expect({ where: step.where, lines: step.lines }).toEqual({ where: step.where, lines: CHECKOUT_COMMANDS });
          const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/pack-local.js'), packages], { cwd: ROOT, encoding: 'utf8' });
          expect({ status: r.status, stderr: r.status ? r.stderr : '' }).toEqual({ status: 0, stderr: '' });
        } else if (step.kind === 'edit') {
          const file = path.join(cwd(), step.path);
          fs.mkdirSync(path.dirname(file), { recursive: true });
          fs.writeFileSync(file, applyEdit(fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '', step));
        } else if (step.kind === 'excerpt') {
          const text = fs.readFileSync(path.join(cwd(), step.path), 'utf8');
          if (!text.includes(`${step.lines.join('\n')}\n`)) problems.push(`${step.where}: not a part of ${step.path}:\n${text}`);
        } else if (step.command === 'npm install') {
          install(cwd());
        } else if (step.expected?.some((l) => /listening on /.test(l))) {
          compare(step, await serve(step.command));
        } else {
          const output = shell(step.command);
          if (step.expected) compare(step, output);
        }
      }
    }
    expect(problems).toEqual([]);
    expect(commands).toBeGreaterThan(15);
  });
});
