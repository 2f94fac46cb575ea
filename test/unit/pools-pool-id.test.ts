/** A pool's id (src/pools/pool-id.ts). */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { NEW_POOL_ID_LENGTH, isPoolId, newPoolId } from '../../src/pools/pool-id';

describe('pool ids', () => {
  test('the rule: 10..32 of [a-z0-9]', () => {
    expect(isPoolId('abcdefghij')).toBe(true);
    expect(isPoolId('a'.repeat(32))).toBe(true);
    expect(isPoolId('abcdefghi')).toBe(false);
    expect(isPoolId('a'.repeat(33))).toBe(false);
    expect(isPoolId('ABCDEFGHIJ')).toBe(false);
    expect(isPoolId('abcde-ghij')).toBe(false);
  });
  test('a new id from random bytes; bytes >= 252 skipped; too few bytes: RangeError', () => {
    expect(newPoolId(new Uint8Array(20))).toBe('a'.repeat(20));
    expect(newPoolId(Uint8Array.from([255, 35, ...new Array(19).fill(36)]))).toBe('9' + 'a'.repeat(19));
    expect(() => newPoolId(new Uint8Array(19))).toThrow(RangeError);
    expect(() => newPoolId(new Uint8Array(40).fill(252))).toThrow(RangeError);
  });
  test('property: every id made follows the rule', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 40, maxLength: 40 }).filter((b) => b.filter((x) => x < 252).length >= NEW_POOL_ID_LENGTH), (b) => {
        expect(isPoolId(newPoolId(b))).toBe(true);
      }),
    );
  });
});
