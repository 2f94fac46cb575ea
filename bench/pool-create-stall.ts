/**
 * How long POST /pools holds the service's main thread (issue 29): while a
 * pool of `--proxies` is created, and its owner loads it, GET /judge (the
 * built-in judge on the API port: no database, answered on the main thread,
 * the http step of every probe of every check) is asked every `--every-ms`;
 * each answer slower than `--stall-ms` is a stall of the main thread, printed
 * with when it began (ms from the POST) and how long it took. The service as
 * users start it (bench/e2e/service.ts: embedded PGlite in a temporary data
 * dir, ALLOW_PRIVATE_TARGETS=true); the list is 10.0.0.0/8 addresses
 * (nothing answers there: the pool's probes find nothing, and the bench
 * only watches the first seconds).
 *
 *   bun bench/pool-create-stall.ts [--proxies 100000] [--watch-s 15] [--every-ms 20] [--stall-ms 100] [--reps 2] [--root DIR]
 *
 * `--root DIR`: the service of another checkout (a before/after comparison).
 *
 * Prints per repetition the POST's wall, the longest stall, the stalls over
 * --stall-ms, and the sum of the stalls.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BENCH_KEY, startService } from './e2e/service';

const { values } = parseArgs({
  options: {
    proxies: { type: 'string', default: '100000' },
    'watch-s': { type: 'string', default: '15' },
    'every-ms': { type: 'string', default: '20' },
    'stall-ms': { type: 'string', default: '100' },
    reps: { type: 'string', default: '2' },
    root: { type: 'string' },
  },
});
const N = Number(values.proxies);
const WATCH_MS = Number(values['watch-s']) * 1000;
const EVERY_MS = Number(values['every-ms']);
const STALL_MS = Number(values['stall-ms']);
const REPS = Number(values.reps);

const text = Array.from({ length: N }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:8080`).join('\n');
const body = JSON.stringify({ name: 'stall', text, interval_s: 3600, timeout: 2000, region: 'us1' });

for (let rep = 1; rep <= REPS; rep++) {
  const dataDir = mkdtempSync(join(tmpdir(), 'pool-create-stall-'));
  const svc = await startService({ dataDir, slotsPerEndpoint: null, judgeUrl: '', judgeKey: '', ...(values.root !== undefined ? { root: values.root } : {}) });
  try {
    const stalls: { at: number; ms: number }[] = [];
    let watching = true;
    let t0 = performance.now();
    const watch = (async () => {
      while (watching) {
        const s = performance.now();
        const r = await fetch(`${svc.url}/judge`);
        await r.arrayBuffer();
        const ms = performance.now() - s;
        if (ms > STALL_MS) stalls.push({ at: s - t0, ms });
        await Bun.sleep(EVERY_MS);
      }
    })();
    await Bun.sleep(300);
    t0 = performance.now();
    const r = await fetch(`${svc.url}/pools`, { method: 'POST', headers: { 'X-API-Key': BENCH_KEY, 'Content-Type': 'application/json' }, body });
    const postMs = performance.now() - t0;
    if (r.status !== 201) throw new Error(`POST /pools: ${r.status} ${await r.text()}`);
    await r.arrayBuffer();
    await Bun.sleep(Math.max(0, WATCH_MS - postMs));
    watching = false;
    await watch;
    const longest = stalls.reduce((m, s) => Math.max(m, s.ms), 0);
    const sum = stalls.reduce((a, s) => a + s.ms, 0);
    console.log(
      `rep ${rep}: ${N} proxies, POST ${postMs.toFixed(0)} ms; GET /judge stalls over ${STALL_MS} ms: ${stalls.length}, longest ${longest.toFixed(0)} ms, sum ${sum.toFixed(0)} ms` +
        ` [${stalls.map((s) => `${s.at.toFixed(0)}+${s.ms.toFixed(0)}`).join(' ')}]`,
    );
  } finally {
    await svc.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
