/**
 * What every jest configuration of the repository shares (jest.config.js's projects, and
 * jest.scale.config.js and jest.pgbouncer.config.js for `npm run test:scale`): TypeScript through
 * ts-jest (transpile only; `npm run typecheck` checks types), one suite per file. Generated code
 * imports the runtime as `@svcgen/runtime` (linked to runtime/ by the npm workspace), which resolves
 * here to its sources through the `@svcgen/source` condition of its exports.
 */
module.exports = {
  rootDir: __dirname,
  preset: 'ts-jest',
  testEnvironment: 'node',
  testMatch: ['**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/test/\\.tmp/', '/test/scale/'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    // jose is published as ES modules only: compiled to CommonJS for jest's module system.
    '/node_modules/jose/.+\\.js$': [
      'ts-jest',
      { tsconfig: { allowJs: true, module: 'commonjs', target: 'ES2022', isolatedModules: true } },
    ],
  },
  transformIgnorePatterns: ['/node_modules/(?!jose/)'],
  setupFiles: ['<rootDir>/test/support/quiet-logs.ts'],
  testEnvironmentOptions: { customExportConditions: ['@svcgen/source', 'node', 'node-addons'] },
  testTimeout: 30000,
};
