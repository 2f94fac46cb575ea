/**
 * The retry policy (src/gateway/retry-policy.ts), pure: when a failed
 * upstream try is replaced, what the client gets when none is, and the
 * replay buffer's bound (fast-check over every combination).
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { afterFailure, exhaustedRefusal, isIdempotent, REPLAY_MAX, ReplayBuffer, type FailedTry } from '../../src/gateway/retry-policy';
import { MAX_TRIES } from '../../src/gateway/upstream-choice';

const up = { sent: false, blame: 'upstream' as const, rep: 1 };

describe('afterFailure', () => {
  test('a tunnel: another upstream until MAX_TRIES, then the last failure\'s answer', () => {
    expect(afterFailure({ answered: false, tries: 1, forward: null, failure: up })).toEqual({ kind: 'retry' });
    expect(afterFailure({ answered: false, tries: MAX_TRIES, forward: null, failure: up })).toEqual({ kind: 'refuse', code: 'upstream_failed', rep: 1 });
    expect(afterFailure({ answered: false, tries: MAX_TRIES, forward: null, failure: { sent: false, blame: 'target', rep: 5 } })).toEqual({ kind: 'refuse', code: 'target_unreachable', rep: 5 });
  });

  test('a forwarded request: again only whole, and once it may have reached the target only when idempotent', () => {
    const fw = (method: string, replayWhole: boolean, sent: boolean): FailedTry => ({ answered: false, tries: 1, forward: { method, replayWhole }, failure: { ...up, sent } });
    expect(afterFailure(fw('GET', true, true))).toEqual({ kind: 'retry' });
    expect(afterFailure(fw('POST', true, false))).toEqual({ kind: 'retry' });
    expect(afterFailure(fw('POST', true, true))).toEqual({ kind: 'refuse', code: 'upstream_failed', rep: undefined });
    expect(afterFailure(fw('PUT', false, false))).toEqual({ kind: 'refuse', code: 'upstream_failed', rep: undefined });
  });

  test('never after bytes reached the client, never past MAX_TRIES, never a forward that is not whole (any input)', () => {
    const method = fc.constantFrom('GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE', 'POST', 'PATCH');
    const input = fc.record({
      answered: fc.boolean(),
      tries: fc.integer({ min: 1, max: 6 }),
      forward: fc.option(fc.record({ method, replayWhole: fc.boolean() })),
      failure: fc.record({ sent: fc.boolean(), blame: fc.constantFrom('upstream', 'target') as fc.Arbitrary<'upstream' | 'target'>, rep: fc.nat(8) }),
    });
    fc.assert(
      fc.property(input, (t) => {
        const retry = afterFailure(t).kind === 'retry';
        const safe = !t.answered && t.tries < MAX_TRIES && (t.forward === null || (t.forward.replayWhole && (!t.failure.sent || isIdempotent(t.forward.method))));
        expect(retry).toBe(safe);
      }),
    );
  });

  test('no try at all: no_upstream', () => {
    expect(exhaustedRefusal(null)).toEqual({ code: 'no_upstream', rep: undefined });
  });
});

describe('ReplayBuffer', () => {
  test('keeps the body sent before the answer, in order, up to REPLAY_MAX; past it nothing, and it is no longer whole', () => {
    const r = new ReplayBuffer();
    expect(r.whole).toBe(true);
    r.sent(Buffer.from('ab'), true);
    r.sent(Buffer.from('cd'), true);
    expect([Buffer.concat(r.chunks as Buffer[]).toString(), r.length, r.whole]).toEqual(['abcd', 4, true]);
    r.sent(Buffer.alloc(REPLAY_MAX), true);
    expect([r.chunks.length, r.length, r.whole]).toEqual([0, 0, false]);
  });

  test('a byte sent and not kept (the answer came) or a drop: not whole', () => {
    const r = new ReplayBuffer();
    r.sent(Buffer.from('x'), false);
    expect(r.whole).toBe(false);
    const d = new ReplayBuffer();
    d.drop();
    expect(d.whole).toBe(true);
    d.sent(Buffer.from('x'), true);
    expect(d.whole).toBe(false);
  });

  test('never holds more than REPLAY_MAX (any sizes)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 40_000 }), { maxLength: 8 }), (sizes) => {
        const r = new ReplayBuffer();
        let total = 0;
        for (const n of sizes) {
          r.sent(Buffer.alloc(n), true);
          total += n;
          expect(r.length).toBeLessThanOrEqual(REPLAY_MAX);
          expect(r.whole).toBe(total <= REPLAY_MAX);
        }
      }),
    );
  });
});
