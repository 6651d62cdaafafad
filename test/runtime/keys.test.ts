/**
 * Key handling: files from the environment; a development pair generated once and reused;
 * refusal without keys in production; the keys checked as a pair (a probe signed and verified),
 * every refusal one line.
 */
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ConfigurationError } from '../../runtime';
import { checkKeyPair, generateKeyPair, loadKeys } from '../../runtime/auth/tokens';
import { otherKeys, testKeys } from '../support/keys';

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'svcgen-keys-'));
}

describe('loadKeys', () => {
  it('generates a 2048-bit development pair once, with a warning, and reuses it', async () => {
    const dir = path.join(tempDir(), 'keys');
    const warnings: string[] = [];
    const first = await loadKeys({ devKeysDir: dir, production: false, warn: (m) => warnings.push(m) });
    expect(first.privateKey).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(fs.statSync(path.join(dir, 'jwt-private.pem')).mode & 0o077).toBe(0);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/generated a development RSA key pair/);
    const second = await loadKeys({ devKeysDir: dir, production: false, warn: (m) => warnings.push(m) });
    expect(second).toEqual(first);
    expect(warnings).toHaveLength(1);
  });

  it('refuses to start in production without key files', async () => {
    await expect(loadKeys({ devKeysDir: tempDir(), production: true })).rejects.toThrow(ConfigurationError);
    await expect(loadKeys({ devKeysDir: tempDir(), production: true })).rejects.toThrow(/SVC_JWT_PRIVATE_KEY_FILE/);
  });

  it('reads both PEM files when given, and refuses only one of them', async () => {
    const dir = tempDir();
    const pair = generateKeyPair();
    fs.writeFileSync(path.join(dir, 'private.pem'), pair.privateKey);
    fs.writeFileSync(path.join(dir, 'public.pem'), pair.publicKey);
    const keys = await loadKeys({
      privateKeyFile: path.join(dir, 'private.pem'),
      publicKeyFile: path.join(dir, 'public.pem'),
      devKeysDir: path.join(dir, 'unused'),
      production: true,
    });
    expect(keys).toEqual(pair);
    expect(fs.existsSync(path.join(dir, 'unused'))).toBe(false);
    await expect(loadKeys({ privateKeyFile: path.join(dir, 'private.pem'), devKeysDir: dir, production: false })).rejects.toThrow(/both/);
  });

  describe('the keys are checked as a pair, each problem a one-line configuration error', () => {
    const dir = tempDir();
    const write = (name: string, text: string | Buffer) => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, text);
      return file;
    };
    const load = (privateKeyFile: string, publicKeyFile: string) => () =>
      loadKeys({ privateKeyFile, publicKeyFile, devKeysDir: path.join(dir, 'unused'), production: true });
    const refusal = async (attempt: () => Promise<unknown>): Promise<string> => {
      try {
        await attempt();
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigurationError);
        const message = (err as Error).message;
        expect(message).not.toContain('\n');
        return message;
      }
      throw new Error('not refused');
    };
    const ecPrivate = crypto
      .generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;

    it('a matching pair is accepted', async () => {
      const privateFile = write('ok-private.pem', testKeys().privateKey);
      const publicFile = write('ok-public.pem', testKeys().publicKey);
      expect(await load(privateFile, publicFile)()).toEqual(testKeys());
    });

    it.each([
      [
        'the public key given as the private key',
        () => [write('pub-as-priv.pem', testKeys().publicKey), write('p1.pem', testKeys().publicKey)],
        /^SVC_JWT_PRIVATE_KEY_FILE \(.*pub-as-priv\.pem\) is not a PEM private key \(it holds a public key\): /,
      ],
      [
        'keys of two different pairs',
        () => [write('mine.pem', testKeys().privateKey), write('theirs.pem', otherKeys().publicKey)],
        /^SVC_JWT_PRIVATE_KEY_FILE \(.*mine\.pem\) and SVC_JWT_PUBLIC_KEY_FILE \(.*theirs\.pem\) are not a pair: a probe signed with the private key does not verify with the public key$/,
      ],
      [
        'a public key file that is not PEM',
        () => [write('p2.pem', testKeys().privateKey), write('garbage.pem', 'not a key at all\n')],
        /^SVC_JWT_PUBLIC_KEY_FILE \(.*garbage\.pem\) is not a PEM public key: /,
      ],
      [
        'a private key file that is not PEM',
        () => [write('binary.der', crypto.randomBytes(64)), write('p3.pem', testKeys().publicKey)],
        /^SVC_JWT_PRIVATE_KEY_FILE \(.*binary\.der\) is not a PEM private key: /,
      ],
      [
        'an empty public key file',
        () => [write('p4.pem', testKeys().privateKey), write('empty.pem', '')],
        /^SVC_JWT_PUBLIC_KEY_FILE \(.*empty\.pem\) is not a PEM public key: /,
      ],
      [
        'an EC key where RS256 needs RSA',
        () => [write('ec.pem', ecPrivate), write('p5.pem', testKeys().publicKey)],
        /^SVC_JWT_PRIVATE_KEY_FILE \(.*ec\.pem\) is a ec key; RS256 needs an RSA key$/,
      ],
      [
        'a private key file that does not exist',
        () => [path.join(dir, 'missing.pem'), write('p6.pem', testKeys().publicKey)],
        /^SVC_JWT_PRIVATE_KEY_FILE: cannot read .*missing\.pem: ENOENT: no such file or directory$/,
      ],
      [
        'a public key file that is a directory',
        () => [write('p7.pem', testKeys().privateKey), dir],
        /^SVC_JWT_PUBLIC_KEY_FILE: cannot read .*: EISDIR: illegal operation on a directory, read$/,
      ],
    ] as const)('%s', async (_what, files, message) => {
      const [privateFile, publicFile] = files();
      expect(await refusal(load(privateFile, publicFile))).toMatch(message);
    });

    // Root reads any file: there, the missing file and the directory above stand for it.
    (process.getuid?.() === 0 ? it.skip : it)('a file the process may not read', async () => {
      const secret = write('unreadable.pem', testKeys().privateKey);
      fs.chmodSync(secret, 0o000);
      expect(await refusal(load(secret, write('p8.pem', testKeys().publicKey)))).toMatch(
        /^SVC_JWT_PRIVATE_KEY_FILE: cannot read .*unreadable\.pem: EACCES: permission denied$/,
      );
    });

    it('a development pair that was replaced by keys of another pair is refused too', async () => {
      const devDir = path.join(tempDir(), 'keys');
      await loadKeys({ devKeysDir: devDir, production: false, warn: () => {} });
      fs.writeFileSync(path.join(devDir, 'jwt-public.pem'), otherKeys().publicKey);
      expect(await refusal(() => loadKeys({ devKeysDir: devDir, production: false }))).toMatch(
        /jwt-private\.pem and .*jwt-public\.pem are not a pair/,
      );
    });

    it('checkKeyPair on key texts', async () => {
      expect(await checkKeyPair(testKeys())).toBe(testKeys());
      expect(await refusal(() => checkKeyPair({ privateKey: testKeys().privateKey, publicKey: otherKeys().publicKey }))).toMatch(
        /are not a pair/,
      );
    });
  });
});
