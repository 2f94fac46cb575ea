/**
 * Regions are places (real processes): one API node on this host (ROLE=api,
 * PostgreSQL) and three region agents (ROLE=agent), us1, de1 and jp1, each in
 * a network namespace of its own (test/helpers/veth.ts: a small host with its
 * own address, 169.254.<x>.2, reaching this host through its veth pair), on
 * a private nats-server listening on every address.
 *
 * Each agent hosts its region's judge on its own listener (HOST=0.0.0.0, a
 * fixed PORT inside its namespace) and says where the proxies reach it
 * (JUDGE_URL = http://<its address>:<port>/judge), so every region has its
 * own judge and calibrates its own exit address against it. The proxies run
 * on this host, bound to 0.0.0.0: a transparent one (adds X-Forwarded-For:
 * <client address>) and an elite one (adds nothing), each recording the
 * client addresses it served. The same two proxies, checked in each region:
 *
 * - the proxies saw that region's agent address, and nobody else's;
 * - the judge that answered was that region's (the elite record's origin is
 *   this host's end of that region's veth pair: the proxy reached the judge
 *   over that link);
 * - the transparent proxy is `transparent` in every region: it forwards the
 *   region's own agent address, which only that agent's calibration holds
 *   (another region's calibration would call it `anonymous`); the elite one
 *   is `elite` everywhere;
 * - /health lists each agent with its own exit address (its heartbeat).
 *
 * Then GET /regions shows each region with 1 live agent; jp1's agent stopped
 * (SIGTERM: its heartbeat deleted) and de1's killed (-9: its heartbeat
 * expires) leave /regions within the agents' TTL, and a check to either region
 * gets 503 with the balance unchanged, while us1 still works.
 *
 * Skips unless PostgreSQL, nats-server and root with `ip` (network
 * namespaces) are all there.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startHttpProxy } from '../fixtures/fake-proxies';
import type { FakeServer } from '../fixtures/fake-servers';
import { testDatabaseUrl } from '../helpers/db';
import { HAVE_NATS_SERVER, startNatsServer, type NatsServer } from '../helpers/nats-server';
import { ProcessBed, type ServiceProcess, type ServiceStore, until } from '../helpers/process';
import { call } from '../helpers/service';
import { createVeth, vethUnavailable, type Veth } from '../helpers/veth';

const PG = testDatabaseUrl();
const SECRETS = { RESULT_SECRET: 'cluster-result-secret-0123456789', ADMIN_TOKEN: 'cluster-admin-token-0123456789' };
const JUDGE_KEY = 'regions-judge-key-0123456789';
const REGIONS = ['us1', 'de1', 'jp1'] as const;
type Region = (typeof REGIONS)[number];
/** The agent's listener (and judge) port inside its own namespace: nothing else listens there. */
const AGENT_PORT = 18_080;
const HEARTBEAT_MS = 300;
/** An agent is gone after 5 missed heartbeats (derived, src/config.ts). */
const TTL_MS = 5 * HEARTBEAT_MS;

function makeVeths(): Veth[] | null {
  if (PG === undefined || !HAVE_NATS_SERVER) return null; // skipped anyway: create nothing
  const made: Veth[] = [];
  for (let slot = 0; slot < REGIONS.length; slot++) {
    const v = createVeth({ slot, defaultRoute: true });
    if (v === null) {
      console.warn(`cluster regions skipped: ${vethUnavailable}`);
      for (const m of made) m.remove();
      return null;
    }
    made.push(v);
  }
  return made;
}
const veths = makeVeths();

describe.skipIf(veths === null)('regions are places: three agents in three network namespaces', () => {
  const bed = new ProcessBed();
  let nats: NatsServer;
  let store: ServiceStore;
  let api: ServiceProcess;
  const agents = new Map<Region, ServiceProcess>();
  let transparent: FakeServer, elite: FakeServer;
  /** Client addresses each proxy served (a forwarded GET each). */
  const seenBy = { transparent: [] as string[], elite: [] as string[] };

  const net = (r: Region): Veth => veths![REGIONS.indexOf(r)]!;
  const timing = () => ({ AGENT_HEARTBEAT_MS: String(HEARTBEAT_MS), SHUTDOWN_GRACE_MS: '500' });
  const bearer = () => ({ Authorization: `Bearer ${api.key}` });
  const balance = async () => (await call(`${api.url}/me`, { headers: bearer() })).body.user.checks as number;
  const regions = async () => (await call(`${api.url}/regions`)).body.regions as { code: string; agents: number; capacity: number }[];
  const agentsIn = async (r: Region) => (await regions()).find((x) => x.code === r)!.agents;
  /** The proxies, as every namespace reaches them: an address of this host (the first pair's host end). */
  const at = (s: FakeServer) => `${veths![0]!.hostAddress}:${s.port}`;


  function startAgent(r: Region): Promise<ServiceProcess> {
    const v = net(r);
    return bed.spawn(store, {
      wrapper: ['ip', 'netns', 'exec', v.namespace],
      env: {
        ...timing(),
        ROLE: 'agent',
        REGION: r,
        AGENT_ID: `agent-${r}`,
        AGENT_SLOTS: '20',
        NATS_URL: `nats://${v.hostAddress}:${nats.port}`,
        HOST: '0.0.0.0',
        PORT: String(AGENT_PORT),
        JUDGE_URL: `http://${v.peerAddress}:${AGENT_PORT}/judge`,
        JUDGE_KEY,
      },
      readyTimeoutMs: 20_000,
    });
  }

  beforeAll(async () => {
    nats = await startNatsServer({ host: '0.0.0.0' });
    store = await bed.store();
    transparent = await startHttpProxy({ listenHost: '0.0.0.0', addHeaders: (ip) => (seenBy.transparent.push(ip), [['X-Forwarded-For', ip]]) });
    elite = await startHttpProxy({ listenHost: '0.0.0.0', addHeaders: (ip) => (seenBy.elite.push(ip), []) });
    const [a, ...started] = await Promise.all([
      bed.spawn(store, { env: { ...timing(), ...SECRETS, ROLE: 'api', NATS_URL: nats.url } }),
      ...REGIONS.map((r) => startAgent(r)),
    ]);
    api = a!;
    REGIONS.forEach((r, i) => agents.set(r, started[i]!));
    await until('three live agents in /regions', async () => (await Promise.all(REGIONS.map(agentsIn))).every((n) => n === 1), 10_000);
  }, 60_000);

  afterAll(async () => {
    await bed.cleanup();
    await transparent?.close();
    await elite?.close();
    await nats?.stop();
    for (const v of veths ?? []) v.remove();
  }, 30_000);

  test('each agent runs in its own place: its ready line and heartbeat name its own address and judge', async () => {
    const health = (await call(`${api.url}/health`)).body as { agents: { region: string; agent: string; exitIps: string[] }[] };
    for (const r of REGIONS) {
      const ready = await agents.get(r)!.waitForLog((l) => l.msg === 'ready', 1000);
      expect(ready).toMatchObject({ role: 'agent', region: r, judge: `http://${net(r).peerAddress}:${AGENT_PORT}/judge` });
      const hb = health.agents.find((a) => a.region === r);
      expect(hb?.agent).toBe(`agent-${r}`);
      // calibrated against its own judge: its own address, no other region's
      expect(hb!.exitIps).toContain(net(r).peerAddress);
      for (const o of REGIONS) if (o !== r) expect(hb!.exitIps).not.toContain(net(o).peerAddress);
    }
  });

  test('a job to each region: the proxies see that region\'s address, its judge answers, anonymity is right for each', async () => {
    for (const r of REGIONS) {
      seenBy.transparent.length = 0;
      seenBy.elite.length = 0;
      const res = await call(`${api.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [at(transparent), at(elite)], region: r, timeout: 3000 } });
      expect(res.status, `${r}: ${res.text}`).toBe(200);
      expect(res.body.metadata.total_checked).toBe(2);
      expect(res.body.summary.anonymity_levels).toEqual({ elite: 1, anonymous: 0, transparent: 1 });
      // the probes left from this region's agent, and only from it
      expect([...new Set(seenBy.transparent)], r).toEqual([net(r).peerAddress]);
      expect([...new Set(seenBy.elite)], r).toEqual([net(r).peerAddress]);

      const file = (await (await fetch(res.body.result_url)).json()) as { proxies: { proxy: { port: number }; status: string; anonymity: string; origin: string }[] };
      const rec = (s: FakeServer) => file.proxies.find((p) => p.proxy.port === s.port)!;
      expect(rec(transparent)).toMatchObject({ status: 'working', anonymity: 'transparent' });
      // its own judge saw the elite proxy arrive over this region's link (this host's end of it)
      expect(rec(elite)).toMatchObject({ status: 'working', anonymity: 'elite', origin: net(r).hostAddress });
      console.log(`region ${r}: agent ${net(r).peerAddress}, judge saw ${rec(elite).origin}; transparent=${rec(transparent).anonymity} (origin ${rec(transparent).origin}), elite=${rec(elite).anonymity}`);
    }
  }, 30_000);

  test('/regions shows each region live; stopped (SIGTERM) and killed (-9) agents leave within the TTL; their regions then answer 503, nothing charged', async () => {
    for (const x of await regions()) {
      if ((REGIONS as readonly string[]).includes(x.code)) expect(x, x.code).toMatchObject({ agents: 1, capacity: 20 });
    }

    const jp = agents.get('jp1')!;
    jp.kill('SIGTERM');
    const termMs = await until('jp1 to leave /regions after SIGTERM', async () => (await agentsIn('jp1')) === 0, TTL_MS + 3000);
    expect((await jp.exited).code).toBe(0);

    const de = agents.get('de1')!;
    const t0 = performance.now();
    de.kill('SIGKILL');
    await de.exited;
    await until('de1 to leave /regions after kill -9', async () => (await agentsIn('de1')) === 0, TTL_MS + 3000);
    const killMs = performance.now() - t0;
    console.log(`agents leaving /regions: SIGTERM ${termMs.toFixed(0)} ms, kill -9 ${killMs.toFixed(0)} ms (TTL ${TTL_MS} ms)`);
    expect(termMs).toBeLessThan(TTL_MS); // a graceful stop deletes its heartbeat: no TTL to wait for
    expect(killMs).toBeLessThan(TTL_MS + TTL_MS / 4 + 750); // the TTL, plus the registry's expiry tick (TTL / 4), this poll and load
    expect(await agentsIn('us1')).toBe(1);

    const before = await balance();
    for (const r of ['jp1', 'de1'] as const) {
      const res = await call(`${api.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [at(elite)], region: r } });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: 'Region unavailable', message: expect.any(String), region: r });
    }
    expect(await balance()).toBe(before);
    const us = await call(`${api.url}/check`, { method: 'POST', headers: bearer(), json: { proxies: [at(elite)], region: 'us1', timeout: 3000 } });
    expect(us.status).toBe(200);
    expect(us.body.summary.total_working).toBe(1);
    expect(before - (await balance())).toBe(1);
  }, 30_000);
});
