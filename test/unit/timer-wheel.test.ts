/**
 * DeadlineQueue (src/probe/net/timer-wheel.ts): deadlines fire in order, never
 * early, exactly once; cancel is final; shorter
 * deadlines queued later still fire first; a throwing callback does not
 * starve the others; an emptied queue holds no timer.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { DeadlineQueue, type TimerEntry } from '../../src/probe/net/timer-wheel';
import { FakeClock } from '../helpers/fake-clock';

class Entry implements TimerEntry {
  dueAt = 0;
  tPrev: TimerEntry | null = null;
  tNext: TimerEntry | null = null;
  tQueued = false;
  firedAt = -1;
  fired = 0;
  constructor(
    readonly name: string,
    private readonly log: string[],
    private readonly action: () => void = () => {},
    private readonly clock: FakeClock | null = null,
  ) {}
  onDeadline(): void {
    this.fired++;
    this.firedAt = this.clock?.now() ?? -1;
    this.log.push(this.name);
    this.action();
  }
}

/** A queue on a fake clock: its deadlines fire only as the test moves time. */
function queue(onError?: (err: unknown) => void) {
  const clock = new FakeClock();
  return { q: new DeadlineQueue(onError, clock), clock };
}

describe('DeadlineQueue', () => {
  test('equal timeouts fire in arrival order, not early, once, on one timer', async () => {
    const { q, clock } = queue();
    const log: string[] = [];
    const es: Entry[] = [];
    for (let i = 0; i < 50; i++) {
      const e = new Entry(`e${i}`, log, () => {}, clock);
      es.push(e);
      q.arm(e, 30);
    }
    expect(q.pending).toBe(50);
    expect(clock.pending).toBe(1);
    await clock.advance(29);
    expect(log).toEqual([]);
    await clock.advance(1);
    expect(log).toEqual(es.map((e) => e.name));
    for (const e of es) {
      expect(e.fired).toBe(1);
      expect(e.dueAt).toBe(30);
      expect(e.firedAt).toBe(30);
      expect(e.tQueued).toBe(false);
    }
    expect(q.pending).toBe(0);
    expect(clock.pending).toBe(0); // an emptied queue holds no timer
  });

  test('a shorter deadline queued later fires first, each at its time', async () => {
    const { q, clock } = queue();
    const log: string[] = [];
    q.arm(new Entry('long', log), 40);
    q.arm(new Entry('mid', log), 25);
    q.arm(new Entry('short', log), 5);
    q.arm(new Entry('long2', log), 40);
    await clock.advance(5);
    expect(log).toEqual(['short']);
    await clock.advance(20);
    expect(log).toEqual(['short', 'mid']);
    await clock.advance(15);
    expect(log).toEqual(['short', 'mid', 'long', 'long2']);
  });

  test('cancel is final, also from inside another callback of the same wake', async () => {
    const { q, clock } = queue();
    const log: string[] = [];
    const victim = new Entry('victim', log);
    const killer = new Entry('killer', log, () => q.cancel(victim));
    const gone = new Entry('gone', log);
    q.arm(killer, 10);
    q.arm(victim, 10);
    q.arm(gone, 10);
    q.cancel(gone);
    q.cancel(gone); // idempotent
    expect(q.pending).toBe(2);
    await clock.advance(40);
    expect(log).toEqual(['killer']);
    expect(victim.fired).toBe(0);
    expect(q.pending).toBe(0);
  });

  test('an entry can be armed again after it fired or was cancelled', async () => {
    const { q, clock } = queue();
    const log: string[] = [];
    const e = new Entry('e', log);
    q.arm(e, 5);
    q.cancel(e);
    q.arm(e, 5);
    await clock.advance(5);
    expect(log).toEqual(['e']);
    q.arm(e, 5);
    await clock.advance(5);
    expect(log).toEqual(['e', 'e']);
  });

  test('a throwing callback does not starve the others; the first error is reported once', async () => {
    const errors: unknown[] = [];
    const { q, clock } = queue((e) => errors.push(e));
    const log: string[] = [];
    q.arm(
      new Entry('a', log, () => {
        throw new Error('boom a');
      }),
      5,
    );
    q.arm(
      new Entry('b', log, () => {
        throw new Error('boom b');
      }),
      5,
    );
    q.arm(new Entry('c', log), 5);
    q.arm(new Entry('later', log), 30);
    await clock.advance(5);
    expect(log).toEqual(['a', 'b', 'c']);
    expect(errors.length).toBe(1);
    expect((errors[0] as Error).message).toBe('boom a');
    await clock.advance(25); // the queue re-armed for the rest
    expect(log).toEqual(['a', 'b', 'c', 'later']);
  });

  test('cancelling everything leaves nothing pending, no timer, and nothing fires', async () => {
    const { q, clock } = queue();
    const log: string[] = [];
    const es = Array.from({ length: 10 }, (_, i) => new Entry(`e${i}`, log));
    for (const e of es) q.arm(e, 10);
    for (const e of es) q.cancel(e);
    expect(q.pending).toBe(0);
    expect(clock.pending).toBe(0);
    await clock.advance(30);
    expect(log).toEqual([]);
  });

  test('any mix of arm/cancel keeps the list ordered and counted (model check)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.nat(9), fc.integer({ min: 1, max: 1000 })), { maxLength: 60 }),
        (ops) => {
          const { q } = queue();
          const es = Array.from({ length: 10 }, (_, i) => new Entry(`e${i}`, []));
          const model = new Set<number>();
          for (const [arm, i, ms] of ops) {
            const e = es[i] as Entry;
            if (arm && !model.has(i)) {
              q.arm(e, ms);
              model.add(i);
            } else if (!arm) {
              q.cancel(e);
              model.delete(i);
            }
          }
          expect(q.pending).toBe(model.size);
          // walk the list from the head: ordered by dueAt, holding exactly the model
          const seen: number[] = [];
          let cur = (q as unknown as { head: TimerEntry | null }).head;
          let last = -Infinity;
          while (cur !== null) {
            expect(cur.dueAt).toBeGreaterThanOrEqual(last);
            last = cur.dueAt;
            seen.push(es.indexOf(cur as Entry));
            cur = cur.tNext;
          }
          expect(seen.sort((a, b) => a - b)).toEqual([...model].sort((a, b) => a - b));
          for (const e of es) q.cancel(e);
          expect(q.pending).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('a wave of deadlines', () => {
  test('fires at most FIRE_BATCH per turn, the rest on later turns, all in deadline order', async () => {
    const { FIRE_BATCH } = await import('../../src/probe/net/timer-wheel');
    const { q, clock } = queue();
    const fired: number[] = [];
    const n = FIRE_BATCH * 2 + 10;
    for (let i = 0; i < n; i++) {
      q.arm({ dueAt: 0, tPrev: null, tNext: null, tQueued: false, onDeadline: () => fired.push(i) }, 0);
    }
    q.fire(); // one turn, synchronously: everything armed with 0 ms is due
    expect(fired).toHaveLength(FIRE_BATCH);
    expect(q.pending).toBe(n - FIRE_BATCH);
    await clock.advance(0);
    expect(fired).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(q.pending).toBe(0);
  });
});
