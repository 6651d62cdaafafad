#!/usr/bin/env bash
# The runtime on the lowest versions its package.json allows: users install any version within each
# range, and the lockfile only ever tests the newest. In a scratch copy of this checkout (without
# node_modules), the normal install, then every dependency and peer dependency of the runtime at the
# floor of its range (^1.2.3 and ~1.2.3: 1.2.3), then the fast suite on SQLite.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
started=$SECONDS

scratch=$(mktemp -d "${TMPDIR:-/tmp}/svcgen-lowest-XXXXXX")
trap 'rm -rf "$scratch"' EXIT
tar -C "$root" -c \
  --exclude=./.git --exclude=node_modules --exclude=./dist --exclude=./runtime/dist --exclude=./test/.tmp --exclude=./data \
  . | tar -C "$scratch" -x
cd "$scratch"

echo "== npm ci (the lockfile's versions)"
npm ci --no-audit --no-fund

# name@floor of each range of runtime/package.json's dependencies and peerDependencies; a range
# that is not a plain caret, tilde or exact version stops the job (its floor would be a guess).
mapfile -t floors < <(node -e '
  const pkg = require("./runtime/package.json");
  const ranges = { ...pkg.dependencies, ...pkg.peerDependencies };
  for (const [name, range] of Object.entries(ranges).sort()) {
    const m = /^[\^~]?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)$/.exec(range);
    if (!m) {
      console.error(`runtime/package.json: ${name} "${range}" is not a caret, tilde or exact version; give its floor explicitly`);
      process.exit(1);
    }
    console.log(`${name}@${m[1]}`);
  }
')
echo "== npm install --no-save ${floors[*]}"
npm install --no-save --no-audit --no-fund "${floors[@]}"

# What the runtime resolves is each floor itself, not a newer version npm preferred (read from
# node_modules: some packages keep package.json out of their exports).
node -e '
  const fs = require("fs"), path = require("path");
  const pkg = require("./runtime/package.json");
  const ranges = { ...pkg.dependencies, ...pkg.peerDependencies };
  let wrong = 0;
  for (const [name, range] of Object.entries(ranges)) {
    const floor = range.replace(/^[\^~]/, "");
    const file = ["runtime/node_modules", "node_modules"].map((d) => path.join(d, name, "package.json")).find((f) => fs.existsSync(f));
    const installed = file && JSON.parse(fs.readFileSync(file, "utf8")).version;
    if (installed !== floor) { console.error(`${name}: ${installed ?? "nothing"} installed, ${floor} expected`); wrong++; }
  }
  process.exit(wrong ? 1 : 0);
'

echo "== npm run test:fast (lowest versions)"
npm run test:fast

echo "== lowest versions: passed in $((SECONDS - started)) s"
