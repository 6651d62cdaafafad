// Hooks of the notes resource: your code. `svcgen build` never touches this file;
// specs/resources/notes.yaml names the hooks it calls.
import { timingSafeEqual } from 'node:crypto';
import type { Authenticator, HookContext, Row } from '@svcgen/runtime';

/** Before a note is saved: no surrounding spaces in its title. */
export function tidyTitle({ values }: HookContext<{ values: Row }>): void {
  if (typeof values.title === 'string') values.title = values.title.trim();
}

/**
 * Scripts change and delete notes with the key in the NOTES_API_KEY environment variable, sent as
 * the X-API-Key header. Without the variable no key is accepted.
 */
export const ApiKeyAuth: Authenticator = {
  name: 'ApiKeyAuth',
  async authenticate(req) {
    const key = process.env.NOTES_API_KEY;
    const sent = req.headers['x-api-key'];
    if (!key || typeof sent !== 'string' || !sameText(sent, key)) return null;
    return { id: 'notes-api-key', is_active: true, is_staff: false, is_superuser: false };
  },
};

/** Compares without leaking, through the time taken, how much of a guess was right. */
function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
