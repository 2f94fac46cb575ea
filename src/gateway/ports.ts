/**
 * What the gateway needs from the rest of the service, as small ports (the
 * composition root plugs in the real adapters; tests plug in in-memory ones):
 *
 * - GatewayPools: the pool side. `authenticate` is the API's key check (the
 *   same KeyCache in front of the same query, so a revoked key stops working
 *   here when it stops working on the API); `workingSet` is a pool's working
 *   proxies as the gateway chains through them, or null when the account has
 *   no such pool (another account's pool is null too: the client gets the
 *   same 407 as for a wrong key); `reportFailure` tells the pool that one of
 *   them failed in use, so the pool re-checks it at once. The pool side keeps
 *   the working set cached (refreshed by its own events) and returns the same
 *   WorkingSet object until it changes (upstream-choice.ts caches matches per
 *   object); it coalesces reports (the gateway reports every failed try).
 *   Upstreams come from the pool, which checked them through the probe's
 *   SSRF guard: the gateway applies the guard to the client's target only.
 * - FailureGate: the failed-attempt throttle per client address (the admin
 *   listener's FailureThrottle, src/admin/throttle.ts, fits it as it is).
 * - GatewayCounters: what is counted (not charged): per account, connections
 *   and bytes (for /me `gateway`), and per node, refusals and failed tries
 *   (for /metrics).
 */
import type { GatewayErrorCode } from './codec/response-head';
import type { Upstream, WorkingSet } from './upstream-choice';

export interface GatewayAccount {
  id: string;
}

export interface GatewayPools {
  authenticate(key: string): Promise<GatewayAccount | null>;
  workingSet(accountId: string, poolId: string): Promise<WorkingSet | null>;
  reportFailure(poolId: string, upstream: Upstream): void;
}

export interface FailureGate {
  /** Whole seconds `address` must still wait, or null when it may try. */
  blockedFor(address: string): number | null;
  /** Counts a failed attempt from `address`; true when this one blocks it. */
  fail(address: string): boolean;
}

/** Why a client connection was answered with an error: an X-Gateway-Error code, or `auth` (407 / SOCKS5 auth failure). */
export type GatewayRefusal = GatewayErrorCode | 'auth';

export interface GatewayCounters {
  /** A client connection authenticated for `accountId` (counted once, when its target is accepted). */
  connection(accountId: string): void;
  /** Bytes relayed for `accountId`, both directions together (reported in batches and at close). */
  bytes(accountId: string, n: number): void;
  /** A client answered with an error instead of a connection. */
  refused(reason: GatewayRefusal): void;
  /** One upstream try failed and was reported to its pool. */
  upstreamFailed(): void;
}

export const NO_COUNTERS: GatewayCounters = Object.freeze({
  connection() {},
  bytes() {},
  refused() {},
  upstreamFailed() {},
});
