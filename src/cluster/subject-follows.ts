/**
 * SubjectFollows: one NATS core subscription per key (a job, an account),
 * counted by the local listeners that need it, dropped with the last one:
 * what ClusterProgress (./progress.ts) and ClusterPoolEvents
 * (./pool-events.ts) each did by hand.
 *
 *   (none) --follow(key), the first--> following: SUB subject(key); then onSubscribed
 *   following --message--> onMessage(key, follow, data)
 *   following --the last release()--> (none): UNSUB, then onDropped
 *        (`deferDrop`: in a microtask, never inside a caller that is closing
 *        listeners; a follow taken again meanwhile stays)
 *
 * A subscribe that throws (the connection is closed) is told to `onError`
 * and leaves a follow with no subscription, released as any other.
 * closeAll() unsubscribes every follow (no onDropped) and refuses none after:
 * the owner checks its own closed flag.
 */
import type { NatsConnection, Subscription } from '@nats-io/transport-node';

export interface Follow<S> {
  sub: Subscription | null;
  /** Local listeners holding it. */
  refs: number;
  /** The owner's per-key state (made by `init`). */
  state: S;
}

export interface SubjectFollowsOptions<S> {
  nc: NatsConnection;
  subject: (key: string) => string;
  init: () => S;
  onMessage: (key: string, f: Follow<S>, data: Uint8Array) => void;
  /** After the SUB (a KV read that must not race the subject). */
  onSubscribed?: (key: string, f: Follow<S>) => void;
  /** After the UNSUB of a follow whose last listener went. */
  onDropped?: (key: string, f: Follow<S>) => void;
  /** The subscribe threw. */
  onError: (err: unknown) => void;
  /** Drop in a microtask rather than at once (default false). */
  deferDrop?: boolean;
}

export class SubjectFollows<S> {
  readonly #o: SubjectFollowsOptions<S>;
  readonly #follows = new Map<string, Follow<S>>();

  constructor(o: SubjectFollowsOptions<S>) {
    this.#o = o;
  }

  /** Keys followed (one subscription each). */
  get size(): number {
    return this.#follows.size;
  }

  /** The follow of `key` while it is followed. */
  get(key: string): Follow<S> | undefined {
    return this.#follows.get(key);
  }

  /** Counts one listener on `key` (subscribing on the first); returns its release (idempotent). */
  follow(key: string): () => void {
    let f = this.#follows.get(key);
    if (f === undefined) {
      const entry: Follow<S> = { sub: null, refs: 0, state: this.#o.init() };
      f = entry;
      this.#follows.set(key, entry);
      try {
        entry.sub = this.#o.nc.subscribe(this.#o.subject(key), {
          callback: (err, msg) => {
            if (err === null) this.#o.onMessage(key, entry, msg.data);
          },
        });
        this.#o.onSubscribed?.(key, entry);
      } catch (err) {
        this.#o.onError(err);
      }
    }
    const entry = f;
    entry.refs++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.refs--;
      if (entry.refs > 0) return;
      if (this.#o.deferDrop === true) queueMicrotask(() => this.#dropIfIdle(key, entry));
      else this.#dropIfIdle(key, entry);
    };
  }

  /** Unsubscribes every follow. */
  closeAll(): void {
    const all = [...this.#follows.values()];
    this.#follows.clear();
    for (const f of all) unsubscribe(f);
  }

  #dropIfIdle(key: string, f: Follow<S>): void {
    if (f.refs > 0 || this.#follows.get(key) !== f) return;
    this.#follows.delete(key);
    unsubscribe(f);
    this.#o.onDropped?.(key, f);
  }
}

function unsubscribe(f: Follow<unknown>): void {
  try {
    f.sub?.unsubscribe();
  } catch {
    // the connection is closed: nothing to undo
  }
  f.sub = null;
}
