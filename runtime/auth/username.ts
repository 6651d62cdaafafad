/**
 * Django's username rule (UnicodeUsernameValidator, `^[\w.@+-]+\Z`): Unicode letters and digits and
 * @ . + - _, at least one character. The generated `createuser` command applies it, and services
 * apply it where users register, so every account, however made, has a name the API would accept.
 */
import type { ValidationEntry } from '../core/errors';

export const USERNAME_PATTERN = /^[\p{L}\p{N}_.@+-]+$/u;

/** Where a username sits in a request body, for the `loc` of a validation entry. */
const USERNAME_LOC: (string | number)[] = ['body', 'data', 'username'];

/** The problems of a new username under the rule; empty when it is acceptable. */
export function usernameProblems(username: string, loc: (string | number)[] = USERNAME_LOC): ValidationEntry[] {
  if (username.length === 0) return [{ type: 'string_too_short', loc, msg: 'String should have at least 1 character' }];
  if (!USERNAME_PATTERN.test(username)) {
    return [{ type: 'string_pattern_mismatch', loc, msg: 'String should contain only letters, digits and @ . + - _ characters' }];
  }
  return [];
}
