/**
 * `npm run update:cases`: rewrites the expectations of every case in test/cases from the current
 * generator. An output case's `expected/` is rendered again from scratch; a diagnostic case's
 * `expected.txt` gets the diagnostics its specs have now. A new case (a folder with only `specs/`)
 * becomes an output case when its specs are valid, else a diagnostic case. The compiler's messages
 * of a case's misspelt columns (`misspelt-column.json`) are written again from its new tree. Review
 * the diff.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { formatDiagnostic, SpecError } from '../../generator/load/diagnostics';
import { writeOutput } from '../../generator/output/write';
import {
  diagnosticsOf,
  gateOutcome,
  hasMisspellings,
  isGateCase,
  isDiagnosticCase,
  isOutputCase,
  listCases,
  misspeltCheck,
  readMisspellings,
  renderCase,
  ROOT,
  typeCheckAll,
  type Case,
} from './cases';

const shown = (p: string) => path.relative(ROOT, p).split(path.sep).join('/');

async function updateOutput(c: Case): Promise<boolean> {
  let files: Map<string, string>;
  try {
    files = await renderCase(c);
  } catch (err) {
    if (!(err instanceof SpecError)) throw err;
    console.error(`${c.name}: the specs no longer build, ${shown(c.expectedDir)} is left as it is:`);
    for (const d of err.diagnostics) console.error(`  ${formatDiagnostic(d)}`);
    return false;
  }
  fs.rmSync(c.expectedDir, { recursive: true, force: true });
  writeOutput(c.expectedDir, files);
  console.log(`  output       ${shown(c.expectedDir)}/ (${files.size} files)`);
  return true;
}

/**
 * The compiler's messages of each misspelt column (all of the case's misspellings in one program);
 * a misspelling that compiles is left for a person to look at.
 */
function updateMisspellings(c: Case): boolean {
  const read = readMisspellings(c);
  const diagnostics = typeCheckAll(read.map((m) => misspeltCheck(c, m)));
  const misspellings = read.map((m, i) => ({ ...m, diagnostics: diagnostics[i] }));
  const compiling = misspellings.filter((m) => m.diagnostics.length === 0);
  if (compiling.length) {
    for (const m of compiling)
      console.error(`${c.name}: ${m.file} compiles with ${JSON.stringify(m.replace)}; ${shown(c.misspellings)} is left as it is`);
    return false;
  }
  fs.writeFileSync(c.misspellings, `${JSON.stringify(misspellings, null, 2)}\n`);
  console.log(`  misspelt     ${shown(c.misspellings)} (${misspellings.length} columns)`);
  return true;
}

function updateDiagnostics(c: Case, lines: string[]): boolean {
  if (!lines.length) {
    // A case that stopped failing is a regression or a case to turn into an output case: a person decides.
    console.error(
      `${c.name}: the specs have no problems now; ${shown(c.expectedTxt)} is left as it is (delete it to make this an output case)`,
    );
    return false;
  }
  fs.writeFileSync(c.expectedTxt, `${lines.join('\n')}\n`);
  console.log(`  diagnostics  ${shown(c.expectedTxt)} (${lines.length} lines)`);
  return true;
}

async function main(): Promise<number> {
  let failed = 0;
  for (const c of listCases()) {
    if (isGateCase(c)) {
      const lines = await gateOutcome(c);
      fs.writeFileSync(c.gateTxt, `${lines.join('\n')}\n`);
      console.log(`  gate         ${shown(c.gateTxt)} (${lines.length} lines)`);
    } else if (isDiagnosticCase(c) && isOutputCase(c)) {
      console.error(`${c.name}: has both expected.txt and expected/; keep one`);
      failed++;
    } else if (isDiagnosticCase(c)) {
      if (!updateDiagnostics(c, diagnosticsOf(c))) failed++;
    } else if (isOutputCase(c)) {
      if (!(await updateOutput(c)) || (hasMisspellings(c) && !updateMisspellings(c))) failed++;
    } else {
      const lines = diagnosticsOf(c);
      if (!(lines.length ? updateDiagnostics(c, lines) : await updateOutput(c))) failed++;
    }
  }
  console.log(`update:cases: ${listCases().length} cases${failed ? `, ${failed} left as they were` : ''}`);
  return failed ? 1 : 0;
}

main().then((code) => {
  process.exitCode = code;
});
