/**
 * A mailbox: messages are handled one at a time, in arrival order, even when
 * a handler awaits. The job actor's only concurrency primitive: whatever
 * arrives from the probe workers, the scheduler or a subscriber is posted here, so the
 * actor's state is never touched by two handlers at once.
 *
 * The first handler error stops the mailbox: later messages are dropped and
 * `failed` holds the error; `onError` fires once.
 */
export class Mailbox<M> {
  #queue: M[] = [];
  #head = 0;
  #running = false;
  #failed: unknown = undefined;
  #idleWaiters: (() => void)[] = [];
  readonly #handle: (msg: M) => void | Promise<void>;
  readonly #onError: (err: unknown) => void;

  constructor(handle: (msg: M) => void | Promise<void>, onError: (err: unknown) => void) {
    this.#handle = handle;
    this.#onError = onError;
  }

  get failed(): unknown {
    return this.#failed;
  }

  post(msg: M): void {
    if (this.#failed !== undefined) return;
    this.#queue.push(msg);
    if (!this.#running) void this.#drain();
  }

  /** Posts a message that is handled before any waiting one (right after the handler running now). */
  postFirst(msg: M): void {
    if (this.#failed !== undefined) return;
    if (this.#head > 0) this.#queue[--this.#head] = msg;
    else this.#queue.unshift(msg);
    if (!this.#running) void this.#drain();
  }

  /** Resolves when every message posted so far has been handled. */
  idle(): Promise<void> {
    if (!this.#running) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  async #drain(): Promise<void> {
    this.#running = true;
    try {
      while (this.#head < this.#queue.length) {
        const msg = this.#queue[this.#head] as M;
        this.#queue[this.#head++] = undefined as M;
        if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
          this.#queue = this.#queue.slice(this.#head);
          this.#head = 0;
        }
        const r = this.#handle(msg);
        if (r instanceof Promise) await r;
      }
    } catch (err) {
      this.#failed = err ?? new Error('mailbox handler failed');
      this.#queue = [];
      this.#head = 0;
      try {
        this.#onError(err);
      } catch {
        // onError must not take the drain loop down with it
      }
    } finally {
      this.#running = false;
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const w of waiters) w();
    }
  }
}
