/**
 * The dependency rules of both packages (.dependency-cruiser.cjs), checked by dependency-cruiser:
 * the runtime's layers, the generator's stages, the generator reaching the runtime through the
 * entry points it exports only, and no circles. What breaks them today is listed in
 * .dependency-cruiser-known-violations.json: nothing new may be added, and an entry that is gone
 * must leave the list (`npx depcruise-baseline runtime generator -c .dependency-cruiser.cjs`
 * writes it anew). A probe per rule: a copy of both packages with one import breaking it.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');
const KNOWN = path.join(ROOT, '.dependency-cruiser-known-violations.json');
const BIN = path.join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
  cycle?: { name: string }[];
}

/** The violations dependency-cruiser finds in `runtime/` and `generator/` under `cwd`, each as one line. */
function violations(cwd: string): string[] {
  const run = spawnSync(process.execPath, [BIN, 'runtime', 'generator', '-c', CONFIG, '-T', 'json'], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (!run.stdout) throw new Error(`dependency-cruiser: ${run.stderr}`);
  const result = JSON.parse(run.stdout) as { summary: { violations: Violation[] } };
  return result.summary.violations.map(line).sort();
}

const line = (v: Violation) => `${v.rule.name}: ${v.from} → ${v.cycle ? v.cycle.map((c) => c.name).join(' → ') : v.to}`;

describe('the dependency rules', () => {
  it('hold, but for the known violations, each of which is still there', () => {
    const known = (JSON.parse(fs.readFileSync(KNOWN, 'utf8')) as Violation[]).map(line).sort();
    const found = violations(ROOT);
    // Nothing new.
    expect(found.filter((v) => !known.includes(v))).toEqual([]);
    // The list only shrinks: an entry no longer found must leave it.
    expect(known.filter((v) => !found.includes(v))).toEqual([]);
  });

  it('report each kind of break (a copy of both packages with one probe per rule)', () => {
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-dependencies-'));
    try {
      const sources = (dir: string) =>
        fs.cpSync(path.join(ROOT, dir), path.join(copy, dir), { recursive: true, filter: (f) => !/[\\/](dist|node_modules)$/.test(f) });
      sources('runtime');
      sources('generator');
      fs.copyFileSync(path.join(ROOT, 'tsconfig.json'), path.join(copy, 'tsconfig.json'));
      const probe = (file: string, text: string) => fs.writeFileSync(path.join(copy, file), text);
      probe('runtime/core/probe-up.ts', "import '../http/send';\n");
      probe('runtime/db/probe-contract.ts', "import '../index';\n");
      probe('runtime/core/probe-outside.ts', "import '../../generator/pipeline';\n");
      probe('runtime/core/probe-a.ts', "import './probe-b';\n");
      probe('runtime/core/probe-b.ts', "import './probe-a';\n");
      probe('generator/load/probe-stage.ts', "import '../render/render';\n");
      probe('generator/validate/probe-stage.ts', "import '../model/model';\n");
      probe('generator/render/probe-internals.ts', "import '../../runtime/db/connection';\n");
      const found = violations(copy).filter((v) => v.includes('probe-'));
      expect(found).toEqual([
        'generator-runtime-internals: generator/render/probe-internals.ts → runtime/db/connection.ts',
        'generator-stage-load: generator/load/probe-stage.ts → generator/render/render.ts',
        'generator-stage-validate: generator/validate/probe-stage.ts → generator/model/model.ts',
        'no-circular: runtime/core/probe-a.ts → runtime/core/probe-b.ts → runtime/core/probe-a.ts',
        'runtime-contract-from-inside: runtime/db/probe-contract.ts → runtime/index.ts',
        'runtime-layer-core: runtime/core/probe-up.ts → runtime/http/send.ts',
        'runtime-outside: runtime/core/probe-outside.ts → generator/pipeline.ts',
      ]);
    } finally {
      fs.rmSync(copy, { recursive: true, force: true });
    }
  });
});
