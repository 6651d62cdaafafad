/**
 * The runtime's contract as the generator reads it (the names its index exports), and what a hooks
 * module's imports of the runtime are told; the case folder hooks-old-runtime holds the whole run.
 */
import * as runtime from '../../runtime';
import { importProblems, REPLACED_NAMES, runtimeContract } from '../../generator/validate/hook-imports';

describe('the runtime contract the generator reads', () => {
  const contract = runtimeContract();

  it('has every value the runtime exports, and the types beside them', () => {
    expect(Object.keys(runtime).filter((name) => !contract.has(name))).toEqual([]);
    expect(contract.has('HookContext')).toBe(true);
    expect(contract.has('validateData')).toBe(true);
  });

  it('has none of the names it says were replaced', () => {
    expect(Object.keys(REPLACED_NAMES).filter((name) => contract.has(name))).toEqual([]);
  });
});

describe('the imports of a hooks module', () => {
  const contract = runtimeContract();
  const problems = (text: string) => importProblems('hooks/x.ts', text, contract).map((d) => `${d.line}:${d.column}: ${d.message}`);

  it('are fine from @svcgen/runtime, with names of its contract', () => {
    expect(problems("import { validateData, z, type HookContext } from '@svcgen/runtime';\nimport * as fs from 'node:fs';\n")).toEqual([]);
  });

  it('re-exports are read as imports are', () => {
    expect(problems("export { validate as check } from '@svcgen/runtime';\n")).toEqual([
      '1:10: @svcgen/runtime no longer exports "validate": use validateData(schema, value), which throws the same 400 "Validation Error"',
    ]);
  });

  it('the old path is reported once per import, and its names are judged against the contract too', () => {
    expect(problems("import * as rt from 'svcgen/runtime';\nimport { JWTAuth } from 'svcgen/runtime/index';\n")).toEqual([
      `1:21: 'svcgen/runtime' is no longer a module: the runtime is its own package; import from '@svcgen/runtime' and add it to the project's dependencies (CHANGELOG.md, "Upgrading from 0.1.0")`,
      `2:25: 'svcgen/runtime/index' is no longer a module: the runtime is its own package; import from '@svcgen/runtime' and add it to the project's dependencies (CHANGELOG.md, "Upgrading from 0.1.0")`,
    ]);
  });
});
