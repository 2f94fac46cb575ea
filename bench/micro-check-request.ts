/**
 * Where the time goes between receiving POST /check-raw and the moment the job
 * actor is created, for 100 000-line bodies (plain 127.x.y.z:port, and a mix of
 * every form). Two views:
 *
 * 1. In-process steps, each timed alone (median of RUNS runs, after warm-up):
 *    readBodyText on a Request fed in 64 KiB chunks, the query object, the
 *    parser alone (parseProxyList), validateCheckRaw (query checks + parse +
 *    limits), and the actor's own allocation (generateJobId + a Uint8Array per
 *    proxy, what `new JobActor` allocates before `run()`).
 * 2. Over loopback (127.0.0.1, port 0, this process is client and server):
 *    a) a bare Bun.serve handler doing the route's steps with timestamps;
 *    b) the real route (src/http/routes/check.ts in Elysia) with fake ports
 *       (the key lookup resolves at once, checks.run stamps the time and
 *       returns): fetch() sent -> checks.run called.
 *
 * 3. `--validation`: request validation alone on the largest inputs, before
 *    and after the contract's compiled schema (issue 31): a 100 000-proxy
 *    POST /check body (validateCheckJsonOrdered, the ordered checks alone as
 *    before, against validateCheckJson, the compiled schema first) and a
 *    16 MiB /check-raw body (validateCheckRaw; its path has no schema step).
 *    `route`: what POST /check runs since it declares its body (null-is-absent,
 *    Elysia's merge of the top-level defaults and its compiled check, then
 *    checkRequestOfBody). mitata's table, then the three run interleaved
 *    in this one process: on a shared machine that is the fair comparison.
 *
 *   bun bench/micro-check-request.ts [--runs=N] [--validation]
 */
import { Elysia } from 'elysia';
import { readBodyText } from '../src/http/body';
import { bench, do_not_optimize, group, run, summary } from 'mitata';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import { checkRequestOfBody, validateCheckJson, validateCheckJsonOrdered, validateCheckRaw } from '../src/http/check-request';
import { nullsAsAbsent } from '../src/http/refusals';
import { CheckBodyAsRead } from '../src/contract/checks';
import { checkRoutes } from '../src/http/routes/check';
import type { AppDeps } from '../src/http/context';
import { parseProxyList } from '../src/proxy/parse';
import { generateJobId } from '../src/jobs/service';
import { ACCEPTED_REGIONS } from '../src/regions';
import { mixedLines } from './proxy-list-bodies';

const LINES = 100_000;
const RUNS = Number(process.argv.find((a) => a.startsWith('--runs='))?.slice(7) ?? 15);
const MAX_BODY = 16 * 1024 * 1024;
const limits = { maxProxies: LINES, maxCustomUrls: 10, acceptedRegions: ACCEPTED_REGIONS };

const loop = (i: number) => `127.${(i >> 16) & 255}.${(i >> 8) & 255}.${(i & 255) || 1}`;
const BODIES: Record<string, string> = {
  'host:port (127.x)': Array.from({ length: LINES }, (_, i) => `${loop(i)}:${10000 + (i % 50000)}`).join('\n'),
  'mixed, CRLF': mixedLines(LINES).join('\r\n'),
};

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1] ?? NaN;
};
const ms = (x: number) => `${x.toFixed(2)} ms`;

async function timeIt<T>(f: () => T | Promise<T>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < 3; i++) await f(); // warm-up
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await f();
    out.push(performance.now() - t0);
  }
  return out;
}

function chunkedRequest(bytes: Uint8Array, url = 'http://127.0.0.1/check-raw'): Request {
  let off = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (off >= bytes.length) return c.close();
      c.enqueue(bytes.subarray(off, off + 65536));
      off += 65536;
    },
  });
  return new Request(url, { method: 'POST', body: stream, headers: { 'content-length': String(bytes.length) } });
}

console.log(`${LINES} lines per body, median of ${RUNS} runs (after 3 warm-up runs)\n`);

// ---- 1. in-process steps ------------------------------------------------------
async function validationBench(): Promise<void> {
  const body = JSON.parse(JSON.stringify({ proxies: Array.from({ length: LINES }, (_, i) => `${loop(i)}:${10000 + (i % 50000)}`), type: 'http', timeout: 5000, region: 'us1' }));
  let raw = '';
  for (let i = 0; raw.length < MAX_BODY - 64; i++) raw += `${loop(i)}:${10000 + (i % 50000)}\n`;
  const rawLimits = { ...limits, maxProxies: 2_000_000 };
  const query = new URLSearchParams('type=socks5&timeout=3000');
  const before = () => validateCheckJsonOrdered(body, limits);
  const after = () => validateCheckJson(body, limits);
  // what the route runs since it declares its body: the parse hook's null-is-absent, Elysia's merge of the
  // schema's top-level defaults and its compiled check, then the checks a schema cannot make
  const routeBody = TypeCompiler.Compile(CheckBodyAsRead);
  const defaults = Value.Default(CheckBodyAsRead, {}) as object;
  const route = () => {
    const b = Object.assign({ ...defaults }, nullsAsAbsent(CheckBodyAsRead, body));
    if (!routeBody.Check(b)) throw new Error('refused');
    return checkRequestOfBody(b, limits);
  };
  if (JSON.stringify(before()) !== JSON.stringify(after()) || JSON.stringify(route()) !== JSON.stringify(after())) throw new Error('the paths disagree');
  console.log(`/check body: ${LINES} proxies; /check-raw body: ${(raw.length / 1048576).toFixed(2)} MiB, ${validateCheckRaw(raw, query, rawLimits).proxies.length} proxies`);
  group('POST /check, 100 000 proxies', () => {
    summary(() => {
      bench('before: the ordered checks alone', () => do_not_optimize(before()));
      bench('after: the compiled schema, then the checks it cannot make', () => do_not_optimize(after()));
      bench('route: the declared body as Elysia checks it, then the same checks', () => do_not_optimize(route()));
    });
  });
  group('POST /check-raw, 16 MiB', () => {
    bench('validateCheckRaw (no schema step on this path)', () => do_not_optimize(validateCheckRaw(raw, query, rawLimits)));
  });
  await run();
  const xs = { before: [] as number[], after: [] as number[], route: [] as number[] };
  for (let i = 0; i < 3; i++) (before(), after(), route()); // warm-up
  const order = [['before', before], ['after', after], ['route', route]] as const;
  for (let i = 0; i < RUNS * 3; i++) {
    const [name, f] = order[i % 3]!;
    const t0 = performance.now();
    do_not_optimize(f());
    xs[name].push(performance.now() - t0);
  }
  console.log(`\ninterleaved, ${RUNS} runs each: before ${ms(median(xs.before))} median (${ms(Math.min(...xs.before))} min), after ${ms(median(xs.after))} median (${ms(Math.min(...xs.after))} min), route ${ms(median(xs.route))} median (${ms(Math.min(...xs.route))} min)`);
}
if (process.argv.includes('--validation')) {
  await validationBench();
  process.exit(0);
}

for (const [name, text] of Object.entries(BODIES)) {
  const bytes = new TextEncoder().encode(text);
  const list = parseProxyList(text, { maxUnique: LINES });
  console.log(
    `${name}: ${(bytes.length / 1048576).toFixed(2)} MiB -> ${list.proxies.length} unique, ` +
      `${list.duplicates} dup, ${list.invalid} invalid, ${list.ignored} ignored`,
  );
  const url = 'http://127.0.0.1/check-raw?type=socks5&timeout=3000';
  const read = await timeIt(() => readBodyText(chunkedRequest(bytes), MAX_BODY));
  const query = await timeIt(() => Object.fromEntries(new URL(url).searchParams));
  const parse = await timeIt(() => parseProxyList(text, { maxUnique: LINES }));
  const validate = await timeIt(() => validateCheckRaw(text, new URLSearchParams({ type: 'socks5', timeout: '3000' }), limits));
  const actor = await timeIt(() => [generateJobId(), new Uint8Array(list.proxies.length)]);
  const rows: [string, number[]][] = [
    ['readBodyText (64 KiB chunks)', read],
    ['query object', query],
    ['parseProxyList alone', parse],
    ['validateCheckRaw (incl. parse)', validate],
    ['job id + actor allocation', actor],
  ];
  for (const [label, xs] of rows) {
    const m = median(xs);
    console.log(`  ${label.padEnd(32)} ${ms(m).padStart(10)}  min ${ms(Math.min(...xs))}  (${((m * 1e6) / LINES).toFixed(0)} ns/line)`);
  }
  console.log();
}

// ---- 2a. bare Bun.serve handler --------------------------------------------------
{
  let marks: number[] = [];
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const t1 = performance.now();
      const text = await readBodyText(request, MAX_BODY);
      const t2 = performance.now();
      const req = validateCheckRaw(text, new URL(request.url).searchParams, limits);
      const t3 = performance.now();
      marks = [t1, t2, t3, req.proxies.length];
      return new Response('{}');
    },
  });
  try {
    console.log('over loopback, bare Bun.serve handler (fetch() -> handler -> body read -> validated):');
    for (const [name, text] of Object.entries(BODIES)) {
      const cols: number[][] = [[], [], [], []];
      for (let i = 0; i < RUNS + 3; i++) {
        const t0 = performance.now();
        const res = await fetch(`http://127.0.0.1:${server.port}/check-raw?type=socks5`, { method: 'POST', body: text });
        await res.text();
        const [t1 = 0, t2 = 0, t3 = 0] = marks;
        if (i < 3) continue;
        cols[0]!.push(t1 - t0);
        cols[1]!.push(t2 - t1);
        cols[2]!.push(t3 - t2);
        cols[3]!.push(t3 - t0);
      }
      const [a, b, c, d] = cols.map(median) as [number, number, number, number];
      console.log(`  ${name}: to handler ${ms(a)}, body read ${ms(b)}, query+validate ${ms(c)}; total ${ms(d)}`);
    }
  } finally {
    server.stop(true);
  }
}

// ---- 2b. the real route -------------------------------------------------------------
{
  let ranAt = 0;
  const account = { id: 'acc_bench', email: 'bench@example.com' };
  const deps = {
    config: { maxProxies: LINES, maxCustomUrls: 10, maxBodyBytes: MAX_BODY },
    accounts: { findByApiKey: async () => account, overview: async () => ({}) },
    checks: {
      assertAccepting: () => {},
      run: async () => {
        ranAt = performance.now();
        return {};
      },
    },
  } as unknown as AppDeps;
  const app = new Elysia().use(checkRoutes(deps)).listen({ hostname: '127.0.0.1', port: 0 });
  try {
    const port = app.server?.port;
    console.log('\nover loopback, the real /check-raw route (fetch() sent -> checks.run called):');
    for (const [name, text] of Object.entries(BODIES)) {
      const xs: number[] = [];
      for (let i = 0; i < RUNS + 3; i++) {
        const t0 = performance.now();
        const res = await fetch(`http://127.0.0.1:${port}/check-raw?type=socks5`, {
          method: 'POST',
          body: text,
          headers: { 'x-api-key': 'bench' },
        });
        if (res.status !== 200) throw new Error(`status ${res.status}: ${await res.text()}`);
        await res.text();
        if (i >= 3) xs.push(ranAt - t0);
      }
      console.log(`  ${name}: ${ms(median(xs))} median, ${ms(Math.min(...xs))} min`);
    }
  } finally {
    await app.stop(true);
  }
}
