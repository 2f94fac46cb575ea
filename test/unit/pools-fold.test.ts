/** One check result folded into a pooled proxy's row (src/pools/fold.ts). */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { foldCheck, notTried, ppm, type PoolProbeResult } from '../../src/pools/fold';
import { latencyP50, uptime } from '../../src/pools/history';
import { RETRY_NOT_TRIED_S, backoffS } from '../../src/pools/schedule';
import type { PoolProxyRow } from '../../src/pools/shape';

const NOW = Date.UTC(2026, 5, 1, 12);
const fresh: PoolProxyRow = {
  id: 1,
  host: '1.2.3.4',
  port: 80,
  username: '',
  password: '',
  format: 'standard',
  status: 'unchecked',
  failures: 0,
  checks: 0,
  type: 'http',
  protocols: 0,
  anonymity: null,
  https: null,
  origin: null,
  country: null,
  countryName: null,
  location: null,
  isp: null,
  asn: null,
  statusCode: null,
  responseTimeMs: null,
  errorCode: null,
  errorMessage: null,
  latencyP50Ms: null,
  uptimeH24Ppm: null,
  history: null,
  firstSeenAt: new Date(NOW - 1000),
  lastCheckedAt: null,
  lastChangeAt: null,
  nextCheckAt: new Date(NOW - 1000),
};
const ok: PoolProbeResult = { status: 'working', statusCode: 200, responseTimeMs: 150, anonymity: 'anonymous', origin: '5.6.7.8', error: null, https: false };
const bad: PoolProbeResult = { status: 'failed', statusCode: null, responseTimeMs: 3000, anonymity: null, origin: null, error: { code: 'timeout', message: 'slow' } };
const geo = { country: 'FR', country_name: 'France', location: 'Paris', isp: 'Ex', asn: 1, coordinates: null };
const ctx = { poolType: 'http' as const, intervalS: 600, nowMs: NOW, random: () => 0 };

describe('foldCheck', () => {
  test('a first pass: working, no event (the first verdict), the verdict fields, history, due after the interval', () => {
    const f = foldCheck(fresh, ok, geo, ctx);
    expect(f.event).toBeNull();
    expect(f.row).toMatchObject({
      status: 'working',
      failures: 0,
      checks: 1,
      type: 'http',
      protocols: 1,
      anonymity: 'anonymous',
      https: false,
      origin: '5.6.7.8',
      country: 'FR',
      countryName: 'France',
      statusCode: 200,
      responseTimeMs: 150,
      errorCode: null,
      latencyP50Ms: 150,
      uptimeH24Ppm: 1_000_000,
    });
    expect(f.row.lastCheckedAt?.getTime()).toBe(NOW);
    expect(f.row.lastChangeAt?.getTime()).toBe(NOW);
    expect(f.row.nextCheckAt.getTime()).toBe(NOW + 600_000);
    expect(fresh.checks).toBe(0); // the input row is not changed
  });

  test('then a failure: proxy.down, the error, the last passing fields kept, the back-off', () => {
    const up = foldCheck(fresh, ok, geo, ctx).row;
    const f = foldCheck(up, bad, null, { ...ctx, nowMs: NOW + 600_000 });
    expect(f.event).toBe('proxy.down');
    expect(f.row).toMatchObject({ status: 'failed', failures: 1, checks: 2, errorCode: 'timeout', errorMessage: 'slow', country: 'FR', anonymity: 'anonymous', uptimeH24Ppm: 500_000 });
    const again = foldCheck(f.row, bad, null, { ...ctx, nowMs: NOW + 1_200_000 });
    expect(again.event).toBeNull();
    expect(again.row.nextCheckAt.getTime()).toBe(NOW + 1_200_000 + backoffS(600, 2) * 1000);
  });

  test('auto pools: the passing protocols decide type and the mask', () => {
    const f = foldCheck({ ...fresh, type: null }, { ...ok, protocols: ['socks4', 'http'] }, null, { ...ctx, poolType: 'auto' });
    expect(f.row).toMatchObject({ type: 'socks4', protocols: 3 });
  });

  test('checker_overloaded: nothing changes but the due time, soon', () => {
    const f = foldCheck(fresh, { ...bad, error: { code: 'checker_overloaded', message: 'EMFILE' } }, null, ctx);
    expect(f.outcome).toBe('not_tried');
    expect({ ...f.row, nextCheckAt: null }).toEqual({ ...fresh, nextCheckAt: null });
    expect(f.row.nextCheckAt.getTime()).toBe(NOW + RETRY_NOT_TRIED_S * 1000);
  });

  test('notTried (a round cut short) is what checker_overloaded folds to, for any row', () => {
    const worked = foldCheck(fresh, ok, geo, ctx).row;
    for (const row of [fresh, worked]) {
      const over = foldCheck(row, { ...bad, error: { code: 'checker_overloaded', message: 'EMFILE' } }, null, ctx);
      expect(notTried(row, ctx)).toEqual(over);
    }
    // a short interval: its interval, not RETRY_NOT_TRIED_S
    expect(notTried(fresh, { ...ctx, intervalS: 5 }).row.nextCheckAt.getTime()).toBe(NOW + 5000);
  });

  test('property: the stored p50 and uptime are the history read at the check', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 600_000 }), fc.integer({ min: 1, max: 5000 })), { maxLength: 40 }), (steps) => {
        let row = fresh;
        let t = NOW;
        let n = 0;
        for (const [pass, dt, ms] of steps) {
          t += dt;
          row = foldCheck(row, pass ? { ...ok, responseTimeMs: ms } : bad, geo, { ...ctx, nowMs: t }).row;
          expect(row.latencyP50Ms).toBe(latencyP50(row.history, t));
          expect(row.uptimeH24Ppm).toBe(ppm(uptime(row.history, t).h24));
          expect(row.checks).toBe(++n);
        }
      }),
    );
  });
});
