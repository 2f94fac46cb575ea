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
 * followSubscriber: a hub's subscriber that holds a follow while it is
 * subscribed (the hub closing it, or its unsubscribe, releases it): what
 * both adapters' subscribe() do.
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

/** A hub's subscriber: the progress hub's (with `address`) and the pool events hub's. */
export interface HubSubscriber {
  readonly accountId: string | null;
  readonly address?: string | null;
  send(text: string): void;
  close(code: number, reason: string): void;
  bufferedAmount(): number;
}

export type HubSubscribeOutcome = { ok: true; unsubscribe: () => void } | { ok: false; code: number; reason: string };

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

  /**
   * Hands `sub` to a hub (`subscribe`), wrapped so that its close releases
   * the follow of `key` it holds while subscribed; its unsubscribe releases
   * it too. Refused, or closed by the hub at once: no follow.
   */
  followSubscriber(key: string, sub: HubSubscriber, subscribe: (wrapped: HubSubscriber) => HubSubscribeOutcome): HubSubscribeOutcome {
    let release: (() => void) | null = null;
    let closed = false;
    const wrapped: HubSubscriber = {
      accountId: sub.accountId,
      ...(sub.address !== undefined ? { address: sub.address } : {}),
      send: (text) => sub.send(text),
      bufferedAmount: () => sub.bufferedAmount(),
      close: (code, reason) => {
        closed = true;
        release?.();
        sub.close(code, reason);
      },
    };
    const out = subscribe(wrapped);
    if (!out.ok || closed) return out;
    const r = this.follow(key);
    release = r;
    return {
      ok: true,
      unsubscribe: () => {
        out.unsubscribe();
        r();
      },
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
