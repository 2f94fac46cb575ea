/**
 * src/cluster/pool-events.ts against a private nats-server (skipped when it is
 * not installed): two ClusterPoolEvents on two connections are two API
 * nodes. An event published on A reaches a subscriber on B exactly once, and
 * A's own subscriber exactly once (no echo); another account's subscriber on
 * B hears nothing; a deleted pool closes B's subscribers; B's watchers (the
 * gateway's working sets) hear A's events; an account is followed over NATS
 * only while something on the node listens to it; malformed messages are
 * dropped and counted.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { ClusterPoolEvents } from '../../src/cluster/pool-events';
import { poolEventsSubject } from '../../src/cluster/pool-events-wire';
import { memoryLogger } from '../../src/log';
import { proxyEvent, type PoolEvent } from '../../src/pools/events';
import type { PoolSignal, Subscriber } from '../../src/pools/events-hub';
import { HAVE_NATS_SERVER, settleNats, startNatsServer, type NatsServer } from '../helpers/nats-server';
import { until } from '../helpers/process';

class FakeSub implements Subscriber {
  readonly sent: string[] = [];
  readonly closes: { code: number; reason: string }[] = [];
  constructor(readonly accountId: string) {}
  send(text: string): void {
    this.sent.push(text);
  }
  close(code: number, reason: string): void {
    this.closes.push({ code, reason });
  }
  bufferedAmount(): number {
    return 0;
  }
  get events(): PoolEvent[] {
    return this.sent.map((s) => JSON.parse(s) as PoolEvent);
  }
}

const OWNER = 'acct-owner';
const OTHER = 'acct-other';
const POOL = 'poolaaaaaa1';
const COUNTS = { total: 2, working: 1, failed: 1, unchecked: 0 };
const down = (n: number): PoolEvent => proxyEvent(POOL, 'proxy.down', 1_000 + n, { host: '10.0.0.1', port: 8000 + n }, COUNTS, { error: { code: 'timeout', message: 'no answer' } });

function subscribeOk(p: ClusterPoolEvents, account: string, pool: string, s: Subscriber): () => void {
  const out = p.subscribe(account, pool, s);
  if (!out.ok) throw new Error(`refused: ${out.code} ${out.reason}`);
  return out.unsubscribe;
}

describe.skipIf(!HAVE_NATS_SERVER)('ClusterPoolEvents on a real nats-server', () => {
  let server: NatsServer;
  let ncA: NatsConnection;
  let ncB: NatsConnection;
  let A: ClusterPoolEvents;
  let B: ClusterPoolEvents;
  const log = memoryLogger('warn');

  beforeAll(async () => {
    server = await startNatsServer();
    ncA = await connect({ servers: server.url });
    ncB = await connect({ servers: server.url });
    A = new ClusterPoolEvents({ nc: ncA, nodeId: 'node-a', log });
    B = new ClusterPoolEvents({ nc: ncB, nodeId: 'node-b', log });
  });

  afterAll(async () => {
    A?.closeAll();
    B?.closeAll();
    await ncA?.close();
    await ncB?.close();
    await server?.stop();
  });

  test('an event published on A reaches B\'s subscriber once and A\'s once; another account\'s subscriber hears nothing', async () => {
    const onA = new FakeSub(OWNER);
    const onB = new FakeSub(OWNER);
    const intruder = new FakeSub(OTHER);
    const offA = subscribeOk(A, OWNER, POOL, onA);
    const offB = subscribeOk(B, OWNER, POOL, onB);
    const offI = subscribeOk(B, OTHER, POOL, intruder);
    await settleNats(50, ncA, ncB);
    const events = [down(1), down(2), down(3)];
    for (const e of events) A.publish(OWNER, e);
    await until('onB.sent.length === 3', () => onB.sent.length === 3, 3000, 5);
    await settleNats(50, ncA, ncB);
    expect(onB.events).toEqual(events);
    expect(onA.events).toEqual(events);
    expect(intruder.sent).toEqual([]);
    // and the other way round
    B.publish(OWNER, down(4));
    await until('onA.sent.length === 4', () => onA.sent.length === 4, 3000, 5);
    await settleNats(50, ncA, ncB);
    expect(onB.sent.length).toBe(4);
    offA();
    offB();
    offI();
  });

  test('a pool deleted on A closes its subscribers on B (1000); watchers on B hear A\'s events and the close', async () => {
    const onB = new FakeSub(OWNER);
    subscribeOk(B, OWNER, POOL, onB);
    const heard: PoolSignal[] = [];
    const stop = B.watch(OWNER, (s) => heard.push(s));
    await settleNats(50, ncB);
    A.publish(OWNER, down(5));
    A.closePool(OWNER, POOL);
    await until('onB.closes.length === 1', () => onB.closes.length === 1, 3000, 5);
    expect(onB.closes).toEqual([{ code: 1000, reason: 'pool deleted' }]);
    expect(heard.map((s) => s.kind)).toEqual(['event', 'closed']);
    expect(B.subscribers).toBe(0);
    stop();
  });

  test('an account is followed only while something on the node listens to it', async () => {
    await settleNats(50, ncA, ncB);
    expect(B.following).toBe(0);
    const s1 = new FakeSub(OWNER);
    const s2 = new FakeSub(OWNER);
    const off1 = subscribeOk(B, OWNER, POOL, s1);
    const off2 = subscribeOk(B, OWNER, 'poolbbbbbb2', s2);
    const stop = B.watch(OTHER, () => {});
    expect(B.following).toBe(2);
    off1();
    off1();
    expect(B.following).toBe(2);
    off2();
    expect(B.following).toBe(1);
    stop();
    expect(B.following).toBe(0);
    // nothing on B listens: A's events do not reach it (no subscription on the subject)
    A.publish(OWNER, down(6));
    await settleNats(50, ncA, ncB);
    expect(s1.sent).toEqual([]);
  });

  test('malformed messages on an account\'s subject are dropped and counted', async () => {
    const s = new FakeSub(OWNER);
    const off = subscribeOk(B, OWNER, POOL, s);
    await settleNats(50, ncB);
    const before = B.malformed;
    ncA.publish(poolEventsSubject(OWNER), new TextEncoder().encode('{"v":1,"node":"x"}'));
    ncA.publish(poolEventsSubject(OWNER), new TextEncoder().encode(JSON.stringify({ v: 1, node: 'x', account: OTHER, event: down(7) })));
    await settleNats(50, ncA, ncB);
    expect(B.malformed).toBe(before + 2);
    expect(s.sent).toEqual([]);
    off();
  });
});
