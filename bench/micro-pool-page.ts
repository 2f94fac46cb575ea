/**
 * Micro-benchmark of an unlimited `GET /pools/{id}/proxies?status=working&format=txt`
 * from a pool owner's memory (issue 29), without HTTP and without the
 * database: a ProxyTable of N proxies (10 % working, 60 % failed, 30 %
 * unchecked; latencies 20..3 000 ms, a fifth with credentials), the whole
 * working list as txt, produced
 *
 *   before: as the route paged it: pages of 10 000 (memoryPage from the
 *     cursor, rowOf of each row, the written-set filter, textRows), one after
 *     the other (each page also cost a database query then: not counted);
 *   after: the one-pass listing (proxy-listing.ts: one snapshot, then its
 *     pieces: the lines LINE_STEP at a time in the table's order, copied out
 *     TXT_CHUNK at a time in the listing's order; a setImmediate before each
 *     piece, as the route writes them).
 *
 * Each: wall time to the whole text, p50 / p99 (nearest rank) over --runs
 * runs (the two alternating, a full GC before each run), the process's CPU
 * time p50 (what the wall is on a loaded machine once the other processes'
 * share is taken out), and the longest synchronous stretch (before: one
 * page; after: the snapshot or one piece), checking both texts are equal. Then one page of
 * 10 000 (memoryPage alone), the snapshot of `status=all` (every proxy: the
 * worst single stretch) and a csv piece (CSV_CHUNK rows).
 *
 *   bun bench/micro-pool-page.ts [--proxies 100000,1000000] [--runs 20]
 *   PAGE_BASELINE=proxy-page-old.ts bun bench/micro-pool-page.ts
 *     "before" and the one page with the memoryPage of another proxy-page.ts
 *     put beside it in src/pools/ (e.g. `git show <commit>:src/pools/proxy-page.ts
 *     > src/pools/proxy-page-old.ts`: the version before issue 29's change).
 */
import { parseArgs } from 'node:util';
import { CSV_CHUNK, LINE_STEP, listingOrder, MemoryListing, TXT_CHUNK } from '../src/pools/proxy-listing';
import { memoryPage as currentPage } from '../src/pools/proxy-page';
import { ProxyTable } from '../src/pools/proxy-table';
import { DEFAULT_PROXIES_QUERY, type PoolProxiesQuery } from '../src/pools/query';
import { decodeCursor } from '../src/pools/cursor';
import { textRows, type TextPageOptions } from '../src/pools/render';
import type { PoolProxyRow } from '../src/pools/shape';

const { values } = parseArgs({ options: { proxies: { type: 'string', default: '100000,1000000' }, runs: { type: 'string', default: '20' } } });
const SIZES = values.proxies.split(',').map(Number);
const RUNS = Number(values.runs);
const NOW = 1_800_000_000_000;

type PageFn = typeof currentPage;
const baseline = process.env.PAGE_BASELINE;
const memoryPage: PageFn =
  baseline === undefined ? currentPage : ((await import(new URL(`../src/pools/${baseline.replace(/^\.\//, '')}`, import.meta.url).href)) as { memoryPage: PageFn }).memoryPage;

/** mulberry32: the same table every run. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function tableOf(n: number): ProxyTable {
  const rnd = prng(29);
  const t = new ProxyTable(n);
  for (let i = 0; i < n; i++) {
    const u = rnd();
    const status = u < 0.1 ? 'working' : u < 0.7 ? 'failed' : 'unchecked';
    const auth = rnd() < 0.2;
    const checked = status === 'unchecked' ? null : new Date(NOW - Math.floor(rnd() * 600_000));
    const row: PoolProxyRow = {
      id: i + 1,
      host: `10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`,
      port: 1024 + (i % 60_000),
      username: auth ? `user${i % 97}` : '',
      password: auth ? 'secret' : '',
      format: auth ? (i % 2 === 0 ? 'colon_auth' : 'url_auth') : 'standard',
      status,
      failures: status === 'failed' ? 1 : 0,
      checks: status === 'unchecked' ? 0 : 3,
      type: status === 'working' ? 'http' : null,
      protocols: status === 'working' ? 1 : 0,
      anonymity: status === 'working' ? 'elite' : null,
      https: status === 'working' ? true : null,
      origin: null,
      country: status === 'working' ? (rnd() < 0.3 ? 'DE' : 'US') : null,
      countryName: null,
      location: null,
      isp: null,
      asn: null,
      statusCode: status === 'working' ? 200 : null,
      responseTimeMs: status === 'working' ? 100 : null,
      errorCode: status === 'failed' ? 'timeout' : null,
      errorMessage: null,
      latencyP50Ms: status === 'working' ? 20 + Math.floor(rnd() * 2_980) : null,
      uptimeH24Ppm: status === 'unchecked' ? null : Math.floor(rnd() * 1_000_001),
      history: null,
      firstSeenAt: new Date(NOW - 86_400_000),
      lastCheckedAt: checked,
      lastChangeAt: checked,
      nextCheckAt: new Date(NOW + 300_000),
    };
    t.add(row);
  }
  return t;
}

const opts = (format: 'txt' | 'csv'): TextPageOptions => ({ format, scheme: false, poolType: 'http', nowMs: NOW });
const QUERY: PoolProxiesQuery = { ...DEFAULT_PROXIES_QUERY, format: 'txt', all: true, limit: 10_000 };
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** A listing's chunks, and its longest synchronous stretch in ms. */
interface Produced {
  chunks: Uint8Array[];
  longest: number;
}
const textOf = (p: Produced): string => p.chunks.map((c) => decoder.decode(c)).join('');

/** Today's route over the owner's memory: page after page of 10 000 from the cursor, each page's text encoded. */
async function before(t: ProxyTable): Promise<Produced> {
  const written = new Set<number>();
  const chunks: Uint8Array[] = [];
  let longest = 0;
  let cursor: string | null = null;
  do {
    const t0 = performance.now();
    const p = memoryPage(t, { ...QUERY, cursor: cursor === null ? null : decodeCursor(cursor) });
    const rows = p.slots.map((s) => t.rowOf(s)).filter((r) => !written.has(r.id));
    for (const r of rows) written.add(r.id);
    chunks.push(encoder.encode(textRows(rows, opts('txt'))));
    longest = Math.max(longest, performance.now() - t0);
    cursor = p.nextCursor;
    await tick();
  } while (cursor !== null);
  return { chunks, longest };
}

/** The one-pass listing as the route writes it. */
async function after(t: ProxyTable): Promise<Produced> {
  let t0 = performance.now();
  const listing = new MemoryListing(t, listingOrder(t, QUERY), () => false);
  let longest = performance.now() - t0;
  const chunks: Uint8Array[] = [];
  const o = opts('txt');
  for (;;) {
    await tick();
    t0 = performance.now();
    const chunk = listing.next(o);
    longest = Math.max(longest, performance.now() - t0);
    if (chunk === null) break;
    if (chunk.length > 0) chunks.push(chunk);
  }
  return { chunks, longest };
}

const rank = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil((p / 100) * xs.length) - 1)]!;
const ms = (x: number): string => x.toFixed(1);

/** before and after, `RUNS` runs each, alternating which goes first; each one's text from its first run. */
async function measure(t: ProxyTable): Promise<[string, string]> {
  const fs = { before, after } as const;
  const names = ['before', 'after'] as const;
  const walls = { before: [] as number[], after: [] as number[] };
  const cpu = { before: [] as number[], after: [] as number[] };
  const longest = { before: [] as number[], after: [] as number[] };
  const text = { before: '', after: '' };
  for (const k of names) await fs[k](t); // warm-up
  for (let r = 0; r < RUNS; r++) {
    for (const k of r % 2 === 0 ? names : ([...names].reverse() as typeof names[number][])) {
      Bun.gc(true); // neither pays for the other's garbage
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      const out = await fs[k](t);
      walls[k].push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpu[k].push((c.user + c.system) / 1000);
      longest[k].push(out.longest);
      if (r === 0) text[k] = textOf(out);
    }
  }
  for (const k of names) {
    const label = k === 'before' ? 'before (pages of 10 000)' : 'after (one pass)        ';
    console.log(`  ${label}: whole txt p50 ${ms(rank(walls[k], 50))} / p99 ${ms(rank(walls[k], 99))} ms (CPU p50 ${ms(rank(cpu[k], 50))} ms); longest synchronous stretch p50 ${ms(rank(longest[k], 50))} / max ${ms(Math.max(...longest[k]))} ms`);
  }
  return [text.before, text.after];
}

function timeOf(f: () => unknown, runs = RUNS): string {
  f();
  const xs: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    f();
    xs.push(performance.now() - t0);
  }
  return `p50 ${ms(rank(xs, 50))} / p99 ${ms(rank(xs, 99))} ms`;
}

console.log(`bun ${Bun.version}, ${RUNS} runs each, pieces of ${LINE_STEP} / ${TXT_CHUNK} lines${baseline === undefined ? '' : `, before = src/pools/${baseline}`}`);
for (const n of SIZES) {
  const t0 = performance.now();
  const t = tableOf(n);
  const working = listingOrder(t, QUERY).scan.length;
  console.log(`${n} proxies, ${working} working (table built in ${ms(performance.now() - t0)} ms)`);
  const [a, b] = await measure(t);
  if (a !== b) throw new Error('the two listings differ');
  console.log(`  txt: ${(b.length / 1e6).toFixed(2)} MB, ${b.split('\n').length - 1} lines, equal`);
  console.log(`  one page of 10 000 (memoryPage): ${timeOf(() => currentPage(t, QUERY))}${baseline === undefined ? '' : `; before: ${timeOf(() => memoryPage(t, QUERY))}`}`);
  console.log(`  snapshot of status=all (${n} slots): ${timeOf(() => listingOrder(t, { ...QUERY, status: 'all' }), 5)}`);
  const csv = new MemoryListing(t, listingOrder(t, QUERY), () => false);
  console.log(`  a csv piece (${CSV_CHUNK} rows): ${timeOf(() => csv.next(opts('csv')))}`);
}
