/**
 * The verdicts the pool benchmarks give a pool's proxies, as the rounds will
 * fold them (src/pools/fold.ts): 60 % working (40..2 040 ms, elite, https;
 * 30 % of those in DE, the rest in US), the others timed out. `random` is
 * the benchmark's seeded generator, so runs are alike.
 */
import { foldCheck } from '../src/pools/fold';
import type { Random } from '../src/pools/schedule';
import type { PoolProxyRow } from '../src/pools/shape';

export function benchVerdict(r: PoolProxyRow, random: Random, nowMs: number): PoolProxyRow {
  const working = random() < 0.6;
  return foldCheck(
    r,
    working
      ? { status: 'working', statusCode: 200, responseTimeMs: 40 + random() * 2000, anonymity: 'elite', origin: r.host, error: null, https: true }
      : { status: 'failed', statusCode: null, responseTimeMs: 5000, anonymity: null, origin: null, error: { code: 'timeout', message: 'timed out' } },
    working ? { country: random() < 0.3 ? 'DE' : 'US', country_name: null, location: null, isp: 'Example', asn: 64500, coordinates: null } : null,
    { poolType: 'http', intervalS: 300, nowMs, random },
  ).row;
}
