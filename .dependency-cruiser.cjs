/**
 * The dependency rules of svcgen's two packages, checked by dependency-cruiser
 * (test/architecture/dependencies.test.ts runs it, and probes each rule):
 * - the runtime's layers, and the one direction its imports go: http → operations → auth → query →
 *   validation → db → core, never back; the contract (`runtime/index.ts`) above them all, never
 *   imported from inside; nothing outside the runtime imported by it;
 * - the generator's stages, in the order a build runs them: load → validate (the specs against the
 *   spec language) → model → access, migrate and api (the gates) → render → output, then the
 *   commands (`cli/`, `pipeline.ts`);
 *   a stage imports the stages before it, never one after; `package-root.ts` (where the package
 *   is) may be imported from anywhere;
 * - the generator reaches the runtime through the entry points its package exports only;
 * - no circle of imports in either package.
 * Type-only imports count: a stage that needs a later stage's types depends on it.
 * What breaks these rules today is listed in .dependency-cruiser-known-violations.json, which may
 * only shrink (the test fails on anything new, and on an entry that is gone).
 */
const LAYERS = {
  core: [],
  db: ['core'],
  validation: ['core'],
  query: ['core', 'db', 'validation'],
  auth: ['core', 'db', 'validation'],
  operations: ['core', 'db', 'validation', 'query', 'auth'],
  http: ['core', 'db', 'validation', 'query', 'auth', 'operations'],
};

/** The runtime's public entry points, as its package's `exports` map declares them (their sources). */
const ENTRY_POINTS = Object.values(require('./runtime/package.json').exports)
  .map((entry) => (typeof entry === 'object' && entry['@svcgen/source']) || undefined)
  .filter(Boolean)
  .map((file) => `runtime/${file.replace(/^\.\//, '')}`);

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const STAGES = ['load', 'validate', 'model', 'access', 'migrate', 'api', 'render', 'output', 'cli'];

const layerRules = Object.entries(LAYERS).map(([layer, allowed]) => ({
  name: `runtime-layer-${layer}`,
  comment: `runtime/${layer} imports only ${allowed.length ? allowed.join(', ') : 'nothing of the other layers'} (and itself)`,
  severity: 'error',
  from: { path: `^runtime/${layer}/` },
  to: { path: `^runtime/(?!(?:${[layer, ...allowed].join('|')})/)[^/]+/` },
}));

const stageRules = STAGES.slice(0, -1).map((stage, i) => ({
  name: `generator-stage-${stage}`,
  comment: `generator/${stage} imports only the stages before it (${STAGES.slice(0, i).join(', ') || 'none'})`,
  severity: 'error',
  from: { path: `^generator/${stage}/` },
  to: { path: `^generator/(?:(?:${STAGES.slice(i + 1).join('|')})/|pipeline\\.ts$)` },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'runtime-contract-from-inside',
      comment: 'the contract (runtime/index.ts) is what others import; the layers import each other directly',
      severity: 'error',
      from: { path: `^runtime/(?:${Object.keys(LAYERS).join('|')})/` },
      to: { path: '^runtime/index\\.ts$' },
    },
    {
      name: 'runtime-outside',
      comment: 'the runtime is a package of its own: it imports nothing of the repository outside runtime/',
      severity: 'error',
      from: { path: '^runtime/' },
      to: { path: '^(?!runtime/|node_modules/)', dependencyTypesNot: ['core'] },
    },
    ...stageRules,
    {
      name: 'generator-runtime-internals',
      comment:
        'the generator uses the runtime through the entry points its package exports only (@svcgen/runtime, @svcgen/runtime/catalogue, …)',
      severity: 'error',
      from: { path: '^generator/' },
      to: { path: `^runtime/(?!(?:${ENTRY_POINTS.map((f) => escape(f.slice('runtime/'.length))).join('|')})$)` },
    },
    {
      name: 'no-circular',
      comment: 'no circle of imports',
      severity: 'error',
      from: { path: '^(?:runtime|generator)/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['@svcgen/source', 'require', 'node', 'default'] },
  },
};
