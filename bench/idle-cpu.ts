/**
 * Issue 29: the service's CPU that does not scale with checks. The service
 * started as users start it (`bun src/main.ts` with `npm start`'s
 * environment, bench/e2e/service.ts; the embedded PGlite), whole-service CPU
 * (its process tree, bench/e2e/proc.ts treeCpuMs), `--reps` repetitions on
 * one service, each:
 *
 *   (a) idle: CPU ms/s over `--idle-s` (20 s) with no job and no pool
 *   (b) a pool of `--proxies` (20 000) proxies that are all `refused`
 *       (bench/farm: a port nothing listens on; a probe is one refused
 *       connect, the cheapest there is) at `--interval-s` (60): made with
 *       one proxy, paused by its owner, the list added, resumed, so the
 *       whole list is overdue and spread over one interval (schedule.ts
 *       spreadOverdue): a steady proxies / interval_s checks a second, always
 *       some probe due. CPU ms/s over `--window-s` (40 s) from 5 s after the
 *       resume, and the window's pool checks (the `round.completed` events'
 *       `checked`, GET /ws?pool=)
 *   (c) the pool deleted; a one-shot POST /check-raw of the same list: its
 *       CPU per check
 *
 * and reports the pool's background: (b) - checks/s x (c), ms/s, i.e. what
 * the pool costs beyond the probes a one-shot pays for the same checks, and
 * the pool's CPU per check against (c). Each repetition's figures are taken
 * close together on the same service (a loaded machine moves all of them):
 * compare ratios within a run, and the repetitions' spread.
 *
 * Run: bun bench/idle-cpu.ts [--reps 3] [--idle-s 20] [--proxies 20000]
 *      [--interval-s 60] [--window-s 40] [--profile DIR] [--root CHECKOUT]
 * --root runs another checkout's service (a before/after on one machine);
 * --profile DIR: the service under --cpu-prof-md, written into DIR at its stop.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BEHAVIOURS, buildEntries, listText } from './farm/entries';
import { startFarm } from './farm/launcher';
import { stopAll, stopAllSync, threadCpu, threadDelta, treeCpuMs } from './e2e/proc';
import { SLOW_MS, TIMEOUT_MS } from './e2e/scenarios';
import { BENCH_KEY, checkRaw, startService, type Service } from './e2e/service';
import { runMain } from './e2e/stop-handlers';

const { values } = parseArgs({
  options: {
    reps: { type: 'string', default: '3' },
    'idle-s': { type: 'string', default: '20' },
    proxies: { type: 'string', default: '20000' },
    'interval-s': { type: 'string', default: '60' },
    'window-s': { type: 'string', default: '40' },
    profile: { type: 'string' },
    root: { type: 'string' },
  },
});
const REPS = Number(values.reps);
const IDLE_S = Number(values['idle-s']);
const PROXIES = Number(values.proxies);
const INTERVAL_S = Number(values['interval-s']);
const WINDOW_S = Number(values['window-s']);
const LATENCY = { seed: 20261122, medianMs: 150, p90Ms: 800 };
const headers = { 'X-API-Key': BENCH_KEY, 'Content-Type': 'application/json' };

const started = Date.now();
const log = (l: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${l}\n`);
const load = () => loadavg().map((l) => l.toFixed(2)).join(' / ');
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
process.on('exit', () => stopAllSync());
process.on('SIGINT', () => void stopAll().finally(() => process.exit(130)));

async function call(svc: Service, method: string, path: string, body?: unknown): Promise<any> {
  const r = await fetch(`${svc.url}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 300)}`);
  return text === '' ? null : JSON.parse(text);
}

/** CPU ms/s of the service over `seconds`; `threads`: its threads' ms/s by name (the main thread 'main'), the busiest first. */
async function cpuRate(svc: Service, seconds: number, threads?: (byName: string) => void): Promise<number> {
  const c0 = treeCpuMs(svc.pid);
  const th0 = threadCpu(svc.pid);
  const t0 = performance.now();
  await Bun.sleep(seconds * 1000);
  const s = (performance.now() - t0) / 1000;
  const d = Object.entries(threadDelta(svc.pid, th0, threadCpu(svc.pid))).sort((a, b) => b[1] - a[1]);
  threads?.(d.slice(0, 5).map(([k, v]) => `${k} ${(v / s).toFixed(1)}`).join(', '));
  return (treeCpuMs(svc.pid) - c0) / s;
}

interface Rep {
  idle: number;
  pool: number;
  rate: number;
  oneShotUs: number;
}

/** (b): the pool's CPU ms/s over the window and its checks per second. */
async function poolWindow(svc: Service, lines: string[]): Promise<{ cpu: number; rate: number }> {
  const created = await call(svc, 'POST', '/pools', { name: 'idle-cpu', text: lines[0], interval_s: INTERVAL_S, timeout: TIMEOUT_MS, region: 'us1' });
  const id = created.id as string;
  await call(svc, 'PATCH', `/pools/${id}`, { state: 'paused' });
  for (let i = 1; i < lines.length; i += 10_000) await call(svc, 'PATCH', `/pools/${id}`, { add: lines.slice(i, i + 10_000) });
  const ends: { at: number; checked: number }[] = [];
  const ws = new WebSocket(`${svc.url.replace('http', 'ws')}/ws?pool=${id}&apiKey=${BENCH_KEY}`);
  ws.onmessage = (m) => {
    const e = JSON.parse(String(m.data)) as { event: string; round?: { checked: number } };
    if (e.event === 'round.completed' && e.round) ends.push({ at: performance.now(), checked: e.round.checked });
  };
  await new Promise<void>((resolve, reject) => ((ws.onopen = () => resolve()), (ws.onerror = () => reject(new Error('ws')))));
  await call(svc, 'PATCH', `/pools/${id}`, { state: 'active' });
  const resumed = performance.now();
  await Bun.sleep(5000);
  const w0 = performance.now();
  const cpu = await cpuRate(svc, WINDOW_S, (t) => log(`  pool threads (ms/s): ${t}`));
  // the window's checks: the batches made durable in it, plus the one after it (a batch holds the checks since the last)
  const after = await new Promise<number>((resolve) => {
    const n = ends.length;
    const t = setInterval(() => {
      if (ends.length > n) {
        clearInterval(t);
        resolve(ends[n]!.at);
      }
    }, 100);
  });
  const checked = ends.filter((e) => e.at > w0 && e.at <= after).reduce((a, e) => a + e.checked, 0);
  // from the batch before the window (its end), or the resume when there was none
  const from = ends.filter((e) => e.at <= w0).at(-1)?.at ?? resumed;
  ws.close();
  await call(svc, 'DELETE', `/pools/${id}`);
  return { cpu, rate: (checked * 1000) / (after - from) };
}

async function main(): Promise<void> {
  log(`idle ${IDLE_S} s; pool of ${PROXIES} refused at interval_s ${INTERVAL_S}, window ${WINDOW_S} s; ${REPS} reps; load ${load()}`);
  const farm = await startFarm({ processes: 1, portsPerBehaviour: 1, refusedPorts: 16, latency: LATENCY, slowMs: SLOW_MS });
  const entries = buildEntries({ firstId: 0, size: PROXIES, mix: { [BEHAVIOURS.REFUSED]: 1 }, seed: 29, latency: LATENCY, slowMs: SLOW_MS }, farm.ports);
  const lines = entries.map((e) => `${e.host}:${e.port}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'pc-idle-cpu-'));
  const env: Record<string, string> = { LOG_LEVEL: '', ...(INTERVAL_S < 60 ? { POOL_MIN_INTERVAL_S: String(INTERVAL_S) } : {}) };
  const bunFlags = values.profile !== undefined ? ['--cpu-prof-md', `--cpu-prof-dir=${values.profile}`] : [];
  const svc = await startService({ dataDir, slotsPerEndpoint: null, judgeUrl: '', judgeKey: '', env, bunFlags, ...(values.root !== undefined ? { root: values.root } : {}) });
  const reps: Rep[] = [];
  try {
    log(`service ready in ${svc.startupMs.toFixed(0)} ms (pid ${svc.pid})`);
    const warm = await checkRaw(svc, listText(entries.slice(0, 2000)), { timeoutMs: TIMEOUT_MS });
    if (warm.status !== 200) throw new Error(`warm-up: HTTP ${warm.status}`);
    await Bun.sleep(2000);
    for (let r = 0; r < REPS; r++) {
      const idle = await cpuRate(svc, IDLE_S, (t) => log(`  idle threads (ms/s): ${t}`));
      const pool = await poolWindow(svc, lines);
      await Bun.sleep(3000);
      const o0 = treeCpuMs(svc.pid);
      const one = await checkRaw(svc, lines.join('\n'), { timeoutMs: TIMEOUT_MS, region: 'us1' });
      if (one.status !== 200) throw new Error(`check-raw: HTTP ${one.status}`);
      const oneShotUs = ((treeCpuMs(svc.pid) - o0) * 1000) / PROXIES;
      const rep = { idle, pool: pool.cpu, rate: pool.rate, oneShotUs };
      reps.push(rep);
      const bg = rep.pool - (rep.rate * rep.oneShotUs) / 1000;
      log(
        `rep ${r + 1}: idle ${idle.toFixed(1)} ms/s; pool ${rep.pool.toFixed(1)} ms/s at ${rep.rate.toFixed(0)} checks/s = ${((rep.pool * 1000) / rep.rate).toFixed(0)} µs per pool check; ` +
          `one-shot ${oneShotUs.toFixed(0)} µs per check; pool background ${bg.toFixed(1)} ms/s; pool check / one-shot check ${((rep.pool * 1000) / rep.rate / oneShotUs).toFixed(2)}x; load ${load()}`,
      );
      await Bun.sleep(3000);
    }
    const m = (f: (r: Rep) => number) => median(reps.map(f));
    const line = (f: (r: Rep) => number, d = 1) => `${m(f).toFixed(d)} (${reps.map((r) => f(r).toFixed(d)).join(', ')})`;
    process.stdout.write(
      `\n- idle CPU: ${line((r) => r.idle)} ms/s\n` +
        `- pool of ${PROXIES} refused at interval_s ${INTERVAL_S}: ${line((r) => r.pool)} ms/s at ${line((r) => r.rate, 0)} checks/s\n` +
        `- one-shot /check-raw of the list: ${line((r) => r.oneShotUs, 0)} µs per check\n` +
        `- pool background (pool - rate x one-shot): ${line((r) => r.pool - (r.rate * r.oneShotUs) / 1000)} ms/s\n` +
        `- pool check / one-shot check: ${line((r) => (r.pool * 1000) / r.rate / r.oneShotUs, 2)}x\n` +
        `- load average at the end ${load()}\n`,
    );
  } finally {
    await svc.stop();
    await farm.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await runMain(main, log, stopAll);
