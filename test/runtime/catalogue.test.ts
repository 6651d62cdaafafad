/**
 * The catalogue of built-in names is what specs may name without a hooks module; generated code
 * imports each of those names from the runtime, so the runtime must export every one of them.
 */
import * as runtime from '../../runtime';
import { BUILTIN_AUTHENTICATOR_IMPLEMENTATIONS } from '../../runtime/auth/authenticators';
import { BUILTIN_AUTHENTICATORS, BUILTIN_EXCEPTIONS, BUILTIN_PAGINATORS } from '../../runtime/core/catalogue';
import { BUILTIN_EXCEPTION_CLASSES } from '../../runtime/core/errors';
import { BUILTIN_PAGINATOR_CLASSES } from '../../runtime/query/pagination';

describe('the catalogue of built-in names', () => {
  it.each([...BUILTIN_AUTHENTICATORS, ...BUILTIN_PAGINATORS, ...BUILTIN_EXCEPTIONS])('the runtime exports %s', (name) => {
    expect(runtime).toHaveProperty(name);
  });

  it('declares one implementation per name', () => {
    expect(Object.keys(BUILTIN_AUTHENTICATOR_IMPLEMENTATIONS)).toEqual([...BUILTIN_AUTHENTICATORS]);
    expect(Object.keys(BUILTIN_PAGINATOR_CLASSES)).toEqual([...BUILTIN_PAGINATORS]);
    expect(Object.keys(BUILTIN_EXCEPTION_CLASSES)).toEqual([...BUILTIN_EXCEPTIONS]);
  });
});
