/**
 * One timer for many deadlines (the probe budget of every exchange on this
 * thread): a doubly linked list kept in deadline order plus a single
 * setTimeout armed for the head. Probes of one shard share a timeout, so
 * their deadlines arrive in order and `arm` appends in O(1); a shorter
 * deadline walks back from the tail (custom-URL budgets, which are a probe's
 * timeout minus its DNS time, differ by a few ms at most). `cancel` is O(1)
 * and never touches the OS timer unless the list becomes empty (then the
 * timer is cleared, so an idle thread holds no timer).
 *
 * Entries are the callers' own objects (intrusive list: no allocation per
 * deadline). A deadline fires no earlier than its time and, timer latency
 * aside, no later: what is due when the timer wakes is fired in deadline
 * order, at most FIRE_BATCH per event-loop turn (the rest on the next turn,
 * after pending I/O, so a wave of timeouts does not delay live answers). Callbacks run once; an entry cancelled inside a
 * callback of the same wake is not fired. A callback that throws does not
 * starve the others: the wake finishes, then the first error goes to
 * `onError` (default: rethrown, as from any timer callback). Time is the
 * queue's clock (default monotonicClock; unit tests drive a fake one).
 */
import { monotonicClock, type Clock } from '../../clock';

export interface TimerEntry {
  /** The clock's now() at which onDeadline fires; set by arm(). */
  dueAt: number;
  tPrev: TimerEntry | null;
  tNext: TimerEntry | null;
  /** true while queued */
  tQueued: boolean;
  onDeadline(): void;
}

export class DeadlineQueue {
  private head: TimerEntry | null = null;
  private tail: TimerEntry | null = null;
  /** cancels the armed timer; null when none is armed */
  private timer: (() => void) | null = null;
  /** the dueAt the OS timer was armed for (Infinity when none) */
  private armedFor = Infinity;
  private size = 0;
  private readonly onError: (err: unknown) => void;
  private readonly clock: Clock;
  private readonly wake = (): void => this.fire();

  constructor(onError: (err: unknown) => void = rethrow, clock: Clock = monotonicClock) {
    this.onError = onError;
    this.clock = clock;
  }

  /** Entries waiting. */
  get pending(): number {
    return this.size;
  }

  /** Queue `e` to fire `ms` from now. `e` must not be queued already. */
  arm(e: TimerEntry, ms: number): void {
    const at = this.clock.now() + ms;
    e.dueAt = at;
    e.tQueued = true;
    this.size++;
    let after = this.tail;
    while (after !== null && after.dueAt > at) after = after.tPrev;
    if (after === null) {
      e.tPrev = null;
      e.tNext = this.head;
      if (this.head !== null) this.head.tPrev = e;
      else this.tail = e;
      this.head = e;
      if (at < this.armedFor) this.rearm(at);
    } else {
      e.tPrev = after;
      e.tNext = after.tNext;
      if (after.tNext !== null) after.tNext.tPrev = e;
      else this.tail = e;
      after.tNext = e;
    }
  }

  /** Remove `e` if queued; a no-op otherwise. */
  cancel(e: TimerEntry): void {
    if (!e.tQueued) return;
    this.unlink(e);
    if (this.head === null && this.timer !== null) {
      this.timer();
      this.timer = null;
      this.armedFor = Infinity;
    }
  }

  private unlink(e: TimerEntry): void {
    e.tQueued = false;
    this.size--;
    if (e.tPrev !== null) e.tPrev.tNext = e.tNext;
    else this.head = e.tNext;
    if (e.tNext !== null) e.tNext.tPrev = e.tPrev;
    else this.tail = e.tPrev;
    e.tPrev = null;
    e.tNext = null;
  }

  private rearm(at: number): void {
    this.timer?.();
    this.armedFor = at;
    this.timer = this.clock.after(Math.max(0, Math.ceil(at - this.clock.now())), this.wake);
  }

  /** The OS timer fired: run everything due (at most FIRE_BATCH per turn), re-arm for the rest. */
  fire(): void {
    this.timer = null;
    this.armedFor = Infinity;
    const now = this.clock.now();
    let failed = false;
    let first: unknown = null;
    let e = this.head;
    let n = 0;
    while (e !== null && e.dueAt <= now) {
      if (++n > FIRE_BATCH) {
        // A wave of thousands of deadlines (black holes started together) would
        // hold the thread for tens of ms while answers of working proxies wait
        // in socket buffers: fire the rest on the next turn, after I/O.
        this.armedFor = e.dueAt;
        this.timer = this.clock.after(0, this.wake);
        if (failed) this.onError(first);
        return;
      }
      this.unlink(e);
      try {
        e.onDeadline();
      } catch (err) {
        if (!failed) first = err;
        failed = true;
      }
      e = this.head;
    }
    if (this.head !== null) this.rearm(this.head.dueAt);
    if (failed) this.onError(first);
  }
}

/** Deadlines fired per event-loop turn before the rest yield to I/O. */
export const FIRE_BATCH = 256;

function rethrow(err: unknown): void {
  throw err;
}

/** The queue every exchange on this thread uses. */
export const probeDeadlines = new DeadlineQueue();
