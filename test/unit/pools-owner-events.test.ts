/** The events of an owner's PATCH of a pool's state (src/pools/owner-events.ts). */
import { describe, expect, test } from 'bun:test';
import { ownerStateEvent } from '../../src/pools/owner-events';

const COUNTS = { total: 5, working: 3, failed: 1, unchecked: 1 };
const AT = Date.UTC(2026, 10, 26, 12);

describe('ownerStateEvent', () => {
  test('active -> paused: pool.paused, reason owner, with the counts; paused -> active: pool.resumed', () => {
    expect(ownerStateEvent('poolaaaaaa1', 'active', 'paused', COUNTS, AT)).toEqual({ pool: 'poolaaaaaa1', event: 'pool.paused', at: '2026-11-26T12:00:00.000Z', counts: COUNTS, reason: 'owner' });
    expect(ownerStateEvent('poolaaaaaa1', 'paused', 'active', COUNTS, AT)).toEqual({ pool: 'poolaaaaaa1', event: 'pool.resumed', at: '2026-11-26T12:00:00.000Z', counts: COUNTS });
  });

  test('no change of state: no event', () => {
    expect(ownerStateEvent('poolaaaaaa1', 'active', 'active', COUNTS, AT)).toBeNull();
    expect(ownerStateEvent('poolaaaaaa1', 'paused', 'paused', COUNTS, AT)).toBeNull();
  });
});
