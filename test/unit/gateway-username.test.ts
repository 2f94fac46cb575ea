/** The gateway's username grammar (src/gateway/username.ts): every option, every refusal, round trips. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { formatGatewayUsername, parseGatewayUsername, type GatewayUser } from '../../src/gateway/username';

const base: GatewayUser = { poolId: 'abcdefghij', country: null, type: null, target: null, session: null, rotate: 'round_robin' };

describe('gateway usernames', () => {
  test('the pool alone, and every option', () => {
    expect(parseGatewayUsername('pool-abcdefghij')).toEqual({ ok: true, user: base });
    expect(parseGatewayUsername('pool-abcdefghij-country-de-type-socks5-session-Ab12-rotate-random')).toEqual({
      ok: true,
      user: { poolId: 'abcdefghij', country: 'DE', type: 'socks5', target: null, session: 'Ab12', rotate: 'random' },
    });
    expect(parseGatewayUsername('pool-abcdefghij-rotate-random-country-US')).toMatchObject({ ok: true, user: { country: 'US', rotate: 'random' } });
  });

  test('-target-<name>: a pool target, its name may hold dashes (up to the next keyword)', () => {
    expect(parseGatewayUsername('pool-abcdefghij-target-shop')).toEqual({ ok: true, user: { ...base, target: 'shop' } });
    expect(parseGatewayUsername('pool-abcdefghij-target-example-com-country-de')).toEqual({ ok: true, user: { ...base, target: 'example-com', country: 'DE' } });
    expect(parseGatewayUsername('pool-abcdefghij-country-de-target-a-b-c')).toEqual({ ok: true, user: { ...base, target: 'a-b-c', country: 'DE' } });
    expect(formatGatewayUsername({ ...base, target: 'example-com', session: 's1' })).toBe('pool-abcdefghij-target-example-com-session-s1');
    expect(parseGatewayUsername('pool-abcdefghij-target-Shop')).toEqual({ ok: false, reason: 'target must be 1 to 32 of a-z, 0-9 and -' });
    expect(parseGatewayUsername('pool-abcdefghij-target')).toEqual({ ok: false, reason: 'option target has no value' });
    expect(parseGatewayUsername(`pool-abcdefghij-target-${'a'.repeat(33)}`)).toMatchObject({ ok: false });
    expect(parseGatewayUsername('pool-abcdefghij-target-a-target-b')).toEqual({ ok: false, reason: 'option target given twice' });
  });

  test('refusals', () => {
    for (const u of [
      '',
      'pool',
      'pool-',
      'Pool-abcdefghij',
      'pool-ABCDEFGHIJ',
      'pool-short',
      `pool-${'a'.repeat(33)}`,
      'pool-abcdefghij-country',
      'pool-abcdefghij-country-deu',
      'pool-abcdefghij-type-https',
      'pool-abcdefghij-type-auto',
      'pool-abcdefghij-session-',
      `pool-abcdefghij-session-${'a'.repeat(33)}`,
      'pool-abcdefghij-session-a_b',
      'pool-abcdefghij-rotate-roundrobin',
      'pool-abcdefghij-country-de-country-fr',
      'pool-abcdefghij-zone-x',
      'pool-abcdefghij-',
      `pool-abcdefghij${'-x'.repeat(200)}`,
    ]) {
      const r = parseGatewayUsername(u);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason.length).toBeLessThan(60);
    }
  });

  test('property: format then parse is the identity; any string parses or is refused without throwing', () => {
    const user = fc.record({
      poolId: fc.stringMatching(/^[a-z0-9]{10,32}$/),
      country: fc.option(fc.stringMatching(/^[A-Z]{2}$/), { nil: null }),
      type: fc.option(fc.constantFrom('http' as const, 'socks4' as const, 'socks5' as const), { nil: null }),
      target: fc.option(
        fc.stringMatching(/^[a-z0-9-]{1,32}$/).filter((t) => !t.split('-').some((p) => ['country', 'type', 'target', 'session', 'rotate'].includes(p))),
        { nil: null },
      ),
      session: fc.option(fc.stringMatching(/^[A-Za-z0-9]{1,32}$/), { nil: null }),
      rotate: fc.constantFrom('round_robin' as const, 'random' as const),
    });
    fc.assert(fc.property(user, (u) => expect(parseGatewayUsername(formatGatewayUsername(u))).toEqual({ ok: true, user: u })));
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.array(fc.constantFrom('pool', 'abcdefghij', 'country', 'de', 'type', 'http', 'session', 'x', 'rotate', 'random', '')).map((p) => p.join('-'))), (s) => {
        const r = parseGatewayUsername(s);
        if (r.ok) expect(parseGatewayUsername(formatGatewayUsername(r.user))).toEqual(r);
      }),
    );
  });
});
