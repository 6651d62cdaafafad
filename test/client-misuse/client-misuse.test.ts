/**
 * The generated client's types refuse wrong calls: `blog.ts` compiles as it is under the
 * repository's strict options, and without its `// @ts-expect-error TSxxxx` lines it fails with
 * exactly the errors those lines name, each on the line below its directive, and no other.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '..', '..');
const FILE = path.join(__dirname, 'blog.ts');
const DIRECTIVE = /^\s*\/\/ @ts-expect-error (TS\d+) (.+)$/;

function compilerOptions(): ts.CompilerOptions {
  const config = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  return { ...ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT).options, noEmit: true };
}

/** The diagnostics of `text` compiled as FILE: `line: TSxxxx message`, lines from 1. */
function diagnostics(text: string): string[] {
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    path.resolve(name) === FILE ? ts.createSourceFile(name, text, language, true) : getSourceFile(name, language, ...rest);
  host.readFile = ((readFile) => (name: string) => (path.resolve(name) === FILE ? text : readFile(name)))(host.readFile.bind(host));
  const program = ts.createProgram([FILE], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? `${path.relative(ROOT, d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}` : '-';
    return `${where}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}

describe('misuse of the generated client', () => {
  const text = fs.readFileSync(FILE, 'utf8');
  const lines = text.split('\n');
  const expected = lines.flatMap((line, i) => {
    const m = DIRECTIVE.exec(line);
    return m ? [{ line: i + 2, code: m[1], why: m[2] }] : [];
  });

  it('names misuses of each kind: unknown and misspelt fields, wrong types, missing fields, missing members', () => {
    expect(new Set(expected.map((e) => e.code))).toEqual(new Set(['TS2353', 'TS2561', 'TS2322', 'TS2345', 'TS2339', 'TS2349']));
  });

  it('compiles as it is: every directive is used, and the right calls are right', () => {
    expect(diagnostics(text)).toEqual([]);
  });

  it('without the directives, fails with exactly the errors they name', () => {
    const stripped = lines.map((line) => (DIRECTIVE.test(line) ? '' : line)).join('\n');
    const found = diagnostics(stripped);
    const file = path.relative(ROOT, FILE);
    expect(found.map((d) => d.replace(/^([^ ]+ TS\d+) .*$/, '$1'))).toEqual(expected.map((e) => `${file}:${e.line}: ${e.code}`));
  });
});
