/**
 * One measured job: a list through POST /check-raw of a running service,
 * with the service process's CPU (user + sys, all threads, from /proc) and
 * peak RSS (VmHWM, reset before the job), the judge's and the farm's CPU for
 * context, the lower bound from the manifest, and verdict accuracy from the
 * result file.
 */
import { lowerBound, listText, type Bound, type Entry } from '../farm/entries';
import { assess, type Accuracy } from './accuracy';
import { cpuMs, treeCpuMs, machineBusyMs, openFds, peakRssMiB, resetPeakRss, threadCpu, threadDelta } from './proc';
import { checkRaw, fetchResult, type Service } from './service';

export interface RunContext {
  judgePid: number;
  farmPids: number[];
}

export interface RunSpec {
  name: string;
  entries: readonly Entry[];
  timeoutMs: number;
  /** region capacity = 16 x SLOTS_PER_ENDPOINT of the running service */
  slots: number;
  type?: 'http' | 'socks4' | 'socks5';
  jobId?: string;
  /** the https check (`https` on /check-raw); absent: the service's default */
  https?: boolean;
  /** random orders of the list for the order-blind ideal (entries.ts orderBlindMakespans); 0 = none */
  boundOrders?: number;
  /** called once the request is sent (E: submit the small job while this one runs) */
  whileRunning?: () => Promise<unknown>;
}

export interface RunResult {
  name: string;
  size: number;
  slots: number;
  timeoutMs: number;
  type: string;
  status: number;
  error: string | null;
  wallMs: number;
  processingTime: string | null;
  /** metadata.retried_checker_lag (issue 30): probes tried again because they timed out while the service was late */
  retriedCheckerLag?: number;
  bound: Bound;
  /** wall / formula bound and wall / tight bound */
  ratio: number;
  ratioTight: number;
  cpuMs: number;
  cpuUserMs: number;
  cpuSysMs: number;
  cpuPerCheckUs: number;
  /** user + sys of the service's whole process tree (cpuMs is the main process alone) */
  treeCpuMs?: number;
  threads: Record<string, number>;
  judgeCpuMs: number;
  farmCpuMs: number;
  /** CPU the whole machine spent during the job, and the part used by processes outside the benchmark (other work on a shared machine) */
  machineCpuMs: number;
  otherCpuMs: number;
  peakRssMiB: number;
  peakFds: number;
  accuracy: Accuracy | null;
  totalWorking: number | null;
  /** from the WebSocket progress (ms since the request was sent): first result seen, all checked */
  timeline: { firstCheckedMs: number | null; allCheckedMs: number | null; points: [number, number][] } | null;
}

/** Subscribes to the job's progress; returns the (ms, checked) points as they arrive. */
function watchProgress(url: string, jobId: string, t0: () => number): { points: [number, number][]; ready: Promise<void>; close(): void } {
  const points: [number, number][] = [];
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/ws?jobId=${jobId}`);
  const ready = new Promise<void>((resolve) => {
    ws.onopen = () => resolve();
    ws.onerror = () => resolve();
    setTimeout(resolve, 2000);
  });
  ws.onmessage = (ev) => {
    try {
      const m = JSON.parse(String(ev.data)) as { details?: { checked?: number } };
      if (typeof m.details?.checked === 'number') points.push([performance.now() - t0(), m.details.checked]);
    } catch {
      // ignore
    }
  };
  return { points, ready, close: () => ws.close() };
}

function sumCpu(pids: number[]): number {
  return pids.reduce((s, p) => s + cpuMs(p).total, 0);
}

export async function runList(svc: Service, ctx: RunContext, spec: RunSpec): Promise<RunResult> {
  const text = listText(spec.entries);
  const bound = lowerBound(spec.entries, spec.timeoutMs, spec.slots, spec.boundOrders ?? 0);
  resetPeakRss(svc.pid);
  let peakFds = openFds(svc.pid);
  const fdTimer = setInterval(() => {
    peakFds = Math.max(peakFds, openFds(svc.pid));
  }, 250);
  const c0 = cpuMs(svc.pid);
  const tree0 = treeCpuMs(svc.pid);
  const t0 = threadCpu(svc.pid);
  const j0 = cpuMs(ctx.judgePid).total;
  const f0 = sumCpu(ctx.farmPids);
  const m0 = machineBusyMs();
  const me0 = cpuMs(process.pid).total;
  let side: Promise<unknown> | null = null;
  let reply;
  let sent = 0;
  const watch = spec.jobId !== undefined ? watchProgress(svc.url, spec.jobId, () => sent) : null;
  if (watch !== null) await watch.ready;
  try {
    sent = performance.now();
    const pending = checkRaw(svc, text, { timeoutMs: spec.timeoutMs, type: spec.type ?? 'http', ...(spec.jobId ? { jobId: spec.jobId } : {}), ...(spec.https !== undefined ? { https: spec.https } : {}) });
    if (spec.whileRunning) side = spec.whileRunning();
    reply = await pending;
  } finally {
    clearInterval(fdTimer);
    watch?.close();
  }
  const c1 = cpuMs(svc.pid);
  const tree1 = treeCpuMs(svc.pid);
  const t1 = threadCpu(svc.pid);
  const j1 = cpuMs(ctx.judgePid).total;
  const f1 = sumCpu(ctx.farmPids);
  const m1 = machineBusyMs();
  const me1 = cpuMs(process.pid).total;
  const peak = peakRssMiB(svc.pid);
  if (side !== null) await side;
  const body = reply.body as { summary?: { total_working: number }; metadata?: { processing_time: string; retried_checker_lag?: number }; result_url?: string } | string;
  const ok = reply.status === 200 && typeof body === 'object';
  let accuracy: Accuracy | null = null;
  let error: string | null = ok ? null : `HTTP ${reply.status}: ${JSON.stringify(body).slice(0, 300)}`;
  if (ok && body.result_url) {
    try {
      const file = await fetchResult(body.result_url);
      accuracy = assess(spec.entries, file.proxies, spec.timeoutMs);
    } catch (err) {
      error = `result file: ${(err as Error).message}`;
    }
  }
  const n = spec.entries.length;
  const cpu = c1.total - c0.total;
  return {
    name: spec.name,
    size: n,
    slots: spec.slots,
    timeoutMs: spec.timeoutMs,
    type: spec.type ?? 'http',
    status: reply.status,
    error,
    wallMs: reply.wallMs,
    processingTime: ok ? (body.metadata?.processing_time ?? null) : null,
    retriedCheckerLag: ok ? (body.metadata?.retried_checker_lag ?? 0) : 0,
    bound,
    ratio: reply.wallMs / bound.formulaMs,
    ratioTight: reply.wallMs / bound.tightMs,
    cpuMs: cpu,
    cpuUserMs: c1.user - c0.user,
    cpuSysMs: c1.sys - c0.sys,
    cpuPerCheckUs: (cpu * 1000) / n,
    treeCpuMs: tree1 - tree0,
    threads: threadDelta(svc.pid, t0, t1),
    judgeCpuMs: j1 - j0,
    farmCpuMs: f1 - f0,
    machineCpuMs: m1 - m0,
    otherCpuMs: Math.max(0, m1 - m0 - cpu - (j1 - j0) - (f1 - f0) - (me1 - me0)),
    peakRssMiB: peak,
    peakFds,
    accuracy,
    totalWorking: ok ? (body.summary?.total_working ?? null) : null,
    timeline:
      watch === null
        ? null
        : {
            firstCheckedMs: watch.points.find((p) => p[1] > 0)?.[0] ?? null,
            allCheckedMs: watch.points.find((p) => p[1] >= n)?.[0] ?? null,
            points: watch.points,
          },
  };
}

export function describe(r: RunResult): string {
  const a = r.accuracy;
  const acc = a
    ? `found ${a.foundWorking}/${a.expectedWorking} (+${a.borderlineFound}/${a.borderline} borderline), FP ${a.falsePositives}, missing ${a.missingRecords}`
    : 'no accuracy';
  return (
    `${r.name}: n=${r.size} slots=${r.slots} wall ${(r.wallMs / 1000).toFixed(2)} s, bound ${(r.bound.formulaMs / 1000).toFixed(2)} s ` +
    `(tight ${(r.bound.tightMs / 1000).toFixed(2)} s, ideal list-order ${(r.bound.fifoMs / 1000).toFixed(2)} s${orderBlindText(r)}) ratio ${r.ratio.toFixed(3)} / ${r.ratioTight.toFixed(3)}; ` +
    `CPU ${(r.cpuMs / 1000).toFixed(2)} s = ${r.cpuPerCheckUs.toFixed(0)} µs/check (judge ${(r.judgeCpuMs / 1000).toFixed(2)} s, farm ${(r.farmCpuMs / 1000).toFixed(2)} s, other processes ${(r.otherCpuMs / 1000).toFixed(2)} s of machine ${(r.machineCpuMs / 1000).toFixed(2)} s); ` +
    `peak RSS ${r.peakRssMiB.toFixed(0)} MiB, fds ${r.peakFds}; ${acc}; processing_time ${r.processingTime}` +
    (r.timeline ? `; first result at ${r.timeline.firstCheckedMs?.toFixed(0)} ms, all checked at ${r.timeline.allCheckedMs?.toFixed(0)} ms` : '') +
    (a ? `\n    response time by behaviour: ${Object.entries(a.timeMs).map(([b, t]) => `${b} mean ${t.mean.toFixed(0)} p99 ${t.p99.toFixed(0)} max ${t.max.toFixed(0)}`).join('; ')}` +
      (a.overheadMs ? `; working overhead over own delay p50 ${a.overheadMs.p50.toFixed(1)} p99 ${a.overheadMs.p99.toFixed(1)} ms` : '') : '') +
    `${r.error ? `; ERROR ${r.error}` : ''}\n    threads (ms): ${threadsText(r.threads)}` +
    (r.timeline && process.env.E2E_TIMELINE
      ? `\n    timeline (s:checked): ${r.timeline.points
          .filter((_, i, all) => i % Math.max(1, Math.floor(all.length / 40)) === 0)
          .map(([t, c]) => `${(t / 1000).toFixed(1)}:${c}`)
          .join(' ')}`
      : '')
  );
}

/** ", ideal order-blind 1.053-1.063 (200 orders), clairvoyant 1.010" as ratios to the tight bound; '' without orderBlind */
export function orderBlindText(r: Pick<RunResult, 'bound'>): string {
  const o = r.bound.orderBlind;
  if (o === undefined || r.bound.tightMs <= 0) return '';
  const q = (ms: number) => (ms / r.bound.tightMs).toFixed(3);
  return `, ideal order-blind ${q(o.minMs)}-${q(o.maxMs)} (median ${q(o.p50Ms)}, ${o.orders} orders), clairvoyant ${q(o.clairvoyantMs)}`;
}

export function threadsText(t: Record<string, number>): string {
  return Object.entries(t)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v.toFixed(0)}`)
    .join(', ');
}
