/**
 * The topologies the cluster benchmark compares, as real processes
 * (`bun src/main.ts` behind bench/e2e/guard.ts, so each dies with the runner):
 *
 *   embedded   one process, no NATS_URL (`npm start` defaults plus what the
 *              scenario sets: its database, its judge, its slots)
 *   cluster    one API node (ROLE=api, PostgreSQL) + n agents (ROLE=agent,
 *              REGION=us1), each agent its own process with its own
 *              open-file limit and, unless the scenario sets AGENT_SLOTS, its
 *              default slots; all on one private nats-server
 *
 * A topology is ready when every node answers /health and, for a cluster,
 * GET /regions on the API node shows all n agents of us1 live. `pids()` lists
 * every process whose CPU is the topology's (nodes, the nats-server, the
 * judge when it is a separate process); `cpuMs` sums a process and its
 * descendants from /proc.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { cpuMs } from '../e2e/proc';
import { startService, type Service } from '../e2e/service';

export const SECRETS = { RESULT_SECRET: 'bench-cluster-result-secret-0123456789', ADMIN_TOKEN: 'bench-cluster-admin-token-0123456789' };
export const REGION = 'us1';

export interface Judge {
  url: string;
  key: string;
  pid: number;
}

export interface Topology {
  name: string;
  /** Where checks go (the embedded process or the API node). */
  api: Service;
  /** Agents (cluster only). */
  agents: Service[];
  /** Region capacity the scheduler sees (us1). */
  capacity: number;
  /** nats-server's monitoring endpoint (cluster only): /varz message counts. */
  natsMonitor: string | null;
  /** Every process whose CPU counts as the topology's, by name. */
  pids(): Record<string, number>;
  stop(): Promise<void>;
}

/** A fresh PostgreSQL database on `server` (dropped by drop()). */
export async function createDatabase(server: string, prefix: string): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`;
  const admin = postgres(server, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const u = new URL(server);
  u.pathname = `/${name}`;
  let dropped: Promise<void> | null = null;
  return {
    url: u.toString(),
    name,
    drop: () =>
      (dropped ??= (async () => {
        const a = postgres(server, { max: 1, onnotice: () => undefined });
        try {
          await a.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        } finally {
          await a.end({ timeout: 5 });
        }
      })()),
  };
}

/** pid and every descendant (from /proc/<pid>/stat's ppid). */
export function processTree(root: number): number[] {
  const parent = new Map<number, number>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [root];
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const s = readFileSync(`/proc/${e}/stat`, 'latin1');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(e), Number(f[1]));
    } catch {
      // gone
    }
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [p, pp] of parent) if (pp === out[i]) out.push(p);
  return out;
}

/** CPU (user + sys, ms) of each named process and its descendants. */
export function treeCpu(pids: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) out[name] = processTree(pid).reduce((s, p) => s + cpuMs(p).total, 0);
  return out;
}

interface Common {
  dataDir: string;
  /** null: the node's own judge (its /judge, `npm start` default) */
  judge: Judge | null;
  /** extra environment for every node */
  env?: Record<string, string>;
  /** extra bun flags for every node (--profile: --cpu-prof-md) */
  bunFlags?: string[];
  log: (l: string) => void;
}

const judgeEnv = (j: Judge | null): Record<string, string> => (j === null ? { JUDGE_URL: '', JUDGE_KEY: '' } : { JUDGE_URL: j.url, JUDGE_KEY: j.key });
const judgePids = (j: Judge | null): Record<string, number> => (j === null ? {} : { judge: j.pid });

export async function startEmbedded(o: Common & { databaseUrl: string | null; slotsPerEndpoint: number | null; capacity: number }): Promise<Topology> {
  const api = await startService({
    dataDir: join(o.dataDir, `embedded-${Date.now().toString(36)}`),
    slotsPerEndpoint: o.slotsPerEndpoint,
    judgeUrl: '',
    judgeKey: '',
    bunFlags: o.bunFlags ?? [],
    env: { ...judgeEnv(o.judge), DATABASE_URL: o.databaseUrl ?? '', NATS_URL: '', ROLE: '', ...(o.env ?? {}) },
  });
  o.log(`  embedded ready in ${api.startupMs.toFixed(0)} ms (pid ${api.pid}, ${o.databaseUrl === null ? 'PGlite' : 'PostgreSQL'})`);
  return {
    name: 'embedded',
    api,
    agents: [],
    capacity: o.capacity,
    natsMonitor: null,
    pids: () => ({ embedded: api.pid, ...judgePids(o.judge) }),
    stop: () => api.stop(),
  };
}

export async function regionsOf(url: string): Promise<{ agents: number; capacity: number }> {
  const r = await fetch(`${url}/regions`);
  const b = (await r.json()) as { regions: { code: string; agents?: number; capacity?: number }[] };
  const us = b.regions.find((x) => x.code === REGION);
  return { agents: us?.agents ?? 0, capacity: us?.capacity ?? 0 };
}

export async function startCluster(
  o: Common & { natsUrl: string; natsPid: number; natsMonitor: string | null; databaseUrl: string; agents: number; agentSlots: number | null; all?: boolean },
): Promise<Topology> {
  const nodes: Service[] = [];
  const stop = async () => {
    for (const n of nodes.reverse()) await n.stop();
  };
  try {
    const cluster = { NATS_URL: o.natsUrl, AGENT_HEARTBEAT_MS: '1000' }; // an agent gone after 5 s
    if (o.all === true) {
      // ROLE=all: the API node and one agent in one process, the work still through NATS
      const node = await startService({
        dataDir: join(o.dataDir, `all-${Date.now().toString(36)}`),
        slotsPerEndpoint: null,
        judgeUrl: '',
        judgeKey: '',
        bunFlags: o.bunFlags ?? [],
        env: {
          ...cluster,
          ...SECRETS,
          ...judgeEnv(o.judge),
          ROLE: 'all',
          REGION,
          DATABASE_URL: o.databaseUrl,
          ...(o.agentSlots !== null ? { AGENT_SLOTS: String(o.agentSlots) } : {}),
          ...(o.env ?? {}),
        },
      });
      nodes.push(node);
      o.log(`  ROLE=all node ready in ${node.startupMs.toFixed(0)} ms (pid ${node.pid})`);
      const deadline = Date.now() + 30_000;
      let seen = { agents: 0, capacity: 0 };
      while ((seen = await regionsOf(node.url)).agents < 1) {
        if (Date.now() > deadline) throw new Error('GET /regions shows no agent of the ROLE=all node after 30 s');
        await Bun.sleep(100);
      }
      return {
        name: 'API + agent in one process (ROLE=all)',
        api: node,
        agents: [],
        capacity: seen.capacity,
        natsMonitor: o.natsMonitor,
        pids: () => ({ all: node.pid, 'nats-server': o.natsPid, ...judgePids(o.judge) }),
        stop,
      };
    }
    const api = await startService({
      dataDir: join(o.dataDir, `api-${Date.now().toString(36)}`),
      slotsPerEndpoint: null,
      judgeUrl: '',
      judgeKey: '',
      bunFlags: o.bunFlags ?? [],
      env: { ...cluster, ...SECRETS, ROLE: 'api', DATABASE_URL: o.databaseUrl, ...(o.env ?? {}) },
    });
    nodes.push(api);
    o.log(`  API node ready in ${api.startupMs.toFixed(0)} ms (pid ${api.pid})`);
    const agents = await Promise.all(
      Array.from({ length: o.agents }, (_, i) =>
        startService({
          dataDir: join(o.dataDir, `agent${i}-${Date.now().toString(36)}`),
          slotsPerEndpoint: null,
          judgeUrl: '',
          judgeKey: '',
          bunFlags: o.bunFlags ?? [],
          env: {
            ...cluster,
            ...judgeEnv(o.judge),
            ROLE: 'agent',
            REGION,
            AGENT_ID: `bench-agent-${i}`,
            DATABASE_URL: '',
            ...(o.agentSlots !== null ? { AGENT_SLOTS: String(o.agentSlots) } : {}),
            ...(o.env ?? {}),
          },
        }),
      ),
    );
    nodes.push(...agents);
    o.log(`  ${agents.length} agent(s) ready (pids ${agents.map((a) => a.pid).join(', ')}; ${agents.map((a) => `${a.startupMs.toFixed(0)} ms`).join(', ')})`);
    const deadline = Date.now() + 30_000;
    let seen = { agents: 0, capacity: 0 };
    while ((seen = await regionsOf(api.url)).agents < o.agents) {
      if (Date.now() > deadline) throw new Error(`GET /regions shows ${seen.agents} of ${o.agents} agents after 30 s`);
      await Bun.sleep(100);
    }
    o.log(`  /regions: ${REGION} ${seen.agents} agents, capacity ${seen.capacity}`);
    return {
      name: `API + ${o.agents} agent${o.agents === 1 ? '' : 's'}`,
      api,
      agents,
      capacity: seen.capacity,
      natsMonitor: o.natsMonitor,
      pids: () => ({ api: api.pid, ...Object.fromEntries(agents.map((a, i) => [`agent${i}`, a.pid])), 'nats-server': o.natsPid, ...judgePids(o.judge) }),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
