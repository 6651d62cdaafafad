/**
 * Key handling: files from the environment; a development pair generated once and reused;
 * refusal without keys in production.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigurationError } from '../../runtime';
import { generateKeyPair, loadKeys } from '../../runtime/auth/tokens';

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-keys-'));
}

describe('loadKeys', () => {
  it('generates a 2048-bit development pair once, with a warning, and reuses it', () => {
    const dir = path.join(tempDir(), 'keys');
    const warnings: string[] = [];
    const first = loadKeys({ devKeysDir: dir, production: false, warn: (m) => warnings.push(m) });
    expect(first.privateKey).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(fs.statSync(path.join(dir, 'jwt-private.pem')).mode & 0o077).toBe(0);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/generated a development RSA key pair/);
    const second = loadKeys({ devKeysDir: dir, production: false, warn: (m) => warnings.push(m) });
    expect(second).toEqual(first);
    expect(warnings).toHaveLength(1);
  });

  it('refuses to start in production without key files', () => {
    expect(() => loadKeys({ devKeysDir: tempDir(), production: true })).toThrow(ConfigurationError);
    expect(() => loadKeys({ devKeysDir: tempDir(), production: true })).toThrow(/SVC_JWT_PRIVATE_KEY_FILE/);
  });

  it('reads both PEM files when given, and refuses only one of them', () => {
    const dir = tempDir();
    const pair = generateKeyPair();
    fs.writeFileSync(path.join(dir, 'private.pem'), pair.privateKey);
    fs.writeFileSync(path.join(dir, 'public.pem'), pair.publicKey);
    const keys = loadKeys({
      privateKeyFile: path.join(dir, 'private.pem'),
      publicKeyFile: path.join(dir, 'public.pem'),
      devKeysDir: path.join(dir, 'unused'),
      production: true,
    });
    expect(keys).toEqual(pair);
    expect(fs.existsSync(path.join(dir, 'unused'))).toBe(false);
    expect(() => loadKeys({ privateKeyFile: path.join(dir, 'private.pem'), devKeysDir: dir, production: false })).toThrow(/both/);
  });
});
