/**
 * Time as the modules that wait see it: the system's timers in production, a
 * fake clock in unit tests (test/helpers/fake-clock.ts), so that no unit test
 * depends on how fast the machine runs. A module that waits takes a `clock`
 * option (default systemClock) instead of calling setTimeout and Date.now
 * itself.
 */

export interface Clock {
  /** Milliseconds since the epoch (the system clock) or since the fake clock began. */
  now(): number;
  /**
   * Calls `fn` once, `ms` from now; the function returned cancels it (safe
   * after it fired). `unref`: the timer does not keep the process alive.
   */
  after(ms: number, fn: () => void, opts?: { unref?: boolean }): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  after(ms, fn, opts) {
    const t = setTimeout(fn, ms);
    if (opts?.unref === true) t.unref?.();
    return () => clearTimeout(t);
  },
};

/** The system's timers on a monotonic time line (performance.now()): for deadlines that a wall-clock jump must not move. */
export const monotonicClock: Clock = {
  now: () => performance.now(),
  after: systemClock.after,
};

/** Resolves `ms` from now on `clock`. */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise<void>((resolve) => clock.after(ms, resolve));
}

/**
 * A graceful stop: waits for `work()` up to `graceMs` on `clock`; when the
 * grace runs out first, calls `onGraceOver` (which must make the work end:
 * cancel, abort) and waits for `work()` again (asked anew: what runs then).
 * Resolves true when the grace ran out. The work's promise must not reject.
 */
export async function waitWithGrace(work: () => Promise<unknown>, graceMs: number, onGraceOver: () => void, clock: Clock = systemClock): Promise<boolean> {
  let cancel = (): void => {};
  const graceOver = new Promise<true>((resolve) => {
    cancel = clock.after(graceMs, () => resolve(true));
  });
  const over = await Promise.race([work().then(() => false), graceOver]);
  cancel();
  if (over) {
    onGraceOver();
    await work();
  }
  return over;
}

/**
 * Resolves on the next turn of the event loop, after the I/O that is ready
 * (setImmediate): a long run of awaited statements yields here so that
 * sockets are served between them. An awaited PGlite statement resumes in a
 * microtask, which is no turn at all: 100 000 proxies inserted in 10 statements
 * and loaded in 10 more held the main thread for 6.8 s in one piece (issue 29).
 */
export function nextTurn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}
