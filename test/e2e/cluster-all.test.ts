/**
 * ROLE=all as a real process (`bun src/main.ts` with NATS_URL, ROLE=all,
 * REGION, DATABASE_URL, RESULT_SECRET, ADMIN_TOKEN): a small cluster's node,
 * an API node and its region's agent in one process, on a private
 * nats-server.
 *
 * - /regions shows its agent live (agents 1, its slots), /health lists it;
 * - a check through it completes with the right verdicts and is charged once;
 * - a pool's round runs through its agent (background work on the region's
 *   queue) and charges the proxies it checked;
 * - the admin command with ADMIN_URL (its admin listener) and ADMIN_TOKEN
 *   makes an account whose key works on the node;
 * - SIGTERM stops it cleanly: exit 0, 'agent stopped' logged, and its
 *   heartbeat key is gone from the agents' bucket at once (deleted, not left
 *   to expire), and so is its API half's entry in the nodes' demand bucket.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { AGENTS_BUCKET, agentKey, DEMAND_BUCKET } from '../../src/cluster/protocol';
import { startHttpProxy } from '../fixtures/fake-proxies';
import { startBlackHole, type FakeServer } from '../fixtures/fake-servers';
import { testDatabaseUrl } from '../helpers/db';
import { HAVE_NATS_SERVER, startNatsServer, type NatsServer } from '../helpers/nats-server';
import { ProcessBed, type ServiceProcess, type ServiceStore, until } from '../helpers/process';
import { call } from '../helpers/service';

const PG = testDatabaseUrl();
const SECRETS = { RESULT_SECRET: 'cluster-result-secret-0123456789', ADMIN_TOKEN: 'cluster-admin-token-0123456789' };

describe.skipIf(PG === undefined || !HAVE_NATS_SERVER)('cluster: ROLE=all in one process', () => {
  const bed = new ProcessBed();
  let nats: NatsServer;
  let nc: NatsConnection;
  let store: ServiceStore;
  let node: ServiceProcess;
  let elite: FakeServer, hole: FakeServer;


  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connect({ servers: nats.url });
    elite = await startHttpProxy();
    hole = await startBlackHole();
    store = await bed.store();
    node = await bed.spawn(store, {
      env: { ...SECRETS, NATS_URL: nats.url, ROLE: 'all', REGION: 'us1', AGENT_SLOTS: '50', AGENT_HEARTBEAT_MS: '1000', SHUTDOWN_GRACE_MS: '1000', POOL_MIN_INTERVAL_S: '2' },
    });
  }, 60_000);

  afterAll(async () => {
    await nc?.close();
    await bed.cleanup();
    await elite?.close();
    await hole?.close();
    await nats?.stop();
  }, 30_000);

  test('a pool\'s checks run through the region\'s agent: verdicts in, charged per proxy checked', async () => {
    await until('the agent in /regions', async () => (await call(`${node.url}/regions`)).body.regions.find((r: { code: string }) => r.code === 'us1').agents === 1, 15_000);
    const bearer = { Authorization: `Bearer ${node.key}` };
    const before = (await call(`${node.url}/me`, { headers: bearer })).body.user.checks as number;
    const proxies = [`127.0.0.1:${elite.port}`, `127.0.0.1:${hole.port}`];
    const made = await call(`${node.url}/pools`, { method: 'POST', headers: bearer, json: { name: 'cluster', proxies, region: 'us1', interval_s: 600, timeout: 1000, https: false } });
    expect(made.status, made.text).toBe(201);
    const id = made.body.id as string;
    await until('the first checks', async () => (await call(`${node.url}/pools/${id}`, { headers: bearer })).body.counts.unchecked === 0, 15_000);
    const pool = (await call(`${node.url}/pools/${id}`, { headers: bearer })).body;
    expect(pool.counts).toEqual({ total: 2, working: 1, failed: 1, unchecked: 0 });
    // charged as they are made durable: the owner's first flush (POOL_FLUSH_S) settles both
    await until('the first durable batch', async () => (await call(`${node.url}/pools/${id}`, { headers: bearer })).body.last_round_at !== null, 20_000);
    expect((await call(`${node.url}/pools/${id}`, { method: 'DELETE', headers: bearer })).status).toBe(204);
    expect(before - ((await call(`${node.url}/me`, { headers: bearer })).body.user.checks as number)).toBe(2);
  }, 45_000);

  test('its agent is live, a check through it completes, SIGTERM exits 0 and deletes its heartbeat', async () => {
    const agentReady = await node.waitForLog((l) => l.msg === 'ready' && l.role === 'agent', 15_000);
    const agentId = String(agentReady.agent);
    await until('the agent in /regions', async () => (await call(`${node.url}/regions`)).body.regions.find((r: { code: string }) => r.code === 'us1').agents === 1, 10_000);
    const us1 = (await call(`${node.url}/regions`)).body.regions.find((r: { code: string }) => r.code === 'us1');
    expect(us1).toMatchObject({ agents: 1, capacity: 50 });
    const health = await call(`${node.url}/health`);
    expect(health.body.agents).toEqual([expect.objectContaining({ region: 'us1', agent: agentId, slots: 50 })]);

    const bearer = { Authorization: `Bearer ${node.key}` };
    const before = (await call(`${node.url}/me`, { headers: bearer })).body.user.checks as number;
    const proxies = [`a:p@127.0.0.1:${elite.port}`, `b:p@127.0.0.1:${elite.port}`, `127.0.0.1:${hole.port}`];
    const r = await call(`${node.url}/check`, { method: 'POST', headers: bearer, json: { proxies, region: 'us1', timeout: 1000 } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.metadata).toMatchObject({ total_checked: 3, region_used: 'us1' });
    expect(r.body.summary.total_working).toBe(2);
    expect(before - ((await call(`${node.url}/me`, { headers: bearer })).body.user.checks as number)).toBe(3);

    // the admin command against the cluster, through this API node's admin listener (ADMIN_URL)
    const adminUrl = String((await node.waitForLog((l) => l.msg === 'ready' && l.adminUrl !== undefined, 1000)).adminUrl);
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'DATABASE_URL' && k !== 'TEST_DATABASE_URL') env[k] = v;
    const admin = Bun.spawn([process.execPath, 'src/admin/cli.ts', 'create-account', '--email', 'all@example.test', '--checks', '7'], {
      cwd: join(import.meta.dir, '../..'),
      env: { ...env, ADMIN_URL: adminUrl, ADMIN_TOKEN: SECRETS.ADMIN_TOKEN, LOG_LEVEL: 'silent' },
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const [out, err, code] = await Promise.all([new Response(admin.stdout).text(), new Response(admin.stderr).text(), admin.exited]);
    expect([code, err]).toEqual([0, '']);
    const made = JSON.parse(out) as { apiKey: string };
    expect((await call(`${node.url}/me`, { headers: { Authorization: `Bearer ${made.apiKey}` } })).body.user.checks).toBe(7);

    const kv = await new Kvm(nc).open(AGENTS_BUCKET);
    expect(await kv.get(agentKey('us1', agentId))).not.toBeNull();
    // the API half told the other nodes of its demand while the check ran (fairness across nodes)
    const nodeId = String((await node.waitForLog((l) => l.msg === 'ready' && l.node !== undefined, 1000)).node);
    const demand = await new Kvm(nc).open(DEMAND_BUCKET);
    expect((await demand.get(nodeId))?.operation).toBe('PUT');
    node.kill('SIGTERM');
    expect(await node.exited).toEqual({ code: 0, signal: null });
    expect(node.logs.some((l) => l.msg === 'agent stopped')).toBe(true);
    // deleted on the way out (the TTL is 10 s: expiry would not be this fast)
    const entry = await kv.get(agentKey('us1', agentId));
    expect(entry === null || entry.operation !== 'PUT').toBe(true);
    const gone = await demand.get(nodeId);
    expect(gone === null || gone.operation !== 'PUT').toBe(true);
  }, 60_000);
});
