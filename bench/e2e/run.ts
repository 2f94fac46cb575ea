/**
 * One measured job: a list through POST /check-raw of a running service,
 * with the service process's CPU (user + sys, all threads, from /proc) and
 * peak RSS (VmHWM, reset before the job), the judge's and the farm's CPU for
 * context, the lower bound from the manifest, and verdict accuracy from the
 * result file.
 */
import { lowerBound, listText, type Bound, type Entry } from '../farm/entries';
import { assess, type Accuracy } from './accuracy';
import { cpuMs, openFds, peakRssMiB, resetPeakRss, threadCpu, threadDelta } from './proc';
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
  bound: Bound;
  /** wall / formula bound and wall / tight bound */
  ratio: number;
  ratioTight: number;
  cpuMs: number;
  cpuUserMs: number;
  cpuSysMs: number;
  cpuPerCheckUs: number;
  threads: Record<string, number>;
  judgeCpuMs: number;
  farmCpuMs: number;
  peakRssMiB: number;
  peakFds: number;
  accuracy: Accuracy | null;
  totalWorking: number | null;
}

function sumCpu(pids: number[]): number {
  return pids.reduce((s, p) => s + cpuMs(p).total, 0);
}

export async function runList(svc: Service, ctx: RunContext, spec: RunSpec): Promise<RunResult> {
  const text = listText(spec.entries);
  const bound = lowerBound(spec.entries, spec.timeoutMs, spec.slots);
  resetPeakRss(svc.pid);
  let peakFds = openFds(svc.pid);
  const fdTimer = setInterval(() => {
    peakFds = Math.max(peakFds, openFds(svc.pid));
  }, 250);
  const c0 = cpuMs(svc.pid);
  const t0 = threadCpu(svc.pid);
  const j0 = cpuMs(ctx.judgePid).total;
  const f0 = sumCpu(ctx.farmPids);
  let side: Promise<unknown> | null = null;
  let reply;
  try {
    const pending = checkRaw(svc, text, { timeoutMs: spec.timeoutMs, type: spec.type ?? 'http', ...(spec.jobId ? { jobId: spec.jobId } : {}) });
    if (spec.whileRunning) side = spec.whileRunning();
    reply = await pending;
  } finally {
    clearInterval(fdTimer);
  }
  const c1 = cpuMs(svc.pid);
  const t1 = threadCpu(svc.pid);
  const j1 = cpuMs(ctx.judgePid).total;
  const f1 = sumCpu(ctx.farmPids);
  const peak = peakRssMiB(svc.pid);
  if (side !== null) await side;
  const body = reply.body as { summary?: { total_working: number }; metadata?: { processing_time: string }; result_url?: string } | string;
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
    bound,
    ratio: reply.wallMs / bound.formulaMs,
    ratioTight: reply.wallMs / bound.tightMs,
    cpuMs: cpu,
    cpuUserMs: c1.user - c0.user,
    cpuSysMs: c1.sys - c0.sys,
    cpuPerCheckUs: (cpu * 1000) / n,
    threads: threadDelta(svc.pid, t0, t1),
    judgeCpuMs: j1 - j0,
    farmCpuMs: f1 - f0,
    peakRssMiB: peak,
    peakFds,
    accuracy,
    totalWorking: ok ? (body.summary?.total_working ?? null) : null,
  };
}

export function describe(r: RunResult): string {
  const a = r.accuracy;
  const acc = a
    ? `found ${a.foundWorking}/${a.expectedWorking} (+${a.borderlineFound}/${a.borderline} borderline), FP ${a.falsePositives}, missing ${a.missingRecords}`
    : 'no accuracy';
  return (
    `${r.name}: n=${r.size} slots=${r.slots} wall ${(r.wallMs / 1000).toFixed(2)} s, bound ${(r.bound.formulaMs / 1000).toFixed(2)} s ` +
    `(tight ${(r.bound.tightMs / 1000).toFixed(2)} s) ratio ${r.ratio.toFixed(3)} / ${r.ratioTight.toFixed(3)}; ` +
    `CPU ${(r.cpuMs / 1000).toFixed(2)} s = ${r.cpuPerCheckUs.toFixed(0)} µs/check (judge ${(r.judgeCpuMs / 1000).toFixed(2)} s, farm ${(r.farmCpuMs / 1000).toFixed(2)} s); ` +
    `peak RSS ${r.peakRssMiB.toFixed(0)} MiB, fds ${r.peakFds}; ${acc}${r.error ? `; ERROR ${r.error}` : ''}\n    threads (ms): ${threadsText(r.threads)}`
  );
}

export function threadsText(t: Record<string, number>): string {
  return Object.entries(t)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v.toFixed(0)}`)
    .join(', ');
}
