/**
 * Password hashing with bcrypt. `verifyPassword` against no stored hash still spends one
 * comparison, so the time of a login does not reveal whether the user exists.
 */
import bcrypt from 'bcrypt';

const ROUNDS = 10;
// A hash of a random string, compared against when the user is unknown.
const DUMMY_HASH = bcrypt.hashSync('svcgen-dummy-password', ROUNDS);

export function hashPassword(plain: string): Promise<string> {
  return bcrypt.hash(plain, ROUNDS);
}

export async function verifyPassword(plain: string, hash: string | null | undefined): Promise<boolean> {
  const ok = await bcrypt.compare(plain, hash ?? DUMMY_HASH);
  return ok && hash !== null && hash !== undefined;
}
