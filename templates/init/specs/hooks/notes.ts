// Hooks of the notes resource: your code. `svcgen build` never touches this file;
// specs/resources/notes.yaml names the hooks it calls.
import type { HookContext, Row } from '@svcgen/runtime';

/** Before a note is saved: no surrounding spaces in its title. */
export function tidyTitle({ values }: HookContext<{ values: Row }>): void {
  if (typeof values.title === 'string') values.title = values.title.trim();
}
