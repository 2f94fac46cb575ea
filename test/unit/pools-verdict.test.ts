/** A pooled proxy's verdicts (src/pools/verdict.ts): every transition of the table, and the counts it moves. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { applyVerdict, moveCount, outcomeOf, type CheckOutcome, type VerdictState } from '../../src/pools/verdict';
import { PROXY_STATUSES, type ProxyStatus } from '../../src/pools/types';

const AT = Date.UTC(2026, 5, 1);
const state = (status: ProxyStatus, failures = 0, lastChangeAt: number | null = null): VerdictState => ({ status, failures, lastChangeAt });

describe('outcomeOf', () => {
  test('working; failed on any error but checker_overloaded, which is no verdict', () => {
    expect(outcomeOf({ status: 'working', error: null })).toBe('working');
    expect(outcomeOf({ status: 'failed', error: { code: 'connect_refused', message: '' } })).toBe('failed');
    expect(outcomeOf({ status: 'failed', error: { code: 'blocked_target', message: '' } })).toBe('failed');
    expect(outcomeOf({ status: 'failed', error: null })).toBe('failed');
    expect(outcomeOf({ status: 'failed', error: { code: 'checker_overloaded', message: '' } })).toBe('not_tried');
  });
});

describe('the transition table', () => {
  const cases: [ProxyStatus, CheckOutcome, ProxyStatus, string | null][] = [
    ['unchecked', 'working', 'working', null],
    ['unchecked', 'failed', 'failed', null],
    ['failed', 'working', 'working', 'proxy.up'],
    ['working', 'failed', 'failed', 'proxy.down'],
    ['working', 'working', 'working', null],
    ['failed', 'failed', 'failed', null],
    ['unchecked', 'not_tried', 'unchecked', null],
    ['working', 'not_tried', 'working', null],
    ['failed', 'not_tried', 'failed', null],
  ];
  for (const [from, outcome, to, event] of cases) {
    test(`${from} --${outcome}--> ${to} (${event ?? 'no event'})`, () => {
      const step = applyVerdict(state(from, from === 'failed' ? 2 : 0, from === 'unchecked' ? null : AT - 1000), outcome, AT);
      expect(step.next.status).toBe(to);
      expect(step.event).toBe(event as never);
      expect(step.next.lastChangeAt).toBe(from === to ? (from === 'unchecked' ? null : AT - 1000) : AT);
    });
  }

  test('failures: reset by a pass, counted up by each failure, untouched when not tried', () => {
    expect(applyVerdict(state('failed', 4, AT - 1), 'working', AT).next.failures).toBe(0);
    expect(applyVerdict(state('failed', 4, AT - 1), 'failed', AT).next.failures).toBe(5);
    expect(applyVerdict(state('working', 0, AT - 1), 'failed', AT).next.failures).toBe(1);
    expect(applyVerdict(state('failed', 4, AT - 1), 'not_tried', AT).next.failures).toBe(4);
  });

  test('property: no event for the first verdict; then proxy.up and proxy.down alternate, a watcher that knows the first verdict and follows the events knows the working set, the counts stay whole', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom<CheckOutcome>('working', 'failed', 'not_tried'), { maxLength: 60 }), (outcomes) => {
        let s = state('unchecked');
        let counts = { total: 1, working: 0, failed: 0, unchecked: 1 };
        // what a watcher believes: the first verdict (from round.completed / the listing), then each event
        let believed: ProxyStatus = 'unchecked';
        let last: string | null = null;
        outcomes.forEach((o, i) => {
          const step = applyVerdict(s, o, AT + i);
          if (s.status === 'unchecked') {
            expect(step.event).toBeNull();
            believed = step.next.status;
          } else if (step.event !== null) {
            expect(step.event).not.toBe(last as never);
            // the first event is the opposite of the first verdict
            if (last === null) expect(step.event).toBe(believed === 'working' ? 'proxy.down' : 'proxy.up');
            last = step.event;
            believed = step.event === 'proxy.up' ? 'working' : 'failed';
          }
          counts = moveCount(counts, s.status, step.next.status);
          s = step.next;
          expect(counts.working + counts.failed + counts.unchecked).toBe(1);
          expect(counts[s.status]).toBe(1);
          expect(believed).toBe(s.status);
        });
      }),
    );
  });
});

describe('moveCount', () => {
  test('moves one proxy between statuses; total unchanged; a new object', () => {
    const c = { total: 3, working: 1, failed: 1, unchecked: 1 };
    expect(moveCount(c, 'unchecked', 'working')).toEqual({ total: 3, working: 2, failed: 1, unchecked: 0 });
    const same = moveCount(c, 'failed', 'failed');
    expect(same).toEqual(c);
    expect(same).not.toBe(c);
    for (const s of PROXY_STATUSES) expect(moveCount(c, s, s).total).toBe(3);
  });
});
