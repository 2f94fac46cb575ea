/**
 * Pool events on NATS (src/cluster/pool-events-wire.ts): the subject per
 * account (one token, never a wildcard), the codec round trip of an event and
 * of a pool closed, and the decoder's refusals (fuzzed: any bytes decode to a
 * valid message or null, never throw).
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { decodePoolEventsWire, encodePoolEventsWire, MAX_POOL_WIRE_BYTES, poolEventsSubject } from '../../src/cluster/pool-events-wire';
import { proxyEvent, roundCompletedEvent } from '../../src/pools/events';

const COUNTS = { total: 2, working: 1, failed: 1, unchecked: 0 };
const ACCOUNT = '0b6f9f5e-3c1a-4f7e-9a57-2f4f1c2d8e11';
const enc = (o: unknown) => new TextEncoder().encode(JSON.stringify(o));

describe('pool events wire', () => {
  test('subject: pc.pool.<account>; a wildcard or a dotted id is refused', () => {
    expect(poolEventsSubject(ACCOUNT)).toBe(`pc.pool.${ACCOUNT}`);
    for (const bad of ['*', '>', 'a.b', '', 'a b']) expect(() => poolEventsSubject(bad)).toThrow();
  });

  test('an event and a close round-trip', () => {
    const e = proxyEvent('poolaaaaaa1', 'proxy.up', 1_000, { host: '10.0.0.1', port: 80, username: 'u', password: 'p' }, COUNTS, { responseTimeMs: 12 });
    expect(decodePoolEventsWire(encodePoolEventsWire('node-a', ACCOUNT, { event: e }))).toEqual({ v: 1, node: 'node-a', account: ACCOUNT, event: e });
    const r = roundCompletedEvent('poolaaaaaa1', 2_000, COUNTS, { checked: 2, working: 1, failed: 1, not_tried: 0, charged: 2 });
    expect(decodePoolEventsWire(encodePoolEventsWire("node-a", ACCOUNT, { event: r }))).toMatchObject({ event: r });
    expect(decodePoolEventsWire(encodePoolEventsWire('node-b', ACCOUNT, { closed: 'poolaaaaaa1' }))).toEqual({ v: 1, node: 'node-b', account: ACCOUNT, closed: 'poolaaaaaa1' });
  });

  test('refused: another version, a bad node or account, an unknown event name, counts that are not counts, neither event nor close, too big', () => {
    const e = { pool: 'poolaaaaaa1', event: 'proxy.down', at: '2026-01-01T00:00:00.000Z', counts: COUNTS };
    const ok = { v: 1, node: 'n', account: ACCOUNT, event: e };
    expect(decodePoolEventsWire(enc(ok))).not.toBeNull();
    for (const bad of [
      { ...ok, v: 2 },
      { ...ok, node: 'a.b' },
      { ...ok, account: '>' },
      { ...ok, event: { ...e, event: 'proxy.sideways' } },
      { ...ok, event: { ...e, counts: { ...COUNTS, working: -1 } } },
      { ...ok, event: { ...e, counts: { ...COUNTS, total: 1.5 } } },
      { ...ok, event: { ...e, pool: '' } },
      { v: 1, node: 'n', account: ACCOUNT },
      { v: 1, node: 'n', account: ACCOUNT, closed: 7 },
      [ok],
    ]) {
      expect(decodePoolEventsWire(enc(bad))).toBeNull();
    }
    expect(decodePoolEventsWire(new Uint8Array([0xff, 0xfe]))).toBeNull();
    expect(decodePoolEventsWire(enc({ ...ok, pad: 'x'.repeat(MAX_POOL_WIRE_BYTES) }))).toBeNull();
  });

  test('fuzz: any bytes or JSON decode to null or a message with a valid node and account, never throw', () => {
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.json().map((j) => new TextEncoder().encode(j))), (bytes) => {
        const w = decodePoolEventsWire(bytes);
        if (w !== null) {
          expect(typeof w.node).toBe('string');
          expect(typeof w.account).toBe('string');
        }
      }),
      { numRuns: 2000 },
    );
  });
});
