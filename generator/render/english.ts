/**
 * Words of the generated prose (comments and OpenAPI summaries), so that they read as English.
 */

export { aOrAn } from '@svcgen/runtime/catalogue';

/** `a`, `a and b`, `a, b and c`. */
export function andList(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}
