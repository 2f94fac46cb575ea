/**
 * One target's state for every proxy of a pool in its owner's memory
 * (DECISIONS "Targets in pools"), struct-of-arrays by the ProxyTable's slot:
 * whether the last check of the target passed, the HTTP status it saw, its
 * response time, when, and a 24-hour uptime from hourly counters. Pure data
 * and its conversions; the actor (src/jobs/pool-actor.ts) folds custom-URL
 * results into it and flushes it (flush-sql.ts targetUpsertStatement).
 *
 * The uptime: 24 buckets of one hour (checks, passes; each saturating at
 * 255) in a ring by epoch hour, `hourAt` the newest bucket's hour; 52 bytes a
 * proxy a target with the rest. uptime_h24 = passes / checks over the buckets
 * of the last 24 hours, null without a check in them.
 */

const HOUR_MS = 3_600_000;
export const TARGET_HOURS = 24;
/** Bytes of one proxy's hourly counters: checks then passes. */
export const TARGET_HOUR_BYTES = 2 * TARGET_HOURS;

/** 0: never checked, 1: failed, 2: passed. */
const UNCHECKED = 0;
const FAILED = 1;
const PASSED = 2;

/** One proxy's state of one target, as rows and the durable copy carry it. */
export interface TargetState {
  ok: boolean;
  status: number | null;
  responseTimeMs: number | null;
  lastCheckedAt: Date | null;
  /** Epoch hour of the newest bucket. */
  hourAt: number;
  /** TARGET_HOUR_BYTES: checks per hour, then passes. */
  hours: Uint8Array;
}

/** Passes / checks over the 24 hours up to `nowMs`, or null (pure over the counters). */
export function hourlyUptime(hours: Uint8Array, hourAt: number, nowMs: number): number | null {
  const now = Math.floor(nowMs / HOUR_MS);
  if (now - hourAt >= TARGET_HOURS) return null;
  let checks = 0;
  let passes = 0;
  for (let h = Math.max(now - TARGET_HOURS + 1, hourAt - TARGET_HOURS + 1); h <= hourAt; h++) {
    const i = ((h % TARGET_HOURS) + TARGET_HOURS) % TARGET_HOURS;
    checks += hours[i]!;
    passes += hours[TARGET_HOURS + i]!;
  }
  return checks === 0 ? null : passes / checks;
}

/** One check folded into the counters (`hours` changed in place); the new hourAt. */
export function foldHours(hours: Uint8Array, hourAt: number, passed: boolean, nowMs: number): number {
  const now = Math.floor(nowMs / HOUR_MS);
  if (now - hourAt >= TARGET_HOURS || now < hourAt) hours.fill(0);
  else {
    for (let h = hourAt + 1; h <= now; h++) {
      const i = h % TARGET_HOURS;
      hours[i] = 0;
      hours[TARGET_HOURS + i] = 0;
    }
  }
  const i = now % TARGET_HOURS;
  if (hours[i]! < 255 && hours[TARGET_HOURS + i]! < 255) {
    hours[i] = hours[i]! + 1;
    if (passed) hours[TARGET_HOURS + i] = hours[TARGET_HOURS + i]! + 1;
  }
  return now;
}

export class TargetColumns {
  readonly name: string;
  state!: Uint8Array;
  status!: Int32Array;
  time!: Float32Array;
  checked!: Float64Array;
  hourAt!: Int32Array;
  hours!: Uint8Array;

  constructor(name: string, capacity: number) {
    this.name = name;
    this.grow(capacity);
  }

  /** Sized for `cap` slots, the values kept. */
  grow(cap: number): void {
    const make = <A extends Float64Array | Float32Array | Int32Array | Uint8Array>(old: A | undefined, n: number, mk: (n: number) => A, fill?: number): A => {
      const a = mk(n);
      if (fill !== undefined) a.fill(fill);
      if (old !== undefined) a.set(old.subarray(0, Math.min(old.length, n)) as never);
      return a;
    };
    this.state = make(this.state, cap, (n) => new Uint8Array(n));
    this.status = make(this.status, cap, (n) => new Int32Array(n), -1);
    this.time = make(this.time, cap, (n) => new Float32Array(n), NaN);
    this.checked = make(this.checked, cap, (n) => new Float64Array(n), NaN);
    this.hourAt = make(this.hourAt, cap, (n) => new Int32Array(n));
    this.hours = make(this.hours, cap * TARGET_HOUR_BYTES, (n) => new Uint8Array(n));
  }

  hoursOf(slot: number): Uint8Array {
    return this.hours.subarray(slot * TARGET_HOUR_BYTES, (slot + 1) * TARGET_HOUR_BYTES);
  }

  passed(slot: number): boolean {
    return this.state[slot] === PASSED;
  }

  checkedEver(slot: number): boolean {
    return this.state[slot] !== UNCHECKED;
  }

  /** A check of the target through `slot`'s proxy. */
  fold(slot: number, passed: boolean, status: number | null, responseTimeMs: number | null, nowMs: number): void {
    this.state[slot] = passed ? PASSED : FAILED;
    this.status[slot] = status ?? -1;
    this.time[slot] = responseTimeMs ?? NaN;
    this.checked[slot] = nowMs;
    this.hourAt[slot] = foldHours(this.hoursOf(slot), this.hourAt[slot]!, passed, nowMs);
  }

  /** A slot's state from a row (loading), or cleared (null). */
  set(slot: number, s: TargetState | null): void {
    if (s === null) {
      this.state[slot] = UNCHECKED;
      this.status[slot] = -1;
      this.time[slot] = NaN;
      this.checked[slot] = NaN;
      this.hourAt[slot] = 0;
      this.hoursOf(slot).fill(0);
      return;
    }
    this.state[slot] = s.ok ? PASSED : FAILED;
    this.status[slot] = s.status ?? -1;
    this.time[slot] = s.responseTimeMs ?? NaN;
    this.checked[slot] = s.lastCheckedAt?.getTime() ?? NaN;
    this.hourAt[slot] = s.hourAt;
    const h = this.hoursOf(slot);
    if (s.hours.length === TARGET_HOUR_BYTES) h.set(s.hours);
    else h.fill(0);
  }

  /** The slot's state (null: never checked). */
  get(slot: number): TargetState | null {
    if (this.state[slot] === UNCHECKED) return null;
    const t = this.time[slot]!;
    const c = this.checked[slot]!;
    return {
      ok: this.state[slot] === PASSED,
      status: this.status[slot] === -1 ? null : this.status[slot]!,
      responseTimeMs: Number.isNaN(t) ? null : t,
      lastCheckedAt: Number.isNaN(c) ? null : new Date(c),
      hourAt: this.hourAt[slot]!,
      hours: this.hoursOf(slot).slice(),
    };
  }
}
