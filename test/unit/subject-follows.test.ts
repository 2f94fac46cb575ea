/**
 * SubjectFollows (src/cluster/subject-follows.ts) over a recording stand-in
 * for a NatsConnection: one SUB per key however many listeners, the
 * release idempotent, the UNSUB with the last one (at once, or in a
 * microtask with deferDrop, where a follow taken again meanwhile stays),
 * onSubscribed after the SUB, a subscribe that throws told to onError,
 * closeAll unsubscribing everything; followSubscriber: a hub's subscriber
 * holds the follow while subscribed (released by the hub's close or its
 * unsubscribe), none when refused or closed at once.
 */
import { describe, expect, test } from 'bun:test';
import type { NatsConnection } from '@nats-io/transport-node';
import { SubjectFollows, type SubjectFollowsOptions } from '../../src/cluster/subject-follows';

interface FakeSub {
  subject: string;
  callback: (err: Error | null, msg: { data: Uint8Array }) => void;
  unsubscribed: boolean;
}

function fakeNats(o: { throwOnSubscribe?: boolean } = {}) {
  const subs: FakeSub[] = [];
  const log: string[] = [];
  const nc = {
    subscribe(subject: string, opts: { callback: FakeSub['callback'] }) {
      if (o.throwOnSubscribe === true) throw new Error('connection closed');
      const s: FakeSub = { subject, callback: opts.callback, unsubscribed: false };
      subs.push(s);
      log.push(`SUB ${subject}`);
      return {
        unsubscribe() {
          s.unsubscribed = true;
          log.push(`UNSUB ${subject}`);
        },
      };
    },
  } as unknown as NatsConnection;
  return { nc, subs, log };
}

function follows(nc: NatsConnection, extra: Partial<SubjectFollowsOptions<{ n: number }>> = {}) {
  const heard: string[] = [];
  const errors: unknown[] = [];
  const f = new SubjectFollows<{ n: number }>({
    nc,
    subject: (k) => `pc.test.${k}`,
    init: () => ({ n: 0 }),
    onMessage: (key, entry, data) => {
      entry.state.n++;
      heard.push(`${key}:${new TextDecoder().decode(data)}`);
    },
    onError: (err) => errors.push(err),
    ...extra,
  });
  return { f, heard, errors };
}

describe('SubjectFollows', () => {
  test('one SUB per key, counted; messages reach onMessage with the per-key state; the last release UNSUBs at once', () => {
    const n = fakeNats();
    const { f, heard } = follows(n.nc);
    const r1 = f.follow('a');
    const r2 = f.follow('a');
    f.follow('b');
    expect(n.log).toEqual(['SUB pc.test.a', 'SUB pc.test.b']);
    expect(f.size).toBe(2);
    expect(f.get('a')?.refs).toBe(2);
    n.subs[0]!.callback(null, { data: new TextEncoder().encode('x') });
    n.subs[0]!.callback(new Error('slow consumer'), { data: new Uint8Array() });
    expect(heard).toEqual(['a:x']);
    expect(f.get('a')?.state.n).toBe(1);
    r1();
    r1(); // idempotent: still held by r2
    expect(n.log).toEqual(['SUB pc.test.a', 'SUB pc.test.b']);
    r2();
    expect(n.log).toEqual(['SUB pc.test.a', 'SUB pc.test.b', 'UNSUB pc.test.a']);
    expect(f.get('a')).toBeUndefined();
    expect(f.size).toBe(1);
  });

  test('deferDrop: the UNSUB and onDropped in a microtask; a follow taken again before it stays', async () => {
    const n = fakeNats();
    const dropped: string[] = [];
    const subscribed: string[] = [];
    const { f } = follows(n.nc, { deferDrop: true, onDropped: (k) => dropped.push(k), onSubscribed: (k) => subscribed.push(`${k} after ${n.log.at(-1)}`) });
    const r = f.follow('j');
    expect(subscribed).toEqual(['j after SUB pc.test.j']);
    r();
    expect(n.log).toEqual(['SUB pc.test.j']);
    const again = f.follow('j'); // before the microtask: the same follow, no second SUB
    await Promise.resolve();
    expect(n.log).toEqual(['SUB pc.test.j']);
    expect(dropped).toEqual([]);
    again();
    await Promise.resolve();
    expect(n.log).toEqual(['SUB pc.test.j', 'UNSUB pc.test.j']);
    expect(dropped).toEqual(['j']);
  });

  test('a subscribe that throws: told to onError, a follow with no subscription, released as any other', () => {
    const n = fakeNats({ throwOnSubscribe: true });
    const { f, errors } = follows(n.nc);
    const r = f.follow('a');
    expect(errors).toHaveLength(1);
    expect(f.get('a')?.sub).toBeNull();
    r();
    expect(f.size).toBe(0);
  });

  test('closeAll: every follow unsubscribed, none dropped through onDropped', () => {
    const n = fakeNats();
    const dropped: string[] = [];
    const { f } = follows(n.nc, { onDropped: (k) => dropped.push(k) });
    f.follow('a');
    f.follow('b');
    f.closeAll();
    expect(n.subs.every((s) => s.unsubscribed)).toBe(true);
    expect(f.size).toBe(0);
    expect(dropped).toEqual([]);
  });
  test('followSubscriber: the follow held while subscribed, released by the hub closing it or by unsubscribe; none when refused or closed at once', () => {
    const n = fakeNats();
    const { f } = follows(n.nc);
    const closes: string[] = [];
    const sub = (name: string) => ({ accountId: 'acc', address: '10.0.0.9', send() {}, bufferedAmount: () => 0, close: (code: number) => closes.push(`${name} ${code}`) });
    let held: { close(code: number, reason: string): void; address?: string | null } | null = null;
    const a = f.followSubscriber('k', sub('a'), (w) => ((held = w), { ok: true, unsubscribe: () => {} }));
    expect(a.ok).toBe(true);
    expect(held!.address).toBe('10.0.0.9');
    expect(n.log).toEqual(['SUB pc.test.k']);
    held!.close(1000, 'done'); // the hub closes it: the follow goes with it
    expect(closes).toEqual(['a 1000']);
    expect(n.log).toEqual(['SUB pc.test.k', 'UNSUB pc.test.k']);
    const b = f.followSubscriber('k', sub('b'), () => ({ ok: true, unsubscribe: () => {} }));
    if (b.ok) b.unsubscribe();
    expect(n.log.slice(2)).toEqual(['SUB pc.test.k', 'UNSUB pc.test.k']);
    expect(f.followSubscriber('k', sub('c'), () => ({ ok: false, code: 1013, reason: 'full' }))).toEqual({ ok: false, code: 1013, reason: 'full' });
    f.followSubscriber('k', sub('d'), (w) => (w.close(1008, 'not yours'), { ok: true, unsubscribe: () => {} }));
    expect(n.log).toHaveLength(4); // neither followed
    expect(f.size).toBe(0);
  });
});
