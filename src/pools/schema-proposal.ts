/**
 * PROPOSAL, not wired: the tables of pools, as drizzle definitions. Nothing
 * imports this file in production and drizzle.config.ts does not read it, so
 * no migration exists for it. At integration these three tables move into
 * db/schema.ts and `npx drizzle-kit generate` makes their migration; the SQL
 * builders of proxies-sql.ts already name exactly these tables, columns and
 * index expressions (test/integration/pools-sql.test.ts creates the tables
 * from this file and runs every builder against them, on PGlite and
 * PostgreSQL).
 *
 * pools: one row per pool, its settings (what POST /pools set), its state,
 *   and `round_seq`, the next round's number (the ledger's job reference of
 *   a round: round.ts roundJobId).
 *
 * pool_proxies: one row per pooled proxy, written in batches (one statement
 *   per batch of results, never one per proxy):
 *   - the address (host normalised as the parser gives it; username and
 *     password '' when there are none; `format` as submitted, for `txt`);
 *   - the last verdict and the fields of the last passing check (shape.ts),
 *     `protocols` a bit mask (http 1, socks4 2, socks5 4);
 *   - the schedule: `next_check_at`, `failures` (consecutive);
 *   - `history` (history.ts, 153 bytes) and, read from it at the last check,
 *     `latency_p50_ms` and `uptime_h24_ppm` (parts per million), which the query filters and sorts on.
 *   `id` is a bigserial: the keyset's tie-breaker (cursor.ts), never reused.
 *   Indexes: the address is unique per pool (adding a proxy twice is a
 *   no-op); the due scan (pool, next_check_at); one per sort of the proxies
 *   query, each led by (pool, status) and ending with the sort's key
 *   expression and id, exactly as proxiesPageStatement orders by them (the
 *   sentinel COALESCE keeps keys non-null, so the keyset is one row
 *   comparison the index can seek to).
 *
 * pool_rounds: one row per round (its planned, checked, working, charged
 *   counts): the pool object's `checks_last_24h` and the dashboard's
 *   working-over-time chart. Old rows are the retention sweep's (7 days).
 */
import { sql } from 'drizzle-orm';
import { bigint, bigserial, boolean, check, customType, index, integer, jsonb, pgTable, primaryKey, real, smallint, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { accounts } from '../../db/schema';
import type { CustomUrlRule } from '../probe/types';

const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => 'bytea' });
const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });

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
    customUrls: jsonb('custom_urls').$type<CustomUrlRule[]>().notNull().default(sql`'[]'::jsonb`),
    /** [{url, every_s}] */
    sources: jsonb('sources').$type<{ url: string; every_s: number }[]>().notNull().default(sql`'[]'::jsonb`),
    /** 'active' | 'paused' */
    state: text('state').notNull().default('active'),
    /** null | 'insufficient_checks' | 'owner' */
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
    /** 'unchecked' | 'working' | 'failed' */
    status: text('status').notNull().default('unchecked'),
    failures: integer('failures').notNull().default(0),
    checks: integer('checks').notNull().default(0),
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
    statusCode: integer('status_code'),
    responseTimeMs: real('response_time_ms'),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    latencyP50Ms: integer('latency_p50_ms'),
    uptimeH24Ppm: integer('uptime_h24_ppm'),
    history: bytea('history'),
    firstSeenAt: at('first_seen_at').notNull().defaultNow(),
    lastCheckedAt: at('last_checked_at'),
    lastChangeAt: at('last_change_at'),
    nextCheckAt: at('next_check_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('pool_proxies_address_uq').on(t.poolId, t.host, t.port, t.username, t.password),
    index('pool_proxies_due_idx').on(t.poolId, t.nextCheckAt),
    index('pool_proxies_latency_idx').on(t.poolId, t.status, sql`COALESCE(${t.latencyP50Ms}, 2147483647)`, t.id),
    index('pool_proxies_uptime_idx').on(t.poolId, t.status, sql`COALESCE(${t.uptimeH24Ppm}, -1) DESC`, sql`${t.id} DESC`),
    index('pool_proxies_checked_idx').on(t.poolId, t.status, sql`COALESCE(${t.lastCheckedAt}, '1970-01-01T00:00:00Z'::timestamptz) DESC`, sql`${t.id} DESC`),
    check('pool_proxies_status_valid', sql`${t.status} IN ('unchecked', 'working', 'failed')`),
    check('pool_proxies_port_valid', sql`${t.port} BETWEEN 1 AND 65535`),
  ],
);

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
