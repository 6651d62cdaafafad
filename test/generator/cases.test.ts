/**
 * Every case folder of test/cases (see test/support/cases.ts): a diagnostic case prints exactly its
 * expected.txt, line for line; an output case renders exactly its expected/ tree, byte for byte (no
 * file changed, missing or extra), and every output case type-checks under `strict` in one program.
 * A case's misspelt columns (misspelt-column.json) each fail to compile with exactly the messages
 * pinned beside them: generated code reads and writes rows under their row types.
 * The compiler runs once for all of it: one program holds every output case, an in-memory copy of
 * a case for each misspelling, and the probe file of the check itself (typeCheckAll); each test
 * asserts on its own part of that program's messages.
 * `npm run update:cases` rewrites the expectations from the current generator.
 */
import * as path from 'node:path';
import { unifiedDiff } from '../../generator/output/drift';
import {
  diagnosticsOf,
  expectedDiagnostics,
  expectedGate,
  gateOutcome,
  isGateCase,
  hasMisspellings,
  isDiagnosticCase,
  isOutputCase,
  listCases,
  misspeltCheck,
  outputCaseSources,
  readMisspellings,
  readTree,
  renderCase,
  ROOT,
  typeCheckAll,
  type Check,
  type Misspelling,
  type Case,
} from '../support/cases';

// Rendering a case formats its files; the type check compiles every output case with the runtime.
jest.setTimeout(180_000);

const cases = listCases();
const gateCases = cases.filter(isGateCase);
const diagnosticCases = cases.filter((c) => !isGateCase(c) && isDiagnosticCase(c));
const outputCases = cases.filter((c) => !isGateCase(c) && isOutputCase(c));

/**
 * A file breaking the repository's options, compiled from memory only (nothing is written): inside
 * the repository, in the git-ignored test/.tmp, as the compiler's rootDir requires.
 */
const PROBE = path.join(ROOT, 'test', '.tmp', 'cases-probe', 'broken.ts');
const BROKEN = 'export function twice(x) {\n  const unused = 1;\n  return x * 2;\n}\n';

/** Every misspelling of every case, with its check (or why it has none: its code is gone). */
const misspellings = outputCases.filter(hasMisspellings).flatMap((c) =>
  readMisspellings(c).map((m): { c: Case; m: Misspelling; check?: Check; error?: unknown } => {
    try {
      return { c, m, check: misspeltCheck(c, m) };
    } catch (error) {
      return { c, m, error };
    }
  }),
);

/** The output cases, each misspelling and the probe, type-checked in one program, the first time a test asks. */
let checked: { cases: string[]; probe: string[]; misspelt: Map<Misspelling, string[]> } | undefined;
function typeChecked(): NonNullable<typeof checked> {
  if (!checked) {
    const misspelt = misspellings.filter((x) => x.check);
    const [all, probe, ...rest] = typeCheckAll([
      { files: outputCaseSources(outputCases) },
      { files: [PROBE], changed: { file: PROBE, text: BROKEN } },
      ...misspelt.map((x) => x.check!),
    ]);
    checked = { cases: all, probe, misspelt: new Map(misspelt.map((x, i) => [x.m, rest[i]])) };
  }
  return checked;
}

describe('test/cases', () => {
  it('holds cases of both kinds, each with exactly one expectation', () => {
    expect(diagnosticCases.length).toBeGreaterThan(0);
    expect(outputCases.length).toBeGreaterThan(0);
    expect(
      cases.filter((c) => [isDiagnosticCase(c), isOutputCase(c), isGateCase(c)].filter(Boolean).length !== 1).map((c) => c.name),
    ).toEqual([]);
  });

  it('has the cases the generator was specified with', () => {
    expect(diagnosticCases.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        'bad-indexes',
        'bad-lookup',
        'bad-related-ordering',
        'bad-search',
        'duplicate-names',
        'five-mistakes',
        'hooks-and-auth',
        'm2m-config',
        'unknown-setting',
        'route-clash-verbose-plural',
        'relation-hook-without-module',
      ]),
    );
    expect(outputCases.map((c) => c.name)).toEqual(
      expect.arrayContaining(['minimal-resource', 'relation-hooks', 'actions-and-endpoints', 'composite-indexes', 'list-query-options']),
    );
    expect(outputCases.filter(hasMisspellings).map((c) => c.name)).toEqual(['misspelt-column']);
  });
});

describe.each(diagnosticCases.map((c) => [c.name, c] as const))('diagnostic case %s', (_, c) => {
  it('reports exactly expected.txt, as svcgen validate prints it', () => {
    const expected = expectedDiagnostics(c);
    expect(expected.length).toBeGreaterThan(0);
    expect(diagnosticsOf(c)).toEqual(expected);
  });
});

describe.each(gateCases.map((c) => [c.name, c] as const))('gate case %s', (_, c) => {
  it('builds against its committed/ folder as gate.txt says: refused at the spec positions, or the gate files it writes', async () => {
    const expected = expectedGate(c);
    expect(expected.length).toBeGreaterThan(0);
    expect(await gateOutcome(c)).toEqual(expected);
  });
});

describe.each(outputCases.map((c) => [c.name, c] as const))('output case %s', (_, c) => {
  it('renders exactly the expected/ tree', async () => {
    const rendered = await renderCase(c);
    const committed = readTree(c.expectedDir);
    const changed = [...rendered].filter(([name, text]) => committed.has(name) && committed.get(name) !== text);
    expect({
      changed: changed.map(([name, text]) => unifiedDiff(name, committed.get(name)!, text)),
      missing: [...rendered.keys()].filter((name) => !committed.has(name)),
      extra: [...committed.keys()].filter((name) => !rendered.has(name)),
    }).toEqual({ changed: [], missing: [], extra: [] });
  });
});

describe.each(outputCases.filter(hasMisspellings).map((c) => [c.name, c] as const))('misspelt columns of case %s', (_, c) => {
  it.each(misspellings.filter((x) => x.c === c).map((x) => [x.m.replace.trim(), x] as const))(
    '%s fails to compile with the pinned messages',
    (_, { m, error }) => {
      if (error) throw error;
      expect(m.diagnostics.length).toBeGreaterThan(0);
      expect(typeChecked().misspelt.get(m)).toEqual(m.diagnostics);
    },
  );
});

describe('output cases', () => {
  it('type-check with strict and noUnusedLocals, hooks included, in one program', () => {
    const files = outputCaseSources(outputCases);
    // Every case has its generated entry point in the program.
    for (const c of outputCases) expect(files).toContain(path.join(c.expectedDir, 'main.ts'));
    expect(typeChecked().cases).toEqual([]);
  });

  it('would fail on an unused name or an implicit any', () => {
    // The check uses the repository's options: a file breaking them is reported, with its position.
    expect(typeChecked().probe).toEqual([
      expect.stringMatching(/broken\.ts\(1,23\): error TS7006: /),
      expect.stringMatching(/broken\.ts\(2,9\): error TS6133: /),
    ]);
  });
});
