/** The events of a pool (src/pools/events.ts): the contract's shape and the additions of each kind. */
import { describe, expect, test } from 'bun:test';
import { POOL_EVENT_NAMES, pausedEvent, proxyEvent, resumedEvent, roundCompletedEvent } from '../../src/pools/events';

const AT = Date.UTC(2026, 5, 1, 12);
const counts = { total: 2, working: 1, failed: 1, unchecked: 0 };

describe('pool events', () => {
  test('proxy.up and proxy.down: the address, the time or the error', () => {
    expect(proxyEvent('abcdefghij', 'proxy.up', AT, { host: '::1', port: 1080, username: 'u', password: 'p' }, counts, { responseTimeMs: 88.1 })).toEqual({
      pool: 'abcdefghij',
      event: 'proxy.up',
      at: '2026-06-01T12:00:00.000Z',
      counts,
      proxy: { host: '::1', port: 1080, hasAuth: true, username: 'u', password: 'p' },
      responseTime: '88.10 ms',
    });
    const down = proxyEvent('abcdefghij', 'proxy.down', AT, { host: 'h', port: 1 }, counts, { error: { code: 'connect_refused', message: 'refused' } });
    expect(down).toMatchObject({ event: 'proxy.down', proxy: { host: 'h', port: 1, hasAuth: false }, error: { code: 'connect_refused', message: 'refused' } });
    expect(down).not.toHaveProperty('responseTime');
  });

  test('round.completed, pool.paused (with the shortfall), pool.resumed', () => {
    const round = { checked: 10, working: 7, failed: 2, not_tried: 1, charged: 10 };
    expect(roundCompletedEvent('p', AT, counts, round)).toMatchObject({ event: 'round.completed', round });
    expect(pausedEvent('p', AT, counts, 'insufficient_checks', { required: 10, available: 3 })).toMatchObject({
      event: 'pool.paused',
      reason: 'insufficient_checks',
      required: 10,
      available: 3,
    });
    expect(pausedEvent('p', AT, counts, 'owner')).not.toHaveProperty('required');
    expect(resumedEvent('p', AT, counts)).toEqual({ pool: 'p', event: 'pool.resumed', at: '2026-06-01T12:00:00.000Z', counts });
  });

  test('the counts are copied, not shared', () => {
    const c = { ...counts };
    const e = resumedEvent('p', AT, c);
    c.working = 99;
    expect(e.counts.working).toBe(1);
    expect(POOL_EVENT_NAMES).toContain(e.event);
  });
});
