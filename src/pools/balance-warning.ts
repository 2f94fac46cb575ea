/**
 * A pool whose schedule costs more a day than the account has (DECISIONS
 * "Mixed lists": `warnings: [{code: "balance_runs_out", message,
 * hours_left}]` in the POST /pools and PATCH /pools/{id} answers). Pure
 * arithmetic, no I/O.
 *
 * A day of the schedule costs proxies x 86 400 / interval_s checks (every
 * proxy checked once an interval: the most a day can cost, before failing
 * proxies back off). When that is more than the balance, the checks run out
 * in balance / (per day / 24) hours: `hours_left`, rounded down to a tenth.
 * No warning for a paused pool (it costs nothing), a pool with no proxies
 * yet, or an account whose plan is unlimited.
 */

export const BALANCE_RUNS_OUT = 'balance_runs_out';

export interface BalanceWarning {
  code: typeof BALANCE_RUNS_OUT;
  message: string;
  /** Hours until the balance is spent at this schedule, rounded down to a tenth. */
  hours_left: number;
}

export interface BalanceWarningInput {
  /** Proxies in the pool now. */
  proxies: number;
  intervalS: number;
  /** The account's checks left (root + temporary balance). */
  balance: number;
  /** The account's plan is unlimited (nothing is counted against the balance). */
  unlimited: boolean;
  /** The pool is paused: it checks nothing. */
  paused: boolean;
}

/** Checks a day the schedule costs at most: proxies x 86 400 / interval_s. */
export function checksPerDay(proxies: number, intervalS: number): number {
  return intervalS > 0 ? (proxies * 86_400) / intervalS : 0;
}

const count = (n: number) => Math.round(n).toLocaleString('en-US');

/** The warnings of a pool answer: [] or the one balance_runs_out. */
export function balanceWarnings(i: BalanceWarningInput): BalanceWarning[] {
  if (i.unlimited || i.paused) return [];
  const perDay = checksPerDay(i.proxies, i.intervalS);
  if (perDay === 0 || perDay <= i.balance) return [];
  const balance = Math.max(0, i.balance);
  const hoursLeft = Math.floor(((balance * 24) / perDay) * 10) / 10;
  const message =
    `This pool checks ${count(i.proxies)} ${i.proxies === 1 ? 'proxy' : 'proxies'} every ${count(i.intervalS)} s: ` +
    `up to ${count(perDay)} checks a day, and the account has ${count(balance)} left. ` +
    `They run out ${hoursLeft < 1 ? 'within the hour' : `in about ${hoursLeft} hours`}; the pool then pauses (insufficient_checks) until the balance is topped up. ` +
    'A longer interval_s or fewer proxies cost less.';
  return [{ code: BALANCE_RUNS_OUT, message, hours_left: hoursLeft }];
}
