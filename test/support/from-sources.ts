/**
 * The Node flags that run the checkout's TypeScript sources in a child process: tsx transpiles
 * them on load, and the `@svcgen/source` condition resolves `@svcgen/runtime` and its subpaths to
 * the runtime's sources (runtime/package.json's `exports`). Given explicitly: children often run
 * with `NODE_OPTIONS` cleared.
 */
export const FROM_SOURCES: readonly string[] = ['--conditions=@svcgen/source', '--require', require.resolve('tsx/cjs')];
