// The blog's credentials policy, shared by registration (hooks/auth.ts) and by staff creating users
// (hooks/users.ts). User-owned: `svcgen build` never touches this file.
//
// - username: normalised with NFKC by the callers (the runtime's `normalizeUsername`, as Django does),
//   then 1 to 150 characters (the schema's max_length, again after NFKC), only letters, digits and
//   @ . + - _ (Django's UnicodeUsernameValidator: the runtime's `usernameProblems`, which `createuser`
//   applies too);
// - password: at least 8 characters (Django's MinimumLengthValidator default) and at most 72 bytes
//   in UTF-8, all that bcrypt reads: a longer password is refused, never cut.
//
// Every problem is a 422 entry in the seed's shape, at the field's `loc`.
import { passwordProblems, usernameProblems, type ValidationEntry } from '@svcgen/runtime';

/** The problems of a new user's credentials (the username normalised), username first; empty when both are acceptable. */
export function credentialProblems(username: string, password: string): ValidationEntry[] {
  return [...usernameProblems(username), ...passwordProblems(password)];
}
