/**
 * The delivery loop (src/webhooks/delivery-loop.ts) on a fake clock over a
 * real PGlite database, with the attempt replaced by a function the test
 * answers: the schedule as applied (the retry due 5 s after a failure, not
 * before), the same message id and a fresh signature timestamp on every
 * attempt, at most `perEndpoint` attempts of one endpoint in flight, fair
 * across endpoints (a backlog holds up no other endpoint's message), and
 * stop(): safe twice, bounded, the attempt in flight aborted and its claim
 * given back untried; with no poll (embedded, issue 29): no statement while
 * nothing is pending, a poke finds a message, a retry is looked at on its
 * due time.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import { webhookDeliveries } from '../../db/schema';
import { createAccount } from '../../src/accounts/accounts';
import { memoryLogger } from '../../src/log';
import { DeliveryLoop } from '../../src/webhooks/delivery-loop';
import { sealingKey } from '../../src/webhooks/seal';
import type { SendInput, SendOutcome } from '../../src/webhooks/sender';
import { WebhookService } from '../../src/webhooks/service';
import type { Db } from '../../db/client';
import { freshPglite, type TestDatabase } from '../helpers/db';
import { FakeClock } from '../helpers/fake-clock';

const KEY = sealingKey('loop-secret-0123456789abcdef');

/** Waits (real time, at most 5 s: the database's work is not the fake clock's) until cond holds. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await Bun.sleep(5);
  if (!cond()) throw new Error('condition not met within 5 s');
}
let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await freshPglite();
});
afterAll(async () => {
  await tdb?.cleanup();
});

/**
 * Advances the fake clock in steps of at most `step` ms, each once the loop
 * sleeps (no attempt in flight, its one timer set): the embedded database
 * answers from its own thread (db/pglite-thread.ts), so a look's statements
 * are not done within the clock's settle, and a timer set after the clock
 * moved on would be set from the wrong now.
 */
async function advanceAsleep(s: { loop: DeliveryLoop; clock: FakeClock }, ms: number, step = 500): Promise<void> {
  for (let left = ms; left > 0; left -= step) {
    await until(() => s.loop.inFlight === 0 && s.clock.pending === 1);
    await s.clock.advance(Math.min(step, left));
  }
  await until(() => s.loop.inFlight === 0 && s.clock.pending === 1);
}

async function setup(send: (i: SendInput, signal: AbortSignal) => Promise<SendOutcome>, o: { perEndpoint?: number; pollMs?: number | null; db?: Db } = {}) {
  const clock = new FakeClock(Date.UTC(2026, 5, 1, 12));
  const account = (await createAccount(tdb.db, { email: `loop${Math.random()}@hooks.test` })).id;
  const loop = new DeliveryLoop({
    db: o.db ?? tdb.db,
    nodeId: 'n1',
    key: KEY,
    allowPrivateTargets: true,
    log: memoryLogger(),
    clock,
    random: () => 0.5,
    pollMs: o.pollMs === undefined ? 1000 : o.pollMs,
    send,
    ...(o.perEndpoint !== undefined ? { perEndpoint: o.perEndpoint } : {}),
  });
  const service = new WebhookService({ db: tdb.db, key: KEY, allowPrivateTargets: true, now: () => new Date(clock.now()) });
  const made = await service.create(account, { url: 'http://127.0.0.1:9/hook', events: ['pool.paused'], pools: null });
  if (made === 'limit') throw new Error('limit');
  return { clock, loop, service, account, id: made.webhook.id };
}

describe('the delivery loop on a fake clock', () => {
  test('a 500, then the retry 5 s later (not before), same id, a new timestamp; delivered', async () => {
    const sent: SendInput[] = [];
    const s = await setup(async (i) => {
      sent.push(i);
      return { status: sent.length === 1 ? 500 : 204, error: sent.length === 1 ? 'HTTP 500' : null, durationMs: 1 };
    });
    await s.service.test(s.account, s.id);
    s.loop.start();
    await until(() => sent.length === 1);
    const rows = async () => tdb.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, s.id));
    for (let i = 0; i < 50 && (await rows())[0]!.attemptCount === 0; i++) await Bun.sleep(5);
    const [after1] = await rows();
    expect(after1!.nextAttemptAt.getTime()).toBe(s.clock.now() + 5000);
    await advanceAsleep(s, 4000);
    expect(sent).toHaveLength(1);
    await advanceAsleep(s, 1000);
    await until(() => sent.length === 2);
    for (let i = 0; i < 50 && (await rows())[0]!.state !== 'delivered'; i++) await Bun.sleep(5);
    expect((await rows())[0]!.state).toBe('delivered');
    expect(sent[1]!.headers['webhook-id']).toBe(sent[0]!.headers['webhook-id']);
    expect(Number(sent[1]!.headers['webhook-timestamp']) - Number(sent[0]!.headers['webhook-timestamp'])).toBe(5);
    expect(sent[1]!.body).toBe(sent[0]!.body);
    await s.loop.stop();
  });

  test('at most perEndpoint attempts of one endpoint in flight', async () => {
    let open = 0;
    let most = 0;
    const waiting: (() => void)[] = [];
    const s = await setup(
      () =>
        new Promise<SendOutcome>((resolve) => {
          open++;
          most = Math.max(most, open);
          waiting.push(() => {
            open--;
            resolve({ status: 204, error: null, durationMs: 1 });
          });
        }),
      { perEndpoint: 2 },
    );
    for (let i = 0; i < 6; i++) await s.service.test(s.account, s.id);
    s.loop.start();
    await until(() => open === 2);
    await Bun.sleep(30);
    expect(open).toBe(2);
    let done = 0;
    while (done < 6) {
      await until(() => waiting.length > 0);
      waiting.shift()!();
      done++;
    }
    expect(most).toBe(2);
    await s.loop.stop();
  });

  test("fair across endpoints: one endpoint's backlog of 300 does not hold up another's message", async () => {
    const held: (() => void)[] = [];
    const toB: string[] = [];
    const s = await setup((i) => {
      if (i.url.endsWith('/b')) {
        toB.push(i.headers['webhook-id']!);
        return Promise.resolve({ status: 204, error: null, durationMs: 1 });
      }
      return new Promise<SendOutcome>((resolve) => held.push(() => resolve({ status: 204, error: null, durationMs: 1 })));
    });
    for (let i = 0; i < 300; i++) await s.service.test(s.account, s.id);
    const b = await s.service.create(s.account, { url: 'http://127.0.0.1:9/b', events: ['pool.paused'], pools: null });
    if (b === 'limit') throw new Error('limit');
    await s.clock.advance(1000); // B's message is the newest of all
    await s.service.test(s.account, b.webhook.id);
    s.loop.start();
    await until(() => toB.length === 1);
    expect(held.length).toBe(3); // A: its 3 in flight, the other 297 waiting
    for (const release of held.splice(0)) release();
    await s.loop.stop();
    // the backlog goes with its endpoint (the next test's loop must not find it)
    await s.service.delete(s.account, s.id);
    await s.service.delete(s.account, b.webhook.id);
  });

  test('stop(): the attempt in flight aborted, its claim given back untried; safe twice', async () => {
    let aborted = false;
    const s = await setup(
      (_i, signal) =>
        new Promise<SendOutcome>((resolve) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve({ status: null, error: 'aborted', durationMs: 0, aborted: true });
          });
        }),
    );
    await s.service.test(s.account, s.id);
    s.loop.start();
    await until(() => s.loop.inFlight === 1);
    const first = s.loop.stop();
    expect(s.loop.stop()).toBe(first);
    await first;
    expect(aborted).toBe(true);
    expect(s.loop.state).toBe('stopped');
    const [row] = await tdb.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, s.id));
    expect(row).toMatchObject({ state: 'pending', attemptCount: 0, claimedBy: null });
    // a loop never started stops at once
    const idle = new DeliveryLoop({ db: tdb.db, nodeId: 'n2', key: KEY, allowPrivateTargets: true, log: memoryLogger() });
    await idle.stop();
    expect(idle.state).toBe('stopped');
  });

  test('no poll (embedded): no statement while nothing is pending; a poke finds a message; the retry looked at on its due time', async () => {
    await tdb.db.delete(webhookDeliveries); // the earlier tests' leftovers (the stop test's delivery is pending)
    let statements = 0;
    const counted = new Proxy(tdb.db, {
      get(target, key) {
        if (key === 'execute') return (...a: Parameters<Db['execute']>) => (statements++, target.execute(...a));
        const v = Reflect.get(target, key) as unknown;
        return typeof v === 'function' ? (v as (...x: unknown[]) => unknown).bind(target) : v;
      },
    });
    const sent: SendInput[] = [];
    const s = await setup(
      async (i) => {
        sent.push(i);
        return { status: sent.length === 1 ? 500 : 204, error: sent.length === 1 ? 'HTTP 500' : null, durationMs: 1 };
      },
      { pollMs: null, db: counted },
    );
    const settled = async () => {
      for (let i = 0; i < 20; i++) await Bun.sleep(5);
    };
    s.loop.start();
    await settled();
    const atStart = statements; // the first look: a claim, then when the next is due (none)
    expect(atStart).toBe(2);
    await advanceAsleep(s, 60_000);
    await settled();
    expect(statements).toBe(atStart); // a minute idle: no statement

    await s.service.test(s.account, s.id); // written here: the service pokes (compose/webhooks.ts)
    s.loop.poke();
    await until(() => sent.length === 1);
    const rows = async () => tdb.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, s.id));
    for (let i = 0; i < 50 && (await rows())[0]!.attemptCount === 0; i++) await Bun.sleep(5);
    await settled();
    await advanceAsleep(s, 4000);
    await settled();
    expect(sent).toHaveLength(1);
    await advanceAsleep(s, 1001);
    await until(() => sent.length === 2);
    for (let i = 0; i < 50 && (await rows())[0]!.state !== 'delivered'; i++) await Bun.sleep(5);
    expect((await rows())[0]!.state).toBe('delivered');
    await advanceAsleep(s, 0); // the look after the attempt done (its claim and due-time read)
    const afterAll = statements;
    await advanceAsleep(s, 120_000);
    await settled();
    expect(statements).toBe(afterAll); // nothing pending again: no statement
    await s.loop.stop();
  });
});
