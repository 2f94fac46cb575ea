/**
 * Verdicts for a pool's proxies without the scheduling side: each proxy's
 * checks are folded as the rounds will fold them (src/pools/fold.ts) and
 * written with the store's one-statement batch write (applyResults), so the
 * routes, the CLI and the dashboard can be tested on working, failed and
 * unchecked proxies with history (uptime, latency) behind them.
 *
 * `plan(row, i)` gives the results of proxy i (oldest first, one per
 * `stepMs`, the last at `nowMs`), or null to leave it unchecked.
 */
import type { Db } from '../../db/client';
import type { GeoInfo } from '../../src/geo/geo';
import { foldCheck, type PoolProbeResult } from '../../src/pools/fold';
import { applyResults, dueProxies } from '../../src/pools/store';
import type { PoolProxyRow } from '../../src/pools/shape';
import type { CheckType } from '../../src/proxy/types';

export interface SeedCheck {
  probe: PoolProbeResult;
  geo?: GeoInfo | null;
}

export const working = (responseTimeMs: number, over: Partial<PoolProbeResult> = {}): PoolProbeResult => ({
  status: 'working',
  statusCode: 200,
  responseTimeMs,
  anonymity: 'elite',
  origin: '203.0.113.1',
  error: null,
  ...over,
});

export const failed = (code: 'timeout' | 'connect_refused' = 'timeout'): PoolProbeResult => ({
  status: 'failed',
  statusCode: null,
  responseTimeMs: 5000,
  anonymity: null,
  origin: null,
  error: { code, message: code === 'timeout' ? 'no answer within the timeout' : 'connection refused' },
});

export async function seedVerdicts(
  db: Db,
  poolId: string,
  o: { poolType: CheckType; intervalS: number; nowMs: number; stepMs?: number; plan: (row: PoolProxyRow, i: number) => SeedCheck[] | null },
): Promise<void> {
  // every proxy of the pool, whenever due (ten years on)
  const rows = await dueProxies(db, poolId, o.nowMs + 10 * 365 * 86_400_000, 100_000);
  const step = o.stepMs ?? 3_600_000;
  const out: PoolProxyRow[] = [];
  rows.forEach((row, i) => {
    const checks = o.plan(row, i);
    if (checks === null || checks.length === 0) return;
    let r = row;
    checks.forEach((c, k) => {
      const nowMs = o.nowMs - (checks.length - 1 - k) * step;
      r = foldCheck(r, c.probe, c.geo ?? null, { poolType: o.poolType, intervalS: o.intervalS, nowMs, random: () => 0.5 }).row;
    });
    out.push(r);
  });
  await applyResults(db, poolId, out);
}
