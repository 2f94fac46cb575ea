/**
 * The probe pool's error codes. The pool rejects only with a ServiceError
 * (src/errors.ts) carrying one of these stable codes; callers branch on the
 * code (errorCode), never on a class, so the pool has no error class of its
 * own.
 */
export const POOL_ERROR_CODES = Object.freeze({
  workerLoadFailed: 'pool_worker_load_failed',
  startTimeout: 'pool_start_timeout',
  workerFailed: 'pool_worker_failed',
  callbackFailed: 'pool_callback_failed',
  badShard: 'pool_bad_shard',
  closed: 'pool_closed',
} as const);
export type PoolErrorCode = (typeof POOL_ERROR_CODES)[keyof typeof POOL_ERROR_CODES];
