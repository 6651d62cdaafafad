/**
 * Jest: TypeScript through ts-jest (transpile only; `npm run typecheck` checks types), one suite per
 * file. Generated code imports the runtime as `svcgen/runtime`, which resolves here to its sources.
 */
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  testMatch: ['**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/test/\\.tmp/'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  setupFiles: ['<rootDir>/test/support/quiet-logs.ts'],
  moduleNameMapper: { '^svcgen/runtime$': '<rootDir>/runtime/index.ts' },
  testTimeout: 30000,
};
