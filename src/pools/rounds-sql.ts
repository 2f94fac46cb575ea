/**
 * SQL builders of a pool's pause and resume for insufficient checks (its
 * owner, src/jobs/pool-actor.ts, runs them through store.ts): pure functions
 * from input to ONE statement, every value a parameter, no I/O (as
 * proxies-sql.ts and pools-sql.ts).
 *
 *   pauseForChecksStatement  an active pool paused, `insufficient_checks`
 *   resumeForChecksStatement a pool paused for insufficient checks active again
 *
 * The state changes answer a row only when they changed something, so of
 * the owner and its owner's PATCH one tells the event.
 */
import { sql, type SQL } from 'drizzle-orm';
import { iso } from './proxies-sql';

/** An active pool paused for insufficient checks; one row (`id`) when it was active. */
export function pauseForChecksStatement(poolId: string, nowMs: number): SQL {
  return sql`UPDATE pools SET state = 'paused', paused_reason = 'insufficient_checks', updated_at = ${iso(nowMs)}::timestamptz
    WHERE id = ${poolId} AND state = 'active'
    RETURNING id`;
}

/** A pool paused for insufficient checks active again; one row (`interval_s`) when it was so paused. */
export function resumeForChecksStatement(poolId: string, nowMs: number): SQL {
  return sql`UPDATE pools SET state = 'active', paused_reason = NULL, updated_at = ${iso(nowMs)}::timestamptz
    WHERE id = ${poolId} AND state = 'paused' AND paused_reason = 'insufficient_checks'
    RETURNING interval_s`;
}
