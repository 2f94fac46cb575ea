/** Tests for src/results/format.ts: the record's responseTime format. */
import { describe, expect, test } from 'bun:test';
import { formatResponseTime } from '../../src/results/format';

describe('formatResponseTime', () => {
  test('milliseconds with two decimals and " ms"', () => {
    expect(formatResponseTime(123.456)).toBe('123.46 ms');
    expect(formatResponseTime(5)).toBe('5.00 ms');
    expect(formatResponseTime(0)).toBe('0.00 ms');
  });
  test('a negative duration (clock step) shows as zero', () => {
    expect(formatResponseTime(-3)).toBe('0.00 ms');
  });
});
