/**
 * Every stable error code of the house: one table per layer (docs/DESIGN.md
 * "Layers"), each code defined once, in the table of the lowest layer that
 * throws it. A ServiceError (src/errors.ts) and its subclasses are made with
 * a code from these tables, never with a string literal; callers branch on
 * the same constants (isServiceError(err, TABLE.CODE)). History rows keep the
 * code, the log shows it, the HTTP layer maps some of them
 * (src/http/errors.ts): renaming a value is a breaking change.
 *
 * One casing: a key is its value in capitals (SHARD_FAILED: 'shard_failed'),
 * so the code seen in a log line is the constant to search for
 * (test/unit/error-codes.test.ts checks this and that no value repeats).
 *
 * Made elsewhere, by rule rather than by table: `internal` (errorCode's
 * answer for a thrown value without a code, src/errors.ts), `http_<status>`
 * (ApiError, src/http/api-errors.ts), and the codes of Node's system errors
 * (ECONNRESET, ...), which errorCode passes through.
 *
 * The probe's outcome codes (timeout, connect_refused, ...) are data, not
 * errors: PROBE_ERROR_CODES in src/probe/types.ts.
 */

/** The database driver (db/). */
export const DB_ERROR_CODES = Object.freeze({
  /** the embedded or PostgreSQL database could not be opened */
  DB_OPEN_FAILED: 'db_open_failed',
  /** the embedded database's thread is gone (it crashed, or the database was closed): its statements cannot run */
  DB_THREAD_EXITED: 'db_thread_exited',
} as const);

/** Leaves: configuration, secrets, geo data, the state-machine helper (src/config.ts, src/secrets.ts, src/geo/, src/state-machine.ts). */
export const LEAF_ERROR_CODES = Object.freeze({
  /** a bad environment value (ConfigError) */
  CONFIG_INVALID: 'config_invalid',
  /** a secret file in DATA_DIR cannot be read, written or is too short */
  SECRET_UNREADABLE: 'secret_unreadable',
  /** a geo data package or file is not installed */
  GEO_DATA_MISSING: 'geo_data_missing',
  /** a geo database or the ASN CSV cannot be read */
  GEO_BAD_DATA: 'geo_bad_data',
  /** the compact ASN table is malformed */
  GEO_BAD_ASN_DATA: 'geo_bad_asn_data',
  /** an MMDB file is malformed (src/geo/mmdb.ts) */
  GEO_BAD_MMDB: 'geo_bad_mmdb',
  /** a bug: a state machine refused a move (src/state-machine.ts; every machine of the house) */
  ILLEGAL_TRANSITION: 'illegal_transition',
} as const);

/** Domain: accounts, results, the judge, the probe workers, pools, the gateway (src/accounts, src/results, src/judge, src/probe/workers, src/pools, src/gateway). */
export const DOMAIN_ERROR_CODES = Object.freeze({
  // accounts (AccountError, src/accounts/errors.ts)
  /** an account operation's input is invalid */
  INVALID_INPUT: 'invalid_input',
  ACCOUNT_EXISTS: 'account_exists',
  ACCOUNT_NOT_FOUND: 'account_not_found',
  KEY_NOT_FOUND: 'key_not_found',
  KEY_EXISTS: 'key_exists',
  /** this API node's lease is not live: nothing reserved, no new check (src/accounts/quota.ts, src/jobs/node-lease.ts) */
  NODE_LEASE_LOST: 'node_lease_lost',
  /** the client's jobId is running (on any node): nothing reserved (JobAlreadyRunningError in the job layer) */
  JOB_ALREADY_RUNNING: 'job_already_running',

  // pools (PoolLimitError, src/pools/errors.ts)
  /** a pool change would pass a limit (pools per account, proxies per pool or per account): nothing written */
  POOL_LIMIT: 'pool_limit',
  /** a pool's owner found another token on its lease: it wrote and charged nothing, and stops (src/jobs/pool-durable.ts) */
  POOL_LEASE_LOST: 'pool_lease_lost',

  // result files and their store
  RESULT_BAD_ID: 'result_bad_id',
  RESULT_READ_FAILED: 'result_read_failed',
  RESULT_WRITE_FAILED: 'result_write_failed',
  RESULT_STORE_CLOSED: 'result_store_closed',
  RESULT_STORE_BAD_OPTION: 'result_store_bad_option',
  /** the writer was aborted (its job failed or was cancelled) */
  WRITER_ABORTED: 'writer_aborted',
  /** the writer was used after it finished */
  WRITER_CLOSED: 'writer_closed',
  /** a spill file write made no progress */
  SPILL_NO_PROGRESS: 'spill_no_progress',
  /** a spill file is shorter than what was written to it */
  SPILL_SHORT: 'spill_short',
  /** a proxy was folded without any sample (src/results/samples.ts) */
  SAMPLES_EMPTY: 'samples_empty',
  /** a custom URL result names a proxy or URL outside the job */
  CUSTOM_URL_RESULT_OUT_OF_RANGE: 'custom_url_result_out_of_range',
  // the result file read back for export (src/results/result-json.ts)
  EXPORT_BAD_RECORD: 'export_bad_record',
  EXPORT_BAD_FILE: 'export_bad_file',
  EXPORT_TRUNCATED: 'export_truncated',
  // signed result links (src/results/links.ts)
  LINK_BAD_RESULT_ID: 'link_bad_result_id',
  LINK_BAD_EXPIRY: 'link_bad_expiry',
  LINK_BAD_EXT: 'link_bad_ext',
  LINK_NO_SECRET: 'link_no_secret',
  LINK_NOW_IN_MS: 'link_now_in_ms',

  // the judge
  JUDGE_CERT_INVALID: 'judge_cert_invalid',
  JUDGE_URL_INVALID: 'judge_url_invalid',
  /** the TLS judge presents another certificate than the pinned one */
  JUDGE_TLS_MISMATCH: 'judge_tls_mismatch',
  /** this process cannot reach its judge (src/judge/calibrate.ts) */
  CALIBRATION_FAILED: 'calibration_failed',
  /** the judge's TLS thread did not start (src/judge/tls-judge-thread.ts) */
  JUDGE_THREAD_FAILED: 'judge_thread_failed',

  // the probe workers (src/probe/workers): they reject only with these
  WORKER_LOAD_FAILED: 'worker_load_failed',
  WORKERS_START_TIMEOUT: 'workers_start_timeout',
  /** a probe thread died: its lane's shards fail */
  WORKER_FAILED: 'worker_failed',
  /** a shard's onResults threw */
  WORKERS_CALLBACK_FAILED: 'workers_callback_failed',
  WORKERS_BAD_SHARD: 'workers_bad_shard',
  WORKERS_CLOSED: 'workers_closed',
  /** a task's host contains a line break (src/probe/workers/packed-tasks.ts) */
  PACK_BAD_HOST: 'pack_bad_host',
} as const);

/** Jobs: the job layer, the cluster's adapters, the admin services (src/jobs, src/cluster, src/admin). */
export const JOB_ERROR_CODES = Object.freeze({
  /** the reservation was refused (nothing charged) */
  INSUFFICIENT_QUOTA: 'insufficient_quota',
  /** the account is at a per-account limit (running checks, proxies in flight); nothing reserved */
  RATE_LIMITED: 'rate_limited',
  /** the service stops: no new checks; running ones are cancelled */
  SHUTTING_DOWN: 'shutting_down',
  /** the client closed the connection: its job is cancelled */
  CLIENT_DISCONNECTED: 'client_disconnected',
  /** the client cancelled its job (DELETE /checks/{jobId}): the probes made are paid, the rest refunded */
  CLIENT_CANCELLED: 'client_cancelled',
  /** a cluster region has no live agent: refused before anything is reserved */
  REGION_UNAVAILABLE: 'region_unavailable',
  /** anything else that failed a job (logged with its cause where it happened) */
  JOB_FAILED: 'job_failed',
  /** a probe shard failed (its cause says why) */
  SHARD_FAILED: 'shard_failed',
  /** a shard ended without reporting every probe */
  SHARD_INCOMPLETE: 'shard_incomplete',
  /** starting a granted shard threw */
  DISPATCH_FAILED: 'dispatch_failed',

  // a pool's list URLs (src/jobs/source-fetch.ts): a fetch's outcome, shown in the pool object's `sources[].last_fetch.error`
  /** the list's host is (or resolves to) a private, loopback or reserved address, at any hop (ALLOW_PRIVATE_TARGETS) */
  SOURCE_BLOCKED_TARGET: 'source_blocked_target',
  /** the list's host did not resolve */
  SOURCE_DNS_FAILED: 'source_dns_failed',
  /** the whole fetch (redirects included) took longer than POOL_SOURCE_TIMEOUT_MS */
  SOURCE_TIMEOUT: 'source_timeout',
  /** the body is larger than POOL_SOURCE_MAX_BYTES */
  SOURCE_TOO_LARGE: 'source_too_large',
  /** more redirects than a fetch follows */
  SOURCE_TOO_MANY_REDIRECTS: 'source_too_many_redirects',
  /** a redirect to something else than an http(s) URL */
  SOURCE_BAD_REDIRECT: 'source_bad_redirect',
  /** the list answered another status than 2xx (or 3xx with a Location) */
  SOURCE_HTTP_STATUS: 'source_http_status',
  /** the connection or TLS failed */
  SOURCE_FETCH_FAILED: 'source_fetch_failed',

  // the region scheduler (src/jobs/scheduler.ts): each is a caller's bug
  SCHEDULER_BAD_COUNT: 'scheduler_bad_count',
  SCHEDULER_BAD_OPTION: 'scheduler_bad_option',
  SCHEDULER_OVER_RELEASE: 'scheduler_over_release',
  SCHEDULER_JOB_CANCELLED: 'scheduler_job_cancelled',
  SCHEDULER_NO_CAPACITY: 'scheduler_no_capacity',

  // the cluster (src/cluster)
  /** a cluster shard was run without its job and region */
  CLUSTER_NO_CONTEXT: 'cluster_no_context',
  /** a NATS message does not decode (src/cluster/protocol.ts) */
  CLUSTER_MESSAGE_INVALID: 'cluster_message_invalid',

  // the data dir's lock and the admin command's arguments (src/admin)
  /** another live process holds the data dir (LockError) */
  DATA_DIR_LOCKED: 'data_dir_locked',
  DATA_DIR_LOCK_FAILED: 'data_dir_lock_failed',
  DATA_DIR_PATH_TOO_LONG: 'data_dir_path_too_long',
  /** bad admin arguments (UsageError) */
  USAGE: 'usage',
} as const);

/** HTTP: the API, the dashboard (src/http, src/web). Contract errors are ApiError's `http_<status>`. */
export const HTTP_ERROR_CODES = Object.freeze({
  /** result routes (or a service) without a result-link secret */
  RESULT_SECRET_MISSING: 'result_secret_missing',
  /** the dashboard's browser bundle failed to build */
  BUNDLE_FAILED: 'bundle_failed',
} as const);

/** Entry points: the service's composition root, the admin command, the proxycheck CLI. */
export const ENTRY_ERROR_CODES = Object.freeze({
  /** an API node of a cluster without RESULT_SECRET and ADMIN_TOKEN */
  CLUSTER_SECRETS_MISSING: 'cluster_secrets_missing',
  /** a listener's port (PORT, ADMIN_PORT, JUDGE_TLS_PORT, GATEWAY_PORT) is held by another process (src/compose/bind.ts) */
  PORT_IN_USE: 'port_in_use',
  /** a start step read what a later one makes (the public URLs before the listener is bound, the judge before its start): a bug */
  URLS_NOT_BOUND: 'urls_not_bound',
  JUDGE_NOT_STARTED: 'judge_not_started',

  // the admin command (src/admin/cli.ts)
  ADMIN_SERVER_UNREACHABLE: 'admin_server_unreachable',
  ADMIN_REQUEST_REFUSED: 'admin_request_refused',
  /** DATA_DIR holds no database, or DATABASE_URL does not answer or holds none of the service's tables (the admin command never creates one) */
  ADMIN_NO_DATABASE: 'admin_no_database',
  /** the data dir is held by a process that publishes no admin URL */
  DATA_DIR_BUSY: 'data_dir_busy',

  // the proxycheck CLI (src/cli, CliError with its exit code)
  CLI_USAGE: 'cli_usage',
  CLI_AUTH: 'cli_auth',
  CLI_NO_KEY: 'cli_no_key',
  CLI_QUOTA: 'cli_quota',
  CLI_REQUEST_REFUSED: 'cli_request_refused',
  CLI_SERVER_ERROR: 'cli_server_error',
  CLI_TIMEOUT: 'cli_timeout',
  CLI_NETWORK: 'cli_network',
  CLI_NO_RESULT: 'cli_no_result',
  CLI_INTERRUPTED: 'cli_interrupted',
  /** a followed check job ended failed or cancelled (src/cli/job-follow.ts) */
  CLI_JOB_FAILED: 'cli_job_failed',
  /** `pool gateway` asked a service that runs no gateway (no GATEWAY_PORT: /health has no `gateway`) */
  CLI_NO_GATEWAY: 'cli_no_gateway',
  CLI_INTERNAL: 'cli_internal',
  CLI_INPUT_UNREADABLE: 'cli_input_unreadable',
  CLI_OUT_UNWRITABLE: 'cli_out_unwritable',
  CLI_CONFIG_INVALID: 'cli_config_invalid',
  CLI_CONFIG_UNREADABLE: 'cli_config_unreadable',
  CLI_CONFIG_UNWRITABLE: 'cli_config_unwritable',
} as const);

/** Every table, lowest layer first (test/unit/error-codes.test.ts reads them all). */
export const ERROR_CODE_TABLES = Object.freeze({
  db: DB_ERROR_CODES,
  leaves: LEAF_ERROR_CODES,
  domain: DOMAIN_ERROR_CODES,
  jobs: JOB_ERROR_CODES,
  http: HTTP_ERROR_CODES,
  entry: ENTRY_ERROR_CODES,
} as const);

type Values<T> = T[keyof T];
export type DomainErrorCode = Values<typeof DOMAIN_ERROR_CODES>;
export type JobErrorCode = Values<typeof JOB_ERROR_CODES>;
