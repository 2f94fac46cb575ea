/** Tests for src/results/links.ts: signing, verification order, constant-time path, ids. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { ServiceError } from '../../src/errors';
import {
  isResultId,
  linkExpiry,
  newResultId,
  parseResultName,
  RESULT_LINK_TTL_SECONDS,
  signResultLink,
  verifyResultLink,
} from '../../src/results/links';

const secret = 'test-secret-0123456789abcdef';
const id = 'AbCdEfGhIjKlMnOpQrStUv';
const NOW = 1_750_000_000;

function parts(url: string) {
  const u = new URL(url);
  return { path: u.pathname, token: u.searchParams.get('token'), expires: u.searchParams.get('expires') };
}

describe('result ids', () => {
  test('new ids are 22 url-safe characters and distinct', () => {
    const ids = new Set(Array.from({ length: 1000 }, newResultId));
    expect(ids.size).toBe(1000);
    for (const x of ids) expect(isResultId(x)).toBe(true);
  });
  test('validator', () => {
    expect(isResultId(id)).toBe(true);
    for (const bad of ['', 'short', `${id}A`, 'AbCdEfGhIjKlMnOpQrStU/', '../../../../etc/passwd', 'AbCdEfGhIjKlMnOpQrStU=']) {
      expect(isResultId(bad)).toBe(false);
    }
  });
  test('parseResultName', () => {
    expect(parseResultName(`${id}.json`)).toEqual({ resultId: id, ext: 'json' });
    expect(parseResultName(`${id}.txt`)).toEqual({ resultId: id, ext: 'txt' });
    expect(parseResultName(`${id}.exe`)).toBeNull();
    expect(parseResultName(id)).toBeNull();
    expect(parseResultName(`x.json`)).toBeNull();
  });
});

describe('sign and verify', () => {
  test('link shape; 12 h default', () => {
    expect(RESULT_LINK_TTL_SECONDS).toBe(43_200);
    const expiresAt = linkExpiry(NOW);
    expect(expiresAt).toBe(NOW + 43_200);
    const url = signResultLink({ contentUrl: 'https://files.example/', resultId: id, secret, expiresAt, ext: 'json' });
    expect(url).toMatch(new RegExp(`^https://files\\.example/result/${id}\\.json\\?token=[0-9a-f]{64}&expires=${expiresAt}$`));
  });

  test('ok until the expiry, then expired', () => {
    const expiresAt = NOW + 100;
    const { token, expires } = parts(signResultLink({ contentUrl: 'http://x', resultId: id, secret, expiresAt, ext: 'json' }));
    expect(verifyResultLink({ resultId: id, token, expires, secret, now: NOW })).toBe('ok');
    expect(verifyResultLink({ resultId: id, token, expires, secret, now: NOW + 99 })).toBe('ok');
    expect(verifyResultLink({ resultId: id, token, expires, secret, now: NOW + 100 })).toBe('expired');
    expect(verifyResultLink({ resultId: id, token, expires: Number(expires), secret, now: NOW })).toBe('ok');
  });

  test('the token does not cover the extension', () => {
    const sign = (ext: 'json' | 'csv' | 'txt') =>
      parts(signResultLink({ contentUrl: 'http://x', resultId: id, secret, expiresAt: NOW + 10, ext })).token;
    expect(sign('json')).toBe(sign('csv'));
    expect(sign('csv')).toBe(sign('txt'));
  });

  test('bad token is checked before expiry', () => {
    const expiresAt = NOW - 10; // already expired
    const { token, expires } = parts(signResultLink({ contentUrl: 'http://x', resultId: id, secret, expiresAt, ext: 'json' }));
    expect(verifyResultLink({ resultId: id, token, expires, secret, now: NOW })).toBe('expired');
    const flipped = (token![0] === 'a' ? 'b' : 'a') + token!.slice(1);
    expect(verifyResultLink({ resultId: id, token: flipped, expires, secret, now: NOW })).toBe('bad_token');
    // a forged later expiry with the old token
    expect(verifyResultLink({ resultId: id, token, expires: String(NOW + 1000), secret, now: NOW })).toBe('bad_token');
  });

  test('another id, secret, or malformed inputs are bad_token', () => {
    const { token, expires } = parts(signResultLink({ contentUrl: 'http://x', resultId: id, secret, expiresAt: NOW + 10, ext: 'json' }));
    const v = (o: Partial<Parameters<typeof verifyResultLink>[0]>) =>
      verifyResultLink({ resultId: id, token, expires, secret, now: NOW, ...o });
    expect(v({})).toBe('ok');
    expect(v({ resultId: 'BbCdEfGhIjKlMnOpQrStUv' })).toBe('bad_token');
    expect(v({ secret: 'another-secret-0123456789' })).toBe('bad_token');
    for (const t of [null, undefined, '', 'zz', token!.toUpperCase(), `${token}00`, token!.slice(2)]) {
      expect(v({ token: t })).toBe('bad_token');
    }
    for (const e of [null, undefined, '', '0', '-5', '1e12', ` ${expires}`, `${expires}.0`, '0123']) {
      expect(v({ expires: e })).toBe('bad_token');
    }
  });

  test('fast-check: random tokens never verify', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), fc.string({ maxLength: 14 }), (token, expires) => {
        expect(verifyResultLink({ resultId: id, token, expires, secret, now: NOW })).toBe('bad_token');
      }),
    );
  });

  test('now in milliseconds and bad sign inputs are refused with codes', () => {
    expect(() => verifyResultLink({ resultId: id, token: 'a', expires: '1', secret, now: Date.now() })).toThrow(ServiceError);
    expect(() => verifyResultLink({ resultId: id, token: 'a', expires: '1', secret, now: Date.now() })).toThrow(expect.objectContaining({ code: 'link_now_in_ms' }));
    const base = { contentUrl: 'http://x', resultId: id, secret, expiresAt: NOW, ext: 'json' as const };
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return (e as ServiceError).code;
      }
      return 'none';
    };
    expect(code(() => signResultLink({ ...base, resultId: '../x' }))).toBe('link_bad_result_id');
    expect(code(() => signResultLink({ ...base, expiresAt: 1.5 }))).toBe('link_bad_expiry');
    expect(code(() => signResultLink({ ...base, ext: 'exe' as 'json' }))).toBe('link_bad_ext');
    expect(code(() => signResultLink({ ...base, secret: '' }))).toBe('link_no_secret');
  });
});
