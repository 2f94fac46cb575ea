/** The pools' limits (src/pools/limits.ts checkPoolLimits): which limit counts after a change pass, in which order. */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { PoolLimitError } from '../../src/pools/errors';
import { checkPoolLimits, DEFAULT_POOL_LIMITS } from '../../src/pools/limits';

const L = { ...DEFAULT_POOL_LIMITS, maxPoolsPerAccount: 2, maxProxiesPerPool: 3, maxProxiesPerAccount: 5 };

function limitOf(f: () => void): string | null {
  try {
    f();
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(PoolLimitError);
    return `${(e as PoolLimitError).limit}:${(e as PoolLimitError).max}`;
  }
}

describe('checkPoolLimits', () => {
  test('at each limit passes; one above fails, naming the limit and its value', () => {
    expect(limitOf(() => checkPoolLimits({ pools: 2, proxies: 5, inPool: 3 }, L))).toBeNull();
    expect(limitOf(() => checkPoolLimits({ pools: 3, proxies: 0, inPool: 0 }, L))).toBe('pools_per_account:2');
    expect(limitOf(() => checkPoolLimits({ pools: 1, proxies: 4, inPool: 4 }, L))).toBe('proxies_per_pool:3');
    expect(limitOf(() => checkPoolLimits({ pools: 2, proxies: 6, inPool: 3 }, L))).toBe('proxies_per_account:5');
  });

  test('order: pools first, then the pool, then the account', () => {
    expect(limitOf(() => checkPoolLimits({ pools: 9, proxies: 9, inPool: 9 }, L))).toBe('pools_per_account:2');
    expect(limitOf(() => checkPoolLimits({ pools: 1, proxies: 9, inPool: 9 }, L))).toBe('proxies_per_pool:3');
  });

  test('property: passes exactly when every count is within its limit', () => {
    fc.assert(
      fc.property(fc.nat(6), fc.nat(10), fc.nat(6), (pools, proxies, inPool) => {
        const ok = pools <= 2 && inPool <= 3 && proxies <= 5;
        expect(limitOf(() => checkPoolLimits({ pools, proxies, inPool }, L)) === null).toBe(ok);
      }),
    );
  });
});
