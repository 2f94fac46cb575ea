/** API key generation, hashing and constant-time comparison (src/accounts/keys.ts). */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { generateApiKey, hashApiKey, isPlausibleApiKey, safeEqual } from '../../src/accounts/keys';

describe('keys', () => {
  test('generated keys are pc_ + 32 base62 characters and distinct', () => {
    const keys = new Set(Array.from({ length: 200 }, () => generateApiKey()));
    expect(keys.size).toBe(200);
    for (const k of keys) expect(k).toMatch(/^pc_[0-9A-Za-z]{32}$/);
  });

  test('any random source gives a well-formed key (rejection sampling skips bytes >= 248)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), (bytes) => {
        let i = 0;
        const src = (n: number) => Uint8Array.from({ length: n }, () => {
          const b = bytes[i++ % bytes.length] ?? 0;
          return i > 10_000 ? 0 : b; // never loop forever on an all-rejected source
        });
        expect(generateApiKey(src)).toMatch(/^pc_[0-9A-Za-z]{32}$/);
      }),
    );
    expect(generateApiKey(() => new Uint8Array(48).fill(61))).toBe('pc_' + 'z'.repeat(32));
  });

  test('hash is sha256 hex and stable', () => {
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashApiKey(generateApiKey())).toMatch(/^[0-9a-f]{64}$/);
  });

  test('plausibility and safeEqual', () => {
    expect(isPlausibleApiKey('pc_' + 'a'.repeat(32))).toBe(true);
    expect(isPlausibleApiKey('short')).toBe(false);
    expect(isPlausibleApiKey('has space in the key')).toBe(false);
    expect(isPlausibleApiKey('x'.repeat(201))).toBe(false);
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
    expect(safeEqual('', '')).toBe(true);
  });
});
