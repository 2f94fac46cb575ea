/**
 * A pooled proxy's rolling history in 153 bytes (one `bytea` column,
 * `pool_proxies.history`): what `uptime {h1, h24, d7}` and `latency_p50_ms`
 * are computed from, never a row per check. Pure: foldHistory(history,
 * check, atMs) returns the new bytes; uptime() and latencyP50() read them at
 * a given time. A missing history (null, a new proxy) is the empty one.
 *
 * Three rings of counters, each slot holding the checks of one period, the
 * slot of period k at index k % slots:
 *
 *   ring     period    slots  counters per slot                  window
 *   minutes  5 min     12     pass u8, total u8                  h1:  55-60 min
 *   hours    1 h       24     pass u8, total u8, latency u16     h24: 23-24 h, latency_p50_ms
 *   days     1 day     7      pass u16, total u16                d7:  6-7 days
 *
 * A window is the current period plus the ones before it back to the ring's
 * size, so it is between (slots - 1) and slots periods long; periods are
 * UTC-aligned (a day is a UTC day). Every check counts in all three rings.
 *
 * Byte layout (big-endian), version 1:
 *   0        u8   version (1)
 *   1..4     u32  newest: the 5-minute period (epoch ms / 300 000) of the newest check folded
 *   5..28    12 x [u8 pass, u8 total]                minute ring
 *   29..124  24 x [u8 pass, u8 total, u16 latency]   hour ring
 *   125..152 7 x [u16 pass, u16 total]              day ring
 * 100 000 proxies: 15.3 MB of column data; a batch of 1 000 fold updates
 * carries 153 kB of history (306 kB as the hex the SQL builder sends).
 *
 * Folding: a check at a period newer than `newest` first clears the slots of
 * the periods in between (the ring moves on), then counts; a check at an
 * older period (a late result) counts in each ring whose window still holds
 * that period and is dropped by the others. A counter that would overflow
 * halves its slot's pass and total first (rounding up), which keeps their
 * ratio, an all-pass slot all-pass and a no-pass slot at 0.
 *
 * Latency: each hour slot keeps the mean of log2(latency) over its passing
 * checks (16-bit fixed point, 1/2048 of a doubling, i.e. 0.034 %, from 1/16 ms
 * to 64 s), a running mean updated with the slot's pass count. The mean of
 * the logs is the geometric mean, which is the median of a log-normal
 * distribution (what latencies roughly follow). latency_p50_ms over 24 h is
 * the median of the hours' geometric means weighted by their passing checks:
 * exact for a proxy of steady latency, and the level of the typical hour for
 * one that changes. Failed checks carry no latency.
 */

export const HISTORY_VERSION = 1;
export const HISTORY_BYTES = 153;

const PERIOD_MS = 300_000;
const MINUTE_SLOTS = 12;
const HOUR_SLOTS = 24;
const DAY_SLOTS = 7;
/** 5-minute periods per hour and per day. */
const PER_HOUR = 12;
const PER_DAY = 288;

const MINUTES_AT = 5;
const HOURS_AT = MINUTES_AT + MINUTE_SLOTS * 2;
const HOUR_STRIDE = 4;
const DAYS_AT = HOURS_AT + HOUR_SLOTS * HOUR_STRIDE;

/** Latency code: (log2(ms) + 4) * 2048, ms clamped to [1/16, 65 535]. */
const LOG_SCALE = 2048;
const LOG_OFFSET = 4;
const MIN_LATENCY_MS = 1 / 16;
const MAX_LATENCY_MS = 65_535;

/** One check as the history sees it: a passing check has a latency (its response time). */
export type HistoryCheck = { passed: true; latencyMs: number } | { passed: false };

export interface Uptime {
  h1: number | null;
  h24: number | null;
  d7: number | null;
}

function periodOf(ms: number): number {
  return Math.floor(ms / PERIOD_MS);
}

function latencyCode(ms: number): number {
  if (!Number.isFinite(ms)) return latencyCode(MAX_LATENCY_MS);
  const clamped = Math.min(Math.max(ms, MIN_LATENCY_MS), MAX_LATENCY_MS);
  return Math.round((Math.log2(clamped) + LOG_OFFSET) * LOG_SCALE);
}

function latencyOfCode(code: number): number {
  return 2 ** (code / LOG_SCALE - LOG_OFFSET);
}

/** A history that can be read: the right length and version; anything else reads as empty. */
function valid(h: Uint8Array | null | undefined): h is Uint8Array {
  return h != null && h.length === HISTORY_BYTES && h[0] === HISTORY_VERSION;
}

function view(h: Uint8Array): DataView {
  return new DataView(h.buffer, h.byteOffset, h.byteLength);
}

/** An empty history (no check yet). */
export function emptyHistory(): Uint8Array {
  const h = new Uint8Array(HISTORY_BYTES);
  h[0] = HISTORY_VERSION;
  return h;
}

/** One ring: where its slots start, how wide a slot is, how big its counters are. */
interface Ring {
  at: number;
  slots: number;
  stride: number;
  /** 5-minute periods per ring period. */
  per: number;
  wide: boolean;
}

const MINUTES: Ring = { at: MINUTES_AT, slots: MINUTE_SLOTS, stride: 2, per: 1, wide: false };
const HOURS: Ring = { at: HOURS_AT, slots: HOUR_SLOTS, stride: HOUR_STRIDE, per: PER_HOUR, wide: false };
const DAYS: Ring = { at: DAYS_AT, slots: DAY_SLOTS, stride: 4, per: PER_DAY, wide: true };
const RINGS: readonly Ring[] = [MINUTES, HOURS, DAYS];

function slotAt(r: Ring, k: number): number {
  return r.at + (k % r.slots) * r.stride;
}

function readPass(v: DataView, r: Ring, off: number): number {
  return r.wide ? v.getUint16(off) : v.getUint8(off);
}

function readTotal(v: DataView, r: Ring, off: number): number {
  return r.wide ? v.getUint16(off + 2) : v.getUint8(off + 1);
}

function writeCounts(v: DataView, r: Ring, off: number, pass: number, total: number): void {
  if (r.wide) {
    v.setUint16(off, pass);
    v.setUint16(off + 2, total);
  } else {
    v.setUint8(off, pass);
    v.setUint8(off + 1, total);
  }
}

/** Zero the slots of ring periods (fromK, toK]: the ring moved on past them. */
function clearPeriods(h: Uint8Array, r: Ring, fromK: number, toK: number): void {
  const n = Math.min(toK - fromK, r.slots);
  for (let i = 1; i <= n; i++) {
    const off = slotAt(r, fromK + (toK - fromK - n) + i);
    h.fill(0, off, off + r.stride);
  }
}

/**
 * Count one check in ring `r` at ring period k; returns the slot's pass count
 * after it (what the latency mean divides by) or -1 when k is outside the window.
 */
function count(h: Uint8Array, v: DataView, r: Ring, k: number, newestK: number, passed: boolean): number {
  if (k <= newestK - r.slots) return -1;
  const off = slotAt(r, k);
  let pass = readPass(v, r, off);
  let total = readTotal(v, r, off);
  const max = r.wide ? 0xffff : 0xff;
  if (total >= max) {
    pass = Math.ceil(pass / 2);
    total = Math.ceil(total / 2);
  }
  if (passed) pass++;
  total++;
  writeCounts(v, r, off, pass, total);
  return pass;
}

/** The history after one more check at `atMs` (a new array; `history` is not changed). */
export function foldHistory(history: Uint8Array | null | undefined, check: HistoryCheck, atMs: number): Uint8Array {
  const h = valid(history) ? history.slice() : emptyHistory();
  foldHistoryInto(h, check, atMs);
  return h;
}

/**
 * One more check at `atMs` folded into `h` itself (HISTORY_BYTES bytes, e.g.
 * a pool owner's slot of its history arrays: no allocation); bytes that are
 * not a valid history are made the empty one first.
 */
export function foldHistoryInto(h: Uint8Array, check: HistoryCheck, atMs: number): void {
  if (h[0] !== HISTORY_VERSION) {
    h.fill(0);
    h[0] = HISTORY_VERSION;
  }
  const v = view(h);
  const p = periodOf(atMs);
  let newest = v.getUint32(1);
  if (p > newest) {
    for (const r of RINGS) clearPeriods(h, r, Math.floor(newest / r.per), Math.floor(p / r.per));
    newest = p;
    v.setUint32(1, newest);
  }
  count(h, v, MINUTES, p, newest, check.passed);
  count(h, v, DAYS, Math.floor(p / PER_DAY), Math.floor(newest / PER_DAY), check.passed);
  const hourK = Math.floor(p / PER_HOUR);
  const passes = count(h, v, HOURS, hourK, Math.floor(newest / PER_HOUR), check.passed);
  if (check.passed && passes > 0) {
    const off = slotAt(HOURS, hourK) + 2;
    const code = latencyCode(check.latencyMs);
    const mean = v.getUint16(off);
    v.setUint16(off, passes === 1 ? code : Math.round(mean + (code - mean) / passes));
  }
}

/**
 * The slots of ring `r` that are in its window at `nowMs` and still held:
 * calls `each(offset)` for every such slot. A clock behind the newest check
 * (another node's, a little ahead) reads as the newest check's time.
 */
function eachInWindow(h: Uint8Array, r: Ring, nowMs: number, each: (off: number) => void): void {
  const newestK = Math.floor(view(h).getUint32(1) / r.per);
  const nowK = Math.floor(periodOf(nowMs) / r.per);
  for (let k = Math.max(Math.max(newestK, nowK) - r.slots + 1, 0); k <= newestK; k++) each(slotAt(r, k));
}

function ratio(h: Uint8Array, r: Ring, nowMs: number): number | null {
  const v = view(h);
  let pass = 0;
  let total = 0;
  eachInWindow(h, r, nowMs, (off) => {
    pass += readPass(v, r, off);
    total += readTotal(v, r, off);
  });
  return total === 0 ? null : pass / total;
}

/** Fraction of checks that passed in the last hour, 24 hours and 7 days at `nowMs` (null: no check in the window). */
export function uptime(history: Uint8Array | null | undefined, nowMs: number): Uptime {
  if (!valid(history)) return { h1: null, h24: null, d7: null };
  return { h1: ratio(history, MINUTES, nowMs), h24: ratio(history, HOURS, nowMs), d7: ratio(history, DAYS, nowMs) };
}

/** uptime(...).h24 alone (a pool's fold keeps only it: one ring read, not three). */
export function uptimeH24(history: Uint8Array | null | undefined, nowMs: number): number | null {
  return valid(history) ? ratio(history, HOURS, nowMs) : null;
}

/** Checks counted in the last 24 hours at `nowMs` (the hour ring's totals). */
export function checksIn24h(history: Uint8Array | null | undefined, nowMs: number): number {
  if (!valid(history)) return 0;
  const v = view(history);
  let total = 0;
  eachInWindow(history, HOURS, nowMs, (off) => {
    total += readTotal(v, HOURS, off);
  });
  return total;
}

/**
 * Median latency (ms, rounded to a whole millisecond) of the passing checks of
 * the last 24 hours at `nowMs`: the hours' geometric means weighted by their
 * passing checks (the lower weighted median). Null with no passing check.
 */
export function latencyP50(history: Uint8Array | null | undefined, nowMs: number): number | null {
  if (!valid(history)) return null;
  const v = view(history);
  const hours: { code: number; weight: number }[] = [];
  let weight = 0;
  eachInWindow(history, HOURS, nowMs, (off) => {
    const pass = v.getUint8(off);
    if (pass > 0) {
      hours.push({ code: v.getUint16(off + 2), weight: pass });
      weight += pass;
    }
  });
  if (weight === 0) return null;
  hours.sort((a, b) => a.code - b.code);
  let seen = 0;
  for (const hour of hours) {
    seen += hour.weight;
    if (seen * 2 >= weight) return Math.min(Math.round(latencyOfCode(hour.code)), MAX_LATENCY_MS);
  }
  return null;
}
