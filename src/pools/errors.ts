/**
 * The pools' domain errors. The pool store (store.ts) and the pure limit
 * check (limits.ts checkPoolLimits) throw them; src/http/errors.ts alone
 * turns them into statuses and the contract's bodies (429 for pools per
 * account, 413 for proxies per pool and per account), as for the job layer's.
 *
 * Code (src/error-codes.ts): pool_limit, a change would pass one of the
 * pools' limits (`limit` names which, `max` is its value); nothing was written.
 */
import { DOMAIN_ERROR_CODES } from '../error-codes';
import { ServiceError } from '../errors';

/** The limits of DECISIONS "Pools" (configurable: PoolLimits). */
export type PoolLimitName = 'pools_per_account' | 'proxies_per_pool' | 'proxies_per_account';

export class PoolLimitError extends ServiceError {
  constructor(
    readonly limit: PoolLimitName,
    readonly max: number,
  ) {
    super(DOMAIN_ERROR_CODES.POOL_LIMIT, `the change would pass the ${limit} limit (${max})`);
    this.name = 'PoolLimitError';
  }
}
