/**
 * Part of `npm run test:scale`: the blog's HTTP suites on PostgreSQL, their services connected
 * through PgBouncer in transaction mode (test/scale/pgbouncer/setup.ts starts it and stops it), so
 * that nothing the runtime does needs a session a transaction pooler would not keep.
 */
const base = require('./jest.base');

module.exports = {
  ...base,
  testMatch: ['**/test/http/**/*.test.ts'],
  globalSetup: '<rootDir>/test/scale/pgbouncer/setup.ts',
  globalTeardown: '<rootDir>/test/scale/pgbouncer/teardown.ts',
};
