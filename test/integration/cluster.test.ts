/**
 * The cluster in one process: an API node (ROLE=api, PostgreSQL) and region
 * agents (startAgent) on a private nats-server, real loopback fake proxies.
 * A job to a region without an agent is refused (503, nothing charged); with
 * agents it completes with the right verdicts, charged once, its file
 * complete; /regions and /health show the agents; a stopped agent leaves.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgent, type RunningAgent } from '../../src/agent';
import { parseConfig } from '../../src/config';
import { memoryLogger } from '../../src/log';
import { startHttpProxy } from '../fixtures/fake-proxies';
import { startBlackHole, type FakeServer } from '../fixtures/fake-servers';
import { testDatabaseUrl } from '../helpers/db';
import { HAVE_NATS_SERVER, startNatsServer, type NatsServer } from '../helpers/nats-server';
import { checkedCall as call } from '../helpers/openapi-check';
import { startTestService, type TestService } from '../helpers/service';

const PG = testDatabaseUrl();
export const CLUSTER_SECRETS = { RESULT_SECRET: 'cluster-result-secret-0123456789', ADMIN_TOKEN: 'cluster-admin-token-0123456789' };

describe.skipIf(PG === undefined || !HAVE_NATS_SERVER)('cluster in one process', () => {
  let nats: NatsServer;
  let api: TestService;
  const agents: RunningAgent[] = [];
  const servers: FakeServer[] = [];
  const dirs: string[] = [];
  let elite: FakeServer, anonymous: FakeServer, transparent: FakeServer, blackHole: FakeServer;

  // heartbeat 200 ms: an agent gone after 1 s (5 beats), its unacked shards move on after 1.5 s
  const clusterEnv = () => ({ NATS_URL: nats.url, AGENT_HEARTBEAT_MS: '200' });

  async function addAgent(region: string): Promise<RunningAgent> {
    const dir = mkdtempSync(join(tmpdir(), 'pc-agent-'));
    dirs.push(dir);
    const config = parseConfig({ ...clusterEnv(), ROLE: 'agent', REGION: region, HOST: '127.0.0.1', PORT: '0', ALLOW_PRIVATE_TARGETS: 'true', AGENT_SLOTS: '50', DATA_DIR: dir });
    const a = await startAgent(config, { log: memoryLogger('warn'), threads: 1 });
    agents.push(a);
    return a;
  }

  const bearer = () => ({ Authorization: `Bearer ${api.key}` });
  const addr = (s: FakeServer) => `127.0.0.1:${s.port}`;
  const balance = async () => (await call(`${api.url}/me`, { headers: bearer() })).body.user.checks as number;
  async function regionOf(code: string): Promise<{ agents: number; capacity: number }> {
    const r = await call(`${api.url}/regions`);
    return r.body.regions.find((x: { code: string }) => x.code === code);
  }
  async function until(f: () => Promise<boolean>, ms = 5000): Promise<void> {
    const end = Date.now() + ms;
    while (!(await f())) {
      if (Date.now() > end) throw new Error('condition not met in time');
      await Bun.sleep(50);
    }
  }

  beforeAll(async () => {
    nats = await startNatsServer();
    api = await startTestService({ ...clusterEnv(), ...CLUSTER_SECRETS, ROLE: 'api' });
    elite = await startHttpProxy();
    anonymous = await startHttpProxy({ addHeaders: () => [['Via', '1.1 fake-proxy']] });
    transparent = await startHttpProxy({ addHeaders: (ip) => [['X-Forwarded-For', ip]] });
    blackHole = await startBlackHole();
    servers.push(elite, anonymous, transparent, blackHole);
  }, 60_000);

  afterAll(async () => {
    for (const a of agents) await a.stop();
    await api?.stop();
    await Promise.all(servers.map((s) => s.close()));
    await nats?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }, 30_000);

  test('a region without an agent: 503 Region unavailable, nothing charged', async () => {
    const before = await balance();
    expect(await regionOf('de1')).toMatchObject({ agents: 0, capacity: 0 });
    const r = await call(`${api.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [addr(elite)], region: 'de1' } });
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ error: 'Region unavailable', message: expect.any(String), region: 'de1' });
    expect(await balance()).toBe(before);
  });

  test('with two agents a job completes: right verdicts, charged once, file complete', async () => {
    await addAgent('us1');
    await addAgent('us1');
    await until(async () => (await regionOf('us1')).agents === 2);
    expect((await regionOf('us1')).capacity).toBe(100);
    const health = await call(`${api.url}/health`);
    expect(health.body.agents.map((a: { region: string }) => a.region)).toEqual(['us1', 'us1']);

    const before = await balance();
    // 60 copies of each proxy differ by their credentials, so none is a duplicate: 240 probes
    const proxies: string[] = [];
    for (let i = 0; i < 60; i++) for (const s of [elite, anonymous, transparent, blackHole]) proxies.push(`u${i}:p@${addr(s)}`);
    const r = await call(`${api.url}/check`, { method: 'POST', headers: bearer(), json: { proxies, region: 'us1', timeout: 1500 } });
    expect(r.status).toBe(200);
    expect(r.body.summary.total_working).toBe(180);
    expect(r.body.summary.anonymity_levels).toEqual({ elite: 60, anonymous: 60, transparent: 60 });
    expect(r.body.metadata.total_checked).toBe(240);
    expect(before - (await balance())).toBe(240);
    const file = (await (await fetch(r.body.result_url)).json()) as { proxies: any[] };
    expect(file.proxies).toHaveLength(240);
    const keys = new Set(file.proxies.map((p: { proxy: { port: number; username: string } }) => `${p.proxy.username}@${p.proxy.port}`));
    expect(keys.size).toBe(240);
    const hole = file.proxies.filter((p: { proxy: { port: number } }) => p.proxy.port === blackHole.port);
    expect(hole.every((p: { error: { code: string } }) => p.error.code === 'timeout')).toBe(true);
  }, 30_000);

  test('a client jobId used again on the same node runs again: a run\'s cancel names that run only', async () => {
    // every job's end tells the agents to drop its shards (pc.cancel); a cancel by the client's jobId
    // would make them drop the next run of that jobId unprobed (it then hangs to the shard deadline)
    for (let run = 0; run < 2; run++) {
      const t0 = performance.now();
      const r = await call(`${api.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [addr(elite)], region: 'us1', timeout: 1500, jobId: 'same-job-id' } });
      expect(r.status).toBe(200);
      expect(r.body.summary.total_working).toBe(1);
      expect(performance.now() - t0).toBeLessThan(5000);
    }
  }, 30_000);

  test('a stopped agent leaves /regions; the last one gone makes the region unavailable', async () => {
    await agents[0]!.stop();
    await until(async () => (await regionOf('us1')).agents === 1);
    await agents[1]!.stop();
    await until(async () => (await regionOf('us1')).agents === 0);
    const r = await call(`${api.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [addr(elite)], region: 'us1' } });
    expect(r.status).toBe(503);
  }, 15_000);
});
