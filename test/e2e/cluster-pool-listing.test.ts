/**
 * An unlimited txt listing through another node, real processes: two API
 * nodes A and B (ROLE=api, one PostgreSQL database, POOL_FLUSH_S 300: the
 * owner's memory runs ahead of the durable copy for the whole test) and one
 * region agent on a private nats-server.
 *
 *   A pool of one working proxy and 3 000 refused ones. The node that does
 *   not hold it answers `?format=txt` from the owner's memory (pulled over
 *   NATS, src/cluster/pool-reads.ts): the working proxy, which the durable
 *   copy does not know yet, and every line of `status=all` as the owner
 *   writes them (a page of them is over NATS's 1 MiB: pages would not
 *   cross). The owner stopped (SIGSTOP): the other node answers from
 *   the durable copy (after the 2 s it waits for the owner), whole.
 *
 * Skips unless PostgreSQL and nats-server are there.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { sql } from 'drizzle-orm';
import { startHttpProxy } from '../fixtures/fake-proxies';
import { refusedPort, type FakeServer } from '../fixtures/fake-servers';
import { testDatabaseUrl } from '../helpers/db';
import { HAVE_NATS_SERVER, startNatsServer, type NatsServer } from '../helpers/nats-server';
import { ProcessBed, queryStore, type ServiceProcess, type ServiceStore, until } from '../helpers/process';
import { call } from '../helpers/service';

const PG = testDatabaseUrl();
const SECRETS = { RESULT_SECRET: 'cluster-result-secret-0123456789', ADMIN_TOKEN: 'cluster-admin-token-0123456789' };

describe.skipIf(PG === undefined || !HAVE_NATS_SERVER)('cluster: a txt listing through the node that does not own the pool', () => {
  const bed = new ProcessBed();
  let nats: NatsServer;
  let storeA: ServiceStore, storeB: ServiceStore;
  let a: ServiceProcess, b: ServiceProcess;
  let elite: FakeServer;

  const timing = () => ({ NATS_URL: nats.url, AGENT_HEARTBEAT_MS: '300', SHUTDOWN_GRACE_MS: '500' });
  const apiEnv = () => ({ ...timing(), ...SECRETS, ROLE: 'api', POOL_FLUSH_S: '300', BOOTSTRAP_CHECKS: '100000', POOL_MIN_INTERVAL_S: '1' });
  const nodeOf = (p: ServiceProcess) => String(p.logs.find((l) => l.msg === 'ready')?.node);
  /** The node holding a pool's live lease (the durable copy), or null. */
  const leaseHolder = async (poolId: string): Promise<string | null> =>
    (await queryStore<{ node_id: string }>(storeA, sql`SELECT node_id FROM pool_leases WHERE pool_id = ${poolId} AND expires_at > now()`))[0]?.node_id ?? null;

  beforeAll(async () => {
    nats = await startNatsServer();
    elite = await startHttpProxy();
    storeA = await bed.store();
    storeB = bed.sibling(storeA);
    a = await bed.spawn(storeA, { env: apiEnv() });
    [b] = await Promise.all([bed.spawn(storeB, { env: apiEnv() }), bed.spawn(storeA, { env: { ...timing(), ROLE: 'agent', REGION: 'us1', AGENT_SLOTS: '200' } })]);
    await until('the agent to be live', async () => (await call(`${b.url}/regions`)).body.regions.find((r: { code: string }) => r.code === 'us1').agents === 1, 10_000);
  }, 60_000);

  afterAll(async () => {
    a?.kill('SIGCONT');
    b?.kill('SIGCONT');
    await bed.cleanup();
    await elite?.close();
    await nats?.stop();
  }, 30_000);

  test("the other node's txt is the owner's memory; the owner stopped: the durable copy, whole", async () => {
    const refused = await refusedPort();
    const others = Array.from({ length: 3000 }, (_, i) => `127.0.${1 + (i >> 8)}.${i & 255}:${refused}`);
    const working = `u1:p@127.0.0.1:${elite.port}`;
    const made = await call(`${a.url}/pools`, { method: 'POST', headers: { 'x-api-key': a.key }, json: { name: 'listed', proxies: [working, ...others], region: 'us1', interval_s: 600, timeout: 1000, https: false } });
    expect(made.status, made.text).toBe(201);
    const id = String(made.body.id);
    // the owner is whoever holds the lease (the node that made the pool may keep it: a lease lasts
    // three flushes, 900 s here), not necessarily the placement's winner
    let holder: string | null = null;
    await until('a node to hold the pool', async () => (holder = await leaseHolder(id)) !== null, 30_000);
    const [owner, other] = holder === nodeOf(a) ? [a, b] : [b, a];
    const txt = async (node: ServiceProcess, status: string) => {
      const r = await call(`${node.url}/pools/${id}/proxies?status=${status}&format=txt`, { headers: { 'x-api-key': node.key } });
      expect(r.status, r.text).toBe(200);
      return r.text;
    };
    await until('the owner to find its working proxy and check the rest', async () => {
      const p = (await call(`${owner.url}/pools/${id}`, { headers: { 'x-api-key': owner.key } })).body;
      return p.counts?.working === 1 && p.counts?.unchecked === 0;
    }, 30_000);
    // only in the owner's memory (its first flush is 300 s away): the durable copy still says unchecked
    expect(await txt(other, 'working')).toBe(`${working}\n`);
    const all = await txt(owner, 'all');
    expect(all.split('\n').filter(Boolean).sort()).toEqual([working, ...others].sort());
    expect(await txt(other, 'all')).toBe(all);

    owner.kill('SIGSTOP');
    try {
      const t0 = Date.now();
      const durable = await txt(other, 'all');
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1500);
      expect(durable.split('\n').filter(Boolean).sort()).toEqual([working, ...others].sort());
      expect(await txt(other, 'working')).toBe('');
    } finally {
      owner.kill('SIGCONT');
    }
  }, 90_000);
});
