/**
 * The front's mirror of one lane's settings cache (lane-protocol.ts
 * MainToLane): which ProbeSettings objects the lane holds, and how many of
 * the lane's running shards use each. Pure bookkeeping, no I/O: the front asks
 * `use(id, settings)` when it sends a shard and `done(id)` when the shard
 * ends, and ships what `take()` returns in the lane's next `run` message.
 *
 * Settings no running shard uses stay cached (a job sends many shards) until
 * the cache holds `capacity` ids; then one unused id is forgotten per new id.
 * Ids in use are never forgotten, so the cache can exceed `capacity` while
 * more jobs than that run on the lane. The lane applies `forget` before
 * `settings`, so an id forgotten and sent again in one message survives.
 */
import type { ProbeSettings } from '../types';

export class LaneSettings {
  /** id -> running shards of the lane that use it */
  private readonly users = new Map<number, number>();
  private send: { id: number; settings: ProbeSettings }[] = [];
  private forget: number[] = [];

  constructor(private readonly capacity: number) {}

  /** A shard with these settings goes to the lane. */
  use(id: number, settings: ProbeSettings): void {
    const n = this.users.get(id);
    if (n !== undefined) {
      this.users.set(id, n + 1);
      return;
    }
    if (this.users.size >= this.capacity) {
      for (const [old, k] of this.users) {
        if (k > 0) continue;
        this.users.delete(old);
        this.forget.push(old);
        break;
      }
    }
    this.users.set(id, 1);
    this.send.push({ id, settings });
  }

  /** A shard that used `id` ended. */
  done(id: number): void {
    const n = this.users.get(id);
    if (n !== undefined && n > 0) this.users.set(id, n - 1);
  }

  /** What the lane's next message must carry; clears it. */
  take(): { settings: { id: number; settings: ProbeSettings }[]; forget: number[] } {
    const out = { settings: this.send, forget: this.forget };
    this.send = [];
    this.forget = [];
    return out;
  }

  /** Ids the lane holds now (tests, observability). */
  get held(): number[] {
    return [...this.users.keys()];
  }
}
