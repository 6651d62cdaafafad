// ESLint over the repository's own code: the generator, the runtime, the CLI scripts and the tests;
// Prettier lays it out (.prettierrc.json; `npm run lint` checks both, `npm run format` rewrites).
// Generated code (generated/, the fixtures' and cases' outputs) is the generator's output, held by
// its golden tests and the strict compile, not linted here.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/node_modules/**',
      '**/dist/**',
      'generated/**',
      'test/fixtures/*/generated/**',
      'test/cases/*/expected/**',
      'test/.tmp/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2022, globals: { ...globals.node } },
    rules: {
      // Optional peer dependencies (the database drivers, ioredis, the MCP SDK) are loaded with
      // `require` where they are first needed, so that a service without them starts; tests load
      // built modules and fixtures the same way.
      '@typescript-eslint/no-require-imports': 'off',
      // Rows and driver results are untyped at the database boundary; `any` is kept to those places
      // by review, not by this rule.
      '@typescript-eslint/no-explicit-any': 'off',
      // Express's request type is extended by declaration merging (`declare global { namespace Express … }`).
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
      // Prettier lays out the repository's code; it puts a computed call (`request(app)[method](path)`)
      // on a line of its own, which this rule takes for an ambiguous line break (eslint-config-prettier
      // turns it off for the same reason).
      'no-unexpected-multiline': 'off',
      // A leading underscore names what is deliberately unused (a parameter a signature requires).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
    },
  },
);
