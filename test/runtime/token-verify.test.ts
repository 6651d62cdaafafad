/**
 * TokenService.verify against jose's `jwtVerify` with its defaults (RS256 only, the service's
 * issuer and audience): for every token below, both accept it or both refuse it, except where the
 * service is stricter (it requires `exp` and a non-empty `sub`, and bounds `iat`); and a refusal
 * for an expired token alone is `expired`, every other one `invalid`.
 */
import * as crypto from 'node:crypto';
import { jwtVerify } from 'jose';
import { loadSettings, TokenError, TokenService } from '../../runtime';
import { VERIFIED_TOKEN_MAX_LENGTH, VERIFIED_TOKENS_KEPT } from '../../runtime/auth/tokens';
import { otherKeys, testKeys } from '../support/keys';

const { DEFAULT_SETTINGS } = require('../../generated/settings');

const settings = loadSettings(DEFAULT_SETTINGS, {});
const ISSUER = settings.SVC_JWT_ISSUER;
const AUDIENCE = settings.SVC_JWT_AUDIENCE;
const tokens = new TokenService(testKeys(), settings);
const now = () => Math.floor(Date.now() / 1000);
const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** A token of `header` and `payload` (objects, or JSON text) signed RS256 with `key`. */
function signed(header: unknown, payload: unknown, key = testKeys().privateKey): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${crypto.sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}

/** The algorithm-confusion attack: HS256 with the public key PEM as the HMAC secret. */
function hs256(payload: unknown, secret: string): string {
  const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(payload)}`;
  return `${input}.${crypto.createHmac('sha256', secret).update(input).digest('base64url')}`;
}

const claims = (extra: Record<string, unknown> = {}) => ({ sub: '7', iss: ISSUER, aud: AUDIENCE, iat: now(), exp: now() + 600, ...extra });
const RS256 = { alg: 'RS256', typ: 'JWT' };

async function joseAccepts(token: string): Promise<boolean> {
  try {
    await jwtVerify(token, crypto.createPublicKey(testKeys().publicKey), { algorithms: ['RS256'], issuer: ISSUER, audience: AUDIENCE });
    return true;
  } catch {
    return false;
  }
}

async function outcome(token: string): Promise<'valid' | 'expired' | 'invalid'> {
  try {
    await tokens.verify(token);
    return 'valid';
  } catch (err) {
    if (!(err instanceof TokenError)) throw err;
    return err.reason;
  }
}

const good = signed(RS256, claims());
const [goodHeader, goodPayload, goodSignature] = good.split('.');

/** [case, token, what the service answers, whether jose's defaults accept it] */
const cases: [string, string | Promise<string>, 'valid' | 'expired' | 'invalid', boolean][] = [
  ['a valid token', good, 'valid', true],
  ['one issued by TokenService', tokens.issueAccess(7), 'valid', true],
  ['an audience list holding the audience', signed(RS256, claims({ aud: ['other', AUDIENCE] })), 'valid', true],
  ['no typ header', signed({ alg: 'RS256' }, claims()), 'valid', true],
  ['an nbf that has passed', signed(RS256, claims({ nbf: now() - 10 })), 'valid', true],
  ['expired', signed(RS256, claims({ iat: now() - 900, exp: now() - 300 })), 'expired', false],
  ['expiring now', signed(RS256, claims({ exp: now() })), 'expired', false],
  ['expired and signed with another key', signed(RS256, claims({ exp: now() - 300 }), otherKeys().privateKey), 'invalid', false],
  ['an nbf to come', signed(RS256, claims({ nbf: now() + 60 })), 'invalid', false],
  ['an nbf that is not a number', signed(RS256, claims({ nbf: 'soon' })), 'invalid', false],
  ['an exp that is not a number', signed(RS256, claims({ exp: String(now() + 600) })), 'invalid', false],
  ['no exp', signed(RS256, claims({ exp: undefined })), 'invalid', true],
  ['a wrong audience', signed(RS256, claims({ aud: 'other' })), 'invalid', false],
  ['an audience list without it', signed(RS256, claims({ aud: ['other'] })), 'invalid', false],
  ['no audience', signed(RS256, claims({ aud: undefined })), 'invalid', false],
  ['a wrong issuer', signed(RS256, claims({ iss: 'evil' })), 'invalid', false],
  ['no sub', signed(RS256, claims({ sub: undefined })), 'invalid', true],
  ['an empty sub', signed(RS256, claims({ sub: '' })), 'invalid', true],
  ['a numeric sub', signed(RS256, claims({ sub: 7 })), 'invalid', true],
  ['an iat in the future', signed(RS256, claims({ iat: now() + 600 })), 'invalid', true],
  ['alg none', `${b64({ alg: 'none' })}.${b64(claims())}.`, 'invalid', false],
  ['alg RS512', signed({ alg: 'RS512' }, claims()), 'invalid', false],
  ['HS256 with the public key as secret', hs256(claims(), testKeys().publicKey), 'invalid', false],
  ['another key', signed(RS256, claims(), otherKeys().privateKey), 'invalid', false],
  ['a tampered payload', `${goodHeader}.${b64(claims({ sub: '1' }))}.${goodSignature}`, 'invalid', false],
  ['a tampered signature', `${goodHeader}.${goodPayload}.${goodSignature.slice(0, -4)}AAAA`, 'invalid', false],
  ['no signature', `${goodHeader}.${goodPayload}.`, 'invalid', false],
  ['padding in the signature', `${good}=`, 'invalid', false],
  ['a character outside base64url', `${goodHeader}.${goodPayload}.${goodSignature.slice(0, -1)}+`, 'invalid', false],
  ['two parts', `${goodHeader}.${goodPayload}`, 'invalid', false],
  ['four parts', `${good}.${goodSignature}`, 'invalid', false],
  ['a header that is not JSON', signed('not json', claims()), 'invalid', false],
  ['a header that is an array', signed(['RS256'], claims()), 'invalid', false],
  ['a payload that is not JSON', signed(RS256, 'sub=7'), 'invalid', false],
  ['a payload that is a number', signed(RS256, '7'), 'invalid', false],
  ['a payload that is null', signed(RS256, 'null'), 'invalid', false],
  ['an empty string', '', 'invalid', false],
  ['garbage', 'garbage', 'invalid', false],
];

describe('TokenService.verify', () => {
  it.each(cases)('%s', async (_name, token, expected, accepted) => {
    expect(await outcome(await token)).toBe(expected);
    expect(await joseAccepts(await token)).toBe(accepted);
  });

  it('returns the claims of a valid token', async () => {
    const token = signed(RS256, claims({ username: 'ann', is_staff: true }));
    expect(await tokens.verify(token)).toEqual(claims({ username: 'ann', is_staff: true }));
  });

  it('refuses every token when its public key is not an RSA key', async () => {
    const ec = crypto.generateKeyPairSync('ec', {
      namedCurve: 'P-256',
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    const service = new TokenService({ privateKey: ec.privateKey, publicKey: ec.publicKey }, settings);
    const input = `${b64(RS256)}.${b64(claims())}`;
    const token = `${input}.${crypto.sign('sha256', Buffer.from(input), ec.privateKey).toString('base64url')}`;
    await expect(service.verify(token)).rejects.toThrow(new TokenError('invalid', 'the public key is not an RSA key'));
  });
});

describe('tokens verified before', () => {
  let signatureChecks: jest.SpyInstance;

  beforeEach(() => {
    // jose checks signatures with the Web Crypto API.
    signatureChecks = jest.spyOn(globalThis.crypto.subtle, 'verify');
  });
  afterEach(() => jest.restoreAllMocks());

  it('check the signature of a token once, and its expiry every time', async () => {
    const service = new TokenService(testKeys(), settings);
    const token = signed(RS256, claims({ exp: now() + 60 }));
    expect(await service.verify(token)).toEqual(claims({ exp: now() + 60 }));
    expect((await service.verify(token)).sub).toBe('7');
    expect(signatureChecks).toHaveBeenCalledTimes(1);
    const later = Date.now() + 61_000;
    jest.spyOn(Date, 'now').mockReturnValue(later);
    await expect(service.verify(token)).rejects.toThrow(new TokenError('expired', 'token expired'));
  });

  it('decode the claims anew for each request: a change to one request’s claims is not the next one’s', async () => {
    const service = new TokenService(testKeys(), settings);
    const token = signed(RS256, claims({ roles: ['reader'] }));
    const first = await service.verify(token);
    first.sub = '1';
    (first.roles as string[]).push('admin');
    expect(await service.verify(token)).toEqual(claims({ roles: ['reader'] }));
  });

  it('are kept by their exact text and by the service that checked them', async () => {
    const service = new TokenService(testKeys(), settings);
    await service.verify(good);
    for (const token of [
      `${goodHeader}.${b64(claims({ sub: '1' }))}.${goodSignature}`,
      `${goodHeader}.${goodPayload}.${goodSignature.slice(0, -4)}AAAA`,
      `${good}=`,
    ]) {
      await expect(service.verify(token)).rejects.toThrow(TokenError);
    }
    const other = new TokenService(otherKeys(), settings);
    await expect(other.verify(good)).rejects.toThrow(new TokenError('invalid', 'invalid signature'));
  });

  it('keep no refused token: a token that failed is checked again', async () => {
    const service = new TokenService(testKeys(), settings);
    const forged = signed(RS256, claims(), otherKeys().privateKey);
    await expect(service.verify(forged)).rejects.toThrow(new TokenError('invalid', 'invalid signature'));
    await expect(service.verify(forged)).rejects.toThrow(new TokenError('invalid', 'invalid signature'));
    expect(signatureChecks).toHaveBeenCalledTimes(2);
  });

  it(`keep the last ${VERIFIED_TOKENS_KEPT}, and none longer than ${VERIFIED_TOKEN_MAX_LENGTH} characters`, async () => {
    const service = new TokenService(testKeys(), settings);
    const many = Array.from({ length: VERIFIED_TOKENS_KEPT + 1 }, (_, i) => signed(RS256, claims({ n: i })));
    for (const token of many) await service.verify(token);
    signatureChecks.mockClear();
    await service.verify(many[VERIFIED_TOKENS_KEPT]);
    await service.verify(many[1]);
    expect(signatureChecks).toHaveBeenCalledTimes(0);
    await service.verify(many[0]);
    expect(signatureChecks).toHaveBeenCalledTimes(1);

    const long = signed(RS256, claims({ padding: 'x'.repeat(VERIFIED_TOKEN_MAX_LENGTH) }));
    await service.verify(long);
    await service.verify(long);
    expect(signatureChecks).toHaveBeenCalledTimes(3);
  });
});
