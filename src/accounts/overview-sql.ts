/**
 * GET /me in ONE statement (pg-boss `plans.ts` style: a pure builder, and a
 * pure decoder of its one row), not four queries (the account, the last 30
 * scans, their count, usage per UTC day): on the embedded PGlite every query
 * pays its own fixed cost (bench/RESULTS.md "`GET /me` in one statement").
 *
 * One row when the account exists, none otherwise:
 *   email, root_balance, temp_balance, unlimited_pro, unlimited_until_ms
 *   history_count  count of the account's scans, pool rounds aside
 *   usage          json [[day 'YYYY-MM-DD' (UTC), total_checked], ...] since windowStart,
 *                  pool rounds included
 *   recent         (pool rounds aside) json [[id, total_checked, total_working, result_ref, proxy_type,
 *                  created_at_ms, status, error], ...] newest first, at most `limit`
 * Numbers come back as float8 and times as epoch milliseconds (floored, as a
 * JS Date holds them), so both drivers return plain JS numbers.
 */
import { sql, type SQL } from 'drizzle-orm';

export interface OverviewStatementInput {
  accountId: string;
  /** first instant of the usage window (UTC midnight) */
  windowStart: Date;
  /** scans in `recent` */
  limit: number;
}

/**
 * A scan that is not a pool's round: rounds (run id `pool:<id>:<seq>`,
 * src/pools/round.ts roundJobId) count in `usage` (and checks_used, on the
 * account), never in the history (DECISIONS "Pools", quota). A client's run
 * id never has ':' (src/job-id.ts).
 */
const NOT_A_ROUND = sql.raw(`job_id NOT LIKE 'pool:%'`);

export function overviewStatement(i: OverviewStatementInput): SQL {
  return sql`SELECT a.email,
      a.root_balance::float8 AS root_balance,
      a.temp_balance::float8 AS temp_balance,
      a.unlimited_pro,
      floor(extract(epoch FROM a.unlimited_until) * 1000)::float8 AS unlimited_until_ms,
      (SELECT count(*) FROM scans WHERE account_id = a.id AND ${NOT_A_ROUND})::float8 AS history_count,
      (SELECT coalesce(json_agg(json_build_array(u.day, u.total)), '[]'::json) FROM (
         SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, sum(total_checked)::float8 AS total
         FROM scans WHERE account_id = a.id AND created_at >= ${i.windowStart.toISOString()}::timestamptz
         GROUP BY 1) u) AS usage,
      (SELECT coalesce(json_agg(json_build_array(r.id, r.total_checked, r.total_working, r.result_ref, r.proxy_type,
                floor(extract(epoch FROM r.created_at) * 1000)::float8, r.status, r.error)
              ORDER BY r.created_at DESC, r.id DESC), '[]'::json) FROM (
         SELECT id, total_checked, total_working, result_ref, proxy_type, created_at, status, error
         FROM scans WHERE account_id = a.id AND ${NOT_A_ROUND} ORDER BY created_at DESC, id DESC LIMIT ${i.limit}) r) AS recent
    FROM accounts a WHERE a.id = ${i.accountId}`;
}

/** The row as a driver returns it (json columns parsed or not, numbers as numbers or numeric strings). */
export interface OverviewRow {
  email: string;
  root_balance: number | string;
  temp_balance: number | string;
  unlimited_pro: boolean;
  unlimited_until_ms: number | string | null;
  history_count: number | string;
  usage: unknown;
  recent: unknown;
}

export interface OverviewScan {
  id: number;
  totalChecked: number;
  totalWorking: number;
  resultRef: string | null;
  proxyType: string;
  createdAt: Date;
  status: string;
  error: string | null;
}

export interface OverviewData {
  account: { email: string; rootBalance: number; tempBalance: number; unlimitedPro: boolean; unlimitedUntil: Date | null };
  historyCount: number;
  /** UTC day -> checks that day */
  usage: Map<string, number>;
  recent: OverviewScan[];
}

const json = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/** Pure: the statement's row -> typed data. Throws on a row whose json is not the statement's shape. */
export function decodeOverviewRow(row: OverviewRow): OverviewData {
  const usage = json(row.usage);
  const recent = json(row.recent);
  if (!Array.isArray(usage) || !Array.isArray(recent)) throw new TypeError('overview row: usage and recent must be json arrays');
  return {
    account: {
      email: row.email,
      rootBalance: Number(row.root_balance),
      tempBalance: Number(row.temp_balance),
      unlimitedPro: row.unlimited_pro === true,
      unlimitedUntil: row.unlimited_until_ms === null ? null : new Date(Number(row.unlimited_until_ms)),
    },
    historyCount: Number(row.history_count),
    usage: new Map((usage as [unknown, unknown][]).map(([day, total]) => [String(day), Number(total)])),
    recent: (recent as unknown[][]).map((r) => ({
      id: Number(r[0]),
      totalChecked: Number(r[1]),
      totalWorking: Number(r[2]),
      resultRef: str(r[3]),
      proxyType: String(r[4]),
      createdAt: new Date(Number(r[5])),
      status: String(r[6]),
      error: str(r[7]),
    })),
  };
}
