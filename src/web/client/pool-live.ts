/**
 * An open pool's "Live events": its events over `/ws?pool=` (live-feed.ts,
 * the machine: connecting, live, reconnecting, closed) shown as the short
 * list of the latest events (MAX_LIVE_EVENTS, newest first) with the feed's
 * state beside the heading. What each event changes elsewhere (cards, list,
 * proxies) is the page's: `onEvent`.
 */
import { openPoolEvents } from './api';
import { byId, setText, show } from './dom';
import { LIVE_FEED_TEXT, LiveFeed, type LiveFeedPort } from './live-feed';
import { isPoolEvent, MAX_LIVE_EVENTS, poolEventHtml, type PoolEventView } from './pool-format';

export const POOL_LIVE_IDS = Object.freeze({ section: 'pool-live', state: 'pool-live-state', empty: 'pool-live-empty', list: 'pool-events' });

export function poolLiveHtml(): string {
  return `    <section id="pool-live" class="pool-live" aria-labelledby="pool-live-h">
      <h3 id="pool-live-h">Live events <span id="pool-live-state" class="hint" role="status"></span></h3>
      <p id="pool-live-empty" class="hint">Nothing yet: proxies going up or down, finished rounds and pauses show here as they happen.</p>
      <ol id="pool-events" class="pool-events"></ol>
    </section>`;
}

/** The browser's side of the feed's port: the pool's events socket and setTimeout. */
export function browserFeedPort(poolId: string, key: string): LiveFeedPort {
  return {
    open: (h) => openPoolEvents(poolId, key, h.message, h.opened, h.closed),
    after(ms, fn) {
      const t = setTimeout(fn, ms);
      return () => clearTimeout(t);
    },
  };
}

export interface PoolLiveHooks {
  /** An event of the followed pool. */
  onEvent(e: PoolEventView): void;
  /** The service says the pool was deleted. */
  onDeleted(): void;
}

export function mountPoolLive(hooks: PoolLiveHooks): { follow(poolId: string, key: string | null): void; stop(): void } {
  const state = byId(POOL_LIVE_IDS.state);
  const empty = byId(POOL_LIVE_IDS.empty);
  const list = byId(POOL_LIVE_IDS.list);
  let feed: { poolId: string; live: LiveFeed } | null = null;
  let items: string[] = [];

  const stop = (): void => {
    feed?.live.stop();
    feed = null;
  };

  const onMessage = (poolId: string, msg: unknown): void => {
    if (!isPoolEvent(msg, poolId)) return;
    show(empty, false);
    items = [poolEventHtml(msg), ...items].slice(0, MAX_LIVE_EVENTS);
    list.innerHTML = items.join('');
    hooks.onEvent(msg);
  };

  return {
    /** Follows `poolId`: the same pool keeps a feed that is connecting or live; otherwise a new feed at once (a pending reopen is cut short). */
    follow(poolId, key) {
      if (feed?.poolId === poolId && (feed.live.state === 'connecting' || feed.live.state === 'live')) return;
      stop();
      items = [];
      list.innerHTML = '';
      show(empty, true);
      if (key === null) return;
      const live = new LiveFeed(browserFeedPort(poolId, key), {
        state: (s) => setText(state, LIVE_FEED_TEXT[s]),
        message: (msg) => onMessage(poolId, msg),
        deleted: () => hooks.onDeleted(),
      });
      feed = { poolId, live };
    },
    stop,
  };
}
