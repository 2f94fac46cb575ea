/** Gateway usage per account over 24 hours (src/gateway/usage.ts): hourly buckets in a ring, pruning. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { GatewayUsage } from '../../src/gateway/usage';

const HOUR = 3_600_000;

describe('GatewayUsage', () => {
  test('counts connections and bytes per account', () => {
    let now = 100 * HOUR;
    const u = new GatewayUsage({ now: () => now });
    u.connection('a');
    u.connection('a');
    u.bytes('a', 1000);
    u.connection('b');
    u.bytes('b', 0);
    u.bytes('b', -5);
    expect(u.of('a')).toEqual({ connections_24h: 2, bytes_24h: 1000 });
    expect(u.of('b')).toEqual({ connections_24h: 1, bytes_24h: 0 });
    expect(u.of('nobody')).toEqual({ connections_24h: 0, bytes_24h: 0 });
    now += 30 * 60_000;
    expect(u.of('a')).toEqual({ connections_24h: 2, bytes_24h: 1000 });
  });

  test('an hour leaves the window 24 hours later; a reused slot starts from zero', () => {
    let now = 100 * HOUR + 10;
    const u = new GatewayUsage({ now: () => now });
    u.bytes('a', 10);
    now = 101 * HOUR;
    u.bytes('a', 20);
    now = 123 * HOUR + 5;
    expect(u.of('a').bytes_24h).toBe(30);
    now = 124 * HOUR;
    expect(u.of('a').bytes_24h).toBe(20);
    u.bytes('a', 1); // hour 124 reuses hour 100's slot
    expect(u.of('a').bytes_24h).toBe(21);
    now = 125 * HOUR;
    expect(u.of('a').bytes_24h).toBe(1);
  });

  test('prune drops the accounts with nothing in the window', () => {
    let now = 10 * HOUR;
    const u = new GatewayUsage({ now: () => now });
    u.connection('old');
    now = 20 * HOUR;
    u.connection('new');
    now = 34 * HOUR;
    u.prune();
    expect(u.accounts).toBe(1);
    expect(u.of('new').connections_24h).toBe(1);
    now = 50 * HOUR;
    u.connection('next'); // a connection in a new hour prunes first
    expect(u.accounts).toBe(1);
  });

  test('the figures equal a plain sum over the events of the last 24 hours (hour-aligned)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 100 }), fc.nat(1000)), { maxLength: 60 }), fc.integer({ min: 0, max: 130 }), (events, at) => {
        let now = 0;
        const u = new GatewayUsage({ now: () => now });
        const sorted = [...events].sort((x, y) => x[0] - y[0]);
        for (const [h, n] of sorted) {
          now = h * HOUR;
          u.bytes('a', n);
        }
        const query = Math.max(at, sorted[sorted.length - 1]?.[0] ?? 0);
        now = query * HOUR;
        const expected = sorted.filter(([h]) => query - h < 24).reduce((s, [, n]) => s + n, 0);
        expect(u.of('a').bytes_24h).toBe(expected);
      }),
    );
  });
});
