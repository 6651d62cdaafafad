'use strict';
// Makes sure dist/ holds the compiled service before an npm script runs it (npm start, npm run
// migrate, npm run createuser). Where svcgen is installed (npm install: a devDependency), it
// compiles what changed (`svcgen-tsc -b`), after `svcgen build specs` when given --build. A
// production install (npm install --omit=dev) has neither svcgen nor its compiler: there the
// compiled service in dist/ runs as it is, and this only says what to do when it is missing.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const project = path.resolve(__dirname, '..');
const main = path.join(project, 'dist', 'generated', 'main.js');

/** The file of one of svcgen's commands, or undefined when svcgen is not installed. */
function svcgenBin(name) {
  let pkg;
  try {
    pkg = require.resolve('svcgen/package.json', { paths: [project] });
  } catch {
    return undefined;
  }
  const bin = JSON.parse(fs.readFileSync(pkg, 'utf8')).bin[name];
  return path.join(path.dirname(pkg), bin);
}

function run(bin, args) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: project, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const svcgen = svcgenBin('svcgen');
if (svcgen) {
  if (process.argv.includes('--build')) run(svcgen, ['build', 'specs']);
  run(svcgenBin('svcgen-tsc'), ['-b']);
} else if (!fs.existsSync(main)) {
  console.error(
    'dist/generated/main.js is missing, and this is a production install (npm install --omit=dev): it has no svcgen to build or compile ' +
      'the service. Compile where the dev dependencies are installed (npm install, then npm run compile) and keep dist/ ' +
      '(the Dockerfile does so), or run npm install without --omit=dev.',
  );
  process.exit(1);
}
