/**
 * Drizzle schema: accounts, API keys (hashes only), the quota ledger, scans
 * (history), the API nodes' leases, the cluster's result documents
 * (result_files + result_chunks, src/results/pg-store.ts) and pools of
 * proxies kept checked (pools, pool_proxies, pool_rounds: src/pools/) and
 * webhooks (webhooks, webhook_messages, webhook_deliveries: src/webhooks/). The SQL
 * in db/migrations is generated from this file with `npm run db:generate`
 * (drizzle-kit) and applied at start-up by db/client.ts.
 *
 * Invariants kept by the database itself: balances never go negative (CHECK),
 * e-mails are unique (stored lower-cased), a key hash is unique, a scan's
 * run id is unique (one scan row per run, never the client's reusable jobId),
 * and the client's jobId (client_job_id) is unique among running scans,
 * across all API nodes.
 *
 * Column `job_id` (quota_ledger, scans) holds the RUN id (JobActor.runId,
 * unique per run); it is mapped to the property `runId` here instead of
 * being renamed by a migration: the column name is the database's history,
 * the property is what the code calls it ("jobId" is only ever the client's).
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  customType,
  bigserial,
  jsonb,
  boolean,
  check,
  index,
  integer,
  pgTable,
  primaryKey,
  real,
  serial,
  smallint,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';

const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow();

export const accounts = pgTable(
  'accounts',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** Always lower-cased by the code that writes it. */
    email: text('email').notNull().unique(),
    rootBalance: bigint('root_balance', { mode: 'number' }).notNull().default(0),
    tempBalance: bigint('temp_balance', { mode: 'number' }).notNull().default(0),
    checksUsed: bigint('checks_used', { mode: 'number' }).notNull().default(0),
    unlimitedPro: boolean('unlimited_pro').notNull().default(false),
    unlimitedUntil: timestamp('unlimited_until', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    check('accounts_root_balance_nonneg', sql`${t.rootBalance} >= 0`),
    check('accounts_temp_balance_nonneg', sql`${t.tempBalance} >= 0`),
    check('accounts_checks_used_nonneg', sql`${t.checksUsed} >= 0`),
  ],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    accountId: uuid('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    /** sha256 hex of the key; the key itself is never stored. */
    keyHash: text('key_hash').notNull().unique(),
    label: text('label'),
    createdAt: createdAt(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, mode: 'date' }),
    revokedAt: timestamp('revoked_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [index('api_keys_account_idx').on(t.accountId)],
);

export const quotaLedger = pgTable(
  'quota_ledger',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    accountId: uuid('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    /** temp_delta + root_delta; negative = spend. */
    delta: bigint('delta', { mode: 'number' }).notNull(),
    tempDelta: bigint('temp_delta', { mode: 'number' }).notNull(),
    rootDelta: bigint('root_delta', { mode: 'number' }).notNull(),
    /** 'signup' | 'top_up' | 'reserve' | 'refund' | 'admin_adjust' (LedgerReason). */
    reason: text('reason').notNull(),
    /** The run id the row belongs to (column job_id: see the header). */
    runId: text('job_id'),
    /** Units of work the row stands for (for an UnlimitedPro reservation delta is 0 but units is not). */
    units: bigint('units', { mode: 'number' }).notNull().default(0),
    /** root + temp after this change. */
    balanceAfter: bigint('balance_after', { mode: 'number' }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index('quota_ledger_account_created_idx').on(t.accountId, t.createdAt),
    index('quota_ledger_job_idx').on(t.runId),
  ],
);

export const scans = pgTable(
  'scans',
  {
    id: serial('id').primaryKey(),
    accountId: uuid('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    /** The run id (JobActor.runId; column job_id: see the header). */
    runId: text('job_id').notNull().unique(),
    proxyType: text('proxy_type').notNull(),
    region: text('region').notNull(),
    timeoutMs: integer('timeout_ms').notNull(),
    totalSubmitted: integer('total_submitted').notNull().default(0),
    totalChecked: integer('total_checked').notNull().default(0),
    totalWorking: integer('total_working').notNull().default(0),
    /** Units reserved for this scan (0 under UnlimitedPro). */
    charged: integer('charged').notNull().default(0),
    /** 'running' | 'completed' | 'failed' (ScanStatus). */
    status: text('status').notNull().default('running'),
    /** Result file id; null until written (and for failed scans). */
    resultRef: text('result_ref'),
    error: text('error'),
    /** = scanned_at in /me. */
    createdAt: createdAt(),
    finishedAt: timestamp('finished_at', { withTimezone: true, mode: 'date' }),
    /**
     * The API node that runs the job (nodes.id; no foreign key: a node's row
     * goes at its clean stop, its scans stay). Null for rows from before
     * leases (treated as having no live owner).
     */
    nodeId: text('node_id'),
    /**
     * The client's jobId (the progress channel's name, docs/API.md); null for
     * a job without one (a generated id). Reusable once the scan has ended.
     */
    clientJobId: text('client_job_id'),
    /**
     * Unique valid proxies of the job (the progress `total`); null for rows
     * from before async jobs (migration 0004).
     */
    totalProxies: integer('total_proxies'),
    /**
     * A completed job's check response, as POST /check answered it (GET
     * /checks/{jobId} serves it with freshly signed links); null until then
     * and for jobs that did not complete.
     */
    result: jsonb('result'),
  },
  (t) => [
    index('scans_account_created_idx').on(t.accountId, t.createdAt.desc()),
    index('scans_status_idx').on(t.status),
    // one running job per client jobId across every API node (409 Job already running)
    // GET /checks/{jobId}: the account's most recent run of a jobId
    index('scans_account_client_job_idx').on(t.accountId, t.clientJobId, t.createdAt.desc()),
    uniqueIndex('scans_running_client_job_id_uq').on(t.clientJobId).where(sql`${t.status} = 'running'`),
    check('scans_counts_nonneg', sql`${t.totalChecked} >= 0 AND ${t.totalWorking} >= 0 AND ${t.charged} >= 0`),
  ],
);

/**
 * API nodes and their leases (src/accounts/nodes.ts): a node registers at
 * start, renews `lease_until` every lease/3 and deletes its row at a clean
 * stop. Times are the database's clock (now()), never a node's. A running
 * scan whose node has no row with `lease_until > now()` is an orphan
 * (src/accounts/orphans.ts).
 */
export const nodes = pgTable('nodes', {
  /** NODE_ID, or generated per start. */
  id: text('id').primaryKey(),
  leaseUntil: timestamp('lease_until', { withTimezone: true, mode: 'date' }).notNull(),
  startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  renewedAt: timestamp('renewed_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  /** The service's version (package.json). */
  version: text('version').notNull(),
  /** Host name and pid of the process, for people reading the table. */
  host: text('host'),
  pid: integer('pid'),
});

/** PostgreSQL `bytea`: Buffer (postgres.js) or Uint8Array (PGlite) on the way out. */
const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => 'bytea' });

/**
 * Finished result documents of a cluster (src/results/pg-store.ts; embedded
 * mode keeps them in DATA_DIR/results and never uses these tables). A row is
 * inserted with all its chunks in one transaction, so a document is there
 * whole or not at all. `last_written` is the database's clock at the upload
 * (what retention compares with its cutoff); `bytes` the document's size.
 */
export const resultFiles = pgTable(
  'result_files',
  {
    /** The result id (src/results/links.ts). */
    id: text('id').primaryKey(),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
    /** How many result_chunks rows hold it (seq 0..chunks-1). */
    chunks: integer('chunks').notNull(),
    lastWritten: timestamp('last_written', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    // the sweep's two orders: by age, and newest first for the byte cap
    index('result_files_last_written_idx').on(t.lastWritten, t.id),
    check('result_files_sizes_nonneg', sql`${t.bytes} >= 0 AND ${t.chunks} >= 0`),
  ],
);

/** The bytes of a result document, in order of `seq`, about 1 MiB each; they go with their result_files row. */
export const resultChunks = pgTable(
  'result_chunks',
  {
    resultId: text('result_id')
      .notNull()
      .references(() => resultFiles.id, { onDelete: 'cascade' }),
    seq: integer('seq').notNull(),
    data: bytea('data').notNull(),
  },
  (t) => [primaryKey({ columns: [t.resultId, t.seq] })],
);

// ---- pools: proxies kept checked (DECISIONS "Pools"; src/pools/) -------------------------

/** A rule of `customUrls` as /check takes it (src/probe/types.ts CustomUrlRule; db/ sees no src/). */
export interface PoolCustomUrl {
  url: string;
  requiredStatusCodes: number[];
  requiredText?: string;
  caseSensitive: boolean;
}

/** A list URL a pool follows (src/pools/types.ts PoolSource, stored in the API's snake_case), with its fetch state (src/pools/sources-sql.ts). */
export interface PoolSourceJson {
  url: string;
  every_s: number;
  /** ISO time of the next fetch; absent: at once */
  next_fetch_at?: string;
  /** the last fetch's outcome (src/pools/shape.ts SourceFetchOutcome) */
  last_fetch?: Record<string, unknown>;
}

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

/**
 * One row per pool: its settings (what POST /pools set, PATCH changes), its
 * state, and `round_seq`, the number of its last round (the ledger's job
 * reference of a round: src/pools/round.ts roundJobId). Deleting the account
 * deletes its pools; deleting a pool deletes its proxies and rounds.
 */
export const pools = pgTable(
  'pools',
  {
    id: text('id').primaryKey(),
    accountId: uuid('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** 'http' | 'socks4' | 'socks5' | 'auto' */
    type: text('type').notNull(),
    region: text('region').notNull(),
    intervalS: integer('interval_s').notNull(),
    timeoutMs: integer('timeout_ms').notNull(),
    https: boolean('https').notNull().default(true),
    customUrls: jsonb('custom_urls').$type<PoolCustomUrl[]>().notNull().default(sql`'[]'::jsonb`),
    sources: jsonb('sources').$type<PoolSourceJson[]>().notNull().default(sql`'[]'::jsonb`),
    /** 'active' | 'paused' */
    state: text('state').notNull().default('active'),
    /** null | 'insufficient_checks' | 'owner' (null while active) */
    pausedReason: text('paused_reason'),
    roundSeq: bigint('round_seq', { mode: 'number' }).notNull().default(0),
    createdAt: at('created_at').notNull().defaultNow(),
    updatedAt: at('updated_at').notNull().defaultNow(),
    lastRoundAt: at('last_round_at'),
  },
  (t) => [
    index('pools_account_created_idx').on(t.accountId, t.createdAt),
    check('pools_state_valid', sql`${t.state} IN ('active', 'paused')`),
    check('pools_interval_positive', sql`${t.intervalS} > 0`),
  ],
);

/**
 * One row per pooled proxy: what changes rarely (migration 0006 split the
 * state that changes on every check into pool_proxy_state):
 * - the address (host as the parser gives it; username and password '' when
 *   there are none; `format` as submitted, for `txt`), `first_seen_at`;
 * - the fields of the last passing check (src/pools/shape.ts): `type`,
 *   `protocols` (a bit mask: http 1, socks4 2, socks5 4), anonymity, https,
 *   origin and geo. The pool's owner (src/jobs/pool-actor.ts) rewrites them
 *   only when a check changed one of them.
 * `id` is a bigserial: the keyset's tie-breaker (src/pools/cursor.ts) and the
 * state row's key. Indexes: the address is unique per pool (adding a proxy
 * twice is a no-op); nothing else: sorted pages come from the owner's memory
 * (src/pools/proxy-page.ts), from this copy only when no owner is alive.
 */
export const poolProxies = pgTable(
  'pool_proxies',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    poolId: text('pool_id')
      .notNull()
      .references(() => pools.id, { onDelete: 'cascade' }),
    host: text('host').notNull(),
    port: integer('port').notNull(),
    username: text('username').notNull().default(''),
    password: text('password').notNull().default(''),
    /** 'standard' | 'url_auth' | 'colon_auth' */
    format: text('format').notNull().default('standard'),
    type: text('type'),
    protocols: smallint('protocols').notNull().default(0),
    anonymity: text('anonymity'),
    https: boolean('https'),
    origin: text('origin'),
    country: text('country'),
    countryName: text('country_name'),
    location: text('location'),
    isp: text('isp'),
    asn: integer('asn'),
    firstSeenAt: at('first_seen_at').notNull().defaultNow(),
    /** The protocol its line's scheme named (DECISIONS "Mixed lists": checked as that); '' none: the pool's type. Part of its identity. */
    protocol: text('protocol').notNull().default(''),
  },
  (t) => [
    uniqueIndex('pool_proxies_address_uq').on(t.poolId, t.host, t.port, t.username, t.password, t.protocol),
    check('pool_proxies_port_valid', sql`${t.port} BETWEEN 1 AND 65535`),
  ],
);

/**
 * The narrow state of a pooled proxy that changes on every check, written by
 * the pool's owner in batches (src/pools/flush-sql.ts): the last verdict and
 * the schedule (`status`, `failures` consecutive, `checks`, the last check's
 * status code, response time and error, `next_check_at`), `history`
 * (src/pools/history.ts, 153 bytes) and, read from it at the last check,
 * `latency_p50_ms` and `uptime_h24_ppm` (parts per million), which the
 * proxies query filters and sorts on. Only the primary key is indexed and it
 * never changes, so every batch write is a HOT update; the table is created
 * with fillfactor 50 (migration 0006) so the new row version fits its page.
 * The view pool_proxy_rows (migration 0006) joins it to pool_proxies under
 * the columns of a whole row (src/pools/shape.ts rowFromSql).
 */
export const poolProxyState = pgTable(
  'pool_proxy_state',
  {
    proxyId: bigint('proxy_id', { mode: 'number' })
      .primaryKey()
      .references(() => poolProxies.id, { onDelete: 'cascade' }),
    /** 'unchecked' | 'working' | 'failed' */
    status: text('status').notNull().default('unchecked'),
    failures: integer('failures').notNull().default(0),
    checks: integer('checks').notNull().default(0),
    statusCode: integer('status_code'),
    responseTimeMs: real('response_time_ms'),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    latencyP50Ms: integer('latency_p50_ms'),
    uptimeH24Ppm: integer('uptime_h24_ppm'),
    history: bytea('history'),
    lastCheckedAt: at('last_checked_at'),
    lastChangeAt: at('last_change_at'),
    nextCheckAt: at('next_check_at').notNull().defaultNow(),
  },
  (t) => [check('pool_proxy_state_status_valid', sql`${t.status} IN ('unchecked', 'working', 'failed')`)],
);

/**
 * A pooled proxy's state of each of its pool's targets (DECISIONS "Targets
 * in pools"; src/pools/target-columns.ts): whether the last fetch of the
 * target through it passed, the status seen, its response time and time,
 * and the hourly counters of its 24-hour uptime (`hour_at` the newest
 * hour, `hours` 48 bytes: checks then passes). A row only once the target
 * was fetched through the proxy; written by the owner's flushes with the
 * proxy's state row, HOT like it (fillfactor 50, migration 0008), and
 * deleted for names the pool no longer has when its customUrls change.
 */
export const poolProxyTargets = pgTable(
  'pool_proxy_targets',
  {
    proxyId: bigint('proxy_id', { mode: 'number' })
      .notNull()
      .references(() => poolProxies.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    ok: boolean('ok').notNull(),
    status: integer('status'),
    responseTimeMs: real('response_time_ms'),
    lastCheckedAt: at('last_checked_at'),
    hourAt: integer('hour_at').notNull(),
    hours: bytea('hours').notNull(),
  },
  (t) => [primaryKey({ columns: [t.proxyId, t.name] })],
);

/**
 * The API nodes whose pool owner runs (POOL_ROUNDS, a cluster): each renews
 * its row every half of a pool lease; the live ones are the candidates of
 * the pools' placement (src/pools/placement.ts: rendezvous hashing), so a
 * node that owns no pools is never given one.
 */
export const poolOwners = pgTable('pool_owners', {
  nodeId: text('node_id').primaryKey(),
  expiresAt: at('expires_at').notNull(),
});

/**
 * Who owns a pool now (DECISIONS "Pools are actors"): one row per owned
 * pool, the owner's node, its fencing `token` (a new, larger one at every
 * take-over) and `expires_at` (renewed by every flush). Every flush of the
 * pool's state conditions on the token in its transaction, so an owner that
 * lost the lease writes and charges nothing. `run_id` is the ledger's job
 * reference of the owner's reservation (`pool:<id>:<token>`), `settled` the
 * checks made durable under it: at a take-over, a start or a deletion the
 * reservation's outstanding units beyond `settled` are refunded. No foreign
 * key: a deleted pool's row stays until its reservation is settled.
 */
export const poolLeases = pgTable('pool_leases', {
  poolId: text('pool_id').primaryKey(),
  nodeId: text('node_id').notNull(),
  token: bigint('token', { mode: 'number' }).notNull(),
  expiresAt: at('expires_at').notNull(),
  runId: text('run_id').notNull(),
  settled: bigint('settled', { mode: 'number' }).notNull().default(0),
});

/**
 * One row per durable batch of a pool (a flush of its owner: its planned,
 * checked, working and charged counts): the pool object's `checks_last_24h` and the dashboard's
 * working-over-time chart. Rows older than 7 days are the retention sweep's.
 */
export const poolRounds = pgTable(
  'pool_rounds',
  {
    poolId: text('pool_id')
      .notNull()
      .references(() => pools.id, { onDelete: 'cascade' }),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    startedAt: at('started_at').notNull(),
    finishedAt: at('finished_at'),
    planned: integer('planned').notNull(),
    checked: integer('checked').notNull().default(0),
    working: integer('working').notNull().default(0),
    charged: integer('charged').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.poolId, t.seq] }), index('pool_rounds_pool_started_idx').on(t.poolId, t.startedAt)],
);

/**
 * Webhooks (DECISIONS "Webhooks"; src/webhooks/): an account's endpoints,
 * the outbox of messages and one delivery per (message, endpoint).
 *
 * `secret_sealed` is the signing secret sealed with a key derived from
 * RESULT_SECRET (src/webhooks/seal.ts: AES-256-GCM): a dump of the database
 * alone does not hand it out. `pools` null: all of the account's pools,
 * future ones too. `last_success_at` / `failing_since` drive the disable rule
 * (3 days of attempts with no success).
 */
export const webhooks = pgTable(
  'webhooks',
  {
    id: text('id').primaryKey(),
    accountId: uuid('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    events: text('events').array().notNull(),
    pools: text('pools').array(),
    /** 'enabled' | 'disabled' */
    state: text('state').notNull().default('enabled'),
    disabledReason: text('disabled_reason'),
    secretSealed: text('secret_sealed').notNull(),
    createdAt: at('created_at').notNull().defaultNow(),
    updatedAt: at('updated_at').notNull().defaultNow(),
    lastSuccessAt: at('last_success_at'),
    failingSince: at('failing_since'),
  },
  (t) => [index('webhooks_account_created_idx').on(t.accountId, t.createdAt), check('webhooks_state_valid', sql`${t.state} IN ('enabled', 'disabled')`)],
);

/** The outbox: one row per event message; `id` is the `webhook-id` every attempt of it carries. */
export const webhookMessages = pgTable(
  'webhook_messages',
  {
    id: text('id').primaryKey(),
    accountId: uuid('account_id')
      .notNull()
      .references(() => accounts.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    payload: jsonb('payload').notNull(),
    createdAt: at('created_at').notNull().defaultNow(),
  },
  (t) => [index('webhook_messages_created_idx').on(t.createdAt)],
);

/**
 * One message to one endpoint: its state, its attempts (`[{at, status,
 * error, duration_ms}]`, newest last), when it is due, and who holds it
 * (`claimed_by` until `claim_until`: a node that dies mid-attempt loses it
 * at the claim's expiry, and another node sends it).
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    messageId: text('message_id')
      .notNull()
      .references(() => webhookMessages.id, { onDelete: 'cascade' }),
    webhookId: text('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    /** 'pending' | 'delivered' | 'failed' */
    state: text('state').notNull().default('pending'),
    attempts: jsonb('attempts').notNull().default(sql`'[]'::jsonb`),
    attemptCount: integer('attempt_count').notNull().default(0),
    nextAttemptAt: at('next_attempt_at').notNull().defaultNow(),
    claimedBy: text('claimed_by'),
    claimUntil: at('claim_until'),
    createdAt: at('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_message_webhook_uq').on(t.messageId, t.webhookId),
    index('webhook_deliveries_pending_idx').on(t.webhookId, t.nextAttemptAt).where(sql`${t.state} = 'pending'`),
    index('webhook_deliveries_webhook_created_idx').on(t.webhookId, t.createdAt.desc()),
    check('webhook_deliveries_state_valid', sql`${t.state} IN ('pending', 'delivered', 'failed')`),
  ],
);

/**
 * The runs of checks submitted async (`Prefer: respond-async`), marked at
 * their reservation: whoever closes the scan (the job's settlement, or the
 * orphan sweep when its node died) writes check.completed and removes the
 * mark in the same transaction (src/webhooks/outbox-sql.ts).
 */
export const webhookAsyncRuns = pgTable('webhook_async_runs', {
  runId: text('run_id').primaryKey(),
  createdAt: at('created_at').notNull().defaultNow(),
});

export type AccountRow = typeof accounts.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type LedgerRow = typeof quotaLedger.$inferSelect;
export type ScanRow = typeof scans.$inferSelect;
export type NodeRow = typeof nodes.$inferSelect;
export type PoolRowDb = typeof pools.$inferSelect;
export type WebhookRowDb = typeof webhooks.$inferSelect;
