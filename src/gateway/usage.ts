/**
 * Gateway usage per account over the last 24 hours (counted, never charged:
 * DECISIONS "Gateway"), for /me `gateway: {connections_24h, bytes_24h}`.
 * Pure: an injectable clock, no I/O.
 *
 * Each account that used the gateway keeps 24 hourly buckets in a ring (the
 * bucket of hour h is slot h % 24, reset when a later hour reuses it); the
 * last 24 hours are the buckets of the current hour and the 23 before it, so
 * a figure is at most one hour coarse at its old end. Accounts with nothing
 * in their window are dropped by `prune`, which a new connection runs at
 * most once an hour (no timer), so memory follows the accounts active in a
 * day.
 *
 * One process's view: in a cluster every API node counts what it relayed
 * (the figures of /me are those of the node that answers it).
 */

export interface GatewayUsageFigures {
  connections_24h: number;
  bytes_24h: number;
}

const HOURS = 24;
const HOUR_MS = 3_600_000;

interface Ring {
  hours: Int32Array;
  connections: Float64Array;
  bytes: Float64Array;
}

export class GatewayUsage {
  readonly #accounts = new Map<string, Ring>();
  readonly #now: () => number;
  #prunedHour = 0;

  constructor(opts: { now?: () => number } = {}) {
    this.#now = opts.now ?? Date.now;
  }

  /** Accounts with a ring (active within the last day, until pruned). */
  get accounts(): number {
    return this.#accounts.size;
  }

  connection(accountId: string): void {
    const hour = Math.floor(this.#now() / HOUR_MS);
    if (hour !== this.#prunedHour) {
      this.#prunedHour = hour;
      this.prune();
    }
    const [ring, slot] = this.#slot(accountId);
    (ring.connections[slot] as number) += 1;
  }

  bytes(accountId: string, n: number): void {
    if (!(n > 0)) return;
    const [ring, slot] = this.#slot(accountId);
    (ring.bytes[slot] as number) += n;
  }

  of(accountId: string): GatewayUsageFigures {
    const ring = this.#accounts.get(accountId);
    if (ring === undefined) return { connections_24h: 0, bytes_24h: 0 };
    const hour = Math.floor(this.#now() / HOUR_MS);
    let connections = 0;
    let bytes = 0;
    for (let i = 0; i < HOURS; i++) {
      if (hour - (ring.hours[i] as number) >= HOURS) continue;
      connections += ring.connections[i] as number;
      bytes += ring.bytes[i] as number;
    }
    return { connections_24h: connections, bytes_24h: bytes };
  }

  /** Drops accounts with nothing in the last 24 hours. */
  prune(): void {
    const hour = Math.floor(this.#now() / HOUR_MS);
    for (const [id, ring] of this.#accounts) {
      if (ring.hours.every((h) => hour - h >= HOURS)) this.#accounts.delete(id);
    }
  }

  #slot(accountId: string): [Ring, number] {
    const hour = Math.floor(this.#now() / HOUR_MS);
    let ring = this.#accounts.get(accountId);
    if (ring === undefined) {
      ring = { hours: new Int32Array(HOURS).fill(-HOURS), connections: new Float64Array(HOURS), bytes: new Float64Array(HOURS) };
      this.#accounts.set(accountId, ring);
    }
    const slot = hour % HOURS;
    if (ring.hours[slot] !== hour) {
      ring.hours[slot] = hour;
      ring.connections[slot] = 0;
      ring.bytes[slot] = 0;
    }
    return [ring, slot];
  }
}
