/**
 * Webhooks in a cluster (real processes): two API nodes A and B (ROLE=api,
 * one PostgreSQL database, each its own DATA_DIR, a shared RESULT_SECRET) on
 * a private nats-server, one receiver verifying with Webhook.verify.
 *
 *   - 40 messages written through both nodes: each delivered once (40
 *     distinct webhook-ids, one request each), by whichever node claimed it.
 *   - A node dies holding a claim: the receiver holds A's attempt unanswered
 *     and A is killed (-9); once the claim expires (CLAIM_MS, 20 s) B sends
 *     the message again, with the same webhook-id, and it is delivered.
 *
 * Skips unless PostgreSQL and nats-server are there.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { testDatabaseUrl } from '../helpers/db';
import { HAVE_NATS_SERVER, startNatsServer, type NatsServer } from '../helpers/nats-server';
import { ProcessBed, type ServiceProcess, type ServiceStore, until } from '../helpers/process';
import { call } from '../helpers/service';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver';

const PG = testDatabaseUrl();
const SECRETS = { RESULT_SECRET: 'cluster-result-secret-0123456789', ADMIN_TOKEN: 'cluster-admin-token-0123456789' };

describe.skipIf(PG === undefined || !HAVE_NATS_SERVER)('cluster: webhooks delivered once, and by the survivor', () => {
  const bed = new ProcessBed();
  let nats: NatsServer;
  let storeA: ServiceStore;
  let a: ServiceProcess, b: ServiceProcess;
  let r: Receiver;
  let hookId = '';

  beforeAll(async () => {
    nats = await startNatsServer();
    storeA = await bed.store();
    const env = { NATS_URL: nats.url, ...SECRETS, ROLE: 'api', POOL_ROUNDS: 'false', RATE_LIMIT_PER_S: '100000' };
    a = await bed.spawn(storeA, { env }); // first: it migrates the database
    b = await bed.spawn(bed.sibling(storeA), { env });
    r = startReceiver();
    const made = await call(`${a.url}/webhooks`, { method: 'POST', headers: { 'x-api-key': a.key }, json: { url: r.url, events: ['pool.paused'] } });
    expect(made.status, made.text).toBe(201);
    hookId = made.body.id;
    r.setSecret(made.body.secret);
  }, 60_000);

  afterAll(async () => {
    await bed.cleanup();
    r?.close();
    await nats?.stop();
  }, 30_000);

  const send = (p: ServiceProcess) => call(`${p.url}/webhooks/${hookId}/test`, { method: 'POST', headers: { 'x-api-key': p.key } });

  test('40 messages through both nodes: each delivered once', async () => {
    await Promise.all(Array.from({ length: 40 }, (_, i) => send(i % 2 === 0 ? a : b).then((x) => expect(x.status).toBe(202))));
    await until('40 deliveries', () => r.got.length >= 40, 20_000);
    await Bun.sleep(1500);
    expect(r.got).toHaveLength(40);
    expect(new Set(r.got.map((g) => g.id)).size).toBe(40);
    expect(r.got.every((g) => g.verified)).toBe(true);
  }, 60_000);

  test('a node killed holding a claim: the survivor sends the message once the claim expires, same webhook-id', async () => {
    // B stops claiming for the moment: only A can take the next message
    const before = r.got.length;
    let release: (s: number) => void = () => {};
    r.answer = (n) => (n === before ? new Promise<number>((res) => (release = res)) : 204);
    b.kill('SIGSTOP');
    try {
      expect((await send(a)).status).toBe(202);
      await until("A's attempt at the receiver", () => r.got.length === before + 1, 10_000);
    } finally {
      b.kill('SIGCONT');
    }
    a.kill('SIGKILL');
    await a.exited;
    release(204); // A is gone: nobody reads this answer
    const t0 = performance.now();
    await until("B's attempt", () => r.got.length === before + 2, 40_000);
    const waited = performance.now() - t0;
    expect(r.got[before + 1]!.id).toBe(r.got[before]!.id);
    expect(r.got[before + 1]!.verified).toBe(true);
    expect(waited).toBeGreaterThan(5_000); // not before A's claim expired
    const deliveries = async () => (await call(`${b.url}/webhooks/${hookId}/deliveries`, { headers: { 'x-api-key': b.key } })).body.deliveries;
    await until('recorded delivered', async () => (await deliveries())[0]?.state === 'delivered', 10_000);
    const [d] = await deliveries();
    expect(d.id).toBe(r.got[before]!.id);
    expect(d.attempts).toMatchObject([{ status: 204, error: null }]);
  }, 90_000);
});
