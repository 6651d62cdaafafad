/**
 * The imports of one generated file, collected while its view builds the code: asking for a name
 * records the import and returns the identifier to print, so a file imports exactly what its code
 * uses. Printed in one order: packages before relative modules, each group by specifier; the names
 * of a module case-insensitively; `import type` when a module gives the file only types.
 */

interface ModuleImports {
  /** `import * as <namespace>`. */
  namespace?: string;
  /** `import <default>`. */
  default?: string;
  /** Named imports: name → whether the code uses it as a value (else only as a type). */
  names: Map<string, boolean>;
}

export class Imports {
  private readonly modules = new Map<string, ModuleImports>();

  /** `runtime`: the runtime's import specifier from this file. */
  constructor(private readonly runtimeModule: string) {}

  /** A runtime export the code uses as a value. */
  runtime(name: string): string {
    return this.value(this.runtimeModule, name);
  }

  /** A runtime export the code uses only as a type. */
  runtimeType(name: string): string {
    return this.type(this.runtimeModule, name);
  }

  /** A named export of `module` the code uses as a value. */
  value(module: string, name: string): string {
    this.moduleOf(module).names.set(name, true);
    return name;
  }

  /** A named export of `module` the code uses only as a type. */
  type(module: string, name: string): string {
    const names = this.moduleOf(module).names;
    if (!names.has(name)) names.set(name, false);
    return name;
  }

  /** `import name from module`: the module's default export (a JSON file's content). */
  default(module: string, name: string): string {
    const m = this.moduleOf(module);
    if (m.default !== undefined && m.default !== name) throw new Error(`${module} is imported as ${m.default}, not ${name}`);
    m.default = name;
    return name;
  }

  /** `import * as alias from module`. */
  namespace(module: string, alias: string): string {
    const m = this.moduleOf(module);
    if (m.namespace !== undefined && m.namespace !== alias) throw new Error(`${module} is imported as ${m.namespace}, not ${alias}`);
    m.namespace = alias;
    return alias;
  }

  /** The import declarations, one a line, without a final newline. */
  print(): string {
    const lines: string[] = [];
    for (const module of [...this.modules.keys()].sort(bySpecifier)) {
      const { namespace, default: name, names } = this.modules.get(module)!;
      if (name !== undefined) lines.push(`import ${name} from '${module}';`);
      if (namespace !== undefined) lines.push(`import * as ${namespace} from '${module}';`);
      if (names.size === 0) continue;
      const sorted = [...names.keys()].sort(byName);
      const typesOnly = [...names.values()].every((isValue) => !isValue);
      const list = sorted.map((name) => (typesOnly || names.get(name) ? name : `type ${name}`)).join(', ');
      lines.push(`import ${typesOnly ? 'type ' : ''}{ ${list} } from '${module}';`);
    }
    return lines.join('\n');
  }

  private moduleOf(module: string): ModuleImports {
    let m = this.modules.get(module);
    if (!m) {
      m = { names: new Map() };
      this.modules.set(module, m);
    }
    return m;
  }
}

const relative = (specifier: string) => specifier.startsWith('.');

/** Packages first, then relative modules; by specifier within each group. */
function bySpecifier(a: string, b: string): number {
  if (relative(a) !== relative(b)) return relative(a) ? 1 : -1;
  return ordinal(a, b);
}

/** Case-insensitively, ties broken by code unit, so the order never depends on a locale. */
function byName(a: string, b: string): number {
  return ordinal(a.toLowerCase(), b.toLowerCase()) || ordinal(a, b);
}

function ordinal(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
