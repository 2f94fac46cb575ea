/**
 * The cluster as real processes (`bun src/main.ts`): one API node (ROLE=api,
 * PostgreSQL) and region agents (ROLE=agent) on a private nats-server.
 *
 * - kill -9 an agent mid-job: its shards are delivered again to the other
 *   agent; the job completes, every probe answered once, charged once, no
 *   duplicate record in the file;
 * - nats-server restarted mid-job: the job completes or fails with refunds,
 *   never charges twice; the nodes reconnect by themselves and a new job works;
 * - a region without an agent: 503, balance unchanged.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startHttpProxy } from '../fixtures/fake-proxies';
import { startBlackHole, type FakeServer } from '../fixtures/fake-servers';
import { testDatabaseUrl } from '../helpers/db';
import { HAVE_NATS_SERVER, startNatsServer, type NatsServer } from '../helpers/nats-server';
import { ProcessBed, type ServiceProcess, type ServiceStore, until } from '../helpers/process';
import { call } from '../helpers/service';

const PG = testDatabaseUrl();
const SECRETS = { RESULT_SECRET: 'cluster-result-secret-0123456789', ADMIN_TOKEN: 'cluster-admin-token-0123456789' };

describe.skipIf(PG === undefined || !HAVE_NATS_SERVER)('cluster processes', () => {
  const bed = new ProcessBed();
  let nats: NatsServer;
  let store: ServiceStore;
  let api: ServiceProcess;
  let elite: FakeServer, blackHole: FakeServer;

  const timing = () => ({
    NATS_URL: nats.url,
    // an agent gone after 1 s (5 beats), its unacked shards move on after 1.5 s
    AGENT_HEARTBEAT_MS: '200',
    SHUTDOWN_GRACE_MS: '1000',
  });
  const agent = (slots = 20) => bed.spawn(store, { env: { ...timing(), ROLE: 'agent', REGION: 'us1', AGENT_SLOTS: String(slots) } });
  const bearer = () => ({ Authorization: `Bearer ${api.key}` });
  const balance = async () => (await call(`${api.url}/me`, { headers: bearer() })).body.user.checks as number;
  const liveAgents = async () => (await call(`${api.url}/regions`)).body.regions.find((r: { code: string }) => r.code === 'us1').agents as number;
  /** n elites (distinct by credentials) and n black holes: 2n probes. */
  function proxies(n: number, tag: string): string[] {
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(`${tag}${i}:p@127.0.0.1:${elite.port}`, `${tag}${i}:p@127.0.0.1:${blackHole.port}`);
    return out;
  }

  beforeAll(async () => {
    nats = await startNatsServer();
    store = await bed.store();
    elite = await startHttpProxy();
    blackHole = await startBlackHole();
    api = await bed.spawn(store, { env: { ...timing(), ...SECRETS, ROLE: 'api' } });
  }, 60_000);

  afterAll(async () => {
    await bed.cleanup();
    await elite?.close();
    await blackHole?.close();
    await nats?.stop();
  }, 30_000);

  test('a region without an agent: 503, balance unchanged', async () => {
    const before = await balance();
    const r = await call(`${api.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [`127.0.0.1:${elite.port}`], region: 'us1' } });
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ error: 'Region unavailable', region: 'us1' });
    expect(await balance()).toBe(before);
  });

  test('kill -9 one of two agents mid-job: the job completes, each probe answered and charged once', async () => {
    const a = await agent();
    await agent();
    await until('the agents to change', async () => (await liveAgents()) === 2, 10_000);
    const before = await balance();
    const list = proxies(100, 'k');
    const job = call(`${api.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: list, region: 'us1', timeout: 1500 } });
    await Bun.sleep(1200);
    a.kill('SIGKILL');
    const r = await job;
    expect(r.status).toBe(200);
    expect(r.body.metadata.total_checked).toBe(200);
    expect(r.body.summary.total_working).toBe(100);
    expect(before - (await balance())).toBe(200);
    const file = (await (await fetch(r.body.result_url)).json()) as { proxies: { proxy: { username: string; port: number } }[] };
    expect(file.proxies).toHaveLength(200);
    expect(new Set(file.proxies.map((p) => `${p.proxy.username}@${p.proxy.port}`)).size).toBe(200);
    // the dead agent's shards were delivered again (the API node counts an agent's `start` with delivery > 1)
    const adminUrl = (await api.waitForLog((l) => l.msg === 'ready', 1000)).adminUrl as string;
    const metrics = await (await fetch(`${adminUrl}/metrics`)).text();
    expect(Number(/^proxycheck_shards_redelivered_total (\d+)/m.exec(metrics)?.[1])).toBeGreaterThan(0);
    await until('the agents to change', async () => (await liveAgents()) === 1, 10_000);
  }, 60_000);

  test('nats-server restarted mid-job: completes or fails with refunds, never charged twice; a new job works after', async () => {
    const before = await balance();
    const list = proxies(60, 'n');
    const job = call(`${api.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: list, region: 'us1', timeout: 1500 } });
    await Bun.sleep(800);
    await nats.restart({ downMs: 500 });
    const r = await job;
    const charged = before - (await balance());
    console.log(`nats restart mid-job: status ${r.status}, charged ${charged} of 120`);
    if (r.status === 200) {
      expect(r.body.metadata.total_checked).toBe(120);
      expect(charged).toBe(120);
    } else {
      // failed: what was not checked is refunded; history says what was
      const me = await call(`${api.url}/me`, { headers: bearer() });
      const last = me.body.history[0];
      expect(last.status).toBe('failed');
      expect(charged).toBe(last.total_checked);
      expect(charged).toBeLessThanOrEqual(120);
    }
    // the nodes reconnected by themselves: a new job completes
    await until('the agents to change', async () => (await liveAgents()) >= 1, 15_000);
    const again = await call(`${api.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [`127.0.0.1:${elite.port}`], region: 'us1', timeout: 1500 } });
    expect(again.status).toBe(200);
    expect(again.body.summary.total_working).toBe(1);
  }, 90_000);
});
