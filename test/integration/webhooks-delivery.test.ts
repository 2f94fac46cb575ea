/**
 * Webhook delivery on PGlite and, with DATABASE_URL, on PostgreSQL: a real
 * receiver on 127.0.0.1 verifies every delivery with the standardwebhooks
 * library's `Webhook.verify`; a 500 is retried with the same webhook-id; a
 * receiver that is down for the first attempts still gets the message; a
 * redirect is not followed; a delivery out of retries is `failed`; 3 days of
 * failures disable the endpoint; a pool batch of 5 000 downs is 5 messages;
 * an async check's settlement, or the orphan sweep of a dead node's async
 * check, writes check.completed in its transaction (once, however often it
 * is settled); two loops on one database deliver
 * each message once, and a dead node's expired claim is taken over.
 * The retry schedule is shortened (the loop's `delays`); the schedule's own
 * values are unit-tested (test/unit/webhooks-schedule.test.ts).
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { eq, sql } from 'drizzle-orm';
import { rowsOf } from '../../db/client';
import { webhookDeliveries, webhooks } from '../../db/schema';
import { createAccount } from '../../src/accounts/accounts';
import { sweepOrphans } from '../../src/accounts/orphans';
import { databaseLedger } from '../../src/jobs/ledger';
import { memoryLogger } from '../../src/log';
import { DeliveryLoop } from '../../src/webhooks/delivery-loop';
import { WebhookOutbox } from '../../src/webhooks/outbox';
import { sealingKey } from '../../src/webhooks/seal';
import { WebhookService } from '../../src/webhooks/service';
import { freshPglite, freshPostgres, testDatabaseUrl, type TestDatabase } from '../helpers/db';

import { startReceiver, type Receiver } from '../helpers/webhook-receiver';
import { rejection } from '../helpers/rejection';

const KEY = sealingKey('a-result-secret-for-the-tests-0123456789');
const FAST = [50, 50, 50];
const url = testDatabaseUrl();
const DRIVERS: [string, () => Promise<TestDatabase>][] = [['PGlite', freshPglite], ...(url !== undefined ? [['PostgreSQL', () => freshPostgres(url)] as [string, () => Promise<TestDatabase>]] : [])];

/** Waits (real time, bounded) until cond holds. */
async function eventually(cond: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await Bun.sleep(20);
  }
}

for (const [name, open] of DRIVERS) {
  describe(`webhook delivery on ${name}`, () => {
    let tdb: TestDatabase | undefined;
    const cleanups: (() => unknown)[] = [];
    let seq = 0;
    afterAll(async () => {
      await Promise.all(loops.map((l) => l.stop()));
      for (const c of cleanups.reverse()) await c();
      await tdb?.cleanup();
    });

    // each test's loops alone decide (an earlier test's loop would claim with its own schedule)
    const loops: DeliveryLoop[] = [];
    const setup = async (o: { delays?: number[]; nodeId?: string; start?: boolean } = {}) => {
      await Promise.all(loops.splice(0).map((l) => l.stop()));
      tdb ??= await open();
      const db = tdb.db;
      const account = (await createAccount(db, { email: `w${++seq}@hooks.test`, checks: 1000 })).id;
      const log = memoryLogger();
      const loop = new DeliveryLoop({ db, nodeId: o.nodeId ?? `node-${seq}`, key: KEY, allowPrivateTargets: true, log, delays: o.delays ?? FAST, pollMs: 25 });
      loops.push(loop);
      const service = new WebhookService({ db, key: KEY, allowPrivateTargets: true, onWritten: () => loop.poke() });
      const outbox = new WebhookOutbox({ db, log, onWritten: () => loop.poke() });
      if (o.start !== false) loop.start();
      return { db, account, loop, service, outbox, log };
    };
    const receiver = (): Receiver => {
      const r = startReceiver();
      cleanups.push(() => r.close());
      return r;
    };
    const endpoint = async (s: Awaited<ReturnType<typeof setup>>, r: Receiver, events?: string[]) => {
      const made = await s.service.create(s.account, { url: r.url, events: (events ?? ['pool.proxies_changed', 'pool.paused', 'pool.resumed', 'check.completed']) as never, pools: null });
      if (made === 'limit') throw new Error('limit');
      r.setSecret(made.secret);
      return made;
    };

    test('a test event reaches a real receiver, which verifies it with Webhook.verify; the stored secret is sealed', async () => {
      const s = await setup();
      const r = receiver();
      const made = await endpoint(s, r);
      expect(made.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(await s.service.test(s.account, made.webhook.id)).toBe(true);
      await eventually(() => r.got.length === 1);
      expect(r.got[0]).toMatchObject({ type: 'webhook.test', verified: true, data: { webhook: made.webhook.id } });
      expect(r.got[0]!.id).toMatch(/^msg_[a-z0-9]{24}$/);
      await eventually(async () => (await s.service.deliveries(s.account, made.webhook.id))?.[0]?.state === 'delivered');
      const [d] = (await s.service.deliveries(s.account, made.webhook.id))!;
      expect(d).toMatchObject({ id: r.got[0]!.id, event: 'webhook.test', state: 'delivered', next_attempt_at: null });
      expect(d!.attempts).toHaveLength(1);
      expect(d!.attempts[0]).toMatchObject({ status: 204, error: null });
      // a dump of the row does not hold the secret nor its key material
      const [row] = await s.db.select().from(webhooks).where(eq(webhooks.id, made.webhook.id));
      expect(row!.secretSealed).not.toContain(made.secret.slice(6, 20));
      expect(JSON.stringify(row)).not.toContain(made.secret);
      // the rotated secret signs from now on; the old one no longer verifies
      const next = (await s.service.rotateSecret(s.account, made.webhook.id))!;
      expect(next).not.toBe(made.secret);
      await s.service.test(s.account, made.webhook.id);
      await eventually(() => r.got.length === 2);
      expect(r.got[1]!.verified).toBe(false);
      r.setSecret(next);
      await s.service.test(s.account, made.webhook.id);
      await eventually(() => r.got.length === 3);
      expect(r.got[2]!.verified).toBe(true);
    });

    test('a 500 is retried with the same webhook-id until it is delivered', async () => {
      const s = await setup();
      const r = receiver();
      r.answer = (n) => (n < 2 ? 500 : 200);
      const made = await endpoint(s, r);
      await s.service.test(s.account, made.webhook.id);
      await eventually(() => r.got.length === 3);
      expect(new Set(r.got.map((g) => g.id)).size).toBe(1);
      expect(r.got.every((g) => g.verified)).toBe(true);
      await eventually(async () => (await s.service.deliveries(s.account, made.webhook.id))?.[0]?.state === 'delivered');
      const [d] = (await s.service.deliveries(s.account, made.webhook.id))!;
      expect(d!.attempts.map((a) => a.status)).toEqual([500, 500, 200]);
      expect(d!.attempts[0]!.error).toBe('HTTP 500');
    });

    test('a receiver that is down for the first attempts still gets the message', async () => {
      const s = await setup({ delays: [100, 100, 200, 200] });
      // a port that was just free: nothing listens there for the first attempts
      const probe = startReceiver();
      const port = probe.port;
      probe.close();
      const made = await s.service.create(s.account, { url: `http://127.0.0.1:${port}/hook`, events: ['pool.paused'], pools: null });
      if (made === 'limit') throw new Error('limit');
      await s.service.test(s.account, made.webhook.id);
      await eventually(async () => ((await s.service.deliveries(s.account, made.webhook.id))?.[0]?.attempts.length ?? 0) >= 2);
      const late = startReceiver({ secret: made.secret, port });
      cleanups.push(() => late.close());
      await eventually(() => late.got.length === 1);
      expect(late.got[0]!.verified).toBe(true);
      await eventually(async () => (await s.service.deliveries(s.account, made.webhook.id))?.[0]?.state === 'delivered');
      const [d] = (await s.service.deliveries(s.account, made.webhook.id))!;
      expect(d!.attempts.at(0)).toMatchObject({ status: null });
      expect(d!.attempts.at(0)!.error).toStartWith('connect_failed');
      expect(d!.attempts.at(-1)!.status).toBe(204);
    });

    test('a redirect is not followed; a delivery out of retries is failed', async () => {
      const s = await setup({ delays: [30] });
      const r = receiver();
      r.answer = () => 302;
      const made = await endpoint(s, r);
      await s.service.test(s.account, made.webhook.id);
      await eventually(async () => (await s.service.deliveries(s.account, made.webhook.id))?.[0]?.state === 'failed');
      const [d] = (await s.service.deliveries(s.account, made.webhook.id))!;
      expect(d!.attempts.map((a) => a.status)).toEqual([302, 302]);
      expect(d!.attempts[0]!.error).toBe('redirect not followed (HTTP 302)');
      expect(d!.next_attempt_at).toBeNull();
      expect(r.got).toHaveLength(2);
    });

    test('an endpoint failing for 3 days of attempts is disabled, with disabled_reason; its deliveries wait', async () => {
      const s = await setup({ delays: [30, 30, 30] });
      const r = receiver();
      r.answer = () => 503;
      const made = await endpoint(s, r);
      await s.db.update(webhooks).set({ failingSince: new Date(Date.now() - 3 * 86_400_000 - 1000) }).where(eq(webhooks.id, made.webhook.id));
      await s.service.test(s.account, made.webhook.id);
      await eventually(async () => (await s.service.get(s.account, made.webhook.id))?.state === 'disabled');
      const w = (await s.service.get(s.account, made.webhook.id))!;
      expect(w.disabled_reason).toBe('no successful delivery for 3 days of attempts');
      await Bun.sleep(200);
      expect(r.got).toHaveLength(1); // waiting, not retried while disabled
      // enabled again: the waiting delivery goes out
      r.answer = () => 200;
      await s.service.update(s.account, made.webhook.id, { state: 'enabled' });
      await eventually(() => r.got.length === 2);
      expect((await s.service.get(s.account, made.webhook.id))!).toMatchObject({ state: 'enabled', disabled_reason: null });
    });

    test("the pools' flush writer: pool.proxies_changed written in the flush's transaction (rolled back with it); the events port then leaves ups and downs to it", async () => {
      const s = await setup();
      const r = receiver();
      await endpoint(s, r);
      const writer = s.outbox.flushWriter();
      const port = s.outbox.poolEvents();
      const counts = { total: 2, working: 1, failed: 1, unchecked: 0 };
      const at = new Date().toISOString();
      const down = { pool: 'poolbbbbbbbbbb', event: 'proxy.down', at, proxy: { host: '10.1.0.1', port: 8080, hasAuth: false }, counts, error: { code: 'timeout', message: 't' } } as const;
      const up = { pool: 'poolbbbbbbbbbb', event: 'proxy.up', at, proxy: { host: '10.1.0.2', port: 8080, hasAuth: false }, counts } as const;
      // the flush's transaction fails after the write: no message
      expect(String(await rejection(s.db.transaction(async (tx) => {
        expect(await writer.write(tx, s.account, 'poolbbbbbbbbbb', [down], counts)).toBe(1);
        throw new Error('the chunk failed');
      })))).toContain('the chunk failed');
      // the events port no longer gathers what the writer writes
      port.publish(s.account, down);
      port.publish(s.account, { pool: 'poolbbbbbbbbbb', event: 'round.completed', at, counts, round: { checked: 1, working: 0, failed: 1, not_tried: 0, charged: 1 } });
      await s.outbox.drain();
      expect(await s.db.transaction((tx) => writer.write(tx, s.account, 'poolbbbbbbbbbb', [down, up], counts))).toBe(1);
      writer.written();
      await eventually(() => r.got.length === 1);
      await Bun.sleep(200);
      expect(r.got).toHaveLength(1);
      expect(r.got[0]!.type).toBe('pool.proxies_changed');
      expect([(r.got[0]!.data.down as unknown[]).length, (r.got[0]!.data.up as unknown[]).length]).toEqual([1, 1]);
    });

    test('a pool whose 5 000 proxies go down in one batch: 5 pool.proxies_changed messages of 1 000', async () => {
      const s = await setup();
      const r = receiver();
      await endpoint(s, r);
      const port = s.outbox.poolEvents();
      const counts = { total: 5000, working: 0, failed: 5000, unchecked: 0 };
      const at = new Date().toISOString();
      for (let i = 0; i < 5000; i++) {
        port.publish(s.account, { pool: 'poolaaaaaaaaaa', event: 'proxy.down', at, proxy: { host: `10.0.${i >> 8}.${i & 255}`, port: 8080, hasAuth: false }, counts, error: { code: 'timeout', message: 't' } });
      }
      port.publish(s.account, { pool: 'poolaaaaaaaaaa', event: 'round.completed', at, counts, round: { checked: 5000, working: 0, failed: 5000, not_tried: 0, charged: 5000 } });
      await s.outbox.drain();
      await eventually(() => r.got.length === 5);
      expect(r.got.every((g) => g.type === 'pool.proxies_changed' && g.verified)).toBe(true);
      expect(r.got.map((g) => (g.data.down as unknown[]).length)).toEqual([1000, 1000, 1000, 1000, 1000]);
      const hosts = new Set(r.got.flatMap((g) => (g.data.down as { proxy: { host: string } }[]).map((d) => d.proxy.host)));
      expect(hosts.size).toBe(5000);
      // pool.paused goes out as its own message; an endpoint of other pools hears nothing
      port.publish(s.account, { pool: 'poolaaaaaaaaaa', event: 'pool.paused', at, counts, reason: 'owner' });
      await s.outbox.drain();
      await eventually(() => r.got.length === 6);
      expect(r.got[5]).toMatchObject({ type: 'pool.paused', data: { pool: 'poolaaaaaaaaaa', reason: 'owner' } });
      const other = receiver();
      const made = await s.service.create(s.account, { url: other.url, events: ['pool.paused'], pools: ['poolbbbbbbbbbb'] });
      if (made === 'limit') throw new Error('limit');
      port.publish(s.account, { pool: 'poolaaaaaaaaaa', event: 'pool.paused', at, counts, reason: 'owner' });
      await s.outbox.drain();
      await eventually(() => r.got.length === 7);
      expect(other.got).toHaveLength(0);
    });

    test('an async check settled (or swept after its node died) writes check.completed in that transaction, once however often it is settled', async () => {
      const s = await setup();
      const r = receiver();
      await endpoint(s, r, ['check.completed']);
      const ledger = databaseLedger(s.db);
      const now = new Date();
      const reserve = (runId: string, clientJobId: string) =>
        ledger.reserve({ accountId: s.account, runId, clientJobId, units: 3, type: 'http', region: 'us1', timeoutMs: 1000, submitted: 3, now });
      expect((await reserve('run_hook_1', 'job-one')).ok).toBe(true);
      await ledger.markAsync!('run_hook_1');
      const done = { accountId: s.account, runId: 'run_hook_1', checked: 3, working: 2, resultRef: null, refund: 0, now, webhook: { resultUrl: 'http://x/result/a.json' } };
      await ledger.complete(done);
      await ledger.complete(done); // a repeated settlement tells nothing twice
      expect((await reserve('run_hook_2', 'job-two')).ok).toBe(true);
      await ledger.markAsync!('run_hook_2');
      await ledger.fail({ accountId: s.account, runId: 'run_hook_2', checked: 0, working: 0, refund: 3, error: 'shutting_down', cancelled: false, now, webhook: { resultUrl: null } });
      // a check settled without the notice (a synchronous one) tells nothing, nor one never marked async
      expect((await reserve('run_hook_3', 'job-three')).ok).toBe(true);
      await ledger.complete({ ...done, runId: 'run_hook_3', webhook: undefined });
      expect((await reserve('run_hook_4', 'job-four')).ok).toBe(true);
      await ledger.complete({ ...done, runId: 'run_hook_4' });
      // an async check whose node died: the orphan sweep closes it and tells its webhooks, once
      expect((await reserve('run_hook_5', 'job-five')).ok).toBe(true);
      await ledger.markAsync!('run_hook_5');
      await sweepOrphans(s.db, s.log, { self: 'sweeper', scope: 'all' });
      await sweepOrphans(s.db, s.log, { self: 'sweeper', scope: 'all' });
      await eventually(() => r.got.length === 3);
      await Bun.sleep(150);
      expect(r.got).toHaveLength(3);
      const byJob = Object.fromEntries(r.got.map((g) => [g.data.jobId, g]));
      expect(byJob['job-one']).toMatchObject({ type: 'check.completed', verified: true, data: { status: 'completed', total_checked: 3, total_working: 2, result_url: 'http://x/result/a.json' } });
      expect(byJob['job-two']!.data).toMatchObject({ status: 'failed', result_url: null });
      expect(byJob['job-five']!.data).toMatchObject({ status: 'failed', total_checked: 0, result_url: null });
    });

    test('two loops on one database deliver each message once; an expired claim of a dead node is taken over', async () => {
      const a = await setup({ nodeId: 'node-a' });
      const b = new DeliveryLoop({ db: a.db, nodeId: 'node-b', key: KEY, allowPrivateTargets: true, log: a.log, delays: FAST, pollMs: 10 });
      loops.push(b);
      b.start();
      const r = receiver();
      const made = await endpoint(a, r);
      for (let i = 0; i < 30; i++) await a.service.test(a.account, made.webhook.id);
      await eventually(() => r.got.length >= 30);
      await Bun.sleep(200);
      expect(r.got).toHaveLength(30);
      expect(new Set(r.got.map((g) => g.id)).size).toBe(30);
      // a claim held by a node that died: taken again once it expires
      await a.loop.stop();
      await b.stop();
      await a.service.test(a.account, made.webhook.id);
      await a.db.update(webhookDeliveries).set({ claimedBy: 'node-dead', claimUntil: new Date(Date.now() + 1500) }).where(eq(webhookDeliveries.state, 'pending'));
      const c = new DeliveryLoop({ db: a.db, nodeId: 'node-c', key: KEY, allowPrivateTargets: true, log: a.log, delays: FAST, pollMs: 20 });
      loops.push(c);
      c.start();
      await Bun.sleep(300);
      expect(r.got).toHaveLength(30); // still claimed by the dead node
      await eventually(() => r.got.length === 31);
      // recorded once the receiver's answer is back
      const pending = async () => rowsOf<{ n: number }>(await a.db.execute(sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = ${made.webhook.id} AND state = 'pending'`))[0]!.n;
      await eventually(async () => (await pending()) === 0);
      expect(r.got).toHaveLength(31);
    });

    test('at most 10 endpoints per account', async () => {
      const s = await setup({ start: false });
      for (let i = 0; i < 10; i++) expect(await s.service.create(s.account, { url: `http://127.0.0.1:9/${i}`, events: ['pool.paused'], pools: null })).not.toBe('limit');
      expect(await s.service.create(s.account, { url: 'http://127.0.0.1:9/x', events: ['pool.paused'], pools: null })).toBe('limit');
      expect(await s.service.list(s.account)).toHaveLength(10);
    });
  });
}

