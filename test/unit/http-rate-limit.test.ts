/**
 * Tests for src/http/rate-limit.ts (the per-account token bucket) with a fake
 * clock: the burst, the refill, the Retry-After value, independent accounts,
 * a clock that goes back, and the bounded number of buckets (LRU).
 */
import { describe, expect, test } from 'bun:test';
import { rateLimitHeaders, RateLimiter } from '../../src/http/rate-limit';

function limiter(ratePerS: number, burst: number, maxKeys?: number) {
  let now = 1_000_000;
  const l = new RateLimiter({ ratePerS, burst, now: () => now, ...(maxKeys !== undefined ? { maxKeys } : {}) });
  return { l, advance: (ms: number) => (now += ms), set: (ms: number) => (now = ms) };
}

const takeN = (l: RateLimiter, key: string, n: number) => Array.from({ length: n }, () => l.take(key).ok);

describe('RateLimiter', () => {
  test('a new key may make `burst` requests at once, then is refused', () => {
    const { l } = limiter(20, 40);
    expect(takeN(l, 'a', 40).every(Boolean)).toBe(true);
    expect(l.take('a')).toEqual({ ok: false, retryAfterS: 1 });
  });

  test('tokens come back at `ratePerS`, never beyond the burst', () => {
    const { l, advance } = limiter(2, 4);
    expect(takeN(l, 'a', 4)).toEqual([true, true, true, true]);
    expect(l.take('a').ok).toBe(false);
    advance(499);
    expect(l.take('a').ok).toBe(false); // 0.998 of a token
    advance(1);
    expect(l.take('a').ok).toBe(true); // one token after 500 ms at 2/s
    expect(l.take('a').ok).toBe(false);
    advance(60_000); // a long quiet spell refills to the burst only
    expect(takeN(l, 'a', 5)).toEqual([true, true, true, true, false]);
  });

  test('Retry-After: whole seconds until the next token, rounded up, at least 1', () => {
    const slow = limiter(0.1, 1); // one token per 10 s
    expect(slow.l.take('a').ok).toBe(true);
    expect(slow.l.take('a')).toEqual({ ok: false, retryAfterS: 10 });
    slow.advance(2_500);
    expect(slow.l.take('a')).toEqual({ ok: false, retryAfterS: 8 }); // 7.5 s left
    slow.advance(7_499);
    expect(slow.l.take('a')).toEqual({ ok: false, retryAfterS: 1 }); // 1 ms left
    slow.advance(1);
    expect(slow.l.take('a').ok).toBe(true);

    const fast = limiter(1000, 1);
    expect(fast.l.take('a').ok).toBe(true);
    expect(fast.l.take('a')).toEqual({ ok: false, retryAfterS: 1 }); // 1 ms away, but the header is whole seconds
  });

  test('a granted request says what is left: whole tokens, and whole seconds until the bucket is full again', () => {
    const { l, advance } = limiter(2, 4);
    expect(l.take('a')).toEqual({ ok: true, remaining: 3, resetS: 1 }); // 1 token missing at 2/s: 0.5 s, rounded up
    expect(l.take('a')).toEqual({ ok: true, remaining: 2, resetS: 1 });
    expect(l.take('a')).toEqual({ ok: true, remaining: 1, resetS: 2 });
    expect(l.take('a')).toEqual({ ok: true, remaining: 0, resetS: 2 });
    advance(750); // 1.5 tokens back
    expect(l.take('a')).toEqual({ ok: true, remaining: 0, resetS: 2 }); // 0.5 left: 3.5 missing, 1.75 s
    const slow = limiter(0.5, 10);
    expect(slow.l.take('a')).toEqual({ ok: true, remaining: 9, resetS: 2 });
  });

  test('rateLimitHeaders: the burst, what is left and the reset; a refusal says 0 left and Reset = Retry-After', () => {
    expect(rateLimitHeaders(40, { ok: true, remaining: 39, resetS: 1 })).toEqual({ 'RateLimit-Limit': '40', 'RateLimit-Remaining': '39', 'RateLimit-Reset': '1' });
    expect(rateLimitHeaders(40, { ok: false, retryAfterS: 3 })).toEqual({ 'RateLimit-Limit': '40', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '3' });
  });

  test('a refused request takes nothing: waiting Retry-After is enough', () => {
    const { l, advance } = limiter(1, 1);
    expect(l.take('a').ok).toBe(true);
    for (let i = 0; i < 10; i++) expect(l.take('a')).toEqual({ ok: false, retryAfterS: 1 });
    advance(1000);
    expect(l.take('a').ok).toBe(true);
  });

  test('accounts have their own buckets: one at its limit does not slow another', () => {
    const { l } = limiter(1, 3);
    expect(takeN(l, 'a', 4)).toEqual([true, true, true, false]);
    expect(takeN(l, 'b', 3)).toEqual([true, true, true]);
    expect(l.take('a').ok).toBe(false);
  });

  test('a clock that goes back refills nothing and refuses nothing extra', () => {
    const { l, advance, set } = limiter(1, 2);
    expect(takeN(l, 'a', 2)).toEqual([true, true]);
    set(0);
    expect(l.take('a').ok).toBe(false);
    set(1_000_000);
    advance(1000);
    expect(l.take('a').ok).toBe(true);
  });

  test('memory is bounded: at most maxKeys buckets, the least recently used dropped first', () => {
    const { l } = limiter(1, 2, 3);
    for (const k of ['a', 'b', 'c']) expect(takeN(l, k, 2)).toEqual([true, true]);
    expect(l.size).toBe(3);
    expect(l.take('a').ok).toBe(false); // 'a' used again: now the most recent
    expect(l.take('d').ok).toBe(true); // a 4th key drops 'b', the least recently used
    expect(l.size).toBe(3);
    expect(l.take('a').ok).toBe(false); // 'a' kept its (empty) bucket
    expect(l.take('c').ok).toBe(false); // 'c' too
    expect(l.take('b').ok).toBe(true); // 'b' came back as a new, full bucket
    expect(l.size).toBe(3);
    for (let i = 0; i < 10_000; i++) l.take(`k${i}`);
    expect(l.size).toBe(3);
  });

  test('the default cap is 10 000 buckets', () => {
    const { l } = limiter(1, 1);
    for (let i = 0; i < 10_050; i++) l.take(`k${i}`);
    expect(l.size).toBe(10_000);
  });

  test('refuses a rate or burst that could never let a request through', () => {
    expect(() => new RateLimiter({ ratePerS: 0, burst: 1, now: () => 0 })).toThrow(RangeError);
    expect(() => new RateLimiter({ ratePerS: 1, burst: 0.5, now: () => 0 })).toThrow(RangeError);
  });
});
