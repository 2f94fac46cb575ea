/**
 * A /check's database statements beside a pool owner's flush, on PostgreSQL
 * (issue 29 item 6): the reservation (src/accounts/quota.ts reserveQuota,
 * with its scan row, as a check's) and the scan closed (finishScan) of one
 * account, every 40 ms, while the same account's pool flushes chunks of 250
 * rows back to back (src/jobs/pool-durable.ts flushChunk: the fence and
 * settlement, the state rows, the batch's record), against the same with no
 * flush. The modes alternate every 4 s (`ROUNDS` times each), so the machine's
 * noise falls on both alike; printed per mode: p50 / p90 / p99 of each
 * statement's wall, and a chunk's median.
 *
 * `FIRST_EVERY` (default 14, a 20 000-proxy pool's flush at 60 s: ~14 chunks)
 * says how often a chunk records a new batch: that chunk inserts a usage
 * scan row, whose foreign key holds a KEY SHARE lock on the account row until
 * the chunk commits (what a reservation that locked the row FOR UPDATE
 * waited for). FIRST_EVERY=1: every chunk (the worst case; a pool with
 * webhooks writes messages of the account in every chunk too).
 *
 * Run: npx bun bench/check-beside-flush.ts [postgres://...]   (default the local server;
 *      a scratch database on it, dropped after) [FIRST_EVERY=14] [ROUNDS=6] [N=20000]
 */
import { createAccount } from '../src/accounts/accounts';
import { reserveQuota } from '../src/accounts/quota';
import { finishScan } from '../src/accounts/scans';
import { openDatabase } from '../db/client';
import { flushChunk, reserveChecks, takeLease } from '../src/jobs/pool-durable';
import { DEFAULT_POOL_LIMITS } from '../src/pools/limits';
import { createPool, dueProxies } from '../src/pools/store';
import { batchesOfRows } from '../src/pools/table-batch';
import { parseProxyLine, type ParsedProxy } from '../src/proxy/parse';
import { createServerDatabase } from '../test/helpers/db';

const N = Number(process.env.N ?? 20000);
const FIRST_EVERY = Math.max(1, Number(process.env.FIRST_EVERY ?? 14));
const ROUNDS = Number(process.env.ROUNDS ?? 6);
const MODE_MS = 4000;
const CHUNK = 250;

const created = await createServerDatabase(process.argv[2] ?? 'postgres://postgres@127.0.0.1:5432/postgres', 'bench_beside');
const database = await openDatabase({ databaseUrl: created.url });
const db = database.db;
try {
  const acc = (await createAccount(db, { email: 'b@beside.test', checks: 1e9 })).id;
  const proxies = Array.from({ length: N }, (_, i) => parseProxyLine(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:8080`) as ParsedProxy);
  const poolId = 'besideflush0001';
  const settings = { name: 'b', type: 'http' as const, region: 'us1', intervalS: 60, timeoutMs: 2000, https: true, customUrls: [], sources: [] };
  await createPool(db, acc, poolId, { settings, proxies, totalInvalid: 0, totalDuplicates: 0 }, { ...DEFAULT_POOL_LIMITS, maxProxiesPerPool: N, maxProxiesPerAccount: N }, Date.now());
  const lease = (await takeLease(db, { poolId, accountId: acc, nodeId: 'bench', nowMs: Date.now(), leaseMs: 3_600_000, force: true }))!;
  await reserveChecks(db, lease, 1e8, Date.now());
  const rows = await dueProxies(db, poolId, Date.now() + 1e12, N);
  const chunks: ReturnType<typeof batchesOfRows>[] = [];
  for (let i = 0; i < rows.length; i += CHUNK) chunks.push(batchesOfRows(rows.slice(i, i + CHUNK).map((r) => ({ ...r, checks: r.checks + 1, status: 'failed' as const, lastCheckedAt: new Date() }))));
  const modes = ['idle', 'flush'] as const;
  const res = { idle: { reserve: [] as number[], complete: [] as number[], chunk: [] as number[] }, flush: { reserve: [] as number[], complete: [] as number[], chunk: [] as number[] } };
  let k = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of modes) {
      let stop = false;
      const flusher = (async () => {
        let c = 0;
        let seq: number | null = null;
        while (mode === 'flush' && !stop) {
          const ch = chunks[c % chunks.length]!;
          const t = performance.now();
          const nowMs = Date.now();
          const r = await flushChunk(db, lease, { ...ch, settled: CHUNK, leaseUntilMs: nowMs + 3_600_000, batch: { tally: { checked: CHUNK, working: 0, charged: CHUNK }, startedMs: nowMs - 1000, nowMs, seq: c % FIRST_EVERY === 0 ? null : seq } });
          if (r !== null) seq = r;
          c++;
          res.flush.chunk.push(performance.now() - t);
          // as the owner between chunks
          await new Promise<void>((r) => setImmediate(r));
        }
      })();
      const end = performance.now() + MODE_MS;
      await Bun.sleep(100);
      while (performance.now() < end) {
        const runId = `chk-${++k}`;
        let t = performance.now();
        await reserveQuota(db, { accountId: acc, runId, clientJobId: runId, units: 10, now: new Date(), scan: { proxyType: 'http', region: 'us1', timeoutMs: 2000, totalSubmitted: 10, totalProxies: 10 } });
        res[mode].reserve.push(performance.now() - t);
        t = performance.now();
        await finishScan(db, { runId, totalChecked: 10, totalWorking: 10, resultRef: 'bench', result: {}, now: new Date() });
        res[mode].complete.push(performance.now() - t);
        await Bun.sleep(40);
      }
      stop = true;
      await flusher;
    }
  }
  const q = (a: number[], p: number): string => {
    const s = [...a].sort((x, y) => x - y);
    return (s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN).toFixed(1);
  };
  for (const m of modes) {
    const r = res[m];
    console.log(`${m.padEnd(5)} reservation p50 ${q(r.reserve, 0.5)} p90 ${q(r.reserve, 0.9)} p99 ${q(r.reserve, 0.99)} ms | scan closed p50 ${q(r.complete, 0.5)} p90 ${q(r.complete, 0.9)} p99 ${q(r.complete, 0.99)} ms | ${r.reserve.length} checks${m === 'flush' ? ` | ${r.chunk.length} chunks, median ${q(r.chunk, 0.5)} ms` : ''}`);
  }
} finally {
  await database.close();
  await created.drop();
}
