// The blog's credentials policy, shared by registration (hooks/auth.ts) and by staff creating users
// (hooks/users.ts). User-owned: `svcgen build` never touches this file.
//
// - username: 1 to 150 characters (the schema's max_length), only letters, digits and @ . + - _
//   (Django's UnicodeUsernameValidator: `^[\w.@+-]+\Z` with Unicode letters and digits);
// - password: at least 8 characters (Django's MinimumLengthValidator default) and at most 72 bytes
//   in UTF-8, all that bcrypt reads: a longer password is refused, never cut.
//
// Every problem is a 422 entry in the seed's shape, at the field's `loc`.
import { passwordProblems, type ValidationEntry } from 'svcgen/runtime';

/** Django's username characters: Unicode letters and digits, and @ . + - _ */
export const USERNAME_PATTERN = /^[\p{L}\p{N}_.@+-]+$/u;

export function usernameProblems(username: string): ValidationEntry[] {
  const loc = ['body', 'data', 'username'];
  if (username.length === 0) return [{ type: 'string_too_short', loc, msg: 'String should have at least 1 character' }];
  if (!USERNAME_PATTERN.test(username)) {
    return [{ type: 'string_pattern_mismatch', loc, msg: 'String should contain only letters, digits and @ . + - _ characters' }];
  }
  return [];
}

/** The problems of a new user's credentials, username first; empty when both are acceptable. */
export function credentialProblems(username: string, password: string): ValidationEntry[] {
  return [...usernameProblems(username), ...passwordProblems(password)];
}
