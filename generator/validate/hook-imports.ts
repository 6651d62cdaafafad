/**
 * What the hooks modules import from the runtime: its package, `@svcgen/runtime`, and only names of
 * its contract (the names its index exports). A module that still imports the path of 0.1.0,
 * `svcgen/runtime`, or a name the contract no longer has, is reported at the import, with what
 * replaces it, before the generated code would fail to compile with TS2307 or TS2305.
 *
 * Only the TypeScript parser runs here (no program, no type check): an import is read as written.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as TS from 'typescript';
import type { Diagnostic } from '../load/diagnostics';
import { displayPath } from '../load/load';
import type { HookedSpecs } from './hook-refs';
import { didYouMean } from './suggest';

/** The runtime's package name: what generated code and hooks import. */
const RUNTIME = '@svcgen/runtime';
/** The runtime's path while it was part of svcgen (0.1.0). */
const OLD_RUNTIME = 'svcgen/runtime';

/** Names the runtime's contract no longer has, each with what to use instead. */
export const REPLACED_NAMES: Readonly<Record<string, string>> = {
  validate: 'validateData(schema, value), which throws the same 400 "Validation Error"',
};

/** Every hooks module the specs name, each once, with its problems. */
export function checkHookImports(described: HookedSpecs, cwd: string): Diagnostic[] {
  const modules = new Set(
    [described.service?.data.hooks, ...described.resources.map((r) => r.data.hooks)]
      .filter((m): m is string => typeof m === 'string')
      .map((m) => path.resolve(described.dir, m)),
  );
  const out: Diagnostic[] = [];
  let contract: ReadonlySet<string> | undefined;
  for (const file of [...modules].sort()) {
    if (!fs.existsSync(file)) continue; // validation reports a missing module
    const text = fs.readFileSync(file, 'utf8');
    if (!text.includes(OLD_RUNTIME)) continue; // '@svcgen/runtime' contains it too
    contract ??= runtimeContract();
    out.push(...importProblems(displayPath(file, cwd), text, contract));
  }
  return out;
}

/** The problems of one module's imports of the runtime, at their positions in `file` (as diagnostics name it). */
export function importProblems(file: string, text: string, contract: ReadonlySet<string>): Diagnostic[] {
  const ts = require('typescript') as typeof TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: Diagnostic[] = [];
  const at = (node: TS.Node, message: string) => {
    const { line, character } = source.getLineAndCharacterOfPosition(node.getStart(source));
    out.push({ file, line: line + 1, column: character + 1, message });
  };
  for (const statement of source.statements) {
    const isImport = ts.isImportDeclaration(statement);
    if (!isImport && !ts.isExportDeclaration(statement)) continue;
    const specifier = statement.moduleSpecifier;
    if (!specifier || !ts.isStringLiteral(specifier)) continue;
    const from = specifier.text;
    if (from === OLD_RUNTIME || from.startsWith(`${OLD_RUNTIME}/`)) {
      at(
        specifier,
        `'${from}' is no longer a module: the runtime is its own package; import from '${RUNTIME}' and add it to the project's dependencies (CHANGELOG.md, "Upgrading from 0.1.0")`,
      );
    } else if (from !== RUNTIME) continue;
    const named = isImport
      ? statement.importClause?.namedBindings && ts.isNamedImports(statement.importClause.namedBindings)
        ? statement.importClause.namedBindings.elements
        : undefined
      : statement.exportClause && ts.isNamedExports(statement.exportClause)
        ? statement.exportClause.elements
        : undefined;
    for (const element of named ?? []) {
      const name = (element.propertyName ?? element.name).text;
      if (contract.has(name)) continue;
      const instead = REPLACED_NAMES[name];
      at(
        element.propertyName ?? element.name,
        instead
          ? `${RUNTIME} no longer exports "${name}": use ${instead}`
          : `${RUNTIME} does not export "${name}"${didYouMean(name, [...contract])}: hooks may import the names of the runtime's contract (its index)`,
      );
    }
  }
  return out;
}

/**
 * The names the runtime's index exports: its TypeScript source in a checkout, its declarations in an
 * installed package. Read with the parser, not resolved: the index lists every name itself.
 */
export function runtimeContract(): ReadonlySet<string> {
  const dir = path.dirname(require.resolve(`${RUNTIME}/package.json`));
  const index = [path.join(dir, 'index.ts'), path.join(dir, 'dist', 'index.d.ts')].find((f) => fs.existsSync(f));
  if (!index) throw new Error(`${RUNTIME}: neither index.ts nor dist/index.d.ts in ${dir}`);
  const ts = require('typescript') as typeof TS;
  const source = ts.createSourceFile(index, fs.readFileSync(index, 'utf8'), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const names = new Set<string>();
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement) && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      for (const e of statement.exportClause.elements) names.add(e.name.text);
    }
  }
  return names;
}
