/**
 * Cross-node, real processes: two API nodes A and B (ROLE=api, one
 * PostgreSQL database, each its own DATA_DIR, the same RESULT_SECRET) and one
 * region agent on a private nats-server.
 *
 * - WebSocket subscribers on node B follow a job submitted on node A: the
 *   owner's authenticated subscriber and an anonymous one both get progress
 *   messages and the final `completed`, then a 1000 close; only the owner's
 *   final carries `result_url` (A's link); a subscriber of another account is
 *   closed with 1008.
 * - The result link minted by A downloads from B (the cluster's result store
 *   in PostgreSQL: A's link with B's origin, as behind one load balancer) as
 *   .json, .csv and .txt, byte for byte what A serves; a token of A's link
 *   applied to another id is refused by B (403).
 *
 * - A pool's events cross nodes too: a `/ws?pool=` subscriber on B hears the
 *   owner's pause and resume done through A once each (pc.pool.<account>),
 *   and its socket is closed 1000 `pool deleted` when A deletes the pool.
 *
 * - The gateway on node B (GATEWAY_PORT) rotates over a pool made on A: the
 *   pool's rounds (through the agent) find its proxy working, and B's working
 *   set, read from the pools' shared state, carries curl's request through
 *   it (`X-Gateway-Upstream`); B's key cache knows A's account.
 *
 * Skips unless PostgreSQL and nats-server are there.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startHttpProxy } from '../fixtures/fake-proxies';
import { startBlackHole, type FakeServer } from '../fixtures/fake-servers';
import { testDatabaseUrl } from '../helpers/db';
import { HAVE_NATS_SERVER, startNatsServer, type NatsServer } from '../helpers/nats-server';
import { ProcessBed, type ServiceProcess, type ServiceStore, until } from '../helpers/process';
import { call } from '../helpers/service';
import { curl, startTarget, type Target } from '../helpers/gateway';

const PG = testDatabaseUrl();
const SECRETS = { RESULT_SECRET: 'cluster-result-secret-0123456789', ADMIN_TOKEN: 'cluster-admin-token-0123456789' };

interface Watch {
  messages: Record<string, any>[];
  closed: Promise<{ code: number; reason: string }>;
}

/** A /ws subscriber (key in the query when given); resolves once open. `jobId` may be `pool=<id>` (a pool's events). */
function watch(base: string, jobId: string, apiKey?: string): Promise<Watch> {
  const u = new URL(`${base.replace(/^http/, 'ws')}/ws`);
  if (jobId.startsWith('pool=')) u.searchParams.set('pool', jobId.slice(5));
  else u.searchParams.set('jobId', jobId);
  if (apiKey !== undefined) u.searchParams.set('apiKey', apiKey);
  const ws = new WebSocket(u.toString());
  const messages: Record<string, any>[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.onclose = (e) => resolve({ code: e.code, reason: e.reason });
  });
  ws.onmessage = (e) => messages.push(JSON.parse(String(e.data)) as Record<string, any>);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`ws to ${u.host} did not open within 5 s`)), 5000);
    ws.onopen = () => {
      clearTimeout(timer);
      resolve({ messages, closed });
    };
    ws.onerror = () => {
      clearTimeout(timer);
      reject(new Error(`ws to ${u.host} failed`));
    };
  });
}

async function closedWithin(w: Watch, ms: number, who: string): Promise<{ code: number; reason: string }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${who}: no close within ${ms} ms; got ${JSON.stringify(w.messages.map((m) => m.status))}`)), ms)));
  try {
    return await Promise.race([w.closed, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

describe.skipIf(PG === undefined || !HAVE_NATS_SERVER)('cluster: a job on node A, followed and downloaded on node B', () => {
  const bed = new ProcessBed();
  let nats: NatsServer;
  let storeA: ServiceStore, storeB: ServiceStore;
  let a: ServiceProcess, b: ServiceProcess;
  let elite: FakeServer, hole: FakeServer;
  let target: Target;
  let otherKey: string;

  const timing = () => ({ NATS_URL: nats.url, AGENT_HEARTBEAT_MS: '300', SHUTDOWN_GRACE_MS: '500' });
  const apiEnv = () => ({ ...timing(), ...SECRETS, ROLE: 'api' });
  /** `url` as node B serves it (the same path and query, B's origin). */
  const onB = (url: string) => {
    const u = new URL(url);
    return `${b.url}${u.pathname}${u.search}`;
  };


  beforeAll(async () => {
    nats = await startNatsServer();
    elite = await startHttpProxy();
    hole = await startBlackHole();
    storeA = await bed.store();
    storeB = bed.sibling(storeA);
    a = await bed.spawn(storeA, { env: apiEnv() });
    target = startTarget();
    [b] = await Promise.all([bed.spawn(storeB, { env: { ...apiEnv(), GATEWAY_PORT: '0' } }), bed.spawn(storeA, { env: { ...timing(), ROLE: 'agent', REGION: 'us1', AGENT_SLOTS: '20' } })]);
    await until('the agent to be live on A', async () => (await call(`${a.url}/regions`)).body.regions.find((r: { code: string }) => r.code === 'us1').agents === 1, 10_000);
    // a second account (the admin API of node B; accounts live in the shared database)
    const adminUrl = String(b.logs.find((l) => l.msg === 'ready')?.adminUrl);
    const made = await call(`${adminUrl}/admin/create-account`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${SECRETS.ADMIN_TOKEN}` },
      json: { email: 'other@example.test', checks: 10 },
    });
    expect(made.status, made.text).toBeLessThan(300);
    otherKey = String(made.body.apiKey);
  }, 60_000);

  afterAll(async () => {
    await bed.cleanup();
    await elite?.close();
    await hole?.close();
    await target?.stop();
    await nats?.stop();
  }, 30_000);

  test('a pool\'s events: the owner\'s pause and resume through A reach a subscriber on B once each; A deletes it: B\'s socket closes 1000', async () => {
    const made = await call(`${a.url}/pools`, { method: 'POST', headers: { 'x-api-key': a.key }, json: { name: 'cross', proxies: ['10.20.0.1:8080'] } });
    expect(made.status, made.text).toBe(201);
    const id = String(made.body.id);
    const onB = await watch(b.url, `pool=${id}`, b.key);
    const onA = await watch(a.url, `pool=${id}`, a.key);
    for (const state of ['paused', 'active']) {
      const r = await call(`${a.url}/pools/${id}`, { method: 'PATCH', headers: { 'x-api-key': a.key }, json: { state } });
      expect(r.status, r.text).toBe(200);
    }
    // the pool's rounds run too (its proxy is refused before any connection: round.completed events); the owner's are the pool.* ones
    const owners = (s: typeof onB) => s.messages.filter((m) => String(m.event).startsWith('pool.'));
    await until('both events on B', async () => owners(onB).length >= 2, 5_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(owners(onB).map((m) => [m.pool, m.event, m.reason ?? null])).toEqual([
      [id, 'pool.paused', 'owner'],
      [id, 'pool.resumed', null],
    ]);
    expect(onA.messages).toEqual(onB.messages);
    expect((await call(`${a.url}/pools/${id}`, { method: 'DELETE', headers: { 'x-api-key': a.key } })).status).toBe(204);
    expect(await closedWithin(onB, 5000, 'B')).toEqual({ code: 1000, reason: 'pool deleted' });
    expect(await closedWithin(onA, 5000, 'A')).toEqual({ code: 1000, reason: 'pool deleted' });
  });

  test("the gateway on B rotates over a pool made on A: its working proxy, found by the pools' rounds, carries curl's request", async () => {
    const gatewayPort = Number(b.logs.find((l) => l.msg === 'gateway listening')?.port);
    expect(gatewayPort).toBeGreaterThan(0);
    const made = await call(`${a.url}/pools`, { method: 'POST', headers: { 'x-api-key': a.key }, json: { name: 'gw', type: 'http', region: 'us1', https: false, proxies: [`127.0.0.1:${elite.port}`] } });
    expect(made.status, made.text).toBe(201);
    const id = String(made.body.id);
    try {
      await until('the pool\'s proxy to be working (as B reads it)', async () => (await call(`${b.url}/pools/${id}`, { headers: { 'x-api-key': b.key } })).body.counts?.working === 1, 20_000);
      const seen = target.seen.length;
      const r = await curl(['-x', `http://pool-${id}:${b.key}@127.0.0.1:${gatewayPort}`, `http://127.0.0.1:${target.port}/through-b`]);
      expect(r.status, r.body).toBe(200);
      expect(r.headers.get('x-gateway-upstream')).toBe(`127.0.0.1:${elite.port}`);
      expect(target.seen.slice(seen).map((x) => x.path)).toEqual(['/through-b']);
      // another account's key: the pool is not its own
      expect((await curl(['-x', `http://pool-${id}:${otherKey}@127.0.0.1:${gatewayPort}`, `http://127.0.0.1:${target.port}/`])).status).toBe(407);
    } finally {
      await call(`${a.url}/pools/${id}`, { method: 'DELETE', headers: { 'x-api-key': a.key } });
    }
  }, 40_000);

  test('WebSocket subscribers on B follow a job on A: progress, the final, result_url only for the owner; the link from A downloads from B', async () => {
    const jobId = `cross-node-${Date.now()}`;
    const owner = await watch(b.url, jobId, b.key);
    const anon = await watch(b.url, jobId);
    const stranger = await watch(b.url, jobId, otherKey);
    const proxies = [...Array.from({ length: 4 }, (_, i) => `w${i}:p@127.0.0.1:${elite.port}`), `127.0.0.1:${hole.port}`];
    const res = await call(`${a.url}/check`, { method: 'POST', headers: { 'x-api-key': a.key }, json: { proxies, region: 'us1', timeout: 2000, jobId } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.metadata.job_id).toBe(jobId);
    const link = res.body.result_url as string;
    expect(new URL(link).origin).toBe(a.url); // minted by A

    for (const [who, w] of [['owner', owner], ['anonymous', anon]] as const) {
      expect(await closedWithin(w, 5000, who), who).toEqual({ code: 1000, reason: 'completed' });
      const statuses = w.messages.map((m) => m.status);
      expect(statuses.filter((s) => s === 'in_progress').length, who).toBeGreaterThan(0);
      expect(statuses.at(-1), who).toBe('completed');
      expect(statuses.filter((s) => s !== 'in_progress'), who).toEqual(['completed']);
      expect(w.messages.every((m) => m.jobId === jobId), who).toBe(true);
      const final = w.messages.at(-1)!;
      expect(final.details).toMatchObject({ checked: 5, total: 5, working_so_far: 4 });
      if (who === 'owner') expect(final.result_url).toBe(link);
      else expect(final.result_url).toBeUndefined();
    }
    expect((await closedWithin(stranger, 5000, 'another account')).code).toBe(1008);
    expect(stranger.messages.some((m) => m.result_url !== undefined)).toBe(false);

    // A's link (A's token), served by B from the cluster's result store
    const urls = res.body.result_urls as { json: string; csv: string; txt: string };
    expect(urls.json).toBe(link);
    for (const ext of ['json', 'csv', 'txt'] as const) {
      const fromB = await fetch(onB(urls[ext]));
      expect(fromB.status, `${ext} from B`).toBe(200);
      const bodyB = await fromB.text();
      const fromA = await fetch(urls[ext]);
      expect(fromA.status, `${ext} from A`).toBe(200);
      expect(bodyB, ext).toBe(await fromA.text());
      if (ext === 'json') {
        const doc = JSON.parse(bodyB) as { summary: unknown; proxies: unknown[] };
        expect(doc.summary).toEqual(res.body.summary);
        expect(doc.proxies).toHaveLength(5);
      } else if (ext === 'csv') {
        expect(bodyB.trim().split('\n')).toHaveLength(1 + 5); // header + one line a proxy
      } else {
        expect(bodyB.trim().split('\n')).toHaveLength(4); // the working ones
      }
    }
    // the token is for that result only
    const u = new URL(onB(link));
    const other = `${b.url}/result/AAAAAAAAAAAAAAAAAAAAAA.json${u.search}`;
    expect((await fetch(other)).status).toBe(403);
  }, 40_000);
});
