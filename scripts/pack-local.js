#!/usr/bin/env node
/**
 * `npm run pack:local [-- DIR]`: svcgen's two packages as tarballs, for as long as they are not on
 * the npm registry. `npm pack` of the root (its `prepack` builds the runtime and the generator) and
 * of `runtime/` write `svcgen-VERSION.tgz` and `svcgen-runtime-VERSION.tgz` into DIR (default
 * `dist/packages`), then the commands that install them are printed with the tarballs' absolute
 * paths. No dependency beyond Node and npm.
 */
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h') || args.length > 1) {
  console.log('usage: npm run pack:local [-- DIR]   (default DIR: dist/packages)');
  process.exit(args.length > 1 ? 2 : 0);
}
const out = path.resolve(process.cwd(), args[0] ?? path.join(ROOT, 'dist', 'packages'));
fs.mkdirSync(out, { recursive: true });

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** `npm pack` with its JSON report: the name of the tarball it wrote. */
function pack(extra) {
  const r = spawnSync(npm, ['pack', '--json', '--pack-destination', out, ...extra], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    shell: process.platform === 'win32',
  });
  if (r.status !== 0) {
    process.stderr.write(r.stdout ?? '');
    console.error(`pack:local: npm pack ${extra.join(' ')} failed (exit ${r.status})`);
    process.exit(1);
  }
  // The JSON report is the last thing npm prints; the build's own output comes before it.
  const json = r.stdout.slice(r.stdout.search(/^\[/m));
  return path.join(out, JSON.parse(json)[0].filename);
}

const svcgen = pack([]); // prepack: npm run build (runtime, then generator)
const runtime = pack(['-w', 'runtime']); // prepack: the runtime's build again, from the same sources

const q = (p) => (/[\s'"$`\\]/.test(p) ? `'${p.replace(/'/g, `'\\''`)}'` : p);
console.log(`
Packed into ${out}:
  ${path.basename(svcgen)}
  ${path.basename(runtime)}

A new project (its package.json then points at these two files):
  npx --yes --package ${q(svcgen)} --package ${q(runtime)} svcgen init my-api
  cd my-api && npm install && npm start

An existing project (with the driver of its database: better-sqlite3, pg or mysql2):
  npm install --save-exact ${q(runtime)}
  npm install --save-dev --save-exact ${q(svcgen)}
`);
