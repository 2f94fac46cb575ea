/**
 * Scenario F: API overhead. Sequential 1-proxy checks on an instant farm
 * proxy (client wall time, and wall minus the probe's own responseTime from
 * the result file), then GET /me and GET /regions under 64 concurrent
 * clients with wrk (Debian's package) or, when wrk is absent, a fetch loader.
 */
import type { Entry } from '../farm/entries';
import { cpuMs } from './proc';
import type { RunContext } from './run';
import { BENCH_KEY, checkRaw, fetchResult, type Service } from './service';

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export interface LoadResult {
  path: string;
  tool: 'wrk' | 'fetch';
  rps: number;
  latencyMs: Percentiles | null;
  errors: number;
}

export interface OverheadResult {
  requests: number;
  failures: number;
  wallMs: Percentiles;
  probeMs: Percentiles;
  overheadMs: Percentiles;
  cpuPerRequestUs: number;
  load: LoadResult[];
}

export function percentiles(xs: number[]): Percentiles {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => (s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.floor(p * s.length))]!);
  return { p50: q(0.5), p90: q(0.9), p99: q(0.99), max: s.length === 0 ? 0 : s[s.length - 1]! };
}

async function wrk(url: string, concurrency: number, seconds: number): Promise<LoadResult | null> {
  if (Bun.which('wrk') === null) return null;
  const p = Bun.spawn(['wrk', '-t2', `-c${concurrency}`, `-d${seconds}s`, '--latency', '-H', `X-API-Key: ${BENCH_KEY}`, url], {
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const text = await new Response(p.stdout).text();
  await p.exited;
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(text);
  if (rps === null) return null;
  const ms = (label: string) => {
    const m = new RegExp(`^\\s+${label}%\\s+([\\d.]+)(us|ms|s)`, 'm').exec(text);
    if (m === null) return 0;
    const v = Number(m[1]);
    return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
  };
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(text);
  const sockErr = /Socket errors:.*?connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const errors = (non2xx ? Number(non2xx[1]) : 0) + (sockErr ? Number(sockErr[1]) + Number(sockErr[2]) + Number(sockErr[3]) + Number(sockErr[4]) : 0);
  return { path: new URL(url).pathname, tool: 'wrk', rps: Number(rps[1]), latencyMs: { p50: ms('50'), p90: ms('90'), p99: ms('99'), max: 0 }, errors };
}

async function fetchLoad(url: string, concurrency: number, seconds: number): Promise<LoadResult> {
  const end = performance.now() + seconds * 1000;
  const lat: number[] = [];
  let errors = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          const r = await fetch(url, { headers: { 'X-API-Key': BENCH_KEY } });
          await r.arrayBuffer();
          if (r.status !== 200) errors++;
        } catch {
          errors++;
        }
        lat.push(performance.now() - t0);
      }
    }),
  );
  return { path: new URL(url).pathname, tool: 'fetch', rps: lat.length / seconds, latencyMs: percentiles(lat), errors };
}

export async function apiOverhead(
  svc: Service,
  proxy: Entry,
  ctx: RunContext,
  o: { requests: number; concurrency: number; seconds: number; log: (l: string) => void },
): Promise<OverheadResult> {
  void ctx;
  const line = `${proxy.host}:${proxy.port}`;
  for (let i = 0; i < 20; i++) await checkRaw(svc, line, { timeoutMs: 2000 });
  const walls: number[] = [];
  const urls: string[] = [];
  let failures = 0;
  const c0 = cpuMs(svc.pid).total;
  for (let i = 0; i < o.requests; i++) {
    const r = await checkRaw(svc, line, { timeoutMs: 2000 });
    const b = r.body as { summary?: { total_working: number }; result_url?: string };
    if (r.status !== 200 || b.summary?.total_working !== 1 || !b.result_url) {
      failures++;
      continue;
    }
    walls.push(r.wallMs);
    urls.push(b.result_url);
  }
  const cpu = cpuMs(svc.pid).total - c0;
  const probe: number[] = [];
  const over: number[] = [];
  for (let i = 0; i < urls.length; i++) {
    const f = await fetchResult(urls[i]!);
    const ms = parseFloat(f.proxies[0]?.responseTime ?? 'NaN');
    probe.push(ms);
    over.push(walls[i]! - ms);
  }
  const res: OverheadResult = {
    requests: o.requests,
    failures,
    wallMs: percentiles(walls),
    probeMs: percentiles(probe),
    overheadMs: percentiles(over),
    cpuPerRequestUs: (cpu * 1000) / o.requests,
    load: [],
  };
  o.log(
    `  F: 1-proxy check p50 ${res.wallMs.p50.toFixed(2)} ms p99 ${res.wallMs.p99.toFixed(2)} ms; probe p50 ${res.probeMs.p50.toFixed(2)} ms; ` +
      `overhead p50 ${res.overheadMs.p50.toFixed(2)} ms p99 ${res.overheadMs.p99.toFixed(2)} ms; CPU ${res.cpuPerRequestUs.toFixed(0)} µs/request; failures ${failures}`,
  );
  // E2E_F_NO_LOAD=1: only the 1-proxy checks (to profile them alone)
  for (const path of process.env.E2E_F_NO_LOAD ? [] : ['/me', '/regions']) {
    const url = `${svc.url}${path}`;
    const l = (await wrk(url, o.concurrency, o.seconds)) ?? (await fetchLoad(url, o.concurrency, o.seconds));
    res.load.push(l);
    o.log(`  F: GET ${path} ${l.rps.toFixed(0)} req/s (${l.tool}, ${o.concurrency} clients, p50 ${l.latencyMs?.p50.toFixed(2)} ms, p99 ${l.latencyMs?.p99.toFixed(2)} ms, errors ${l.errors})`);
  }
  return res;
}
