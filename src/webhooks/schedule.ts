/**
 * When a delivery is tried again, and when an endpoint is given up on
 * (DECISIONS "Webhooks"). Pure: the caller gives the times and the random
 * number.
 *
 * - A failed attempt n (1 = the first) is retried after RETRY_DELAYS_MS[n-1]
 *   (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), each stretched or shortened
 *   by up to 10 % at random; after the last, the delivery is `failed`
 *   (8 attempts in all, about 27.6 hours).
 * - An endpoint is disabled when it has had attempts and no success for
 *   3 days: `failing_since` (its first failed attempt after its last
 *   success) is at least DISABLE_AFTER_MS before the attempt that just
 *   failed. Its deliveries then wait (they are not claimed) until the owner
 *   enables it again.
 */

export const RETRY_DELAYS_MS: readonly number[] = Object.freeze([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
/** Jitter: each delay times 1 +- this. */
export const RETRY_JITTER = 0.1;
export const DISABLE_AFTER_MS = 3 * 86_400_000;

/**
 * The delay before the attempt after failed attempt `attempt` (1-based), or
 * null when that was the last. `random` in [0, 1): 0.5 is the plain delay.
 */
export function retryDelayMs(attempt: number, random: number, delays: readonly number[] = RETRY_DELAYS_MS): number | null {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be a positive integer, got ${attempt}`);
  const base = delays[attempt - 1];
  if (base === undefined) return null;
  const r = Math.min(Math.max(random, 0), 1);
  return Math.round(base * (1 + RETRY_JITTER * (2 * r - 1)));
}

/** The message an endpoint is disabled with. */
export const DISABLED_REASON = 'no successful delivery for 3 days of attempts';

/**
 * Whether an attempt that failed at `nowMs` disables its endpoint, which has
 * been failing since `failingSinceMs` (null: this was the first failure since
 * the last success).
 */
export function shouldDisable(failingSinceMs: number | null, nowMs: number, afterMs: number = DISABLE_AFTER_MS): boolean {
  return failingSinceMs !== null && nowMs - failingSinceMs >= afterMs;
}
