/**
 * One measured job on a topology: the list through POST /check-raw of its
 * API node (or embedded process), the wall time at the client, the bounds of
 * the farm (bench/farm/entries.ts lowerBound: formula, tight, and the
 * list-order ideal of a zero-overhead checker on the same slots), the CPU of
 * every process of the topology (each with its descendants, /proc), the
 * machine's busy CPU, and accuracy from the result file against the manifest.
 */
import { BEHAVIOURS, lowerBound, listText, type Bound, type Entry } from '../farm/entries';
import { assess } from '../e2e/accuracy';
import { cpuMs, machineBusyMs, threadCpu, threadDelta } from '../e2e/proc';
import { checkRaw, fetchResult } from '../e2e/service';
import { treeCpu, type Topology } from './topology';

export interface ClusterRun {
  scenario: string;
  topology: string;
  agents: number;
  size: number;
  timeoutMs: number;
  /** slots the scheduler saw for the region (embedded: min(region capacity, MAX_IN_FLIGHT)) */
  slots: number;
  status: number;
  error: string | null;
  wallMs: number;
  bound: Bound;
  /** wall / list-order ideal (fifo) */
  ratioFifo: number;
  /** CPU of every process of the topology (with descendants), ms */
  cpu: Record<string, number>;
  cpuTotalMs: number;
  cpuPerCheckUs: number;
  /** the whole machine's busy CPU during the job, and what was not ours, the farm's or the runner's */
  machineCpuMs: number;
  otherCpuMs: number;
  expectedWorking: number;
  foundWorking: number;
  borderline: number;
  borderlineFound: number;
  falsePositives: number;
  missingRecords: number;
  examples: string[];
  /** CPU by thread name (main thread = 'main') of each process, ms */
  threads: Record<string, Record<string, number>>;
  /** nats-server's /varz counters over the job (cluster only): messages and bytes in and out */
  nats: { inMsgs: number; outMsgs: number; inBytes: number; outBytes: number } | null;
  /** cluster only: every TIMELINE_MS, per agent, probes in flight (its /health) and results sent since the last sample (its /metrics) */
  timeline?: { tMs: number; inFlight: number[]; results: number[] }[];
}

const TIMELINE_MS = 1000;

/** Samples the agents while `until` is pending. */
async function sampleAgents(agents: { url: string }[], until: Promise<unknown>): Promise<NonNullable<ClusterRun['timeline']>> {
  const out: NonNullable<ClusterRun['timeline']> = [];
  if (agents.length === 0) return out;
  let over = false;
  void until.finally(() => (over = true));
  const t0 = performance.now();
  const last = agents.map(() => 0);
  const read = async (a: { url: string }, i: number): Promise<[number, number]> => {
    try {
      const [h, m] = await Promise.all([fetch(`${a.url}/health`).then((r) => r.json() as Promise<{ inFlight: number }>), fetch(`${a.url}/metrics`).then((r) => r.text())]);
      const total = Number(/^proxycheck_agent_probe_results_total (\d+)/m.exec(m)?.[1] ?? 0);
      const d = total - last[i]!;
      last[i] = total;
      return [h.inFlight, d];
    } catch {
      return [-1, 0];
    }
  };
  await Promise.all(agents.map((a, i) => read(a, i)));
  while (!over) {
    await Promise.race([Bun.sleep(TIMELINE_MS), until]);
    const rows = await Promise.all(agents.map((a, i) => read(a, i)));
    out.push({ tMs: Math.round(performance.now() - t0), inFlight: rows.map((r) => r[0]), results: rows.map((r) => r[1]) });
  }
  return out;
}

async function varz(url: string | null): Promise<{ inMsgs: number; outMsgs: number; inBytes: number; outBytes: number } | null> {
  if (url === null) return null;
  try {
    const v = (await (await fetch(`${url}/varz`)).json()) as { in_msgs: number; out_msgs: number; in_bytes: number; out_bytes: number };
    return { inMsgs: v.in_msgs, outMsgs: v.out_msgs, inBytes: v.in_bytes, outBytes: v.out_bytes };
  } catch {
    return null;
  }
}

export async function runJob(
  top: Topology,
  spec: { scenario: string; entries: readonly Entry[]; timeoutMs: number; slots: number; farmPids: number[]; jobId: string },
): Promise<ClusterRun> {
  const text = listText(spec.entries);
  const bound = lowerBound(spec.entries, spec.timeoutMs, spec.slots);
  const pids = top.pids();
  const farm = () => spec.farmPids.reduce((s, p) => s + cpuMs(p).total, 0);
  const v0 = await varz(top.natsMonitor);
  const t0 = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, threadCpu(p)]));
  const c0 = treeCpu(pids);
  const m0 = machineBusyMs();
  const f0 = farm();
  const me0 = cpuMs(process.pid).total;
  const pending = checkRaw(top.api, text, { timeoutMs: spec.timeoutMs, jobId: spec.jobId });
  const timeline = sampleAgents(top.agents, pending);
  const reply = await pending;
  const c1 = treeCpu(pids);
  const m1 = machineBusyMs();
  const f1 = farm();
  const me1 = cpuMs(process.pid).total;
  const v1 = await varz(top.natsMonitor);
  const threads = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, threadDelta(p, t0[k] ?? [], threadCpu(p))]));
  const cpu: Record<string, number> = {};
  for (const k of Object.keys(c1)) cpu[k] = (c1[k] ?? 0) - (c0[k] ?? 0);
  const cpuTotalMs = Object.values(cpu).reduce((s, v) => s + v, 0);
  const body = reply.body as { result_url?: string } | string;
  let error: string | null = reply.status === 200 ? null : `HTTP ${reply.status}: ${JSON.stringify(body).slice(0, 300)}`;
  let acc = null;
  if (error === null && typeof body === 'object' && body.result_url) {
    try {
      acc = assess(spec.entries, (await fetchResult(body.result_url)).proxies, spec.timeoutMs);
    } catch (err) {
      error = `result file: ${(err as Error).message}`;
    }
  }
  const n = spec.entries.length;
  const wanted = spec.entries.filter((e) => e.behaviour === BEHAVIOURS.WORKING || e.behaviour === BEHAVIOURS.INSTANT).length;
  return {
    scenario: spec.scenario,
    topology: top.name,
    agents: top.agents.length,
    size: n,
    timeoutMs: spec.timeoutMs,
    slots: spec.slots,
    status: reply.status,
    error,
    wallMs: reply.wallMs,
    bound,
    ratioFifo: reply.wallMs / bound.fifoMs,
    cpu,
    cpuTotalMs,
    cpuPerCheckUs: (cpuTotalMs * 1000) / n,
    machineCpuMs: m1 - m0,
    otherCpuMs: Math.max(0, m1 - m0 - cpuTotalMs - (f1 - f0) - (me1 - me0)),
    expectedWorking: acc?.expectedWorking ?? wanted,
    foundWorking: acc?.foundWorking ?? 0,
    borderline: acc?.borderline ?? 0,
    borderlineFound: acc?.borderlineFound ?? 0,
    falsePositives: acc?.falsePositives ?? 0,
    missingRecords: acc?.missingRecords ?? n,
    examples: acc?.examples ?? [],
    threads,
    ...(top.agents.length > 0 ? { timeline: await timeline } : {}),
    nats:
      v0 !== null && v1 !== null
        ? { inMsgs: v1.inMsgs - v0.inMsgs, outMsgs: v1.outMsgs - v0.outMsgs, inBytes: v1.inBytes - v0.inBytes, outBytes: v1.outBytes - v0.outBytes }
        : null,
  };
}

export function describeRun(r: ClusterRun): string {
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  return (
    `${r.scenario} ${r.topology}: n=${r.size} slots=${r.slots} wall ${s(r.wallMs)}, bound ${s(r.bound.formulaMs)} (tight ${s(r.bound.tightMs)}, list-order ideal ${s(r.bound.fifoMs)}) ` +
    `wall/ideal ${r.ratioFifo.toFixed(3)}; CPU ${s(r.cpuTotalMs)} = ${r.cpuPerCheckUs.toFixed(0)} µs/check (${Object.entries(r.cpu)
      .map(([k, v]) => `${k} ${(v / 1000).toFixed(2)}`)
      .join(', ')}; other processes ${s(r.otherCpuMs)} of machine ${s(r.machineCpuMs)}); ` +
    `found ${r.foundWorking}/${r.expectedWorking} (+${r.borderlineFound}/${r.borderline} borderline), FP ${r.falsePositives}, missing ${r.missingRecords}` +
    (r.nats ? `; NATS per check: ${(r.nats.inMsgs / r.size).toFixed(2)} messages in, ${(r.nats.outMsgs / r.size).toFixed(2)} out, ${(r.nats.inBytes / r.size).toFixed(0)} bytes in` : '') +
    (r.error ? `; ERROR ${r.error}` : '') +
    `\n    threads (ms): ${Object.entries(r.threads)
      .filter(([k]) => k !== 'judge' && k !== 'nats-server')
      .map(([k, t]) => `${k}: ${Object.entries(t).sort((a, b) => b[1] - a[1]).slice(0, 5).map(([n, v]) => `${n} ${v.toFixed(0)}`).join(', ')}`)
      .join('; ')}` +
    (r.timeline && r.timeline.length > 0
      ? `\n    timeline (s: in flight per agent / results per s all agents): ${r.timeline.map((x) => `${(x.tMs / 1000).toFixed(0)}: ${x.inFlight.join('+')} / ${x.results.reduce((a, b) => a + b, 0)}`).join(', ')}`
      : '')
  );
}
