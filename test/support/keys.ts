/**
 * One RSA key pair per test process (generating one takes a moment), and a second "other" pair
 * for tokens signed with a key the service does not trust.
 */
import { type KeyPair } from '../../runtime';
import { generateKeyPair } from '../../runtime/auth/tokens';

let keys: KeyPair | undefined;
let other: KeyPair | undefined;

export function testKeys(): KeyPair {
  keys ??= generateKeyPair();
  return keys;
}

export function otherKeys(): KeyPair {
  other ??= generateKeyPair();
  return other;
}
