'use strict';
// For working on svcgen in its checkout (not part of either package): `node -r ./register.js
// generated/main.ts` runs the blog from its TypeScript sources, transpiled on load (`npm run
// typecheck` checks the types), with `@svcgen/runtime` and its subpaths resolved to the runtime's
// sources instead of its compiled runtime/dist: each entry of runtime/package.json's `exports`
// names its source under the `@svcgen/source` condition, which tsc (customConditions) and jest
// (customExportConditions) follow too. The test of the service's lifecycle, `npm run update:cases`
// and bin/svcgen in a checkout use it. Projects made by `svcgen init` compile their code with tsc.
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');

const RUNTIME = path.join(__dirname, 'runtime');
const RUNTIME_PACKAGE = '@svcgen/runtime';

/** The source file of `@svcgen/runtime` or one of its subpaths; undefined for any other request. */
function runtimeSource(request) {
  if (request !== RUNTIME_PACKAGE && !request.startsWith(`${RUNTIME_PACKAGE}/`)) return undefined;
  const { exports } = require('./runtime/package.json');
  const source = exports[`.${request.slice(RUNTIME_PACKAGE.length)}`]?.['@svcgen/source'];
  return source && path.join(RUNTIME, source);
}

if (!require.extensions['.ts']) {
  let ts;
  require.extensions['.ts'] = function loadTypeScript(module, filename) {
    ts ??= require('typescript');
    const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), {
      fileName: filename,
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        esModuleInterop: true,
        inlineSourceMap: true,
      },
    });
    module._compile(outputText, filename);
  };
}

if (!Module._resolveFilename.resolvesRuntimeSources) {
  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function resolveRuntimeSource(request, ...rest) {
    return resolveFilename.call(this, runtimeSource(request) ?? request, ...rest);
  };
  Module._resolveFilename.resolvesRuntimeSources = true;
}
