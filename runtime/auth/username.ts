/**
 * Django's username rule (UnicodeUsernameValidator, `^[\w.@+-]+\Z`): Unicode letters and digits and
 * @ . + - _, at least one character. The generated `createuser` command applies it, and services
 * apply it where users register, so every account, however made, has a name the API would accept.
 *
 * Like Django (`AbstractBaseUser.normalize_username`, the login form's `UsernameField`), a username
 * is normalised with NFKC before the rule, the uniqueness check, storing and logging in: a
 * fullwidth `ａｌｉｃｅ` or a ligature `ﬁ` is the same name as `alice` or `fi`, so a look-alike of a
 * taken name is taken.
 */
import type { ValidationEntry } from '../core/errors';

export const USERNAME_PATTERN = /^[\p{L}\p{N}_.@+-]+$/u;

/** Where a username sits in a request body, for the `loc` of a validation entry. */
const USERNAME_LOC: (string | number)[] = ['body', 'data', 'username'];

/** Django's longest username (`AbstractUser.username`'s max_length). */
export const USERNAME_MAX_LENGTH = 150;

/** The form a username is checked, stored and looked up in: NFKC. */
export function normalizeUsername(username: string): string {
  return username.normalize('NFKC');
}

/**
 * The problems of a new username under the rule, given normalised (`normalizeUsername`); empty when
 * it is acceptable. NFKC may lengthen a name (`㎒` is `MHz`): over `maxLength` characters after it
 * is a problem too, so that the column's limit is never met at the insert.
 */
export function usernameProblems(
  username: string,
  loc: (string | number)[] = USERNAME_LOC,
  maxLength: number = USERNAME_MAX_LENGTH,
): ValidationEntry[] {
  if (username.length === 0) return [{ type: 'string_too_short', loc, msg: 'String should have at least 1 character' }];
  // Counted as the schema counts (UTF-16 code units), so the two limits agree.
  if (username.length > maxLength) return [{ type: 'string_too_long', loc, msg: `String should have at most ${maxLength} characters` }];
  if (!USERNAME_PATTERN.test(username)) {
    return [{ type: 'string_pattern_mismatch', loc, msg: 'String should contain only letters, digits and @ . + - _ characters' }];
  }
  return [];
}
