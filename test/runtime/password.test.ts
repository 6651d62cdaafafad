/**
 * The password pieces of the runtime: bcrypt reads 72 bytes at most, so a longer password is
 * refused (422 in the seed's shape) rather than hashed on a prefix, and never matches; the policy
 * checks count characters for the minimum and UTF-8 bytes for the maximum.
 */
import bcrypt from 'bcrypt';
import { hashPassword, passwordFitsBcrypt, passwordProblems, RequestValidationError, verifyPassword } from '../../runtime';
import { MAX_PASSWORD_BYTES } from '../../runtime/auth/password';

const LOC = ['body', 'data', 'password'];
const TOO_LONG = { type: 'string_too_long', loc: LOC, msg: 'String should have at most 72 bytes in UTF-8' };

describe('password policy', () => {
  it('at least 8 characters, counted as characters (code points), not bytes', () => {
    expect(passwordProblems('')).toEqual([{ type: 'string_too_short', loc: LOC, msg: 'String should have at least 8 characters' }]);
    expect(passwordProblems('1234567')).toEqual([{ type: 'string_too_short', loc: LOC, msg: 'String should have at least 8 characters' }]);
    expect(passwordProblems('12345678')).toEqual([]);
    // Seven emoji are 28 bytes but 7 characters.
    expect(passwordProblems('😀'.repeat(7))).toHaveLength(1);
    expect(passwordProblems('😀'.repeat(8))).toEqual([]);
  });

  it('at most 72 bytes in UTF-8', () => {
    expect(MAX_PASSWORD_BYTES).toBe(72);
    expect(passwordProblems('a'.repeat(72))).toEqual([]);
    expect(passwordProblems('a'.repeat(73))).toEqual([TOO_LONG]);
    // 24 euro signs: 24 characters, 72 bytes; 25: 75 bytes.
    expect(passwordProblems('€'.repeat(24))).toEqual([]);
    expect(passwordProblems('€'.repeat(25))).toEqual([TOO_LONG]);
    expect(passwordFitsBcrypt('€'.repeat(25))).toBe(false);
    expect(passwordProblems('x', ['body', 'secret'], 1)).toEqual([]);
  });
});

describe('hashPassword and verifyPassword', () => {
  it('hash and verify a password up to 72 bytes', async () => {
    const password = 'p'.repeat(71) + 'q';
    const hash = await hashPassword(password);
    expect(await verifyPassword(password, hash)).toBe(true);
    expect(await verifyPassword('p'.repeat(72), hash)).toBe(false);
  });

  it('refuse to hash a longer password instead of cutting it', async () => {
    const error = await hashPassword('a'.repeat(73)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).status_code).toBe(422);
    expect((error as RequestValidationError).body()).toEqual({ detail: [TOO_LONG] });
  });

  it('never match a longer password, even against a hash of its first 72 bytes', async () => {
    const prefix = 'k'.repeat(72);
    const legacy = await bcrypt.hash(prefix, 4);
    // bcrypt itself would accept it: that is the silent cut refused here.
    expect(await bcrypt.compare(`${prefix}anything`, legacy)).toBe(true);
    expect(await verifyPassword(`${prefix}anything`, legacy)).toBe(false);
    expect(await verifyPassword(prefix, legacy)).toBe(true);
  });

  it('no stored hash never matches', async () => {
    expect(await verifyPassword('whatever1', undefined)).toBe(false);
    expect(await verifyPassword('whatever1', null)).toBe(false);
    expect(await verifyPassword('whatever1', '')).toBe(false);
  });
});
