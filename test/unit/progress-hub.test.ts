/**
 * Tests for src/jobs/progress-hub.ts with fake subscribers and real progress
 * states: waiting before the job starts, the ~10/s throttle, the final message
 * and close 1000, result_url only for the owner's authenticated subscribers,
 * other accounts refused/closed 1008, late subscribers, slow subscribers closed
 * 1013, limits (global, and per account / per anonymous address), cleanup of
 * waiting entries, lingering finals and closeAll.
 */
import { describe, expect, test } from 'bun:test';
import { ProgressHub, WS_CLOSE, type HubOptions, type Subscriber } from '../../src/jobs/progress-hub';
import { progressMessage, type ProgressMessage, type ProgressPhase, type ProgressState } from '../../src/jobs/progress';
import { FakeClock } from '../helpers/fake-clock';

class FakeSub implements Subscriber {
  readonly sent: string[] = [];
  readonly closes: { code: number; reason: string }[] = [];
  buffered = 0;
  sentAfterClose = 0;
  throwOnSend = false;
  constructor(
    readonly accountId: string | null,
    readonly address: string | null = null,
  ) {}
  send(text: string): void {
    if (this.closes.length > 0) this.sentAfterClose++;
    if (this.throwOnSend) throw new Error('socket closed');
    this.sent.push(text);
  }
  close(code: number, reason: string): void {
    this.closes.push({ code, reason });
  }
  bufferedAmount(): number {
    return this.buffered;
  }
  get messages(): ProgressMessage[] {
    return this.sent.map((t) => JSON.parse(t) as ProgressMessage);
  }
  get last(): ProgressMessage | undefined {
    return this.messages.at(-1);
  }
}

const OWNER = 'acct-owner';
const OTHER = 'acct-other';
const LINK = 'http://127.0.0.1:3000/result/r1.json?token=abc&expires=1';
/** The clock of the hub the test made last (hub()): `sleep` moves it, no real time passes. */
let clock = new FakeClock();
const sleep = (ms: number): Promise<void> => clock.advance(ms);

function state(jobId: string, phase: ProgressPhase, checked = 0, extra: Partial<ProgressState> = {}): ProgressState {
  return {
    jobId,
    phase,
    total: 100,
    checked,
    working: Math.floor(checked / 2),
    hasCustomUrls: false,
    probeStartedAt: Date.now() - 1000,
    now: Date.now(),
    ...extra,
  };
}

/** A hub with a short throttle interval and linger time, on a fresh fake clock. */
function hub(opts: HubOptions = {}): ProgressHub {
  clock = new FakeClock();
  return new ProgressHub({ intervalMs: 30, lingerMs: 60, clock, ...opts });
}

function subscribeOk(h: ProgressHub, jobId: string, sub: Subscriber): () => void {
  const out = h.subscribe(jobId, sub);
  expect(out.ok).toBe(true);
  if (!out.ok) throw new Error('refused');
  return out.unsubscribe;
}

describe('subscribing before the job starts', () => {
  test('waits silently, then receives the exact progress messages', () => {
    const h = hub();
    const sub = new FakeSub(null);
    subscribeOk(h, 'job-1', sub);
    expect(h.size).toBe(1);
    expect(sub.sent).toEqual([]);
    expect(sub.closes).toEqual([]);

    const s = state('job-1', 'validating', 0, { total: 0 });
    h.publish(OWNER, s);
    expect(sub.messages).toEqual([progressMessage(s)]);
    expect(sub.last?.status).toBe('in_progress');
    expect(sub.closes).toEqual([]);
    h.closeAll();
  });

  test('subscriptions are per job: another job\'s messages never arrive', () => {
    const h = hub();
    const a = new FakeSub(null);
    const b = new FakeSub(null);
    subscribeOk(h, 'job-a', a);
    subscribeOk(h, 'job-b', b);
    h.publish(OWNER, state('job-a', 'checking_balance'));
    expect(a.sent).toHaveLength(1);
    expect(b.sent).toHaveLength(0);
    h.closeAll();
  });
});

describe('throttle', () => {
  test('a burst of publishes gives one immediate message, then only the latest', async () => {
    const h = hub({ intervalMs: 40 });
    const sub = new FakeSub(null);
    subscribeOk(h, 'job-t', sub);
    for (let i = 1; i <= 50; i++) h.publish(OWNER, state('job-t', 'probing', i));
    expect(sub.messages.map((m) => m.details.checked)).toEqual([1]);
    await sleep(80);
    expect(sub.messages.map((m) => m.details.checked)).toEqual([1, 50]);
    await sleep(60);
    expect(sub.sent).toHaveLength(2);
    h.closeAll();
  });

  test('a sustained stream gives one message per interval, the latest each time', async () => {
    const h = hub({ intervalMs: 25 });
    const sub = new FakeSub(null);
    subscribeOk(h, 'job-s', sub);
    let i = 0;
    for (let t = 0; t < 200; t += 2) {
      for (let k = 0; k < 5; k++) h.publish(OWNER, state('job-s', 'probing', ++i % 100));
      await sleep(2);
    }
    await sleep(40);
    // 500 offers over 200 ms: the first at once, then one every 25 ms (at 25, 50, ..., 200)
    expect(i).toBe(500);
    expect(sub.sent).toHaveLength(9);
    expect(sub.last?.details.checked).toBe(500 % 100);
    h.closeAll();
  });
});

describe('the final message', () => {
  test('completed is delivered at once (dropping a waiting message), then close 1000', async () => {
    const h = hub({ intervalMs: 40 });
    const sub = new FakeSub(null);
    subscribeOk(h, 'job-f', sub);
    h.publish(OWNER, state('job-f', 'probing', 10));
    h.publish(OWNER, state('job-f', 'probing', 20)); // coalesced, waiting
    h.publish(OWNER, state('job-f', 'completed', 100), { resultUrl: null });
    expect(sub.messages.map((m) => [m.status, m.details.checked])).toEqual([
      ['in_progress', 10],
      ['completed', 100],
    ]);
    expect(sub.closes).toEqual([{ code: WS_CLOSE.NORMAL, reason: 'completed' }]);
    await sleep(60);
    expect(sub.sent).toHaveLength(2);
    expect(sub.sentAfterClose).toBe(0);
    h.closeAll();
  });

  test('failed is delivered even right after another message, then close 1000', () => {
    const h = hub({ intervalMs: 10_000 });
    const sub = new FakeSub(OWNER);
    subscribeOk(h, 'job-x', sub);
    h.publish(OWNER, state('job-x', 'probing', 5));
    h.publish(OWNER, state('job-x', 'failed', 5, { failedIn: 'probing', message: 'worker crashed' }), { resultUrl: LINK });
    const last = sub.last!;
    expect(last.status).toBe('failed');
    expect(last.details.message).toBe('worker crashed');
    expect(last.result_url).toBeUndefined();
    expect(sub.closes).toEqual([{ code: 1000, reason: 'failed' }]);
    h.closeAll();
  });

  test('publishes after the final do not reach the closed subscribers', () => {
    const h = hub();
    const sub = new FakeSub(null);
    subscribeOk(h, 'job-af', sub);
    h.publish(OWNER, state('job-af', 'completed', 100), { resultUrl: null });
    h.publish(OWNER, state('job-af', 'validating'));
    expect(sub.sent).toHaveLength(1);
    expect(sub.sentAfterClose).toBe(0);
    h.closeAll();
  });
});

describe('result_url and accounts', () => {
  test('only the owner\'s authenticated subscribers get result_url', () => {
    const h = hub();
    const owner = new FakeSub(OWNER);
    const anon = new FakeSub(null);
    subscribeOk(h, 'job-r', owner);
    subscribeOk(h, 'job-r', anon);
    h.publish(OWNER, state('job-r', 'probing', 50));
    h.publish(OWNER, state('job-r', 'completed', 100), { resultUrl: LINK });
    for (const s of [owner, anon]) {
      expect(s.messages.map((m) => m.status)).toEqual(['in_progress', 'completed']);
      expect(s.messages[0]!.result_url).toBeUndefined();
      expect(s.closes).toEqual([{ code: 1000, reason: 'completed' }]);
    }
    expect(owner.last!.result_url).toBe(LINK);
    expect(anon.last).not.toHaveProperty('result_url');
    // apart from the link the two finals are the same message
    const { result_url: _, ...rest } = owner.last!;
    expect(rest).toEqual(anon.last!);
  });

  test('a subscriber of another account is closed 1008 once the owner is known, without a message', () => {
    const h = hub();
    const other = new FakeSub(OTHER);
    const owner = new FakeSub(OWNER);
    const anon = new FakeSub(null);
    subscribeOk(h, 'job-o', other);
    subscribeOk(h, 'job-o', owner);
    subscribeOk(h, 'job-o', anon);
    h.publish(OWNER, state('job-o', 'validating'));
    expect(other.sent).toEqual([]);
    expect(other.closes).toEqual([{ code: WS_CLOSE.POLICY, reason: 'job belongs to another account' }]);
    expect(owner.sent).toHaveLength(1);
    expect(anon.sent).toHaveLength(1);
    h.publish(OWNER, state('job-o', 'completed', 100), { resultUrl: LINK });
    expect(other.sent).toEqual([]);
    expect(other.closes).toHaveLength(1);
    h.closeAll();
  });

  test('another account subscribing after the owner is known is refused 1008 (running and after the final)', () => {
    const h = hub();
    h.publish(OWNER, state('job-p', 'probing', 1));
    const other = new FakeSub(OTHER);
    expect(h.subscribe('job-p', other)).toEqual({ ok: false, code: 1008, reason: 'job belongs to another account' });
    expect(other.sent).toEqual([]);
    // the same account and anonymous subscribers are accepted
    const same = new FakeSub(OWNER);
    const anon = new FakeSub(null);
    subscribeOk(h, 'job-p', same);
    subscribeOk(h, 'job-p', anon);
    h.publish(OWNER, state('job-p', 'completed', 100), { resultUrl: LINK });
    const late = new FakeSub(OTHER);
    expect(h.subscribe('job-p', late)).toMatchObject({ ok: false, code: 1008 });
    expect(late.sent).toEqual([]);
    expect(late.closes).toEqual([]);
    h.closeAll();
  });
});

describe('late subscribers', () => {
  test('after the final: the final at once, then close 1000 (link only for the owner)', () => {
    const h = hub();
    h.publish(OWNER, state('job-l', 'completed', 100), { resultUrl: LINK });
    const anon = new FakeSub(null);
    const out = h.subscribe('job-l', anon);
    expect(out.ok).toBe(true);
    expect(anon.messages.map((m) => m.status)).toEqual(['completed']);
    expect(anon.last).not.toHaveProperty('result_url');
    expect(anon.closes).toEqual([{ code: 1000, reason: 'completed' }]);
    if (out.ok) out.unsubscribe(); // harmless

    const owner = new FakeSub(OWNER);
    subscribeOk(h, 'job-l', owner);
    expect(owner.last!.result_url).toBe(LINK);
    expect(owner.closes).toEqual([{ code: 1000, reason: 'completed' }]);
    expect(h.size).toBe(1);
    h.closeAll();
  });

  test('after a failed final: failed at once, then close', () => {
    const h = hub();
    h.publish(OWNER, state('job-lf', 'failed', 3, { failedIn: 'probing' }), { resultUrl: null });
    const sub = new FakeSub(null);
    subscribeOk(h, 'job-lf', sub);
    expect(sub.messages.map((m) => m.status)).toEqual(['failed']);
    expect(sub.closes).toEqual([{ code: 1000, reason: 'failed' }]);
    h.closeAll();
  });

  test('while running: receives from the next message on', () => {
    const h = hub({ intervalMs: 1 });
    h.publish(OWNER, state('job-m', 'validating'));
    const sub = new FakeSub(null);
    subscribeOk(h, 'job-m', sub);
    expect(sub.sent).toEqual([]);
    h.publish(OWNER, state('job-m', 'completed', 100), { resultUrl: null });
    expect(sub.messages.map((m) => m.status)).toEqual(['completed']);
    h.closeAll();
  });

  test('the final lingers lingerMs, then the job is forgotten', async () => {
    const h = hub({ lingerMs: 30 });
    h.publish(OWNER, state('job-g', 'completed', 100), { resultUrl: null });
    expect(h.size).toBe(1);
    await sleep(70);
    expect(h.size).toBe(0);
    // a subscriber now waits like for an unknown job
    const sub = new FakeSub(null);
    const unsub = subscribeOk(h, 'job-g', sub);
    expect(sub.sent).toEqual([]);
    expect(sub.closes).toEqual([]);
    unsub();
    expect(h.size).toBe(0);
  });

  test('a jobId reused after its final starts a fresh entry', () => {
    const h = hub();
    h.publish(OWNER, state('job-re', 'completed', 100), { resultUrl: LINK });
    h.publish(OTHER, state('job-re', 'validating'));
    const owner2 = new FakeSub(OTHER);
    subscribeOk(h, 'job-re', owner2);
    expect(owner2.sent).toEqual([]); // the old final is not replayed
    expect(h.subscribe('job-re', new FakeSub(OWNER))).toMatchObject({ ok: false, code: 1008 });
    h.publish(OTHER, state('job-re', 'completed', 100), { resultUrl: null });
    expect(owner2.messages.map((m) => m.status)).toEqual(['completed']);
    expect(owner2.last).not.toHaveProperty('result_url');
    h.closeAll();
  });
});

describe('slow subscribers', () => {
  test('buffered bytes over the limit: closed 1013, never sent to again; others unaffected', () => {
    const h = hub({ maxBufferedBytes: 1000, intervalMs: 0 });
    const slow = new FakeSub(null);
    const fast = new FakeSub(null);
    subscribeOk(h, 'job-sl', slow);
    subscribeOk(h, 'job-sl', fast);
    h.publish(OWNER, state('job-sl', 'validating'));
    expect(slow.sent).toHaveLength(1);
    slow.buffered = 1000; // at the limit is still fine
    h.publish(OWNER, state('job-sl', 'checking_balance'));
    expect(slow.sent).toHaveLength(2);
    slow.buffered = 1001;
    h.publish(OWNER, state('job-sl', 'probing', 10, { now: Date.now() + 10 }));
    expect(slow.sent).toHaveLength(2);
    expect(slow.closes).toEqual([{ code: WS_CLOSE.TRY_AGAIN_LATER, reason: 'subscriber too slow' }]);
    expect(fast.sent).toHaveLength(3);
    h.publish(OWNER, state('job-sl', 'completed', 100), { resultUrl: null });
    expect(slow.sent).toHaveLength(2);
    expect(slow.closes).toHaveLength(1);
    expect(slow.sentAfterClose).toBe(0);
    expect(fast.messages.map((m) => m.status)).toEqual(['in_progress', 'in_progress', 'in_progress', 'completed']);
  });

  test('a subscriber that never reads costs nothing while the job runs on', async () => {
    const h = hub({ maxBufferedBytes: 4096, intervalMs: 1 });
    const stuck = new FakeSub(null);
    subscribeOk(h, 'job-st', stuck);
    for (let i = 0; i < 200; i++) {
      // its socket buffer grows with everything it was sent
      stuck.buffered = stuck.sent.reduce((n, t) => n + t.length, 0);
      h.publish(OWNER, state('job-st', 'probing', i % 100));
      if (i % 20 === 0) await sleep(2);
    }
    h.publish(OWNER, state('job-st', 'completed', 100), { resultUrl: null });
    const bytes = stuck.sent.reduce((n, t) => n + t.length, 0);
    expect(stuck.closes).toEqual([{ code: 1013, reason: 'subscriber too slow' }]);
    expect(bytes).toBeLessThan(4096 + 1024);
    expect(stuck.sentAfterClose).toBe(0);
  });

  test('a send that throws does not stop delivery to the others', () => {
    const h = hub();
    const broken = new FakeSub(null);
    broken.throwOnSend = true;
    const ok = new FakeSub(null);
    subscribeOk(h, 'job-br', broken);
    subscribeOk(h, 'job-br', ok);
    h.publish(OWNER, state('job-br', 'completed', 100), { resultUrl: null });
    expect(ok.messages.map((m) => m.status)).toEqual(['completed']);
    expect(broken.closes).toEqual([{ code: 1000, reason: 'completed' }]);
    expect(ok.closes).toEqual([{ code: 1000, reason: 'completed' }]);
  });
});

describe('limits', () => {
  test('subscribers per job are capped (1013); a freed place can be taken again', () => {
    const h = hub({ maxSubscribersPerJob: 2 });
    const a = new FakeSub(null);
    const b = new FakeSub(null);
    const c = new FakeSub(null);
    const unsubA = subscribeOk(h, 'job-c', a);
    subscribeOk(h, 'job-c', b);
    expect(h.subscribe('job-c', c)).toEqual({ ok: false, code: WS_CLOSE.TRY_AGAIN_LATER, reason: 'too many subscribers for this job' });
    unsubA();
    subscribeOk(h, 'job-c', c);
    h.publish(OWNER, state('job-c', 'validating'));
    expect(a.sent).toHaveLength(0);
    expect(b.sent).toHaveLength(1);
    expect(c.sent).toHaveLength(1);
    h.closeAll();
  });

  test('jobs waited on are capped (1013); known jobs still accept subscribers', () => {
    const h = hub({ maxWaitingJobs: 2 });
    subscribeOk(h, 'job-w1', new FakeSub(null));
    subscribeOk(h, 'job-w2', new FakeSub(null));
    expect(h.subscribe('job-w3', new FakeSub(null))).toEqual({ ok: false, code: 1013, reason: 'too many jobs waited on' });
    expect(h.size).toBe(2);
    subscribeOk(h, 'job-w1', new FakeSub(null));
    expect(h.size).toBe(2);
    h.closeAll();
  });
});

describe('caps between tenants', () => {
  const refusedFor = (kind: 'account' | 'address') => ({ ok: false as const, code: WS_CLOSE.TRY_AGAIN_LATER, reason: `too many subscriptions for this ${kind} (${kind === 'account' ? 'WS_MAX_PER_ACCOUNT' : 'a quarter of WS_MAX_PER_ACCOUNT'})` });

  test('an address at its cap (anonymous) does not stop another address or an account', () => {
    const h = hub({ maxPerAddress: 2, maxPerAccount: 3 });
    subscribeOk(h, 'job-t1', new FakeSub(null, '198.51.100.1'));
    subscribeOk(h, 'job-t2', new FakeSub(null, '198.51.100.1'));
    const sizeBefore = h.size;
    expect(h.subscribe('job-t3', new FakeSub(null, '198.51.100.1'))).toEqual(refusedFor('address'));
    expect(h.subscribe('job-t1', new FakeSub(null, '198.51.100.1'))).toEqual(refusedFor('address'));
    expect(h.size).toBe(sizeBefore); // a refused subscriber leaves no waiting entry behind
    subscribeOk(h, 'job-t3', new FakeSub(null, '198.51.100.2'));
    // an authenticated subscriber from the same address counts against its account, not the address
    subscribeOk(h, 'job-t4', new FakeSub(OWNER, '198.51.100.1'));
    expect(h.openFor({ accountId: null, address: '198.51.100.1' })).toBe(2);
    expect(h.openFor({ accountId: null, address: '198.51.100.2' })).toBe(1);
    expect(h.openFor({ accountId: OWNER })).toBe(1);
    h.closeAll();
    expect(h.openFor({ accountId: null, address: '198.51.100.1' })).toBe(0);
    expect(h.openFor({ accountId: OWNER })).toBe(0);
  });

  test('an account at its cap does not stop another account or anonymous subscribers', () => {
    const h = hub({ maxPerAccount: 2, maxPerAddress: 2 });
    subscribeOk(h, 'job-a1', new FakeSub(OWNER, '203.0.113.1'));
    subscribeOk(h, 'job-a2', new FakeSub(OWNER, '203.0.113.2'));
    expect(h.subscribe('job-a3', new FakeSub(OWNER, '203.0.113.3'))).toEqual(refusedFor('account'));
    subscribeOk(h, 'job-a3', new FakeSub(OTHER, '203.0.113.1'));
    subscribeOk(h, 'job-a1', new FakeSub(null, '203.0.113.1'));
    h.closeAll();
  });

  test('the defaults: 64 per account, 16 per anonymous address', () => {
    const h = hub();
    for (let i = 0; i < 16; i++) subscribeOk(h, `job-d${i}`, new FakeSub(null, '192.0.2.9'));
    expect(h.subscribe('job-dx', new FakeSub(null, '192.0.2.9'))).toEqual(refusedFor('address'));
    for (let i = 0; i < 64; i++) subscribeOk(h, `job-e${i}`, new FakeSub(OWNER));
    expect(h.subscribe('job-ex', new FakeSub(OWNER))).toEqual(refusedFor('account'));
    h.closeAll();
  });

  test('a subscriber without an address counts only against the global caps', () => {
    const h = hub({ maxPerAddress: 1, maxWaitingJobs: 5 });
    for (let i = 0; i < 5; i++) subscribeOk(h, `job-n${i}`, new FakeSub(null));
    expect(h.subscribe('job-n5', new FakeSub(null))).toEqual({ ok: false, code: WS_CLOSE.TRY_AGAIN_LATER, reason: 'too many jobs waited on' });
    h.closeAll();
  });

  test('a place comes back whenever a subscription ends: unsubscribe, final, slow reader, other account', () => {
    const h = hub({ maxPerAddress: 1, maxPerAccount: 1 });
    const addr = { accountId: null, address: '192.0.2.1' };
    // unsubscribe (twice is still one place)
    const u = subscribeOk(h, 'job-p1', new FakeSub(null, '192.0.2.1'));
    u();
    u();
    expect(h.openFor(addr)).toBe(0);
    // the final closes it with 1000
    const fin = new FakeSub(null, '192.0.2.1');
    subscribeOk(h, 'job-p2', fin);
    h.publish(OWNER, state('job-p2', 'failed'));
    expect(fin.closes).toEqual([{ code: WS_CLOSE.NORMAL, reason: 'failed' }]);
    expect(h.openFor(addr)).toBe(0);
    // a slow reader closed 1013
    const slow = new FakeSub(null, '192.0.2.1');
    subscribeOk(h, 'job-p3', slow);
    slow.buffered = 10 * 1024 * 1024;
    h.publish(OWNER, state('job-p3', 'validating'));
    expect(slow.closes[0]?.code).toBe(WS_CLOSE.TRY_AGAIN_LATER);
    expect(h.openFor(addr)).toBe(0);
    subscribeOk(h, 'job-p4', new FakeSub(null, '192.0.2.1'));
    // a subscriber of another account closed 1008 when the owner becomes known
    const other = new FakeSub(OTHER);
    subscribeOk(h, 'job-p5', other);
    expect(h.openFor({ accountId: OTHER })).toBe(1);
    h.publish(OWNER, state('job-p5', 'validating'));
    expect(other.closes[0]?.code).toBe(WS_CLOSE.POLICY);
    expect(h.openFor({ accountId: OTHER })).toBe(0);
    subscribeOk(h, 'job-p6', new FakeSub(OTHER));
    h.closeAll();
  });

  test('at its cap, a client still gets a lingering final (it is served at once, never counted)', () => {
    const h = hub({ maxPerAddress: 1 });
    h.publish(OWNER, state('job-l', 'completed', 100), { resultUrl: LINK });
    subscribeOk(h, 'job-busy', new FakeSub(null, '192.0.2.7'));
    const late = new FakeSub(null, '192.0.2.7');
    subscribeOk(h, 'job-l', late);
    expect(late.last?.status).toBe('completed');
    expect(late.closes).toEqual([{ code: WS_CLOSE.NORMAL, reason: 'completed' }]);
    expect(h.openFor({ accountId: null, address: '192.0.2.7' })).toBe(1);
    h.closeAll();
  });
});

describe('cleanup', () => {
  test('unsubscribing the last waiting subscriber forgets the job; unsubscribe twice is safe', () => {
    const h = hub();
    const u1 = subscribeOk(h, 'job-u', new FakeSub(null));
    const u2 = subscribeOk(h, 'job-u', new FakeSub(OWNER));
    const u3 = subscribeOk(h, 'job-v', new FakeSub(null));
    expect(h.size).toBe(2);
    u1();
    expect(h.size).toBe(2);
    u2();
    u2();
    expect(h.size).toBe(1);
    u3();
    expect(h.size).toBe(0);
  });

  test('a running job is kept when its subscribers leave, and dropped after its final lingered', async () => {
    const h = hub({ lingerMs: 20 });
    const unsub = subscribeOk(h, 'job-k', new FakeSub(null));
    h.publish(OWNER, state('job-k', 'probing', 1));
    unsub();
    expect(h.size).toBe(1);
    h.publish(OWNER, state('job-k', 'completed', 100), { resultUrl: null });
    await sleep(50);
    expect(h.size).toBe(0);
  });

  test('a stale unsubscribe does not remove a newer entry of the same job', async () => {
    const h = hub({ lingerMs: 10 });
    const sub = new FakeSub(null);
    const stale = subscribeOk(h, 'job-n', sub);
    h.publish(OWNER, state('job-n', 'completed', 100), { resultUrl: null });
    await sleep(30);
    expect(h.size).toBe(0);
    const fresh = new FakeSub(null);
    subscribeOk(h, 'job-n', fresh);
    stale();
    expect(h.size).toBe(1);
    h.publish(OWNER, state('job-n', 'validating'));
    expect(fresh.sent).toHaveLength(1);
    h.closeAll();
  });

  test('closeAll closes everyone with 1000, drops waiting messages, forgets every job, and is safe twice', async () => {
    const h = hub({ intervalMs: 30 });
    const waiting = new FakeSub(null);
    const running = new FakeSub(OWNER);
    subscribeOk(h, 'job-z1', waiting);
    subscribeOk(h, 'job-z2', running);
    h.publish(OWNER, state('job-z2', 'probing', 1));
    h.publish(OWNER, state('job-z2', 'probing', 2)); // waiting in the throttle
    h.publish(OWNER, state('job-z3', 'completed', 100), { resultUrl: null }); // lingering
    expect(h.size).toBe(3);
    h.closeAll();
    expect(h.size).toBe(0);
    expect(waiting.closes).toEqual([{ code: 1000, reason: 'server shutting down' }]);
    expect(running.closes).toEqual([{ code: 1000, reason: 'server shutting down' }]);
    await sleep(60);
    expect(running.sent).toHaveLength(1);
    expect(running.sentAfterClose).toBe(0);
    h.closeAll();
    expect(waiting.closes).toHaveLength(1);
    expect(running.closes).toHaveLength(1);
  });
});

describe('subscribers (the /metrics gauge)', () => {
  test('counts every open subscription, with or without a tenant; each ends once, however it ends', () => {
    const h = hub();
    expect(h.subscribers).toBe(0);
    const u = subscribeOk(h, 'job-m1', new FakeSub(null)); // no tenant: still counted
    subscribeOk(h, 'job-m1', new FakeSub(OWNER));
    subscribeOk(h, 'job-m2', new FakeSub(null, '192.0.2.7'));
    const other = new FakeSub(OTHER);
    subscribeOk(h, 'job-m3', other);
    expect(h.subscribers).toBe(4);
    u();
    u();
    expect(h.subscribers).toBe(3);
    h.publish(OWNER, state('job-m3', 'validating')); // another account's subscriber is closed 1008
    expect(other.closes[0]?.code).toBe(WS_CLOSE.POLICY);
    expect(h.subscribers).toBe(2);
    h.publish(OWNER, state('job-m1', 'failed')); // the final closes job-m1's subscriber
    expect(h.subscribers).toBe(1);
    const late = new FakeSub(OWNER);
    subscribeOk(h, 'job-m1', late); // a lingering final: served and closed at once, never counted
    expect(late.closes).toHaveLength(1);
    expect(h.subscribers).toBe(1);
    h.closeAll();
    expect(h.subscribers).toBe(0);
  });
});

describe('ended / forget (the cluster adapter)', () => {
  test('ended is true only while a final lingers', async () => {
    const h = hub({ lingerMs: 40 });
    expect(h.ended('job-e1')).toBe(false);
    h.publish(OWNER, state('job-e1', 'probing', 10));
    expect(h.ended('job-e1')).toBe(false);
    h.publish(OWNER, state('job-e1', 'completed', 100), { resultUrl: LINK });
    expect(h.ended('job-e1')).toBe(true);
    await sleep(80);
    expect(h.ended('job-e1')).toBe(false);
    expect(h.size).toBe(0);
  });

  test('forget drops a started job nobody waits on, and its waiting throttle', async () => {
    const h = hub();
    const sub = new FakeSub(OWNER);
    const unsubscribe = subscribeOk(h, 'job-f1', sub);
    h.publish(OWNER, state('job-f1', 'probing', 10));
    h.publish(OWNER, state('job-f1', 'probing', 20)); // waits in the throttle
    unsubscribe(); // the entry stays: the owner is known, the final has not come
    expect(h.size).toBe(1);
    h.forget('job-f1');
    expect(h.size).toBe(0);
    await sleep(60);
    expect(sub.sent).toHaveLength(1);
  });

  test('forget leaves a job with subscribers, and a lingering final, alone', () => {
    const h = hub();
    const sub = new FakeSub(OWNER);
    subscribeOk(h, 'job-f2', sub);
    h.publish(OWNER, state('job-f2', 'probing', 10));
    h.forget('job-f2');
    expect(h.size).toBe(1);
    h.publish(OWNER, state('job-f3', 'failed'));
    h.forget('job-f3');
    expect(h.ended('job-f3')).toBe(true);
    h.forget('job-unknown');
    h.closeAll();
  });
});
