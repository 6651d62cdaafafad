/**
 * Type-checking a file of the client tests with the TypeScript compiler API, under the
 * repository's strict options, from text that need not be on disk.
 */
import * as path from 'node:path';
import ts from 'typescript';

export const ROOT = path.resolve(__dirname, '..', '..');

function compilerOptions(): ts.CompilerOptions {
  const config = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  return { ...ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT).options, noEmit: true };
}

/** The diagnostics of `text` compiled as `file`, each `path:line: TSxxxx message` (path from the repository, lines from 1). */
export function diagnostics(file: string, text: string): string[] {
  const options = compilerOptions();
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const isFile = (name: string) => path.resolve(name) === file;
  host.getSourceFile = (name, language, ...rest) =>
    isFile(name) ? ts.createSourceFile(name, text, language, true) : getSourceFile(name, language, ...rest);
  host.readFile = (name) => (isFile(name) ? text : readFile(name));
  host.fileExists = (name) => isFile(name) || fileExists(name);
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where =
      d.file && d.start !== undefined
        ? `${path.relative(ROOT, d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}`
        : '-';
    return `${where}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}
