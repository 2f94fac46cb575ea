import { describe, expect, test } from 'bun:test';
import { maxInFlightFor, parseOpenFilesLimit, RESERVED_FDS } from '../../src/limits';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max open files            20000                20000                files
Max locked memory         8388608              8388608              bytes
`;

describe('open-file limit', () => {
  test('the soft "Max open files" of /proc/self/limits', () => {
    expect(parseOpenFilesLimit(LIMITS)).toBe(20000);
    expect(parseOpenFilesLimit(LIMITS.replace('20000                20000', 'unlimited            unlimited'))).toBe(Number.POSITIVE_INFINITY);
    expect(parseOpenFilesLimit('garbage')).toBeNull();
  });

  test('probes in flight: half of what is left when the judge is in-process', () => {
    expect(maxInFlightFor(20000, true)).toBe((20000 - RESERVED_FDS) / 2);
    expect(maxInFlightFor(20000, false)).toBe(20000 - RESERVED_FDS);
    expect(maxInFlightFor(1024, true)).toBe(64);
    expect(maxInFlightFor(null, true)).toBe(65_536);
  });
});
