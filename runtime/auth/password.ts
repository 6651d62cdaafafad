/**
 * Password hashing with bcrypt, and the checks a password policy is made of.
 *
 * bcrypt reads at most 72 bytes of a password and silently ignores the rest, so two passwords
 * sharing their first 72 bytes would hash alike. Nothing here ever cuts a password: `hashPassword`
 * refuses a longer one (a 422 in the error catalogue's shape, never a hash of a prefix) and `verifyPassword`
 * never matches one. Services check their own policy first (see `passwordProblems`) so that the
 * client gets every problem of its body at once.
 *
 * `verifyPassword` against no stored hash still spends one comparison, so the time of a login does
 * not reveal whether the user exists.
 */
import bcrypt from 'bcrypt';
import { RequestValidationError, type ValidationEntry } from '../core/errors';

const ROUNDS = 10;
// A hash of a random string, compared against when the user is unknown.
const DUMMY_HASH = bcrypt.hashSync('svcgen-dummy-password', ROUNDS);

/** The longest password bcrypt reads entirely, in UTF-8 bytes. */
export const MAX_PASSWORD_BYTES = 72;

/** Django's default minimum length (MinimumLengthValidator), in characters. */
export const MIN_PASSWORD_LENGTH = 8;

/** Where a password sits in a request body, for the `loc` of a validation entry. */
const PASSWORD_LOC: (string | number)[] = ['body', 'data', 'password'];

export function passwordTooLongEntry(loc: (string | number)[] = PASSWORD_LOC): ValidationEntry {
  return { type: 'string_too_long', loc, msg: `String should have at most ${MAX_PASSWORD_BYTES} bytes in UTF-8` };
}

/** Whether bcrypt would read all of this password. */
export function passwordFitsBcrypt(plain: string): boolean {
  return Buffer.byteLength(plain, 'utf8') <= MAX_PASSWORD_BYTES;
}

/**
 * The problems of a new password under the policy: at least `minLength` characters (code points)
 * and at most 72 UTF-8 bytes. Empty when it is acceptable.
 */
export function passwordProblems(
  plain: string,
  loc: (string | number)[] = PASSWORD_LOC,
  minLength = MIN_PASSWORD_LENGTH,
): ValidationEntry[] {
  if ([...plain].length < minLength) {
    return [{ type: 'string_too_short', loc, msg: `String should have at least ${minLength} characters` }];
  }
  if (!passwordFitsBcrypt(plain)) return [passwordTooLongEntry(loc)];
  return [];
}

/** The bcrypt hash of a password; a password over 72 UTF-8 bytes is a 422, never cut. */
export function hashPassword(plain: string): Promise<string> {
  if (!passwordFitsBcrypt(plain)) return Promise.reject(new RequestValidationError([passwordTooLongEntry()]));
  return bcrypt.hash(plain, ROUNDS);
}

export async function verifyPassword(plain: string, hash: string | null | undefined): Promise<boolean> {
  // A password bcrypt would cut never matches; one comparison still runs, for the timing.
  const fits = passwordFitsBcrypt(plain);
  const ok = await bcrypt.compare(plain, (fits && hash) || DUMMY_HASH);
  return ok && fits && hash !== null && hash !== undefined && hash !== '';
}
