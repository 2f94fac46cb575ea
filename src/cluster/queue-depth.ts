/**
 * The depth of each region's work queue, for /metrics (never on a probe's
 * path): per region, the shards waiting in the queue (the consumer's
 * num_pending) and those delivered to agents and not yet acked
 * (num_ack_pending), read from JetStream only when a scrape asks and the last
 * reading is older than `maxAgeMs` (default 5 s); scrapes in between get the
 * cached reading, concurrent ones share one refresh.
 *
 *   empty ──depth()──> refreshing ──all regions read (each within timeoutMs)──> fresh
 *   fresh ──maxAgeMs──> stale ──depth()──> refreshing (the old reading kept
 *   for a region whose read failed or timed out, so a slow NATS costs at most
 *   timeoutMs per scrape and shows the last known depth)
 */
import { systemClock, type Clock } from '../clock';
import type { JetStreamManager } from '@nats-io/jetstream';
import { WORK_STREAM, workConsumer } from './protocol';

export interface QueueReading {
  /** Shards in the queue, not yet delivered to an agent. */
  waiting: number;
  /** Shards delivered to an agent, not yet acked. */
  delivered: number;
}

export interface QueueDepthOptions {
  regions: readonly string[];
  read: (region: string) => Promise<QueueReading>;
  maxAgeMs?: number;
  timeoutMs?: number;
  /** The age's and the read timeout's clock (default systemClock; tests pass a fake one). */
  clock?: Clock;
}

export class QueueDepth {
  readonly #o: QueueDepthOptions;
  readonly #clock: Clock;
  readonly #maxAgeMs: number;
  readonly #timeoutMs: number;
  readonly #last = new Map<string, QueueReading>();
  #readAt = Number.NEGATIVE_INFINITY;
  #refreshing: Promise<void> | null = null;

  constructor(o: QueueDepthOptions) {
    this.#o = o;
    this.#clock = o.clock ?? systemClock;
    this.#maxAgeMs = o.maxAgeMs ?? 5_000;
    this.#timeoutMs = o.timeoutMs ?? 1_000;
  }

  /** Per region, the latest reading at most maxAgeMs old (or the last known one where a read failed). */
  async depth(): Promise<ReadonlyMap<string, QueueReading>> {
    if (this.#clock.now() - this.#readAt >= this.#maxAgeMs) {
      this.#refreshing ??= this.#refresh().finally(() => (this.#refreshing = null));
      await this.#refreshing;
    }
    return this.#last;
  }

  async #refresh(): Promise<void> {
    await Promise.all(
      this.#o.regions.map(async (region) => {
        let cancel: (() => void) | undefined;
        try {
          const timeout = new Promise<never>((_, no) => (cancel = this.#clock.after(this.#timeoutMs, () => no(new Error('timeout')))));
          const r = await Promise.race([this.#o.read(region), timeout]);
          this.#last.set(region, r);
        } catch {
          // keep the last known reading (none: the region is left out)
        } finally {
          cancel?.();
        }
      }),
    );
    this.#readAt = this.#clock.now();
  }
}

/** The reader of a region's queue: its durable consumer's info. */
export function consumerReader(jsm: JetStreamManager): (region: string) => Promise<QueueReading> {
  return async (region) => {
    const info = await jsm.consumers.info(WORK_STREAM, workConsumer(region));
    return { waiting: info.num_pending, delivered: info.num_ack_pending };
  };
}
