/** The proxies query's cursor (src/pools/cursor.ts): round trips, and nothing else decodes. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { CURSOR_MAX_LENGTH, decodeCursor, encodeCursor, validSortKey } from '../../src/pools/cursor';

describe('cursor', () => {
  test('round trips for every sort', () => {
    for (const c of [
      { sort: 'latency' as const, key: '2147483647', id: 1 },
      { sort: 'uptime' as const, key: '-1', id: 99 },
      { sort: 'checked' as const, key: '2026-06-01T12:00:00.123000', id: 2 ** 40 },
    ]) {
      const text = encodeCursor(c);
      expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeCursor(text)).toEqual(c);
    }
  });

  test('keys of the wrong form, ids that are not positive integers, other versions: null', () => {
    const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    for (const v of [
      [1, 'latency', 1, '1.5'],
      [1, 'latency', 1, '99999999999'],
      [1, 'uptime', 1, 'NaN'],
      [1, 'checked', 1, '2026-06-01 12:00:00+00'],
      [1, 'checked', 1, '2026-13-45T99:00:00.000000'],
      [1, 'checked', 1, "x'); DROP TABLE pools; --"],
      [1, 'latency', 0, '1'],
      [1, 'latency', 1.5, '1'],
      [1, 'latency', '1', '1'],
      [2, 'latency', 1, '1'],
      [1, 'name', 1, '1'],
      [1, 'latency', 1],
      { sort: 'latency', id: 1, key: '1' },
    ]) {
      expect(decodeCursor(enc(v))).toBeNull();
    }
    expect(decodeCursor('')).toBeNull();
    expect(decodeCursor('not base64!')).toBeNull();
    expect(decodeCursor('A'.repeat(CURSOR_MAX_LENGTH + 1))).toBeNull();
    expect(validSortKey('checked', '2026-06-01T12:00:00.000000')).toBe(true);
  });

  test('property: any string decodes to null or a valid cursor, never throws', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.base64String(), fc.json().map((j) => Buffer.from(j).toString('base64url'))), (s) => {
        const c = decodeCursor(s);
        if (c !== null) {
          expect(validSortKey(c.sort, c.key)).toBe(true);
          expect(decodeCursor(encodeCursor(c))).toEqual(c);
        }
      }),
    );
  });
});
