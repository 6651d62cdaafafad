/**
 * The generated-name check reads each generated TypeScript file's declarations: a name declared twice
 * in one scope, or declared in a function although the module imports or declares it, is a clash.
 * (test/cases/generated-name-clash shows one reported at its spec position.)
 */
import { nameClashes } from '../../generator/render/generated-names';

const check = (text: string) => nameClashes(new Map([['resources/baskets/routes.ts', text]]));

describe('nameClashes', () => {
  it('finds a constant that shadows the import it is built from', () => {
    const text = [
      "import { itemsWrites } from '../items/routes';",
      'export function basketsRoutes(service: unknown) {',
      '  const itemsWrites = itemsWrites(service);',
      '  return [itemsWrites];',
      '}',
    ].join('\n');
    expect(check(text)).toEqual([{ file: 'resources/baskets/routes.ts', name: 'itemsWrites', scope: 'basketsRoutes', kind: 'shadows' }]);
  });

  it('finds a name declared twice in a function and at the top level', () => {
    const text = [
      "import { z } from '@svcgen/runtime';",
      'export const z = 1;',
      'export function postsRoutes() {',
      '  const ListQuery = z.object({});',
      '  const { ListQuery } = { ListQuery: 1 };',
      '  return ListQuery;',
      '}',
    ].join('\n');
    expect(check(text)).toEqual([
      { file: 'resources/baskets/routes.ts', name: 'z', scope: 'module', kind: 'twice' },
      { file: 'resources/baskets/routes.ts', name: 'ListQuery', scope: 'postsRoutes', kind: 'twice' },
    ]);
  });

  it('accepts a schema and its type of one name, and a type-only import beside a value', () => {
    const text = [
      "import { type Route, z } from '@svcgen/runtime';",
      'export const BasketIn = z.object({});',
      'export type BasketIn = z.infer<typeof BasketIn>;',
      'export function basketsRoutes(): Route[] {',
      '  const itemsWriter = 1;',
      '  return [itemsWriter] as unknown as Route[];',
      '}',
    ].join('\n');
    expect(check(text)).toEqual([]);
  });
});
