/**
 * Tests for src/cluster/progress.ts against a private nats-server (skipped when
 * it is not installed): two ClusterProgress instances on two connections are
 * two API nodes, A runs the jobs, subscribers (fakes, as in
 * test/unit/progress-hub.test.ts) connect to B. A subscriber on B follows a job
 * on A to its final; result_url only for the owner's authenticated subscriber,
 * 1008 for another account's; a late subscriber on B gets the final from the
 * KV; a node drops its own echo; the NATS throttle bounds a burst of 1 000
 * publishes; NATS subscriptions go with their last subscriber; a NATS outage
 * leaves the origin's own subscribers served and never throws into the job.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { ClusterProgress, createClusterProgress, openFinalsBucket } from '../../src/cluster/progress';
import { progressSubject } from '../../src/cluster/progress-wire';
import type { Subscriber } from '../../src/jobs/ports';
import { WS_CLOSE } from '../../src/jobs/progress-hub';
import type { ProgressMessage, ProgressPhase, ProgressState } from '../../src/jobs/progress';
import { memoryLogger } from '../../src/log';
import { HAVE_NATS_SERVER, settleNats, startNatsServer, type NatsServer } from '../helpers/nats-server';
import { until } from '../helpers/process';

class FakeSub implements Subscriber {
  readonly sent: string[] = [];
  readonly closes: { code: number; reason: string }[] = [];
  constructor(
    readonly accountId: string | null,
    readonly address: string | null = null,
  ) {}
  send(text: string): void {
    this.sent.push(text);
  }
  close(code: number, reason: string): void {
    this.closes.push({ code, reason });
  }
  bufferedAmount(): number {
    return 0;
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
const LINK = 'http://10.0.0.1:3000/result/r1.json?token=abc&expires=1';
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function state(jobId: string, phase: ProgressPhase, checked = 0): ProgressState {
  return { jobId, phase, total: 1000, checked, working: Math.floor(checked / 2), hasCustomUrls: false, probeStartedAt: Date.now() - 1000, now: Date.now() };
}

function subscribeOk(p: ClusterProgress, jobId: string, sub: Subscriber): () => void {
  const out = p.subscribe(jobId, sub);
  if (!out.ok) throw new Error(`refused: ${out.code} ${out.reason}`);
  return out.unsubscribe;
}

describe.skipIf(!HAVE_NATS_SERVER)('ClusterProgress on a real nats-server', () => {
  let server: NatsServer;
  let ncA: NatsConnection;
  let ncB: NatsConnection;
  let A: ClusterProgress;
  let B: ClusterProgress;
  const log = memoryLogger('warn');

  beforeAll(async () => {
    server = await startNatsServer();
    ncA = await connect({ servers: server.url });
    ncB = await connect({ servers: server.url });
    A = await createClusterProgress({ nc: ncA, nodeId: 'node-a', log, hubOptions: { intervalMs: 30 } });
    B = await createClusterProgress({ nc: ncB, nodeId: 'node-b', log, hubOptions: { intervalMs: 30 } });
  });

  afterAll(async () => {
    A?.closeAll();
    B?.closeAll();
    await ncA?.close();
    await ncB?.close();
    await server?.stop();
  });

  test('the finals bucket has the hub linger as its TTL', async () => {
    const kv = await openFinalsBucket(ncA);
    expect((await kv.status()).ttl).toBe(60_000);
  });

  test('subscribers on B follow a job on A: progress, the final, result_url only for the owner, 1008 for another account', async () => {
    const jobId = 'job-follow-1';
    const anon = new FakeSub(null, '192.0.2.1');
    const owner = new FakeSub(OWNER);
    const other = new FakeSub(OTHER);
    subscribeOk(B, jobId, anon);
    subscribeOk(B, jobId, owner);
    subscribeOk(B, jobId, other);
    expect(B.following).toBe(1);
    await settleNats(30, ncB);

    A.publish(OWNER, state(jobId, 'validating'), null);
    await until('anon.sent.length === 1', () => anon.sent.length === 1, 3000, 5);
    expect(other.closes).toEqual([{ code: WS_CLOSE.POLICY, reason: 'job belongs to another account' }]);
    expect(other.sent).toEqual([]);
    await sleep(40);
    A.publish(OWNER, state(jobId, 'probing', 500), null);
    await until('anon.sent.length === 2', () => anon.sent.length === 2, 3000, 5);
    A.publish(OWNER, state(jobId, 'completed', 1000), { resultUrl: LINK });
    await until('anon.closes.length === 1 && owner.closes.length === 1', () => anon.closes.length === 1 && owner.closes.length === 1, 3000, 5);

    expect(anon.messages.map((m) => m.status)).toEqual(['in_progress', 'in_progress', 'completed']);
    expect(anon.messages[1]!.details.checked).toBe(500);
    expect(anon.last!.result_url).toBeUndefined();
    expect(owner.messages.map((m) => m.status)).toEqual(['in_progress', 'in_progress', 'completed']);
    expect(owner.last!.result_url).toBe(LINK);
    expect(anon.closes).toEqual([{ code: WS_CLOSE.NORMAL, reason: 'completed' }]);
    expect(owner.closes).toEqual([{ code: WS_CLOSE.NORMAL, reason: 'completed' }]);
    await sleep(0);
    expect(B.following).toBe(0);

    // B keeps the final for its own late subscribers, with the same rules.
    expect(B.hub.ended(jobId)).toBe(true);
    const lateOther = new FakeSub(OTHER);
    expect(B.subscribe(jobId, lateOther)).toEqual({ ok: false, code: WS_CLOSE.POLICY, reason: 'job belongs to another account' });
    const lateOwner = new FakeSub(OWNER);
    subscribeOk(B, jobId, lateOwner);
    expect(lateOwner.last!.result_url).toBe(LINK);
    expect(B.following).toBe(0);
  });

  test('a late subscriber on B, after the job ended on A, gets the final from the KV', async () => {
    const jobId = 'job-late-1';
    A.publish(OWNER, state(jobId, 'probing', 10), null);
    A.publish(OWNER, state(jobId, 'failed', 10), { resultUrl: null });
    await A.settled();
    const done = 'job-late-2';
    A.publish(OWNER, state(done, 'completed', 1000), { resultUrl: LINK });
    await A.settled();
    await settleNats(30, ncA, ncB);
    expect(B.hub.ended(jobId)).toBe(false); // B never heard of them

    const anon = new FakeSub(null);
    subscribeOk(B, jobId, anon);
    await until('anon.closes.length === 1', () => anon.closes.length === 1, 3000, 5);
    expect(anon.messages.map((m) => m.status)).toEqual(['failed']);
    expect(anon.closes[0]).toEqual({ code: WS_CLOSE.NORMAL, reason: 'failed' });

    const owner = new FakeSub(OWNER);
    const ownerAnon = new FakeSub(null);
    const other = new FakeSub(OTHER);
    subscribeOk(B, done, owner);
    subscribeOk(B, done, ownerAnon);
    subscribeOk(B, done, other);
    await until('owner.closes.length === 1 && ownerAnon.closes.length === 1 && other.closes.length === 1', () => owner.closes.length === 1 && ownerAnon.closes.length === 1 && other.closes.length === 1, 3000, 5);
    expect(owner.messages).toHaveLength(1);
    expect(owner.last!.status).toBe('completed');
    expect(owner.last!.result_url).toBe(LINK);
    expect(ownerAnon.last!.result_url).toBeUndefined();
    expect(other.sent).toEqual([]);
    expect(other.closes[0]!.code).toBe(WS_CLOSE.POLICY);
    await sleep(0);
    expect(B.following).toBe(0);
  });

  test('a node drops its own echo: a subscriber waiting on the origin gets each message once', async () => {
    const jobId = 'job-echo-1';
    const sub = new FakeSub(OWNER);
    subscribeOk(A, jobId, sub); // before the job starts: A follows it on NATS too
    expect(A.following).toBe(1);
    await settleNats(30, ncA);
    const inBefore = ncA.stats().inMsgs;
    const n = 4;
    for (let i = 0; i < n; i++) {
      A.publish(OWNER, state(jobId, 'probing', i * 100), null);
      await sleep(60); // more than both throttles' interval: every state goes out
    }
    A.publish(OWNER, state(jobId, 'completed', 1000), { resultUrl: LINK });
    await A.settled();
    await settleNats(30, ncA);
    // The echoes did come back to A (the subscription was live) ...
    expect(ncA.stats().inMsgs - inBefore).toBeGreaterThanOrEqual(n);
    // ... and were not delivered a second time.
    expect(sub.messages.map((m) => m.details.checked)).toEqual([0, 100, 200, 300, 1000]);
    expect(sub.closes).toHaveLength(1);
    expect(A.following).toBe(0);
  });

  test('the NATS throttle: 1 000 publishes in a burst send a bounded number of messages, the final always', async () => {
    const jobId = 'job-burst-1';
    const seen: string[] = [];
    const raw = await connect({ servers: server.url });
    try {
      raw.subscribe(progressSubject(jobId), { callback: (_e, m) => void seen.push(m.string()) });
      await raw.flush();
      const t0 = Date.now();
      for (let chunk = 0; chunk < 10; chunk++) {
        for (let i = 0; i < 100; i++) A.publish(OWNER, state(jobId, 'probing', chunk * 100 + i), null);
        await sleep(20);
      }
      A.publish(OWNER, state(jobId, 'completed', 1000), { resultUrl: LINK });
      const elapsed = Date.now() - t0;
      await A.settled();
      await settleNats(30, ncA, raw);
      const statuses = seen.map((s) => (JSON.parse(s) as { state: ProgressState }).state.phase);
      // intervalMs 100 on A: at most one per 100 ms (+1 for the first), then the final.
      expect(statuses.at(-1)).toBe('completed');
      expect(statuses.length).toBeLessThanOrEqual(Math.ceil(elapsed / 100) + 2);
      expect(statuses.length).toBeGreaterThanOrEqual(2);
      expect(A.running).toBe(0);
    } finally {
      await raw.close();
    }
  });

  test('NATS subscriptions go with their last subscriber; a remote job nobody follows leaves nothing in the hub', async () => {
    const jobId = 'job-unsub-1';
    const hubSize = B.hub.size; // finals of earlier tests linger
    const u1 = subscribeOk(B, jobId, new FakeSub(null));
    const s2 = new FakeSub(OWNER);
    const u2 = subscribeOk(B, jobId, s2);
    expect(B.following).toBe(1);
    await settleNats(30, ncB);
    A.publish(OWNER, state(jobId, 'probing', 10), null);
    await until('s2.sent.length === 1', () => s2.sent.length === 1, 3000, 5);
    u1();
    u1();
    await sleep(0);
    expect(B.following).toBe(1);
    u2();
    await sleep(0);
    expect(B.following).toBe(0);
    expect(B.hub.size).toBe(hubSize);
    // B no longer receives that subject.
    await settleNats(30, ncB);
    const inBefore = ncB.stats().inMsgs;
    await sleep(120);
    A.publish(OWNER, state(jobId, 'probing', 20), null);
    await settleNats(30, ncA, ncB);
    expect(ncB.stats().inMsgs).toBe(inBefore);
    A.publish(OWNER, state(jobId, 'failed', 20), { resultUrl: null });
    await A.settled();
  });

  test('a subscriber refused by the hub opens no NATS subscription; closeAll drops every one', async () => {
    const C = new ClusterProgress({ nc: ncB, nodeId: 'node-c', finals: await openFinalsBucket(ncB), log, hubOptions: { maxSubscribersPerJob: 1 } });
    subscribeOk(C, 'job-cap-1', new FakeSub(null));
    const refused = C.subscribe('job-cap-1', new FakeSub(null));
    expect(refused.ok).toBe(false);
    subscribeOk(C, 'job-cap-2', new FakeSub(null));
    expect(C.following).toBe(2);
    C.closeAll();
    expect(C.following).toBe(0);
    expect(C.hub.size).toBe(0);
    C.closeAll();
  });
});

describe.skipIf(!HAVE_NATS_SERVER)('ClusterProgress through a NATS outage', () => {
  test('the origin serves its own subscribers and never throws while NATS is down or closed', async () => {
    const server = await startNatsServer();
    const nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 50 });
    const log = memoryLogger('warn');
    const A = await createClusterProgress({ nc, nodeId: 'node-a', log, hubOptions: { intervalMs: 10 } });
    try {
      const sub = new FakeSub(OWNER);
      subscribeOk(A, 'job-out-1', sub);
      await server.kill({ hard: true });
      await sleep(100);
      A.publish(OWNER, state('job-out-1', 'probing', 10), null);
      A.publish(OWNER, state('job-out-1', 'completed', 1000), { resultUrl: LINK });
      expect(sub.last!.status).toBe('completed');
      expect(sub.last!.result_url).toBe(LINK);

      await nc.close();
      const sub2 = new FakeSub(OWNER);
      subscribeOk(A, 'job-out-2', sub2);
      expect(() => {
        A.publish(OWNER, state('job-out-2', 'probing', 10), null);
        A.publish(OWNER, state('job-out-2', 'completed', 1000), { resultUrl: LINK });
      }).not.toThrow();
      expect(sub2.last!.result_url).toBe(LINK);
      await A.settled();
      const warns = log.lines.filter((l) => String(l.msg).startsWith('cluster progress:'));
      expect(warns.length).toBeGreaterThanOrEqual(1);
      expect(warns.length).toBeLessThanOrEqual(2);
    } finally {
      A.closeAll();
      await nc.close();
      await server.stop();
    }
  }, 20_000);
});
