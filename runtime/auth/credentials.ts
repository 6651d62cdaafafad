/**
 * The credentials policy of every account, however it is made (registration, a staff member's
 * create, `createuser`): the username rule (username.ts) on its NFKC form, then the password policy
 * (password.ts). Each problem is a 422 entry in the error catalogue's shape at the field's `loc`.
 */
import type { ValidationEntry } from '../core/errors';
import { passwordProblems } from './password';
import { usernameProblems, USERNAME_MAX_LENGTH } from './username';

/** The problems of a new user's credentials (the username normalised), username first; empty when both are acceptable. */
export function credentialProblems(
  username: string,
  password: string,
  options: { usernameMaxLength?: number; usernameLoc?: (string | number)[]; passwordLoc?: (string | number)[] } = {},
): ValidationEntry[] {
  return [
    ...usernameProblems(username, options.usernameLoc, options.usernameMaxLength ?? USERNAME_MAX_LENGTH),
    ...passwordProblems(password, options.passwordLoc),
  ];
}
