/**
 * Drizzle schema: accounts, API keys (hashes only), the quota ledger, scans
 * (history), the API nodes' leases and the cluster's result documents
 * (result_files + result_chunks, src/results/pg-store.ts). The SQL in db/migrations is generated from this file with
 * `npx drizzle-kit generate` and applied at start-up by db/client.ts.
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
  serial,
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

export type AccountRow = typeof accounts.$inferSelect;
export type ApiKeyRow = typeof apiKeys.$inferSelect;
export type LedgerRow = typeof quotaLedger.$inferSelect;
export type ScanRow = typeof scans.$inferSelect;
export type NodeRow = typeof nodes.$inferSelect;
