'use strict';
// For working on svcgen in its checkout (not part of the package): `node -r ./register.js
// generated/main.ts` runs the blog from its TypeScript sources, transpiled on load (`npm run
// typecheck` checks the types), with `svcgen/runtime` resolved to runtime/index.ts instead of the
// compiled dist/runtime. The test of the service's lifecycle and `npm run update:cases` use it.
// Projects made by `svcgen init` compile their code with tsc instead.
const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');

const RUNTIME_SOURCE = path.join(__dirname, 'runtime', 'index.ts');

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
  const resolveFilename = Module._resolveFilename;
  Module._resolveFilename = function resolveRuntimeSource(request, ...rest) {
    return resolveFilename.call(this, request === 'svcgen/runtime' ? RUNTIME_SOURCE : request, ...rest);
  };
}
