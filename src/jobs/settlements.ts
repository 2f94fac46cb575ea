/**
 * Settlements that failed (the database did not answer when a failed job
 * closed its scan and refunded) are tried again every `intervalMs` until they
 * succeed, so a lost ledger write is repaired while the process runs, not
 * only by the orphan sweep once the node is gone (src/accounts/orphans.ts:
 * at its next start, or by another node once its lease expired). Safe to repeat: the ledger's
 * settlement closes the scan and refunds in one transaction, and does nothing
 * once the scan is no longer running (jobs/ledger.ts), so a retry whose first
 * try did commit after all refunds nothing twice.
 *
 * Bounded (`max` waiting; past it the oldest is left to the orphan sweep,
 * which refunds its scan in full once this node is gone). stop() makes one
 * last try and is safe twice; what is still waiting then is an orphan at once
 * (the node's lease is released next, src/server.ts).
 */
import { systemClock, type Clock } from '../clock';
import type { Logger } from '../log';

interface Pending {
  label: string;
  attempt: () => Promise<void>;
  tries: number;
}

export class SettlementRetry {
  readonly #pending: Pending[] = [];
  readonly #log: Logger;
  readonly #max: number;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  /** Cancels the next pass's timer; null once stopped. */
  #timer: (() => void) | null = null;
  #running: Promise<void> | null = null;
  #stopped = false;

  constructor(opts: { log: Logger; intervalMs?: number; max?: number; clock?: Clock }) {
    this.#log = opts.log;
    this.#max = opts.max ?? 10_000;
    this.#clock = opts.clock ?? systemClock;
    this.#intervalMs = opts.intervalMs ?? 30_000;
    this.#arm();
  }

  /** The next pass, intervalMs from now (the timer keeps no process alive). */
  #arm(): void {
    this.#timer = this.#clock.after(
      this.#intervalMs,
      () => {
        void this.retryNow();
        this.#arm();
      },
      { unref: true },
    );
  }

  /** Settlements waiting for another try. */
  get waiting(): number {
    return this.#pending.length;
  }

  add(label: string, attempt: () => Promise<void>): void {
    if (this.#stopped) return;
    if (this.#pending.length >= this.#max) {
      const dropped = this.#pending.shift()!;
      this.#log.error('settlement retry queue full; left for the orphan sweep once this node is gone', { label: dropped.label });
    }
    this.#pending.push({ label, attempt, tries: 1 });
  }

  /** Tries every waiting settlement once (one pass at a time). */
  retryNow(): Promise<void> {
    this.#running ??= (async () => {
      const batch = this.#pending.splice(0);
      for (const p of batch) {
        try {
          await p.attempt();
          this.#log.info('settlement repaired', { label: p.label, tries: p.tries + 1 });
        } catch (err) {
          p.tries++;
          this.#pending.push(p);
          this.#log.warn('settlement still failing', { label: p.label, tries: p.tries, err });
        }
      }
    })().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  async stop(): Promise<void> {
    this.#timer?.();
    this.#timer = null;
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#pending.length > 0) await this.retryNow();
    if (this.#pending.length > 0) this.#log.error('settlements left for the orphan sweep (this node\'s lease is released next)', { count: this.#pending.length });
  }
}
