/**
 * The one Prettier configuration of generated TypeScript. Every layout option is spelled out, so the
 * output depends neither on Prettier's defaults nor on a `.prettierrc` near the specs or the output
 * (none is read). Prettier itself is pinned to one exact version in package.json; changing either
 * changes the bytes of every generated file, so regenerate the goldens with it.
 */
import type { Options } from 'prettier';

export const PRETTIER_CONFIG = {
  // Babel's TypeScript parser: for the code svcgen generates it gives the same output as the
  // `typescript` parser, and it starts faster (formatting is most of a build's time).
  parser: 'babel-ts',
  printWidth: 120,
  tabWidth: 2,
  useTabs: false,
  semi: true,
  singleQuote: true,
  jsxSingleQuote: false,
  quoteProps: 'as-needed',
  trailingComma: 'all',
  bracketSpacing: true,
  bracketSameLine: false,
  objectWrap: 'preserve',
  arrowParens: 'always',
  experimentalTernaries: false,
  experimentalOperatorPosition: 'end',
  endOfLine: 'lf',
} as const satisfies Options;
