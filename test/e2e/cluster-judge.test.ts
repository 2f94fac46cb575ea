/**
 * The judge of a cluster, driven as an operator runs it (real processes):
 *
 * - two region agents whose JUDGE_URL is the API node's judge, started
 *   before the API node: their first calibration fails (nothing listens),
 *   is tried again (1 s, doubling), and /health on the API node shows their
 *   exit addresses within seconds of the judge coming up;
 * - JUDGE_KEY is a shared cluster secret: a node whose judge is not its own
 *   and that has no JUDGE_KEY refuses to start, one line naming it.
 *
 * The first needs PostgreSQL and nats-server; the second neither.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { refusedPort } from '../fixtures/fake-servers';
import { testDatabaseUrl } from '../helpers/db';
import { HAVE_NATS_SERVER, startNatsServer, type NatsServer } from '../helpers/nats-server';
import { ProcessBed, serviceEnv, type ServiceProcess, type ServiceStore, until } from '../helpers/process';
import { call } from '../helpers/service';

const PG = testDatabaseUrl();
const SECRETS = { RESULT_SECRET: 'cluster-result-secret-0123456789', ADMIN_TOKEN: 'cluster-admin-token-0123456789' };
const JUDGE_KEY = 'cluster-judge-key-0123456789';

describe.skipIf(PG === undefined || !HAVE_NATS_SERVER)('agents started before the judge they use', () => {
  const bed = new ProcessBed();
  let nats: NatsServer;
  let store: ServiceStore;
  let port: number;
  const agents: ServiceProcess[] = [];

  const cluster = () => ({ NATS_URL: nats.url, AGENT_HEARTBEAT_MS: '300', SHUTDOWN_GRACE_MS: '0', JUDGE_KEY });

  beforeAll(async () => {
    nats = await startNatsServer();
    store = await bed.store();
    port = await refusedPort(); // the API node's port, known before it starts: the agents' JUDGE_URL
    for (const id of ['early-1', 'early-2']) {
      agents.push(
        await bed.spawn(store, {
          env: { ...cluster(), ROLE: 'agent', REGION: 'us1', AGENT_ID: id, AGENT_SLOTS: '20', JUDGE_URL: `http://127.0.0.1:${port}/judge` },
        }),
      );
    }
  }, 60_000);

  afterAll(async () => {
    await bed.cleanup();
    await nats?.stop();
  }, 30_000);

  test('their calibration is tried again: /health shows their exits within seconds of the judge coming up', async () => {
    for (const a of agents) {
      // the first round found nothing listening: started with no exit address
      expect(await a.waitForLog((l) => l.msg === 'ready', 1000)).toMatchObject({ exitIps: [] });
      await a.waitForLog((l) => String(l.msg).startsWith('judge calibration failed'), 1000);
    }
    const api = await bed.spawn(store, { env: { ...cluster(), ...SECRETS, ROLE: 'api', PORT: String(port), JUDGE_TLS_PORT: '0' } });
    const exits = async () => {
      const h = (await call(`${api.url}/health`)).body as { agents?: { agent: string; exitIps: string[] }[] };
      return ['early-1', 'early-2'].map((id) => h.agents?.find((a) => a.agent === id)?.exitIps ?? []);
    };
    const ms = await until('both agents to show their exit address', async () => (await exits()).every((ips) => ips.includes('127.0.0.1')), 45_000);
    console.log(`agents started before their judge: exits in /health ${Math.round(ms)} ms after the API node was ready`);
  }, 90_000);
});

test('JUDGE_URL without JUDGE_KEY on a cluster node: no start, one line naming JUDGE_KEY', async () => {
  const env = serviceEnv({ dataDir: '/tmp/pc-unused-judge-key', databaseUrl: undefined, cleanup: async () => {} }, {
    NATS_URL: 'nats://127.0.0.1:1',
    ROLE: 'agent',
    REGION: 'us1',
    JUDGE_URL: 'http://127.0.0.1:1/judge',
  });
  delete env.JUDGE_KEY;
  const child = Bun.spawn([process.execPath, 'src/main.ts'], { cwd: resolve(import.meta.dir, '../..'), env, stdout: 'pipe', stderr: 'pipe' });
  const [code, err] = await Promise.all([child.exited, new Response(child.stderr).text()]);
  expect(code).toBe(1);
  const lines = err.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain('JUDGE_KEY');
});
