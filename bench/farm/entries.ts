/**
 * The proxy farm's entries, as pure functions (no I/O): shared by the farm
 * processes (which see only the local address a connection arrived on) and by
 * the benchmark runner (which writes the list and the manifest).
 *
 * - An entry is a global id g -> a distinct loopback address 127.A.B.C
 *   (A >= 1, C in 1..254). The farm decides a connection's behaviour by the
 *   port it arrived on (one listener per port serves every address) and a
 *   working entry's latency by its address, so no table crosses processes.
 * - Latency of a lognormal-working entry: a seeded hash of (seed, g) -> a
 *   standard normal z -> median * exp(sigma * z), sigma from the p90.
 * - A mix (fractions of working / refused / black hole / slow) becomes exact
 *   counts, shuffled by a seeded PRNG, so every run of a scenario has the same
 *   list, the same manifest and the same lower bound.
 */

export const BEHAVIOURS = Object.freeze({
  /** a real forward proxy that waits its own lognormal latency */
  WORKING: 'working',
  /** a real forward proxy that answers at once */
  INSTANT: 'instant',
  /** nothing listens at that address/port */
  REFUSED: 'refused',
  /** accepts, never answers */
  BLACKHOLE: 'blackhole',
  /** a working proxy that answers after 1.5 x the scenario's timeout */
  SLOW: 'slow',
} as const);
export type Behaviour = (typeof BEHAVIOURS)[keyof typeof BEHAVIOURS];

/** Behaviours that have listeners in every farm process. */
export const LISTENING: readonly Behaviour[] = [BEHAVIOURS.WORKING, BEHAVIOURS.INSTANT, BEHAVIOURS.BLACKHOLE, BEHAVIOURS.SLOW];

export interface LatencyModel {
  seed: number;
  medianMs: number;
  p90Ms: number;
}

/** z of the 90th percentile of the standard normal. */
const Z90 = 1.2815515655446004;
const PER_BLOCK = 256 * 254;

/** Global id -> 127.A.B.C (A from 1). Up to 126 x 65 024 ids. */
export function addressOf(g: number): string {
  const a = 1 + Math.floor(g / PER_BLOCK);
  const r = g % PER_BLOCK;
  return `127.${a}.${Math.floor(r / 254)}.${1 + (r % 254)}`;
}

/** Inverse of addressOf; -1 for an address outside the scheme. */
export function idOf(address: string): number {
  const s = address.startsWith('::ffff:') ? address.slice(7) : address;
  const p = s.split('.');
  if (p.length !== 4 || p[0] !== '127') return -1;
  const a = Number(p[1]);
  const b = Number(p[2]);
  const c = Number(p[3]);
  if (!(a >= 1 && b >= 0 && b <= 255 && c >= 1 && c <= 254)) return -1;
  return (a - 1) * PER_BLOCK + b * 254 + (c - 1);
}

/** 32-bit finaliser (murmur3 fmix32). */
function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Uniform in (0, 1) from (seed, g, k). */
function unit(seed: number, g: number, k: number): number {
  const h = mix32(mix32(seed ^ Math.imul(g + 1, 0x9e3779b1)) ^ Math.imul(k + 1, 0x7f4a7c15));
  return (h + 0.5) / 4294967296;
}

/** The entry's own latency (ms, integer >= 1) under the model. */
export function latencyOf(g: number, m: LatencyModel): number {
  const sigma = Math.log(m.p90Ms / m.medianMs) / Z90;
  const z = Math.sqrt(-2 * Math.log(unit(m.seed, g, 0))) * Math.cos(2 * Math.PI * unit(m.seed, g, 1));
  return Math.max(1, Math.round(m.medianMs * Math.exp(sigma * z)));
}

/** Seeded PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Mix = Partial<Record<Behaviour, number>>;

/** Exact counts for n entries (largest remainders), shuffled with the seed. */
export function assignBehaviours(n: number, mix: Mix, seed: number): Behaviour[] {
  const keys = (Object.keys(mix) as Behaviour[]).filter((k) => (mix[k] ?? 0) > 0);
  const sum = keys.reduce((s, k) => s + (mix[k] ?? 0), 0);
  const exact = keys.map((k) => ((mix[k] ?? 0) / sum) * n);
  const counts = exact.map(Math.floor);
  let left = n - counts.reduce((s, c) => s + c, 0);
  const order = exact.map((e, i) => [e - Math.floor(e), i] as const).sort((x, y) => y[0] - x[0] || x[1] - y[1]);
  for (const [, i] of order) {
    if (left <= 0) break;
    counts[i]!++;
    left--;
  }
  const out: Behaviour[] = [];
  keys.forEach((k, i) => {
    for (let c = 0; c < counts[i]!; c++) out.push(k);
  });
  const rnd = prng(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    const t = out[i]!;
    out[i] = out[j]!;
    out[j] = t;
  }
  return out;
}

export interface FarmPorts {
  /** listening ports per behaviour (all farm processes together) */
  listen: Record<Exclude<Behaviour, 'refused'>, number[]>;
  /** ports where nothing listens */
  refused: number[];
}

export interface Entry {
  g: number;
  host: string;
  port: number;
  behaviour: Behaviour;
  /** the proxy's own answer delay (working: latency, instant: 0, slow: slowMs); null when it never answers */
  delayMs: number | null;
}

export interface ListSpec {
  /** first global id (lists that run at the same time must not overlap) */
  firstId: number;
  size: number;
  mix: Mix;
  seed: number;
  latency: LatencyModel;
  slowMs: number;
}

export function buildEntries(spec: ListSpec, ports: FarmPorts): Entry[] {
  const kinds = assignBehaviours(spec.size, spec.mix, spec.seed);
  const out: Entry[] = new Array(spec.size);
  for (let i = 0; i < spec.size; i++) {
    const g = spec.firstId + i;
    const behaviour = kinds[i]!;
    const pool = behaviour === BEHAVIOURS.REFUSED ? ports.refused : ports.listen[behaviour];
    const port = pool[g % pool.length]!;
    let delayMs: number | null;
    switch (behaviour) {
      case BEHAVIOURS.WORKING:
        delayMs = latencyOf(g, spec.latency);
        break;
      case BEHAVIOURS.INSTANT:
        delayMs = 0;
        break;
      case BEHAVIOURS.SLOW:
        delayMs = spec.slowMs;
        break;
      default:
        delayMs = null;
    }
    out[i] = { g, host: addressOf(g), port, behaviour, delayMs };
  }
  return out;
}

/**
 * An entry's own duration for the lower bound: refused ~0, no answer = the
 * timeout, else its delay, capped. `connections`: how many connections an
 * answering entry is asked for one after the other, each waiting its delay
 * (2 with the https check: the judge check, then the tunnel to the TLS
 * judge), all inside the one timeout.
 */
export function ownDurationMs(e: Entry, timeoutMs: number, connections = 1): number {
  if (e.behaviour === BEHAVIOURS.REFUSED) return 0;
  if (e.delayMs === null) return timeoutMs;
  return Math.min(e.delayMs * connections, timeoutMs);
}

export interface Bound {
  /** the formula: sum of min(own duration, timeout) / slots */
  formulaMs: number;
  /** max(formula, the longest single entry): no schedule can beat either */
  tightMs: number;
  sumMs: number;
  /** a zero-overhead checker that starts entries in list order whenever a slot frees (it cannot know which are black holes) */
  fifoMs: number;
  /** only when asked for (lowerBound's `orders`) */
  orderBlind?: OrderBlind;
}

/** Makespan of list-order scheduling on `slots` slots with zero overhead (binary min-heap of slot free times). */
export function fifoMakespanMs(durations: readonly number[], slots: number): number {
  const heap: number[] = [];
  const push = (v: number) => {
    let i = heap.length;
    heap.push(v);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (heap[p]! <= v) break;
      heap[i] = heap[p]!;
      i = p;
    }
    heap[i] = v;
  };
  const popPush = (v: number) => {
    // replace the minimum with v and sift down
    let i = 0;
    const n = heap.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && heap[r]! < heap[l]! ? r : l;
      if (heap[c]! >= v) break;
      heap[i] = heap[c]!;
      i = c;
    }
    heap[i] = v;
  };
  let end = 0;
  for (const d of durations) {
    const start = heap.length < slots ? 0 : heap[0]!;
    const fin = start + d;
    if (heap.length < slots) push(fin);
    else popPush(fin);
    if (fin > end) end = fin;
  }
  return end;
}

/**
 * What a zero-overhead checker that cannot see which entries are black holes
 * gets, whatever order it picks: every order it can choose without that
 * knowledge is, on a shuffled list, as good as a random one. So: the
 * list-order makespan of `orders` seeded random permutations of the same
 * entries (min / median / max), beside the clairvoyant longest-first order.
 */
export interface OrderBlind {
  orders: number;
  minMs: number;
  p50Ms: number;
  maxMs: number;
  /** longest first: needs every entry's duration in advance */
  clairvoyantMs: number;
}

export function orderBlindMakespans(durations: readonly number[], slots: number, orders: number, seed = 42): OrderBlind {
  const rnd = prng(seed);
  const spans: number[] = [];
  const a = durations.slice();
  for (let k = 0; k < orders; k++) {
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      const t = a[i]!;
      a[i] = a[j]!;
      a[j] = t;
    }
    spans.push(fifoMakespanMs(a, slots));
  }
  spans.sort((x, y) => x - y);
  return {
    orders,
    minMs: spans[0] ?? 0,
    p50Ms: spans[Math.floor(spans.length / 2)] ?? 0,
    maxMs: spans.at(-1) ?? 0,
    clairvoyantMs: fifoMakespanMs(
      durations.slice().sort((x, y) => y - x),
      slots,
    ),
  };
}

/** The bounds of a run; with `orders` > 0 also what order-blind checkers get (orderBlindMakespans). */
export function lowerBound(entries: readonly Entry[], timeoutMs: number, slots: number, orders = 0, connections = 1): Bound {
  let sum = 0;
  let longest = 0;
  const durations = entries.map((e) => ownDurationMs(e, timeoutMs, connections));
  for (const d of durations) {
    sum += d;
    if (d > longest) longest = d;
  }
  const formulaMs = sum / slots;
  const fifoMs = fifoMakespanMs(durations, slots);
  const b: Bound = { formulaMs, tightMs: Math.max(formulaMs, longest), sumMs: sum, fifoMs };
  if (orders > 0) b.orderBlind = orderBlindMakespans(durations, slots, orders);
  return b;
}

/** The plain-text list for /check-raw. */
export function listText(entries: readonly Entry[]): string {
  let s = '';
  for (const e of entries) s += `${e.host}:${e.port}\n`;
  return s;
}
