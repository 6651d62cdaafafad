'use strict';
// `require('svcgen/register')` (or `node -r svcgen/register main.ts`) lets Node load TypeScript: the
// runtime and a project's generated code and hooks are transpiled on load, one file at a time
// (`npm run typecheck` checks the types). Projects made by `svcgen init` use it to run without a
// build step, and to import the runtime as `svcgen/runtime` (node_modules/svcgen/runtime/index.ts).
const fs = require('node:fs');

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
