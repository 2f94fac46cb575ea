/**
 * src/clock.ts: the system clock's timers, sleep, and waitWithGrace (a
 * graceful stop: the grace, then cancel), driven by the fake clock
 * (test/helpers/fake-clock.ts) so nothing here depends on the machine's speed.
 */
import { describe, expect, test } from 'bun:test';
import { nextTurn, sleep, systemClock, waitWithGrace } from '../../src/clock';
import { FakeClock, settle } from '../helpers/fake-clock';

/** A piece of work the test ends by hand. */
function work() {
  let end!: () => void;
  const done = new Promise<void>((resolve) => (end = resolve));
  return { done, end };
}

describe('systemClock', () => {
  test('fires a timer; a cancelled one never fires (a later timer has fired by then)', async () => {
    const fired: string[] = [];
    const cancel = systemClock.after(1, () => fired.push('cancelled'));
    cancel();
    await new Promise<void>((resolve) => systemClock.after(5, () => (fired.push('kept'), resolve())));
    expect(fired).toEqual(['kept']);
    cancel(); // safe after the fact
  });

  test('now is the wall clock', () => {
    const before = Date.now();
    const now = systemClock.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });
});

describe('FakeClock', () => {
  test('fires due timers in order of their time, then of their setting; not one before its time', async () => {
    const clock = new FakeClock(1000);
    const fired: string[] = [];
    clock.after(20, () => fired.push(`b@${clock.now()}`));
    clock.after(10, () => fired.push(`a@${clock.now()}`));
    clock.after(20, () => fired.push(`c@${clock.now()}`));
    await clock.advance(19);
    expect(fired).toEqual(['a@1010']);
    await clock.advance(1);
    expect(fired).toEqual(['a@1010', 'b@1020', 'c@1020']);
    expect(clock.now()).toBe(1020);
    expect(clock.pending).toBe(0);
  });

  test('a timer set by a timer, or by the work it starts, fires within the same advance when due', async () => {
    const clock = new FakeClock();
    const fired: number[] = [];
    clock.after(10, () => void Promise.resolve().then(() => clock.after(10, () => fired.push(clock.now()))));
    await clock.advance(25);
    expect(fired).toEqual([20]);
  });
});

describe('sleep', () => {
  test('resolves when its time has passed on the clock', async () => {
    const clock = new FakeClock();
    let woke = false;
    void sleep(clock, 50).then(() => (woke = true));
    await clock.advance(49);
    expect(woke).toBe(false);
    await clock.advance(1);
    expect(woke).toBe(true);
  });
});

describe('waitWithGrace', () => {
  test('work that ends within the grace: false, nothing cancelled, its timer gone', async () => {
    const clock = new FakeClock();
    const w = work();
    let cancelled = false;
    const over = waitWithGrace(() => w.done, 1000, () => (cancelled = true), clock);
    await clock.advance(999);
    w.end();
    expect(await over).toBe(false);
    expect(cancelled).toBe(false);
    expect(clock.pending).toBe(0);
  });

  test('the grace runs out: onGraceOver once, then it waits for the work (asked anew) to end', async () => {
    const clock = new FakeClock();
    const first = work();
    const second = work();
    let asked = 0;
    let cancels = 0;
    let resolved = false;
    const over = waitWithGrace(() => (asked++ === 0 ? first.done : second.done), 1000, () => cancels++, clock).then((v) => ((resolved = true), v));
    await clock.advance(1000);
    expect(cancels).toBe(1);
    expect(asked).toBe(2);
    first.end(); // what ran at the start is not what is waited for now
    await settle();
    expect(resolved).toBe(false);
    second.end();
    expect(await over).toBe(true);
    expect(cancels).toBe(1);
  });
});

describe('nextTurn', () => {
  test('resolves on a later turn of the event loop: after every microtask, and after a socket that was ready meanwhile was read', async () => {
    const order: string[] = [];
    const turn = nextTurn().then(() => order.push('turn'));
    queueMicrotask(() => order.push('microtask'));
    await Promise.resolve().then(() => order.push('awaited'));
    expect(order).toEqual(['microtask', 'awaited']); // not a microtask itself
    await turn;
    expect(order).toEqual(['microtask', 'awaited', 'turn']);

    // what awaited PGlite statements never let through: a connection's bytes, read between two turns
    const got: string[] = [];
    const server = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data: (_s, d) => void got.push(d.toString()) } });
    try {
      const client = await Bun.connect({ hostname: '127.0.0.1', port: server.port, socket: { data: () => undefined } });
      client.write('ping');
      for (let i = 0; i < 200 && got.length === 0; i++) await nextTurn();
      expect(got.join('')).toBe('ping');
      client.end();
    } finally {
      server.stop(true);
    }
  });
});
