/**
 * Names that generated code derives from spec names must not clash: two declarations of one name in
 * a generated module, or a name declared in a function of a module that the module already imports
 * or declares (the local would shadow it, as a constant `itemsWrites` once shadowed the import of the
 * same name and the file did not compile). The whole output is rendered and each TypeScript file's
 * declarations are read with the compiler's parser; a clash is reported at the spec position the
 * name comes from, so it is a `svcgen validate` error, not a compiler error in generated code.
 */
import { isMap, isPair, isScalar, isSeq, type Node } from 'yaml';
import * as ts from 'typescript';
import type { Diagnostic } from '../load/diagnostics';
import { diagnosticAt, type LoadedSpecs, type SpecFile } from '../load/load';
import type { ServiceModel } from '../model/model';
import { camelCase } from '../model/names';
import { firstBuildResults, renderService } from './render';
import type { RenderContext } from './context';

/** One generated name declared twice in one scope of one output file. */
export interface NameClash {
  /** Output path, relative to the output folder (`resources/baskets/routes.ts`). */
  file: string;
  name: string;
  /** `module`: two declarations (or imports) at the module's top level; else the function that declares it. */
  scope: string;
  /** Declared twice in that scope, or declared in the function although the module imports or declares it. */
  kind: 'twice' | 'shadows';
}

/** What the check renders with: where the runtime and the specs are does not change a name. */
const CHECK_CONTEXT: RenderContext = { runtimeFromRoot: '@svcgen/runtime', specsFromRoot: '../specs', specsName: 'specs' };

/** Every clash of generated names in the service's output, as diagnostics at the spec positions the names come from. */
export function checkGeneratedNames(model: ServiceModel, loaded: LoadedSpecs): Diagnostic[] {
  const { files } = renderService(model, CHECK_CONTEXT, firstBuildResults(model));
  return nameClashes(files).map((clash) => clashDiagnostic(clash, model, loaded));
}

/** The clashes of declared names in each TypeScript file of `files`, in file order. */
export function nameClashes(files: ReadonlyMap<string, string>): NameClash[] {
  const out: NameClash[] = [];
  for (const [file, text] of files) {
    if (!file.endsWith('.ts')) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
    const values = new Scope();
    const types = new Scope();
    const functions: { name: string; body: ts.Block }[] = [];
    for (const statement of source.statements) {
      if (ts.isImportDeclaration(statement)) {
        const clause = statement.importClause;
        if (!clause) continue;
        const typeOnly = clause.isTypeOnly;
        if (clause.name) declare(clause.name.text, !typeOnly);
        const bindings = clause.namedBindings;
        if (bindings && ts.isNamespaceImport(bindings)) declare(bindings.name.text, !typeOnly);
        if (bindings && ts.isNamedImports(bindings)) for (const e of bindings.elements) declare(e.name.text, !typeOnly && !e.isTypeOnly);
      } else if (ts.isFunctionDeclaration(statement) && statement.name) {
        values.add(statement.name.text);
        if (statement.body) functions.push({ name: statement.name.text, body: statement.body });
      } else if (ts.isClassDeclaration(statement) && statement.name) {
        values.add(statement.name.text);
        types.add(statement.name.text);
      } else if (ts.isEnumDeclaration(statement)) {
        values.add(statement.name.text);
        types.add(statement.name.text);
      } else if (ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement)) {
        types.add(statement.name.text);
      } else if (ts.isVariableStatement(statement)) {
        for (const d of statement.declarationList.declarations) {
          for (const name of bindingNames(d.name)) values.add(name);
          const init = d.initializer;
          if (init && (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) && ts.isBlock(init.body) && ts.isIdentifier(d.name)) {
            functions.push({ name: d.name.text, body: init.body });
          }
        }
      }
    }
    for (const name of [...values.twice, ...types.twice]) out.push({ file, name, scope: 'module', kind: 'twice' });
    // A function's own declarations: twice in its body, or again after the module declares or imports the name.
    for (const fn of functions) {
      const local = new Scope();
      for (const statement of fn.body.statements) {
        if (ts.isVariableStatement(statement))
          for (const d of statement.declarationList.declarations) for (const name of bindingNames(d.name)) local.add(name);
        else if ((ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement)) && statement.name)
          local.add(statement.name.text);
      }
      for (const name of local.twice) out.push({ file, name, scope: fn.name, kind: 'twice' });
      for (const name of local.names)
        if (values.names.has(name) && !local.twice.has(name)) out.push({ file, name, scope: fn.name, kind: 'shadows' });
    }

    function declare(name: string, value: boolean) {
      types.add(name);
      if (value) values.add(name);
    }
  }
  return dedupe(out);
}

class Scope {
  readonly names = new Set<string>();
  readonly twice = new Set<string>();
  add(name: string) {
    if (this.names.has(name)) this.twice.add(name);
    this.names.add(name);
  }
}

function bindingNames(name: ts.BindingName): string[] {
  if (ts.isIdentifier(name)) return [name.text];
  return name.elements.flatMap((e) => (ts.isOmittedExpression(e) ? [] : bindingNames(e.name)));
}

function dedupe(clashes: NameClash[]): NameClash[] {
  const seen = new Set<string>();
  return clashes.filter((c) => {
    const key = `${c.file}\0${c.scope}\0${c.name}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * A clash at the spec position its name comes from: in the spec file the output file is rendered
 * from (a resource's folder comes from its resource file; the other files from every spec, the
 * service file first), the key or value whose camelCase form begins the name, the longest such;
 * failing that, the start of the resource's `model` (or of the service file).
 */
function clashDiagnostic(clash: NameClash, model: ServiceModel, loaded: LoadedSpecs): Diagnostic {
  const specs = [loaded.service, ...loaded.resources].filter((s): s is SpecFile => s !== undefined);
  const folder = /^resources\/([^/]+)\//.exec(clash.file)?.[1];
  const resource = folder === undefined ? undefined : model.resources.find((r) => r.moduleName === folder);
  const own = resource ? specs.filter((s) => s.relPath === resource.specFile || s.file === resource.specFile) : specs;
  const what =
    clash.kind === 'shadows'
      ? `is declared in ${clash.scope} of ${clash.file}, which also imports or declares it`
      : `is declared twice in ${clash.scope === 'module' ? clash.file : `${clash.scope} of ${clash.file}`}`;
  const message = `generated name "${clash.name}" ${what}: rename the spec name it comes from`;
  const wanted = clash.name.toLowerCase();
  let best: { spec: SpecFile; path: (string | number)[]; key: boolean; length: number } | undefined;
  for (const spec of own) {
    walk(spec.doc.contents, [], (value, path, key) => {
      const derived = camelCase(value).toLowerCase();
      if (derived.length < 2 || !wanted.startsWith(derived)) return;
      if (!best || derived.length > best.length) best = { spec, path, key, length: derived.length };
    });
  }
  if (best) return diagnosticAt(best.spec, best.path, message, best.key);
  const fallback = own[0] ?? specs[0];
  if (!fallback) return { file: 'service.yaml', line: 1, column: 1, message };
  return diagnosticAt(fallback, fallback.kind === 'resource' ? ['model'] : [], message, fallback.kind === 'resource');
}

/** Every map key and scalar string value under `node`, with its path, in document order. */
function walk(
  node: Node | null | undefined,
  path: (string | number)[],
  visit: (value: string, path: (string | number)[], key: boolean) => void,
): void {
  if (isMap(node)) {
    for (const pair of node.items) {
      if (!isPair(pair) || !isScalar(pair.key)) continue;
      const k = pair.key.value;
      if (typeof k !== 'string') continue;
      visit(k, [...path, k], true);
      walk(pair.value as Node | null, [...path, k], visit);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => walk(item as Node | null, [...path, i], visit));
  } else if (isScalar(node) && typeof node.value === 'string' && /^[A-Za-z_][A-Za-z0-9_ -]*$/.test(node.value)) {
    visit(node.value, path, false);
  }
}
