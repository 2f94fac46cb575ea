/**
 * The service under test as a subprocess (`bun src/main.ts`, behind
 * bench/e2e/guard.ts so it dies with the runner), and the API calls the
 * benchmark makes: POST /check-raw, the result file, GET /health.
 *
 * Start-up is timed from spawn to the first 200 from GET /health (process
 * start, database open and migrations, geo, probe pool, judge calibration).
 */
import { fileURLToPath } from 'node:url';
import { nextJson, spawnChild } from './proc';
import { npmStartEnv } from '../../scripts/start-env';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const START_ENV = npmStartEnv(ROOT);
const GUARD = fileURLToPath(new URL('./guard.ts', import.meta.url));

export const BENCH_KEY = 'pc_BenchKeyForEndToEndFarmRuns0001';

export interface ServiceOptions {
  dataDir: string;
  slotsPerEndpoint: number | null;
  judgeUrl: string;
  /** the judge's signing key (JUDGE_KEY) */
  judgeKey: string;
  /** extra environment (e.g. PROBE_THREADS) */
  env?: Record<string, string>;
  /** extra bun flags before the script (e.g. --cpu-prof-md) */
  bunFlags?: string[];
  /** another checkout to run (its src/main.ts and package.json's start environment): before/after comparisons */
  root?: string;
  /** CPUs to pin the service to (`taskset -c CPUS`, e.g. '0': a 1-vCPU VPS); unset: every core */
  pin?: string;
}

export interface Service {
  url: string;
  pid: number;
  startupMs: number;
  stop(): Promise<void>;
}

function freePort(): number {
  const l = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const p = l.port;
  l.stop(true);
  return p;
}

export async function startService(opts: ServiceOptions): Promise<Service> {
  const port = freePort();
  const env: Record<string, string> = {
    ...(opts.root === undefined ? START_ENV : npmStartEnv(`${opts.root}/`)),
    PORT: String(port),
    // a free port: PORT + 443 (the default) of a port taken from the ephemeral range can be held by
    // any outgoing connection (a bench start failed on it once)
    JUDGE_TLS_PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: opts.dataDir,
    ALLOW_PRIVATE_TARGETS: 'true',
    BOOTSTRAP_API_KEY: BENCH_KEY,
    BOOTSTRAP_CHECKS: '1000000000',
    JUDGE_URL: opts.judgeUrl,
    JUDGE_KEY: opts.judgeKey,
    LOG_LEVEL: 'warn',
    SHUTDOWN_GRACE_MS: '2000',
    // the bench measures the engine with one key: the per-account limits (docs/API.md "Limits") are lifted
    MAX_JOBS_PER_ACCOUNT: '10000',
    RATE_LIMIT_PER_S: '1000000',
    DATABASE_URL: process.env.E2E_DATABASE_URL ?? '',
    ...(opts.slotsPerEndpoint !== null ? { SLOTS_PER_ENDPOINT: String(opts.slotsPerEndpoint) } : {}),
    ...(opts.env ?? {}),
    // experiments: E2E_SERVICE_ENV='{"PROBE_THREADS":"4"}'
    ...(JSON.parse(process.env.E2E_SERVICE_ENV ?? '{}') as Record<string, string>),
  };
  const t0 = performance.now();
  const child = spawnChild('service', [...(opts.pin !== undefined ? ['taskset', '-c', opts.pin] : []), process.execPath, GUARD, process.execPath, ...(opts.bunFlags ?? []), opts.root === undefined ? `${ROOT}src/main.ts` : `${opts.root}/src/main.ts`], env);
  const url = `http://127.0.0.1:${port}`;
  try {
    const { pid } = await nextJson<{ pid: number }>(child, 10_000);
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.proc.exitCode !== null) throw new Error(`service exited (${child.proc.exitCode}): ${child.stderr.join('').slice(-3000)}`);
      try {
        const r = await fetch(`${url}/health`);
        await r.arrayBuffer();
        if (r.status === 200) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`service not ready within 60 s: ${child.stderr.join('').slice(-3000)}`);
      await Bun.sleep(5);
    }
    const startupMs = performance.now() - t0;
    return { url, pid, startupMs, stop: () => child.stop(10_000) };
  } catch (err) {
    await child.stop(2000);
    throw err;
  }
}

export interface CheckReply {
  status: number;
  body: any;
  wallMs: number;
}

export async function checkRaw(
  svc: Service,
  text: string,
  q: { timeoutMs: number; type?: string; region?: string; jobId?: string; https?: boolean },
): Promise<CheckReply> {
  const params = new URLSearchParams({ timeout: String(q.timeoutMs), type: q.type ?? 'http', region: q.region ?? 'us1' });
  if (q.jobId !== undefined) params.set('jobId', q.jobId);
  if (q.https !== undefined) params.set('https', String(q.https));
  const t0 = performance.now();
  const res = await fetch(`${svc.url}/check-raw?${params}`, {
    method: 'POST',
    headers: { 'X-API-Key': BENCH_KEY, 'Content-Type': 'text/plain' },
    body: text,
    signal: AbortSignal.timeout(900_000),
    timeout: false,
  } as RequestInit);
  const raw = await res.text();
  const wallMs = performance.now() - t0;
  let body: unknown = raw;
  try {
    body = JSON.parse(raw);
  } catch {
    // keep the text
  }
  return { status: res.status, body, wallMs };
}

export interface ResultRecord {
  proxy: { host: string; port: number };
  status: string;
  responseTime: string;
  error?: { code: string; message: string };
}

export async function fetchResult(resultUrl: string): Promise<{ proxies: ResultRecord[] }> {
  const res = await fetch(resultUrl, { signal: AbortSignal.timeout(120_000) });
  if (res.status !== 200) throw new Error(`result file: HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`);
  return (await res.json()) as { proxies: ResultRecord[] };
}
