/**
 * The pool events hub (src/pools/events-hub.ts): fan-out per account and
 * pool (another account's or another pool's subscriber hears nothing), caps
 * (per pool, per account, pools followed: 1013), a slow reader closed 1013
 * instead of buffered, unsubscribe (idempotent, frees its counts), a deleted
 * pool closes its subscribers 1000, watchers per account (isolated from one
 * another), closeAll.
 */
import { describe, expect, test } from 'bun:test';
import { pausedEvent, proxyEvent, type PoolEvent } from '../../src/pools/events';
import { PoolEventsHub, type Subscriber, type PoolSignal } from '../../src/pools/events-hub';

class FakeSub implements Subscriber {
  readonly sent: string[] = [];
  readonly closes: { code: number; reason: string }[] = [];
  buffered = 0;
  constructor(readonly accountId: string | null) {}
  send(text: string): void {
    this.sent.push(text);
  }
  close(code: number, reason: string): void {
    this.closes.push({ code, reason });
  }
  bufferedAmount(): number {
    return this.buffered;
  }
  get events(): PoolEvent[] {
    return this.sent.map((t) => JSON.parse(t) as PoolEvent);
  }
}

const COUNTS = { total: 3, working: 2, failed: 1, unchecked: 0 };
const down = (pool: string, port = 8080): PoolEvent =>
  proxyEvent(pool, 'proxy.down', Date.UTC(2026, 0, 1), { host: '10.0.0.1', port }, COUNTS, { error: { code: 'timeout', message: 'no answer' } });

function sub(hub: PoolEventsHub, account: string, pool: string, s: FakeSub): () => void {
  const out = hub.subscribe(account, pool, s);
  if (!out.ok) throw new Error(`refused ${out.code} ${out.reason}`);
  return out.unsubscribe;
}

describe('PoolEventsHub', () => {
  test('an event reaches every subscriber of its account and pool, as its JSON; nobody else', () => {
    const hub = new PoolEventsHub();
    const a1 = new FakeSub('a');
    const a2 = new FakeSub('a');
    const otherPool = new FakeSub('a');
    const otherAccount = new FakeSub('b');
    sub(hub, 'a', 'pool1aaaaaa', a1);
    sub(hub, 'a', 'pool1aaaaaa', a2);
    sub(hub, 'a', 'pool2aaaaaa', otherPool);
    sub(hub, 'b', 'pool1aaaaaa', otherAccount); // the same pool id under another account: never the same pool
    const e = down('pool1aaaaaa');
    hub.publish('a', e);
    expect(a1.events).toEqual([e]);
    expect(a2.events).toEqual([e]);
    expect(otherPool.sent).toEqual([]);
    expect(otherAccount.sent).toEqual([]);
    expect(hub.subscribers).toBe(4);
  });

  test('unsubscribe stops the messages and frees the counts, once however often it is called', () => {
    const hub = new PoolEventsHub({ maxPerAccount: 1 });
    const s = new FakeSub('a');
    const off = sub(hub, 'a', 'pool1aaaaaa', s);
    off();
    off();
    hub.publish('a', down('pool1aaaaaa'));
    expect(s.sent).toEqual([]);
    expect(hub.subscribers).toBe(0);
    expect(hub.pools).toBe(0);
    expect(hub.listens('a')).toBe(false);
    // the account's one slot is free again
    expect(hub.subscribe('a', 'pool1aaaaaa', new FakeSub('a')).ok).toBe(true);
  });

  test('caps: per pool, per account, pools followed: refused with 1013; other tenants unaffected', () => {
    const hub = new PoolEventsHub({ maxPerPool: 2, maxPerAccount: 3, maxPools: 2 });
    sub(hub, 'a', 'pool1aaaaaa', new FakeSub('a'));
    sub(hub, 'a', 'pool1aaaaaa', new FakeSub('a'));
    expect(hub.subscribe('a', 'pool1aaaaaa', new FakeSub('a'))).toEqual({ ok: false, code: 1013, reason: 'too many subscribers for this pool' });
    sub(hub, 'a', 'pool2aaaaaa', new FakeSub('a'));
    const perAccount = hub.subscribe('a', 'pool2aaaaaa', new FakeSub('a'));
    expect(perAccount.ok).toBe(false);
    if (!perAccount.ok) expect(perAccount.code).toBe(1013);
    const pools = hub.subscribe('b', 'pool3aaaaaa', new FakeSub('b'));
    expect(pools).toEqual({ ok: false, code: 1013, reason: 'too many pools followed' });
    expect(hub.subscribe('b', 'pool1aaaaaa', new FakeSub('b')).ok).toBe(false); // b|pool1 is a third pool key
    expect(hub.subscribers).toBe(3);
  });

  test('a subscriber that does not read is closed with 1013 and dropped; the others still get the event', () => {
    const hub = new PoolEventsHub({ maxBufferedBytes: 1000 });
    const slow = new FakeSub('a');
    const fast = new FakeSub('a');
    sub(hub, 'a', 'pool1aaaaaa', slow);
    sub(hub, 'a', 'pool1aaaaaa', fast);
    slow.buffered = 1001;
    hub.publish('a', down('pool1aaaaaa'));
    hub.publish('a', down('pool1aaaaaa', 8081));
    expect(slow.sent).toEqual([]);
    expect(slow.closes).toEqual([{ code: 1013, reason: 'subscriber too slow' }]);
    expect(fast.sent.length).toBe(2);
    expect(hub.subscribers).toBe(1);
  });

  test('a send that throws (socket already closed) does not stop the fan-out', () => {
    const hub = new PoolEventsHub();
    const broken = new FakeSub('a');
    broken.send = () => {
      throw new Error('closed');
    };
    const ok = new FakeSub('a');
    sub(hub, 'a', 'pool1aaaaaa', broken);
    sub(hub, 'a', 'pool1aaaaaa', ok);
    hub.publish('a', down('pool1aaaaaa'));
    expect(ok.sent.length).toBe(1);
  });

  test('closePool: the pool\'s subscribers are closed 1000 "pool deleted" and uncounted; other pools stay', () => {
    const hub = new PoolEventsHub();
    const s = new FakeSub('a');
    const stays = new FakeSub('a');
    sub(hub, 'a', 'pool1aaaaaa', s);
    sub(hub, 'a', 'pool2aaaaaa', stays);
    hub.closePool('a', 'pool1aaaaaa');
    expect(s.closes).toEqual([{ code: 1000, reason: 'pool deleted' }]);
    expect(stays.closes).toEqual([]);
    expect(hub.subscribers).toBe(1);
    hub.closePool('b', 'pool2aaaaaa'); // another account's id: nothing
    expect(stays.closes).toEqual([]);
  });

  test('watchers hear the account\'s events and closes; one that throws does not keep the others or the subscribers from hearing', () => {
    const hub = new PoolEventsHub();
    const heard: PoolSignal[] = [];
    const stopBad = hub.watch('a', () => {
      throw new Error('bad watcher');
    });
    const stop = hub.watch('a', (s) => heard.push(s));
    const other: PoolSignal[] = [];
    hub.watch('b', (s) => other.push(s));
    const s = new FakeSub('a');
    sub(hub, 'a', 'pool1aaaaaa', s);
    const e = pausedEvent('pool1aaaaaa', 0, COUNTS, 'owner');
    hub.publish('a', e);
    hub.closePool('a', 'pool1aaaaaa');
    expect(heard).toEqual([
      { kind: 'event', event: e },
      { kind: 'closed', pool: 'pool1aaaaaa' },
    ]);
    expect(other).toEqual([]);
    expect(s.sent.length).toBe(1);
    expect(hub.listens('b')).toBe(true);
    stop();
    stopBad();
    expect(hub.watchedAccounts).toBe(1);
    hub.publish('a', e);
    expect(heard.length).toBe(2);
  });

  test('closeAll: every subscriber closed 1000, counts at 0, watchers gone; safe twice', () => {
    const hub = new PoolEventsHub();
    const s = new FakeSub('a');
    sub(hub, 'a', 'pool1aaaaaa', s);
    hub.watch('a', () => {});
    hub.closeAll();
    hub.closeAll();
    expect(s.closes).toEqual([{ code: 1000, reason: 'server shutting down' }]);
    expect(hub.subscribers).toBe(0);
    expect(hub.watchedAccounts).toBe(0);
  });
});
