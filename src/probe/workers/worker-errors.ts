/**
 * The probe workers' error codes. ProbeWorkers rejects only with a
 * ServiceError (src/errors.ts) carrying one of these stable codes; callers
 * branch on the code (errorCode), never on a class, so the workers have no
 * error class of their own.
 */
export const WORKER_ERROR_CODES = Object.freeze({
  workerLoadFailed: 'worker_load_failed',
  startTimeout: 'workers_start_timeout',
  workerFailed: 'worker_failed',
  callbackFailed: 'workers_callback_failed',
  badShard: 'workers_bad_shard',
  closed: 'workers_closed',
} as const);
export type WorkerErrorCode = (typeof WORKER_ERROR_CODES)[keyof typeof WORKER_ERROR_CODES];
