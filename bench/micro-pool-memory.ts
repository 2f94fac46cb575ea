/**
 * Memory of a pool of 1 000 000 proxies in its owner's memory (issue 29:
 * service RSS over idle <= 300 bytes per pooled proxy): the ProxyTable
 * (src/pools/proxy-table.ts), the DueHeap and the actor's per-slot arrays,
 * built the way the owner loads a pool (src/jobs/pool-actor.ts #append:
 * pool-durable.ts loadPoolRows hands rows LOAD_CHUNK at a time, each
 * `table.add`ed and pushed on the heap; then `table.fit()` when the table
 * has it, as start() does), then one check folded into every slot
 * (table-fold.ts foldSlot).
 *
 * The rows are what rowFromSql makes of a real list: IPv4 hosts, no
 * credentials, 10 % working (country, country name, city, isp and asn from
 * a few thousand values, origin = the host), 90 % failed with the probes'
 * codes and messages (src/probe/net/exchange-states.ts). Every text is a
 * fresh string, as the database driver and the lanes' messages decode them
 * (one per row and per result, not one shared literal).
 *
 * Reported after Bun.gc(true): bytes per proxy of the JS heap
 * (bun:jsc heapStats().heapSize, which counts typed arrays' and strings'
 * malloc memory) and of RSS over the process before the pool; the typed
 * arrays counted exactly (byteLength, per column); the other fields (string
 * arrays, maps, the interner) by dropping each and measuring the heap again.
 *
 * RSS also counts what the allocator keeps of the garbage the rows and
 * results made (the service makes the same kind); it is read again after 5 s.
 * The process runs with the service's runtime settings (src/runtime-settings.ts).
 *
 * Run: bun bench/micro-pool-memory.ts [--proxies 1000000] [--working 0.1]
 */
import { heapStats } from 'bun:jsc';
import { LOAD_CHUNK } from '../src/jobs/pool-durable';
import { DueHeap } from '../src/pools/due-heap';
import type { PoolProbeResult } from '../src/pools/fold';
import { ProxyTable } from '../src/pools/proxy-table';
import type { PoolProxyRow } from '../src/pools/shape';
import { foldSlot } from '../src/pools/table-fold';
import { applyRuntimeSettings } from '../src/runtime-settings';

// the service's heap hint and JIT settings (src/main.ts does the same)
applyRuntimeSettings();

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const N = arg('proxies', 1_000_000);
const WORKING = arg('working', 0.1);
const NOW = Date.UTC(2026, 10, 29, 2);

/** A fresh copy of `s` (what a decoder hands over: not the literal's own string). */
const fresh = (s: string): string => Buffer.from(s).toString();

const STATES = ['TCP connect', 'the answer to CONNECT', 'the HTTP response', 'the TLS handshake'];
/** A failed check's [code, message] as the probes make them, by a number (a fixed mix). */
function failure(k: number): [string, string] {
  const state = STATES[k % STATES.length]!;
  switch (k % 10) {
    case 0:
    case 1:
    case 2:
    case 3:
      return ['connect_refused', 'connection refused'];
    case 4:
    case 5:
      return ['connect_timeout', `not connected within 2000 ms (${STATES[0]})`];
    case 6:
    case 7:
      return ['timeout', `no complete answer within 2000 ms (waiting for ${state})`];
    case 8:
      return ['connection_closed', `connection closed while waiting for ${state}`];
    default:
      return ['connect_failed', `connect failed (${k % 20 === 9 ? 'EHOSTUNREACH' : 'ENETUNREACH'})`];
  }
}

const COUNTRIES = Array.from({ length: 60 }, (_, i) => [`C${i}`, `Country ${i}`] as const);
const hostOf = (i: number): string => `${(i >>> 24) & 255 || 11}.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`;
const isWorking = (i: number): boolean => i % Math.round(1 / WORKING) === 0;
const history = new Uint8Array(153).fill(3);

function rowOf(i: number): PoolProxyRow {
  const host = fresh(hostOf(i + 1));
  const base = {
    id: i + 1, host, port: 1024 + (i % 60_000), username: fresh(''), password: fresh(''), format: 'standard' as const,
    firstSeenAt: new Date(NOW - 86_400_000), nextCheckAt: new Date(NOW + (i % 300) * 1000), history: history.slice(),
    lastCheckedAt: new Date(NOW - 300_000), lastChangeAt: new Date(NOW - 3_600_000), checks: 12,
  };
  if (isWorking(i)) {
    const [country, countryName] = COUNTRIES[i % COUNTRIES.length]!;
    return {
      ...base, status: 'working', failures: 0, type: 'http', protocols: 1, anonymity: 'elite', https: true, origin: fresh(host),
      country: fresh(country), countryName: fresh(countryName), location: fresh(`City ${i % 2000}`), isp: fresh(`ISP ${i % 5000}`), asn: 1000 + (i % 5000),
      statusCode: 200, responseTimeMs: 120 + (i % 500), errorCode: null, errorMessage: null, latencyP50Ms: 130, uptimeH24Ppm: 950_000,
    };
  }
  const [code, message] = failure(i);
  return {
    ...base, status: 'failed', failures: 1 + (i % 5), type: null, protocols: 0, anonymity: null, https: null, origin: null,
    country: null, countryName: null, location: null, isp: null, asn: null,
    statusCode: null, responseTimeMs: 2000, errorCode: fresh(code), errorMessage: fresh(message), latencyP50Ms: null, uptimeH24Ppm: 0,
  };
}

function resultOf(i: number, host: string): PoolProbeResult {
  if (isWorking(i)) {
    return { status: 'working', statusCode: 200, responseTimeMs: 150, anonymity: 'elite', origin: fresh(host), error: null, protocols: ['http'], https: true };
  }
  const [code, message] = failure(i + 3);
  return { status: 'failed', statusCode: null, responseTimeMs: 2000, anonymity: null, origin: null, error: { code: fresh(code), message: fresh(message) } } as PoolProbeResult;
}

interface Snap {
  heap: number;
  rss: number;
}
function snap(): Snap {
  Bun.gc(true);
  Bun.gc(true);
  return { heap: heapStats().heapSize, rss: process.memoryUsage().rss };
}
const per = (bytes: number): string => (bytes / N).toFixed(1);
const line = (what: string, a: Snap, b: Snap): string => `${what}: heap ${per(b.heap - a.heap)} B/proxy, RSS ${per(b.rss - a.rss)} B/proxy (+${((b.rss - a.rss) / 1048576).toFixed(0)} MiB)`;

const s0 = snap();
const t = new ProxyTable(64);
const heap = new DueHeap(t.nextCheck, 64);
// the actor's per-slot arrays (#slotState, #dirty, #verdictDirty, #pairsLeft, #targetDirty: 1 byte; #unsettled: 2), made as it makes them
let actorBytes = 0;
let actorArrays: (Uint8Array | Uint16Array)[] = [];
const actorSized = (cap: number): void => {
  actorArrays = [...Array.from({ length: 5 }, () => new Uint8Array(cap)), new Uint16Array(cap)];
  actorBytes = cap * 7;
};
const t0 = performance.now();
for (let start = 0; start < N; start += LOAD_CHUNK) {
  const chunk: PoolProxyRow[] = [];
  for (let i = start; i < Math.min(N, start + LOAD_CHUNK); i++) chunk.push(rowOf(i));
  for (const row of chunk) {
    const slot = t.add(row);
    if (heap.size === 0 || t.capacity !== actorBytes / 7) {
      heap.resize(t.nextCheck, t.capacity);
      actorSized(t.capacity);
    }
    heap.push(slot);
  }
}
const fit = (t as unknown as { fit?: () => void }).fit;
if (fit !== undefined) {
  fit.call(t);
  heap.resize(t.nextCheck, t.capacity);
  actorSized(t.capacity);
}
const loadMs = performance.now() - t0;
const s1 = snap();
const t1 = performance.now();
const ctx = { poolType: 'http' as const, intervalS: 300, nowMs: NOW, random: () => 0.5 };
const geo = { country: 'C1', country_name: 'Country 1', location: 'City 1', isp: 'ISP 1', asn: 1001, coordinates: null };
for (let s = 0; s < t.size; s++) {
  const r = resultOf(s, hostOf(s + 1));
  foldSlot(t, s, r, r.status === 'working' ? geo : null, ctx);
  heap.update(s);
}
const foldMs = performance.now() - t1;
const s2 = snap();
await Bun.sleep(5000);
const s3 = snap();

console.log(`${N} proxies (${Math.round(N * WORKING)} working), capacity ${t.capacity} (${((t.capacity / N - 1) * 100).toFixed(1)} % idle), Bun ${Bun.version}`);
console.log(`load ${(loadMs / 1000).toFixed(1)} s, fold ${(foldMs / 1000).toFixed(1)} s`);
console.log(line('loaded', s0, s1));
console.log(line('loaded + one check folded into every slot', s0, s2));
console.log(line('the same 5 s later', s0, s3));

// components: typed arrays exactly, the rest by dropping each field
const typedOf = (v: unknown): number => {
  if (ArrayBuffer.isView(v)) return v.byteLength;
  if (v === null || typeof v !== 'object' || Array.isArray(v) || v instanceof Map) return 0;
  return Object.values(v).reduce((n: number, x) => n + (ArrayBuffer.isView(x) ? x.byteLength : 0), 0);
};
const typed: [string, number][] = Object.entries(t).map(([k, v]) => [k, typedOf(v)]);
const typedTotal = typed.reduce((n, [, b]) => n + b, 0);
console.log(`typed arrays of the table: ${per(typedTotal)} B/proxy (${(typedTotal / t.capacity).toFixed(1)} per capacity slot)`);
console.log(`  ${typed.filter(([, b]) => b > 0).map(([k, b]) => `${k} ${per(b)}`).join(', ')}`);
console.log(`DueHeap and the actor's arrays: ${per(actorBytes + t.capacity * 8)} B/proxy (8 + 7 per capacity slot)`);
const loose = Object.entries(t).flatMap(([k, v]) => (v !== null && typeof v === 'object' && !ArrayBuffer.isView(v) && k !== 'targets' ? [k] : []));
let prev = s2;
let looseTotal = 0;
for (const k of loose) {
  const own = typedOf((t as unknown as Record<string, unknown>)[k]);
  (t as unknown as Record<string, unknown>)[k] = null;
  const s = snap();
  const freed = prev.heap - s.heap - own;
  looseTotal += freed;
  console.log(`  ${k}: ${per(freed)} B/proxy beyond its typed arrays (strings, references, maps)`);
  prev = s;
}
const accounted = typedTotal + looseTotal + actorBytes + t.capacity * 8;
console.log(`accounted (${actorArrays.length} actor arrays) ${per(accounted)} of the heap's ${per(s2.heap - s0.heap)} B/proxy; RSS ${per(s2.rss - s0.rss)} B/proxy`);
