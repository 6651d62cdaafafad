/**
 * Jest for `npm test`: every test file of test/ (but test/scale/, `npm run test:scale`), each in
 * exactly one of three projects, so that a part can be run alone (`jest --selectProjects unit`):
 *
 * - `unit` (`npm run test:unit`, under a minute): the architecture, the generator's model,
 *   validation, filters and pipeline, and the runtime's pure parts. No database server, no spawned
 *   process, no listening socket; temporary folders and SQLite files are fine.
 * - `cases` (`npm run test:cases`): the golden case folders of test/cases.
 * - `service`: everything else; the databases, HTTP servers, spawned commands and browsers.
 *
 * The shared options are in jest.base.js. test/architecture/test-commands.test.ts fails when a test
 * file is in none of the projects or in two. See docs/internals/testing.md.
 */
const base = require('./jest.base');

/** The unit project, file by file: a file belongs here when it is fast and opens nothing. */
const UNIT = [
  'test/architecture/catalogues.test.ts',
  'test/architecture/contract.test.ts',
  'test/architecture/docs-code.test.ts',
  'test/architecture/docs-links.test.ts',
  'test/architecture/public-interfaces.test.ts',
  'test/architecture/test-commands.test.ts',
  'test/docs/tutorial-doc.test.ts',
  'test/generator/access-test.test.ts',
  'test/generator/api-params.test.ts',
  'test/generator/compose.test.ts',
  'test/generator/filters.test.ts',
  'test/generator/format.test.ts',
  'test/generator/generated-names.test.ts',
  'test/generator/hook-exports.test.ts',
  'test/generator/hook-imports.test.ts',
  'test/generator/ignore.test.ts',
  'test/generator/migration-indexes.test.ts',
  'test/generator/migration-lists.test.ts',
  'test/generator/model.test.ts',
  'test/generator/pipeline.test.ts',
  'test/generator/validate.test.ts',
  'test/runtime/catalogue.test.ts',
  'test/runtime/convert.test.ts',
  'test/runtime/keys.test.ts',
  'test/runtime/match-case.test.ts',
  'test/runtime/mcp.test.ts',
  'test/runtime/nested.test.ts',
  'test/runtime/openapi-schema.test.ts',
  'test/runtime/password.test.ts',
  'test/runtime/resource-route.test.ts',
  'test/runtime/token-verify.test.ts',
  'test/runtime/validation.test.ts',
];

/** The golden cases project. */
const CASES = ['test/generator/cases.test.ts'];

/** An ignore pattern for exactly one file of the repository. */
const only = (file) => `<rootDir>/${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;

module.exports = {
  // Read from the top level in a run of several projects; each project has it from jest.base.js too.
  testTimeout: base.testTimeout,
  projects: [
    { ...base, displayName: 'unit', testMatch: UNIT.map((f) => `<rootDir>/${f}`) },
    { ...base, displayName: 'cases', testMatch: CASES.map((f) => `<rootDir>/${f}`) },
    { ...base, displayName: 'service', testPathIgnorePatterns: [...base.testPathIgnorePatterns, ...[...UNIT, ...CASES].map(only)] },
  ],
};
