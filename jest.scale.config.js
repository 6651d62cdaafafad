/**
 * `npm run test:scale`: the suites that start their own PostgreSQL clusters, PgBouncer and HAProxy
 * on this machine (test/scale/), one at a time. `npm test` leaves them out (jest.base.js ignores test/scale/).
 */
const base = require('./jest.base');

module.exports = {
  ...base,
  testMatch: ['**/test/scale/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/test/\\.tmp/'],
  maxWorkers: 1,
  testTimeout: 240000,
};
