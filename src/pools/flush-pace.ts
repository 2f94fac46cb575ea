/**
 * The pace of a pool owner's flush (issue 29). Pure.
 *
 * A flush writes its dirty proxies in chunks (src/jobs/pool-actor.ts
 * FLUSH_CHUNK), each one transaction where PGlite runs: on the embedded
 * database that is the main thread, and a chunk holds it 16-50 ms. Chunks
 * one right after the other (only a setImmediate between two) held the main
 * thread for seconds: at 100 000 proxies every 60 s a flush of ~15 000 rows
 * ran ~60 chunks back to back, the main thread's 10 ms timer was 40-180 ms
 * late throughout, and a txt listing (its pieces each waiting for the next
 * chunk) or a /check (its statements queued behind chunks) took 150-300 ms
 * instead of 20-40 (bench/RESULTS.md "Flushes paced, txt in one turn").
 *
 * So after each chunk the flush waits about as long as the chunk took
 * (FLUSH_SHARE: it takes at most half of the thread while it has time),
 * never more than MAX_GAP_MS, and less, down to none, when the rest would
 * not end within FLUSH_SPAN_SHARE of the flush interval at this chunk's
 * speed: a flush must not fall behind its interval for its pauses.
 */

/** The share of the thread a flush takes while it has time. */
export const FLUSH_SHARE = 0.5;
/** The longest pause between two chunks. */
export const MAX_GAP_MS = 100;
/** A flush, pauses included, should end within this share of the flush interval. */
export const FLUSH_SPAN_SHARE = 0.8;

export interface FlushPace {
  /** how long the chunk just written took (ms) */
  chunkMs: number;
  /** since the flush began (ms) */
  elapsedMs: number;
  /** chunks still to write */
  chunksLeft: number;
  /** the flush interval (POOL_FLUSH_S, ms) */
  flushMs: number;
}

/** The pause before the next chunk, ms (0: go on at once). */
export function flushGapMs(p: FlushPace): number {
  if (!(p.chunksLeft > 0) || !(p.chunkMs > 0)) return 0;
  const want = Math.min(MAX_GAP_MS, (p.chunkMs * (1 - FLUSH_SHARE)) / FLUSH_SHARE);
  // what each remaining chunk may take, pause included, to end within the span; minus the chunk itself
  const room = (FLUSH_SPAN_SHARE * p.flushMs - p.elapsedMs) / p.chunksLeft - p.chunkMs;
  return Math.max(0, Math.min(want, room));
}
