/**
 * The open pool's live feed (its events over `/ws?pool=`), a pure machine
 * over a port: the socket and the timers come from the caller, so it runs
 * and is tested without a browser.
 *
 *   connecting ── opened ──> live
 *   connecting | live ── dropped ──> reconnecting ── after reopenMs ──> connecting
 *   any but closed ── "pool deleted" or stop() ──> closed (final: a new feed for the next pool)
 *
 * The browser code cannot import src/state-machine.ts (the dependency rule's
 * web-client-browser-only), so the table has its own copy of that helper's
 * shape: each state -> the states it may move to, and a move not in the
 * table throws.
 */

export type LiveFeedState = 'connecting' | 'live' | 'reconnecting' | 'closed';

/** For each state, the states it may move to (closed: none). */
export const LIVE_FEED_TRANSITIONS: Readonly<Record<LiveFeedState, readonly LiveFeedState[]>> = Object.freeze({
  connecting: Object.freeze(['live', 'reconnecting', 'closed'] as const),
  live: Object.freeze(['reconnecting', 'closed'] as const),
  reconnecting: Object.freeze(['connecting', 'closed'] as const),
  closed: Object.freeze([] as const),
});

/** `to` when the table allows `from -> to`; otherwise throws (a bug in the caller). */
export function moveLiveFeed(from: LiveFeedState, to: LiveFeedState): LiveFeedState {
  if (!LIVE_FEED_TRANSITIONS[from].includes(to)) throw new Error(`live feed: ${from} -> ${to} is not a transition`);
  return to;
}

/** The text beside "Live events" for each state. */
export const LIVE_FEED_TEXT: Readonly<Record<LiveFeedState, string>> = Object.freeze({
  connecting: '(connecting…)',
  live: '(live)',
  reconnecting: '(reconnecting…)',
  closed: '',
});

/** What the feed needs from the outside: the events socket and a timer. */
export interface LiveFeedPort {
  /** Opens the pool's events socket; returns its close. */
  open(handlers: { message(msg: unknown): void; opened(): void; closed(code: number, reason: string): void }): () => void;
  /** Runs `fn` after `ms`; returns its cancel. */
  after(ms: number, fn: () => void): () => void;
}

export interface LiveFeedHooks {
  /** Every state the feed enters (its first, connecting, too). */
  state(s: LiveFeedState): void;
  /** A message of the socket. */
  message(msg: unknown): void;
  /** The service closed the socket because the pool was deleted. */
  deleted(): void;
}

export const LIVE_REOPEN_MS = 5000;

/** A running feed: opens at once, reopens after a drop, until stop() or "pool deleted". */
export class LiveFeed {
  #state: LiveFeedState = 'connecting';
  #close: (() => void) | null = null;
  #cancelReopen: (() => void) | null = null;

  constructor(
    private readonly port: LiveFeedPort,
    private readonly hooks: LiveFeedHooks,
    private readonly reopenMs = LIVE_REOPEN_MS,
  ) {
    this.hooks.state('connecting');
    this.#connect();
  }

  get state(): LiveFeedState {
    return this.#state;
  }

  /** Closes the socket and any pending reopen; the feed is over. */
  stop(): void {
    if (this.#state === 'closed') return;
    this.#enter('closed');
    this.#cancelReopen?.();
    this.#cancelReopen = null;
    const close = this.#close;
    this.#close = null;
    close?.();
  }

  #enter(to: LiveFeedState): void {
    this.#state = moveLiveFeed(this.#state, to);
    this.hooks.state(to);
  }

  #connect(): void {
    let mine = true;
    const close = this.port.open({
      message: (msg) => {
        if (mine && this.#state !== 'closed') this.hooks.message(msg);
      },
      opened: () => {
        if (mine && this.#state === 'connecting') this.#enter('live');
      },
      closed: (_code, reason) => {
        if (!mine || this.#state === 'closed') return;
        mine = false;
        this.#close = null;
        if (reason === 'pool deleted') {
          this.#enter('closed');
          this.hooks.deleted();
          return;
        }
        this.#enter('reconnecting');
        this.#cancelReopen = this.port.after(this.reopenMs, () => {
          this.#cancelReopen = null;
          if (this.#state !== 'reconnecting') return;
          this.#enter('connecting');
          this.#connect();
        });
      },
    });
    if (this.#state === 'closed') close();
    else this.#close = close;
  }
}
