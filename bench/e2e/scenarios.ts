/**
 * The scenarios of issue 5 (A-F), each against a freshly started service
 * (its SLOTS_PER_ENDPOINT is per scenario) on the shared farm and judge.
 * Lists use disjoint global ids when they run at the same time (E during C).
 */
import { BEHAVIOURS, buildEntries, type Entry, type FarmPorts, type LatencyModel, type Mix, lowerBound } from '../farm/entries';
import { writeListAndManifest } from '../farm/launcher';
import { apiOverhead, type OverheadResult } from './overhead';
import { describe, runList, type RunContext, type RunResult } from './run';
import { rssMiB } from './proc';
import { checkRaw, startService, type Service } from './service';

export const TIMEOUT_MS = 2000;
export const SLOW_MS = 3000;
export const MIX_A: Mix = { [BEHAVIOURS.WORKING]: 0.1, [BEHAVIOURS.REFUSED]: 0.5, [BEHAVIOURS.BLACKHOLE]: 0.3, [BEHAVIOURS.SLOW]: 0.1 };
export const ENDPOINTS = 16;

export interface Env {
  ports: FarmPorts;
  latency: LatencyModel;
  judgeUrl: string;
  judgeKey: string;
  dataDir: string;
  outDir: string;
  ctx: RunContext;
  /** the service's SLOTS_PER_ENDPOINT default (config.ts) */
  defaultSlots: number;
  /** 1 = the issue's sizes; smaller for a smoke run */
  scale: number;
  /** D: skip cells whose tight bound exceeds this */
  maxBoundMs: number;
  log: (line: string) => void;
  bunFlags: string[];
  /** run a short untimed job on each new service first (JIT warm-up; a long-running server is warm) */
  warmup: boolean;
  /** measured passes per list (the last one is reported) */
  repeat: number;
  /** E: ms into C at which the small job is submitted */
  eAtMs: number;
}

export interface ScenarioOutput {
  runs: RunResult[];
  startups: number[];
  notes: string[];
  overhead?: OverheadResult;
  fairness?: { wallMs: number; soloWallMs: number; timeoutMs: number; accuracyOk: boolean; bigName: string; atMs?: number };
  /** E behind black holes: the small job's wall with the default headroom and without it (MAX_JOB_SHARE_PERCENT=100), same run */
  newcomer?: NewcomerResult[];
  skipped?: { size: number; capacity: number; boundMs: number; why: string }[];
}

function list(env: Env, name: string, firstId: number, size: number, mix: Mix, seed: number): Entry[] {
  const entries = buildEntries({ firstId, size, mix, seed, latency: env.latency, slowMs: SLOW_MS }, env.ports);
  writeListAndManifest(env.outDir, name, entries);
  return entries;
}

const sized = (env: Env, n: number) => Math.max(10, Math.round(n * env.scale));

async function withService<T>(env: Env, slotsPerEndpoint: number | null, out: ScenarioOutput, fn: (svc: Service) => Promise<T>): Promise<T> {
  const svc = await startService({ dataDir: env.dataDir, slotsPerEndpoint, judgeUrl: env.judgeUrl, judgeKey: env.judgeKey, bunFlags: env.bunFlags });
  out.startups.push(svc.startupMs);
  env.log(`  service ready in ${svc.startupMs.toFixed(0)} ms, RSS ${rssMiB(svc.pid).toFixed(0)} MiB (pid ${svc.pid}, slots/endpoint ${slotsPerEndpoint ?? `default ${env.defaultSlots}`})`);
  try {
    if (env.warmup) {
      const w = buildEntries(
        { firstId: 600_000, size: 3000, mix: { [BEHAVIOURS.INSTANT]: 2, [BEHAVIOURS.REFUSED]: 1 }, seed: 7, latency: env.latency, slowMs: SLOW_MS },
        env.ports,
      );
      const t0 = performance.now();
      const r = await checkRaw(svc, w.map((e) => `${e.host}:${e.port}`).join('\n'), { timeoutMs: TIMEOUT_MS });
      env.log(`  warm-up job (3000: 2/3 instant, 1/3 refused): HTTP ${r.status} in ${(performance.now() - t0).toFixed(0)} ms`);
    }
    return await fn(svc);
  } finally {
    await svc.stop();
  }
}

async function one(env: Env, svc: Service, name: string, entries: Entry[], slots: number, boundOrders = 0): Promise<RunResult> {
  for (let i = 1; i < env.repeat; i++) {
    const r0 = await runList(svc, env.ctx, { name: `${name} (pass ${i})`, entries, timeoutMs: TIMEOUT_MS, slots });
    env.log(`  ${describe(r0)}`);
  }
  const r = await runList(svc, env.ctx, { name, entries, timeoutMs: TIMEOUT_MS, slots, boundOrders, jobId: `bench-${name.replace(/[^A-Za-z0-9]/g, '-')}-${Date.now().toString(36)}` });
  env.log(`  ${describe(r)}`);
  if (r.accuracy && r.accuracy.examples.length > 0) env.log(`    ${r.accuracy.examples.slice(0, 5).join('\n    ')}`);
  return r;
}

export async function scenarioA(env: Env): Promise<ScenarioOutput> {
  const out: ScenarioOutput = { runs: [], startups: [], notes: [] };
  const entries = list(env, 'A', 0, sized(env, 20_000), MIX_A, 101);
  await withService(env, 64, out, async (svc) => {
    out.runs.push(await one(env, svc, 'A', entries, 64 * ENDPOINTS, 200));
  });
  return out;
}

export async function scenarioB(env: Env): Promise<ScenarioOutput> {
  const out: ScenarioOutput = { runs: [], startups: [], notes: [] };
  const entries = list(env, 'B', 0, sized(env, 20_000), { [BEHAVIOURS.INSTANT]: 1 }, 102);
  // three passes back to back on one service: pass 1 still pays JIT compilation; the last is the steady state
  await withService(env, 32, out, async (svc) => {
    const passes = Math.max(3, env.repeat);
    for (let i = 1; i <= passes; i++) {
      const r = await runList(svc, env.ctx, { name: `B pass ${i}`, entries, timeoutMs: TIMEOUT_MS, slots: 32 * ENDPOINTS, jobId: `bench-B-${i}-${Date.now().toString(36)}` });
      env.log(`  ${describe(r)}`);
      out.runs.push(r);
    }
  });
  return out;
}

/** C, and E inside it when `withE` (the 10-proxy job is submitted env.eAtMs into C: 3 s by default). */
export async function scenarioC(env: Env, withE: boolean): Promise<ScenarioOutput> {
  const out: ScenarioOutput = { runs: [], startups: [], notes: [] };
  const entries = list(env, 'C', 0, sized(env, 100_000), MIX_A, 103);
  const small = withE ? list(env, 'E', 400_000, 10, MIX_A, 105) : [];
  const slots = env.defaultSlots * ENDPOINTS;
  await withService(env, null, out, async (svc) => {
    let solo = 0;
    if (withE) {
      const s = await checkRaw(svc, small.map((e) => `${e.host}:${e.port}`).join('\n'), { timeoutMs: TIMEOUT_MS });
      solo = s.wallMs;
      env.log(`  E alone: ${(solo / 1000).toFixed(2)} s (HTTP ${s.status})`);
    }
    let eWall = 0;
    let eOk = false;
    const r = await runList(svc, env.ctx, {
      name: 'C',
      entries,
      jobId: `bench-C-${Date.now().toString(36)}`,
      timeoutMs: TIMEOUT_MS,
      slots,
      ...(withE
        ? {
            whileRunning: async () => {
              await Bun.sleep(env.eAtMs);
              const rr = await checkRaw(svc, small.map((e) => `${e.host}:${e.port}`).join('\n'), { timeoutMs: TIMEOUT_MS });
              eWall = rr.wallMs;
              const b = rr.body as { summary?: { total_working: number } };
              const want = small.filter((e) => e.behaviour === BEHAVIOURS.WORKING && (e.delayMs ?? 1e9) < TIMEOUT_MS - 250).length;
              eOk = rr.status === 200 && (b.summary?.total_working ?? -1) >= want;
              env.log(`  E during C: ${(eWall / 1000).toFixed(2)} s (HTTP ${rr.status}, working ${b.summary?.total_working}, expected >= ${want})`);
            },
          }
        : {}),
    });
    env.log(`  ${describe(r)}`);
    out.runs.push(r);
    if (withE) out.fairness = { wallMs: eWall, soloWallMs: solo, timeoutMs: TIMEOUT_MS, accuracyOk: eOk, bigName: 'C', atMs: env.eAtMs };
  });
  return out;
}

export interface NewcomerResult {
  sharePercent: number;
  bigSize: number;
  bigTimeoutMs: number;
  smallTimeoutMs: number;
  atMs: number;
  wallMs: number;
  status: number;
}

/**
 * E behind black holes (issue 13): a job of 20 000 black holes with a 5 s
 * timeout, then 1 s later a 10-proxy job (mix of A) with a 3 s timeout, same
 * region, `npm start` defaults. The small job should finish within 2 x its own
 * timeout whatever the big job's timeout: measured with the default headroom
 * (MAX_JOB_SHARE_PERCENT=95) and without it (100) in the same run.
 */
export async function scenarioNewcomer(env: Env): Promise<ScenarioOutput> {
  const out: ScenarioOutput = { runs: [], startups: [], notes: [], newcomer: [] };
  const big = list(env, 'E-holes-big', 600_000, sized(env, 20_000), { [BEHAVIOURS.BLACKHOLE]: 1 }, 107);
  const small = list(env, 'E-holes-small', 700_000, 10, MIX_A, 108);
  const BIG_TIMEOUT = 5000;
  const SMALL_TIMEOUT = 3000;
  const AT = 1000;
  for (const share of [95, 100]) {
    const svc = await startService({ dataDir: env.dataDir, slotsPerEndpoint: null, judgeUrl: env.judgeUrl, judgeKey: env.judgeKey, bunFlags: env.bunFlags, env: { MAX_JOB_SHARE_PERCENT: String(share) } });
    out.startups.push(svc.startupMs);
    try {
      const bigRun = checkRaw(svc, big.map((e) => `${e.host}:${e.port}`).join('\n'), { timeoutMs: BIG_TIMEOUT, jobId: `bench-Eh-big-${share}` });
      await Bun.sleep(AT);
      const r = await checkRaw(svc, small.map((e) => `${e.host}:${e.port}`).join('\n'), { timeoutMs: SMALL_TIMEOUT, jobId: `bench-Eh-small-${share}` });
      out.newcomer!.push({ sharePercent: share, bigSize: big.length, bigTimeoutMs: BIG_TIMEOUT, smallTimeoutMs: SMALL_TIMEOUT, atMs: AT, wallMs: r.wallMs, status: r.status });
      env.log(`  E behind ${big.length} black holes (${BIG_TIMEOUT} ms), MAX_JOB_SHARE_PERCENT=${share}: small job ${(r.wallMs / 1000).toFixed(2)} s (HTTP ${r.status}, its timeout ${SMALL_TIMEOUT} ms)`);
      await bigRun;
    } finally {
      await svc.stop();
    }
  }
  return out;
}

export const D_SIZES = [1_000, 10_000, 100_000];
export const D_CAPACITIES = [256, 1_024, 4_096, 8_192, 12_288];

/** D; `reuse` = C's run (same list shape, default capacity) fills its cell instead of running it twice. */
export async function scenarioD(env: Env, reuse: RunResult | null): Promise<ScenarioOutput> {
  const out: ScenarioOutput = { runs: [], startups: [], notes: [], skipped: [] };
  const lists = new Map<number, Entry[]>();
  for (const n of D_SIZES) lists.set(n, list(env, `D${n}`, 0, sized(env, n), MIX_A, 104));
  for (const cap of D_CAPACITIES) {
    const todo: number[] = [];
    for (const n of D_SIZES) {
      const entries = lists.get(n)!;
      const b = lowerBound(entries, TIMEOUT_MS, cap);
      if (reuse !== null && reuse.slots === cap && reuse.size === entries.length) {
        out.runs.push({ ...reuse, name: `D ${n}/${cap} (= C)` });
        continue;
      }
      if (b.tightMs > env.maxBoundMs) {
        out.skipped!.push({ size: n, capacity: cap, boundMs: b.tightMs, why: `bound ${(b.tightMs / 1000).toFixed(0)} s > ${(env.maxBoundMs / 1000).toFixed(0)} s time budget` });
        env.log(`  D ${n} x ${cap}: skipped (bound ${(b.tightMs / 1000).toFixed(1)} s)`);
        continue;
      }
      todo.push(n);
    }
    if (todo.length === 0) continue;
    await withService(env, cap / ENDPOINTS, out, async (svc) => {
      for (const n of todo) out.runs.push(await one(env, svc, `D ${n}/${cap}`, lists.get(n)!, cap));
    });
  }
  return out;
}

export async function scenarioF(env: Env): Promise<ScenarioOutput> {
  const out: ScenarioOutput = { runs: [], startups: [], notes: [] };
  const entries = list(env, 'F', 500_000, 1, { [BEHAVIOURS.INSTANT]: 1 }, 106);
  await withService(env, null, out, async (svc) => {
    out.overhead = await apiOverhead(svc, entries[0]!, env.ctx, { requests: sized(env, 1000), concurrency: 64, seconds: 8, log: env.log });
  });
  return out;
}
