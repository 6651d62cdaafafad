/**
 * svcgen uses its dependencies, and Node, through their public interfaces only, so that a
 * dependency's patch or minor release (which the runtime's caret ranges let users install) cannot
 * break it. The runtime, the generator, bin/ and the root's JavaScript files are read as code (the
 * TypeScript parser: comments and text are not code) and every use of a private interface fails,
 * named file:line:
 *
 * - a module path into a package that its `exports` map does not declare, or, for a package
 *   without one, into its `lib/`, `dist/` or `src/` folder;
 * - `createRequire(...)` on anything but this module itself (`__filename`, `import.meta.url`):
 *   a require of another package's location resolves that package's own dependencies;
 * - an underscore-prefixed property (`x._name`, `x['_name']`, or its name as a string, `'_name'`):
 *   private by convention, whoever owns it (a short list of names that are not, each with why);
 * - symbols of other packages: `Symbol.for(...)` of a name not our own (`svcgen.`),
 *   `getOwnPropertySymbols`, `Reflect.ownKeys`, a symbol told by its text (`'Symbol(...)'`);
 * - patches of Node's module loader: `require.extensions`, `Module._load`, `Module._resolveFilename`.
 */
import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');

/** Folders that hold no sources of ours: compiled output, installed packages. */
const NOT_SOURCES = new Set(['dist', 'node_modules']);

/** The underscore-prefixed names that are no private interface, each with why. */
const PUBLIC_UNDERSCORE_NAMES: ReadonlySet<string> = new Set<string>([
  // Our own: the census of migrations.ts names its row count so, apart from any column's.
  '__rows',
  // Zod 4's interface for libraries built on it (zod.dev/library-authors): a schema's definition and checks.
  '_zod',
  // Knex's event objects (knexjs.org, "Events": a query event carries "the connection's __knexUid /
  // __knexTxId properties"): which connection ran a statement.
  '__knexUid',
  '__knexTxId',
  // Node's API for implementers of a Writable (nodejs.org/api/stream.html, "Implementing a writable
  // stream"): our own net.Socket subclass's _write and _writev, each calling its parent's.
  '_write',
  '_writev',
]);

function sourcesOf(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return NOT_SOURCES.has(e.name) ? [] : sourcesOf(full);
    return /\.(ts|js)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [full] : [];
  });
}

/** The files scanned: the runtime, the generator, bin/ (scripts without an extension too) and the root's .js files. */
function scannedFiles(): string[] {
  const bin = fs.readdirSync(path.join(ROOT, 'bin')).map((f) => path.join(ROOT, 'bin', f));
  const rootJs = fs
    .readdirSync(ROOT)
    .filter((f) => f.endsWith('.js'))
    .map((f) => path.join(ROOT, f));
  return [...sourcesOf(path.join(ROOT, 'runtime')), ...sourcesOf(path.join(ROOT, 'generator')), ...bin, ...rootJs].filter((f) =>
    fs.statSync(f).isFile(),
  );
}

const BUILTINS = new Set(builtinModules);

/** The package a module path names and the subpath within it; undefined for a relative path or a Node module. */
function packagePath(specifier: string): { name: string; subpath: string } | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:') || BUILTINS.has(specifier.split('/')[0]))
    return undefined;
  const m = /^((?:@[^/]+\/)?[^/]+)(?:\/(.*))?$/.exec(specifier);
  if (!m) return undefined;
  return { name: m[1], subpath: m[2] ?? '' };
}

/** package.json of an installed package, read from the root's node_modules or the runtime's. */
function manifestOf(name: string): { exports?: unknown } | undefined {
  for (const dir of [path.join(ROOT, 'node_modules'), path.join(ROOT, 'runtime', 'node_modules')]) {
    const file = path.join(dir, name, 'package.json');
    if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8'));
  }
  return undefined;
}

/** Whether `exports` declares `./subpath`, as itself or through a `*` pattern. */
function exported(exportsField: unknown, subpath: string): boolean {
  if (typeof exportsField !== 'object' || exportsField === null || Array.isArray(exportsField)) return false;
  const keys = Object.keys(exportsField).filter((k) => k.startsWith('.'));
  const wanted = `./${subpath}`;
  return keys.some((key) => {
    if (!key.includes('*')) return key === wanted;
    const [before, after] = key.split('*');
    return wanted.startsWith(before) && wanted.endsWith(after) && wanted.length >= before.length + after.length;
  });
}

/** Why a module path is a dependency's private one; undefined for a public one (or not a package's). */
function privateModulePath(specifier: string): string | undefined {
  const target = packagePath(specifier);
  if (!target || !target.subpath) return undefined;
  const manifest = manifestOf(target.name);
  if (!manifest) return undefined;
  if (manifest.exports !== undefined) {
    return exported(manifest.exports, target.subpath)
      ? undefined
      : `${specifier}: ${target.name}'s exports do not declare ./${target.subpath}`;
  }
  return /^(lib|dist|src)\//.test(target.subpath)
    ? `${specifier}: inside ${target.name}'s ${target.subpath.split('/')[0]}/, which it has no exports map to declare`
    : undefined;
}

function stringOf(node: ts.Node | undefined): string | undefined {
  return node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined;
}

/** Whether the string `node` stands where a property's name does: in a list, an `in`, a property function's argument. */
function namesProperty(node: ts.Node): boolean {
  const parent = node.parent;
  if (ts.isArrayLiteralExpression(parent)) return true;
  if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.InKeyword && parent.left === node) return true;
  if (ts.isCallExpression(parent) && parent.arguments.includes(node as ts.Expression)) {
    return /(^|\.)(hasOwn|hasOwnProperty|defineProperty|getOwnPropertyDescriptor|get|set|has|deleteProperty)$/.test(
      parent.expression.getText(),
    );
  }
  return false;
}

/** Every use of a private interface in `file`, as `file:line: what`. */
function offencesIn(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8').replace(/^#!.*/, '');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS);
  const found: string[] = [];
  const report = (node: ts.Node, what: string) => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    found.push(`${path.relative(ROOT, file)}:${line}: ${what}`);
  };
  const visit = (node: ts.Node): void => {
    // Module paths: import/export ... from, import('x'), and any call's string arguments (require,
    // require.resolve, a require made by createRequire, ...).
    const modulePaths: ts.Node[] = [];
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) modulePaths.push(node.moduleSpecifier);
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) modulePaths.push(node.argument.literal);
    if (ts.isCallExpression(node)) modulePaths.push(...node.arguments);
    for (const p of modulePaths) {
      const specifier = stringOf(p);
      const why = specifier === undefined ? undefined : privateModulePath(specifier);
      if (why) report(p, `private module path ${why}`);
    }

    if (ts.isCallExpression(node)) {
      const callee = node.expression.getText(source);
      if (/(^|\.)createRequire$/.test(callee)) {
        const arg = node.arguments[0]?.getText(source);
        if (arg !== '__filename' && arg !== 'import.meta.url')
          report(node, `createRequire(${arg}): resolves from another module's location`);
      }
      if (callee === 'Symbol.for') {
        const name = stringOf(node.arguments[0]);
        if (!name?.startsWith('svcgen.'))
          report(node, `Symbol.for(${node.arguments[0]?.getText(source)}): a registered symbol not of our own`);
      }
    }
    if (
      ts.isIdentifier(node) &&
      (node.text === 'getOwnPropertySymbols' || node.text === 'ownKeys') &&
      ts.isPropertyAccessExpression(node.parent) &&
      node.parent.name === node
    ) {
      report(node, `${node.parent.getText(source)}: another object's symbols`);
    }
    const literal = stringOf(node);
    if (literal !== undefined && /^Symbol\(.+\)$/.test(literal)) report(node, `'${literal}': a symbol told by its text`);
    // A property named in a string: listed (['res', '_parsedUrl']), tested (`'_x' in o`,
    // `Object.hasOwn(o, '_x')`) or defined; element accesses (`o['_x']`) are reported below.
    if (literal !== undefined && /^_[A-Za-z]\w*$/.test(literal) && !PUBLIC_UNDERSCORE_NAMES.has(literal) && namesProperty(node)) {
      report(node, `'${literal}': names an underscore-prefixed (private) property`);
    }
    // Underscore-prefixed properties, read or written: x._name, x['_name'], and the loader's patches.
    if (ts.isPropertyAccessExpression(node) && node.name.text.startsWith('_') && !PUBLIC_UNDERSCORE_NAMES.has(node.name.text)) {
      report(node.name, `.${node.name.text}: an underscore-prefixed (private) property of ${node.expression.getText(source)}`);
    }
    if (ts.isElementAccessExpression(node)) {
      const key = stringOf(node.argumentExpression);
      if (key?.startsWith('_') && !PUBLIC_UNDERSCORE_NAMES.has(key))
        report(node, `['${key}']: an underscore-prefixed (private) property of ${node.expression.getText(source)}`);
    }
    if (ts.isPropertyAccessExpression(node) && node.name.text === 'extensions' && node.expression.getText(source) === 'require') {
      report(node, 'require.extensions: a patch of the module loader');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('public interfaces only', () => {
  const files = scannedFiles();

  it('scans the runtime, the generator, bin/ and the root scripts', () => {
    const scanned = new Set(files.map((f) => path.relative(ROOT, f)));
    for (const f of ['runtime/index.ts', 'generator/pipeline.ts', 'bin/svcgen', 'jest.config.js'])
      expect({ f, scanned: scanned.has(f) }).toEqual({ f, scanned: true });
    expect([...scanned].filter((f) => f.includes('node_modules') || f.startsWith('test/') || /(^|\/)dist\//.test(f))).toEqual([]);
  });

  it('tells private uses apart from public ones', () => {
    expect(privateModulePath('@modelcontextprotocol/sdk/server/mcp.js')).toBeUndefined();
    expect(privateModulePath('@modelcontextprotocol/sdk/types.js')).toBeUndefined();
    expect(privateModulePath('knex/lib/dialects/mysql2')).toMatch(/^knex\/lib\/dialects\/mysql2: inside knex's lib\//);
    expect(privateModulePath('router/lib/symbols')).toBeDefined();
    expect(privateModulePath('knex')).toBeUndefined();
    expect(privateModulePath('node:fs')).toBeUndefined();
    expect(privateModulePath('./dialects')).toBeUndefined();
  });

  it('uses no private interface of a dependency or of Node', () => {
    expect(files.flatMap(offencesIn)).toEqual([]);
  });
});
