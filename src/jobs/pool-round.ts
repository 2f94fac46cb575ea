/**
 * One round of one pool, start to end (DECISIONS "Pools"; the decisions are
 * src/pools/round.ts's, the probing pool-round-probe.ts's):
 *
 *   1. plan: planRound with the account's balance (the ledger's userInfo).
 *      idle / wait: nothing. pause: the pool is paused `insufficient_checks`
 *      and pool.paused published (nothing charged). check with `resumed`:
 *      the pool is active again, its overdue proxies spread over its interval,
 *      pool.resumed published; its proxies are checked from the next tick on.
 *   2. check: the round's row (startRound: its number), ONE reservation of
 *      `units` under the run id roundJobId(pool, seq) with its scan row (the
 *      ledger of /check: charge 0 under UnlimitedPro; the scan carries this
 *      node, so a dead node's round is refunded by the orphan sweep). A
 *      reservation the balance cannot pay (spent since the plan) pauses.
 *   3. claim the `take` most overdue proxies (store.claimDue: atomic, until
 *      the claim horizon; fewer when another node took some), probe them
 *      (RoundProbe), cut short at the round's deadline or by `signal`.
 *   4. settle: the scan closed with the checks performed, the units not tried
 *      (and of proxies refused before any connection: blocked_target, as
 *      /check) refunded in one refund row (untriedUnits); the round's row
 *      finished; round.completed published. A round that failed after its reservation
 *      closes its scan as failed, refunding what was not tried.
 */
import type { Db } from '../../db/client';
import type { Clock } from '../clock';
import { errorCode } from '../errors';
import type { Logger } from '../log';
import { pausedEvent, resumedEvent, roundCompletedEvent } from '../pools/events';
import type { PoolEventsPort } from '../pools/ports';
import { planRound, roundJobId, settleRound, untriedUnits, type RoundPlan } from '../pools/round';
import type { PoolRow } from '../pools/shape';
import * as store from '../pools/store';
import type { LedgerPort } from './ports';
import { RoundProbe, type ProbeTally, type RoundProbeDeps } from './pool-round-probe';

/** Beyond the probe timeout, how long a round's claim holds its proxies (a dead node's claims fall due again after it). */
export const CLAIM_MARGIN_MS = 120_000;

export interface RoundDeps extends RoundProbeDeps {
  ledger: LedgerPort;
  /** false: no agent serves the region now (a cluster): the round waits. Absent: every region is served. */
  regionAvailable?: (region: string) => boolean;
  /** A settlement that failed, tried again while the service runs (src/jobs/settlements.ts). */
  retrySettlement?: (label: string, attempt: () => Promise<void>) => void;
  /** Most proxies one round takes. */
  maxRound: number;
}

export type RoundOutcome = 'idle' | 'wait' | 'pause' | 'resumed' | { tally: ProbeTally; charged: number };

/** The claim's horizon from `nowMs`: the round's deadline (CLAIM_MARGIN_MS) plus two timeouts for the probes in flight then. */
export function claimUntil(nowMs: number, timeoutMs: number): number {
  return nowMs + CLAIM_MARGIN_MS + 2 * timeoutMs;
}

export async function runPoolRound(d: RoundDeps, pool: PoolRow, due: number, signal: AbortSignal): Promise<RoundOutcome> {
  if (d.regionAvailable?.(pool.region) === false) return 'idle';
  const user = await d.ledger.userInfo(pool.accountId, new Date(d.clock.now()));
  const balance = { unlimited: user.subscription_detail.UnlimitedPro, available: user.remaining_checks };
  const plan = planRound({ state: pool.state, pausedReason: pool.pausedReason, due, maxRound: d.maxRound, balance });
  switch (plan.kind) {
    case 'idle':
    case 'wait':
      return plan.kind;
    case 'pause':
      await pause(d, pool, plan);
      return 'pause';
    case 'check':
      if (plan.resumed) return resume(d, pool);
      return checkRound(d, pool, plan, signal);
  }
}

async function pause(d: RoundDeps, pool: PoolRow, short: { required: number; available: number }): Promise<void> {
  const nowMs = d.clock.now();
  if (!(await store.pauseForChecks(d.db, pool.id, nowMs))) return;
  const counts = await store.poolCounts(d.db, pool.id);
  d.events.publish(pool.accountId, pausedEvent(pool.id, nowMs, counts, 'insufficient_checks', short));
}

async function resume(d: RoundDeps, pool: PoolRow): Promise<RoundOutcome> {
  const nowMs = d.clock.now();
  if (!(await store.resumeForChecks(d.db, pool.id, nowMs))) return 'idle';
  const counts = await store.poolCounts(d.db, pool.id);
  d.events.publish(pool.accountId, resumedEvent(pool.id, nowMs, counts));
  return 'resumed';
}

type CheckPlan = Extract<RoundPlan, { kind: 'check' }>;

async function checkRound(d: RoundDeps, pool: PoolRow, plan: CheckPlan, signal: AbortSignal): Promise<RoundOutcome> {
  const startMs = d.clock.now();
  const seq = await store.startRound(d.db, pool.id, plan.take, startMs);
  const runId = roundJobId(pool.id, seq);
  const r = await reserveRound(d, pool, plan, runId, startMs);
  if (!r.ok) {
    await store.finishRound(d.db, pool.id, seq, { checked: 0, working: 0, charged: 0 }, d.clock.now());
    await pause(d, pool, r);
    return 'pause';
  }
  const probed = await probeRound(d, pool, runId, plan.take, signal).then(
    (tally) => ({ tally, error: null }),
    (error: unknown) => ({ tally: { checked: 0, working: 0, failed: 0, not_tried: plan.take, blocked: 0 }, error }),
  );
  return endRound(d, pool, { plan, seq, runId }, probed);
}

/** ONE reservation of the round's units, with its scan row (the ledger's run id: roundJobId). */
function reserveRound(d: RoundDeps, pool: PoolRow, plan: CheckPlan, runId: string, nowMs: number) {
  return d.ledger.reserve({
    accountId: pool.accountId,
    runId,
    clientJobId: null,
    units: plan.units,
    total: plan.take,
    type: pool.type,
    region: pool.region,
    timeoutMs: pool.timeoutMs,
    submitted: plan.take,
    now: new Date(nowMs),
  });
}

/** Settles, finishes the round's row, publishes round.completed; rethrows what failed the probing. */
async function endRound(
  d: RoundDeps,
  pool: PoolRow,
  round: { plan: CheckPlan; seq: number; runId: string },
  probed: { tally: ProbeTally & { blocked: number }; error: unknown },
): Promise<RoundOutcome> {
  const { blocked, ...tally } = probed.tally;
  // a proxy refused before any connection is a verdict, not a check performed: not charged (as /check)
  const performed = tally.checked - blocked;
  const charged = settleRound(round.plan, performed).kept;
  await settle(d, pool, round.runId, round.plan, { ...tally, checked: performed }, probed.error);
  const endMs = d.clock.now();
  await store.finishRound(d.db, pool.id, round.seq, { checked: performed, working: tally.working, charged }, endMs);
  const counts = await store.poolCounts(d.db, pool.id);
  d.events.publish(pool.accountId, roundCompletedEvent(pool.id, endMs, counts, { ...tally, charged }));
  if (probed.error !== null) throw probed.error;
  return { tally, charged };
}

/** Claims the round's proxies and probes them until done, `signal`, or the round's deadline. */
async function probeRound(d: RoundDeps, pool: PoolRow, runId: string, take: number, signal: AbortSignal): Promise<ProbeTally & { blocked: number }> {
  const nowMs = d.clock.now();
  const rows = await store.claimDue(d.db, pool.id, nowMs, take, claimUntil(nowMs, pool.timeoutMs));
  const cut = new AbortController();
  const onStop = () => cut.abort();
  signal.addEventListener('abort', onStop, { once: true });
  if (signal.aborted) cut.abort();
  const cancelDeadline = d.clock.after(CLAIM_MARGIN_MS, () => cut.abort(), { unref: true });
  try {
    const probe = new RoundProbe(d, pool, runId, rows);
    const tally = await probe.run(cut.signal);
    // proxies reserved for and not claimed (another node took them): not tried either
    return { ...tally, not_tried: tally.not_tried + (take - rows.length), blocked: probe.blocked };
  } finally {
    cancelDeadline();
    signal.removeEventListener('abort', onStop);
  }
}

/** The scan closed (completed, or failed with `error`), the units not tried given back in one refund row. */
async function settle(d: RoundDeps, pool: PoolRow, runId: string, plan: CheckPlan, tally: ProbeTally, error: unknown): Promise<void> {
  const base = { accountId: pool.accountId, runId, checked: tally.checked, working: tally.working, refund: untriedUnits(plan, tally.checked), now: new Date(d.clock.now()) };
  const attempt =
    error === null
      ? () => d.ledger.complete({ ...base, resultRef: null })
      : () => d.ledger.fail({ ...base, error: errorCode(error), cancelled: false });
  try {
    await attempt();
  } catch (err) {
    d.log.error('settling a pool round failed; it is tried again', { pool: pool.id, runId, err });
    d.retrySettlement?.(runId, attempt);
  }
}
