import { describe, expect, test } from 'bun:test';
import { LIVE_FEED_TEXT, LIVE_FEED_TRANSITIONS, LiveFeed, moveLiveFeed, type LiveFeedPort, type LiveFeedState } from '../../src/web/client/live-feed';

/** A fake port: sockets the test opens and closes by hand, timers it runs by hand. */
function fakePort() {
  type Handlers = Parameters<LiveFeedPort['open']>[0];
  const sockets: { h: Handlers; closed: boolean }[] = [];
  const timers: { ms: number; fn: () => void; cancelled: boolean }[] = [];
  const port: LiveFeedPort = {
    open(h) {
      const s = { h, closed: false };
      sockets.push(s);
      return () => {
        s.closed = true;
      };
    },
    after(ms, fn) {
      const t = { ms, fn, cancelled: false };
      timers.push(t);
      return () => {
        t.cancelled = true;
      };
    },
  };
  return { port, sockets, timers };
}

function feed(reopenMs = 5000) {
  const f = fakePort();
  const states: LiveFeedState[] = [];
  const messages: unknown[] = [];
  let deleted = 0;
  const live = new LiveFeed(f.port, { state: (s) => states.push(s), message: (m) => messages.push(m), deleted: () => deleted++ }, reopenMs);
  return { ...f, live, states, messages, deleted: () => deleted };
}

describe('the live feed table', () => {
  test('closed is final; every state reaches closed', () => {
    expect(LIVE_FEED_TRANSITIONS.closed).toEqual([]);
    for (const s of ['connecting', 'live', 'reconnecting'] as const) expect(LIVE_FEED_TRANSITIONS[s]).toContain('closed');
    expect(Object.isFrozen(LIVE_FEED_TRANSITIONS.live)).toBe(true);
  });
  test('a move not in the table throws', () => {
    expect(moveLiveFeed('connecting', 'live')).toBe('live');
    expect(() => moveLiveFeed('live', 'connecting')).toThrow('live -> connecting');
    expect(() => moveLiveFeed('closed', 'connecting')).toThrow();
  });
  test('each state has its text', () => {
    expect(LIVE_FEED_TEXT).toEqual({ connecting: '(connecting…)', live: '(live)', reconnecting: '(reconnecting…)', closed: '' });
  });
});

describe('LiveFeed', () => {
  test('connects at once, goes live on open, passes messages on', () => {
    const t = feed();
    expect(t.sockets.length).toBe(1);
    expect(t.states).toEqual(['connecting']);
    t.sockets[0]!.h.opened();
    t.sockets[0]!.h.message({ type: 'x' });
    expect(t.states).toEqual(['connecting', 'live']);
    expect(t.messages).toEqual([{ type: 'x' }]);
    expect(t.live.state).toBe('live');
  });

  test('a drop waits reopenMs, then connects again on a new socket', () => {
    const t = feed(1234);
    t.sockets[0]!.h.opened();
    t.sockets[0]!.h.closed(1006, '');
    expect(t.live.state).toBe('reconnecting');
    expect(t.timers.map((x) => x.ms)).toEqual([1234]);
    expect(t.sockets.length).toBe(1);
    t.timers[0]!.fn();
    expect(t.sockets.length).toBe(2);
    t.sockets[1]!.h.opened();
    expect(t.states).toEqual(['connecting', 'live', 'reconnecting', 'connecting', 'live']);
  });

  test('a socket that never opened and drops reconnects too', () => {
    const t = feed();
    t.sockets[0]!.h.closed(1006, '');
    expect(t.states).toEqual(['connecting', 'reconnecting']);
  });

  test('"pool deleted" closes the feed for good and says so once', () => {
    const t = feed();
    t.sockets[0]!.h.opened();
    t.sockets[0]!.h.closed(1000, 'pool deleted');
    expect(t.live.state).toBe('closed');
    expect(t.deleted()).toBe(1);
    expect(t.timers.length).toBe(0);
    t.sockets[0]!.h.closed(1000, 'pool deleted');
    expect(t.deleted()).toBe(1);
  });

  test('stop closes the socket, cancels a pending reopen, and ignores what comes after', () => {
    const t = feed();
    t.sockets[0]!.h.opened();
    t.live.stop();
    expect(t.sockets[0]!.closed).toBe(true);
    expect(t.states.at(-1)).toBe('closed');
    t.sockets[0]!.h.message({ late: true });
    t.sockets[0]!.h.closed(1000, '');
    expect(t.messages).toEqual([]);
    expect(t.timers.length).toBe(0);

    const u = feed();
    u.sockets[0]!.h.closed(1006, '');
    u.live.stop();
    expect(u.timers[0]!.cancelled).toBe(true);
    u.timers[0]!.fn(); // a timer that fires anyway opens nothing
    expect(u.sockets.length).toBe(1);
    u.live.stop(); // twice is fine
    expect(u.states).toEqual(['connecting', 'reconnecting', 'closed']);
  });

  test('an old socket closing after a reconnect does not touch the new one', () => {
    const t = feed();
    t.sockets[0]!.h.closed(1006, '');
    t.timers[0]!.fn();
    t.sockets[0]!.h.closed(1006, '');
    t.sockets[0]!.h.message({ old: true });
    expect(t.live.state).toBe('connecting');
    expect(t.messages).toEqual([]);
  });
});
