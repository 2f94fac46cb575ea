/** `proxycheck pool watch` lines (src/cli/pool-events-render.ts): one per event kind, the proxy without its password, the working count last. */
import { describe, expect, test } from 'bun:test';
import { proxyText, renderPoolEvent, RoundFold } from '../../src/cli/pool-events-render';
import { pausedEvent, proxyEvent, resumedEvent, roundCompletedEvent } from '../../src/pools/events';

const AT = Date.UTC(2026, 10, 26, 12, 0, 5, 250);
const COUNTS = { total: 3, working: 2, failed: 1, unchecked: 0 };
const norm = (s: string) => s.replace(/\s+/g, ' ');

describe('renderPoolEvent', () => {
  test('each event kind', () => {
    expect(norm(renderPoolEvent(proxyEvent('poolaaaaaa1', 'proxy.down', AT, { host: '10.0.0.1', port: 8080 }, COUNTS, { error: { code: 'timeout', message: 'no answer' } })))).toBe(
      '2026-11-26 12:00:05 down 10.0.0.1:8080 timeout: no answer working 2/3',
    );
    expect(norm(renderPoolEvent(proxyEvent('poolaaaaaa1', 'proxy.up', AT, { host: '10.0.0.1', port: 8080, username: 'u', password: 'secret' }, COUNTS, { responseTimeMs: 412 })))).toBe(
      '2026-11-26 12:00:05 up u@10.0.0.1:8080 412.00 ms working 2/3',
    );
    expect(norm(renderPoolEvent(roundCompletedEvent('poolaaaaaa1', AT, COUNTS, { checked: 3, working: 2, failed: 1, not_tried: 0, charged: 3 })))).toBe(
      '2026-11-26 12:00:05 round 3 checked: 2 working, 1 failed, 3 charged working 2/3',
    );
    expect(norm(renderPoolEvent(roundCompletedEvent('poolaaaaaa1', AT, COUNTS, { checked: 3, working: 2, failed: 0, not_tried: 1, charged: 2 })))).toContain('1 not tried, 2 charged');
    expect(norm(renderPoolEvent(pausedEvent('poolaaaaaa1', AT, COUNTS, 'owner')))).toBe('2026-11-26 12:00:05 paused by its owner working 2/3');
    expect(norm(renderPoolEvent(pausedEvent('poolaaaaaa1', AT, COUNTS, 'insufficient_checks', { required: 3, available: 1 })))).toBe(
      '2026-11-26 12:00:05 paused insufficient checks (needs 3, has 1) working 2/3',
    );
    expect(norm(renderPoolEvent(resumedEvent('poolaaaaaa1', AT, COUNTS)))).toBe('2026-11-26 12:00:05 resumed working 2/3');
  });

  test('the password never shows; IPv6 hosts bracketed', () => {
    const line = renderPoolEvent(proxyEvent('poolaaaaaa1', 'proxy.up', AT, { host: '10.0.0.1', port: 1, username: 'u', password: 'hunter2' }, COUNTS, {}));
    expect(line).not.toContain('hunter2');
    expect(proxyText({ host: '2001:db8::1', port: 1080, hasAuth: false })).toBe('[2001:db8::1]:1080');
  });
});

describe('RoundFold (pool watch)', () => {
  const one = (at: number, working: number) => roundCompletedEvent('poolaaaaaa1', at, COUNTS, { checked: 1, working, failed: 1 - working, not_tried: 0, charged: 1 });

  test('one-proxy rounds are held and told as one line; another event flushes them first', () => {
    const f = new RoundFold();
    expect(f.add(one(AT, 1))).toEqual([]);
    expect(f.add(one(AT + 1000, 1))).toEqual([]);
    expect(f.add(one(AT + 2000, 0))).toEqual([]);
    const up = proxyEvent('poolaaaaaa1', 'proxy.up', AT + 3000, { host: '10.0.0.1', port: 8080 }, COUNTS, { responseTimeMs: 5 });
    const lines = f.add(up).map(norm);
    expect(lines).toEqual(['2026-11-26 12:00:07 rounds 3 rounds of one proxy: 3 checked: 2 working, 1 failed, 3 charged working 2/3', '2026-11-26 12:00:08 up 10.0.0.1:8080 5.00 ms working 2/3']);
    expect(f.flush()).toBeNull();
  });

  test('a bigger round prints at once; a single held round prints as itself on flush', () => {
    const f = new RoundFold();
    const big = roundCompletedEvent('poolaaaaaa1', AT, COUNTS, { checked: 3, working: 2, failed: 1, not_tried: 0, charged: 3 });
    expect(f.add(big)).toEqual([renderPoolEvent(big)]);
    expect(f.add(one(AT, 1))).toEqual([]);
    expect(f.flush()).toBe(renderPoolEvent(one(AT, 1)));
    expect(f.flush()).toBeNull();
  });
});
