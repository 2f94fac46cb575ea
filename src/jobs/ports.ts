/**
 * What a job actor needs from the outside world, injected (pg-boss style) so
 * the actor is tested with real collaborators or small in-memory ones. The
 * actor is the only bridge between the HTTP layer, the database and the
 * probe pool; these ports are its edges.
 */
import type { CheckUserInfo } from '../accounts/plan';
import type { GeoInfo } from '../geo/geo';
import type { Shard } from '../probe/pool/pool-protocol';
import type { CustomUrlResult, ProbeResult, ProbeSettings } from '../probe/types';
import type { ProxyType } from '../proxy/types';

export type ReserveOutcome =
  /** `user`: `metadata.user` right after the reservation (final when nothing is refunded). */
  | { ok: true; unlimited: boolean; user: CheckUserInfo }
  | { ok: false; required: number; available: number };

/** Quota ledger + history, in the database. */
export interface LedgerPort {
  /** Atomically reserve `units` and open the scan row (status running). */
  reserve(i: {
    accountId: string;
    jobId: string;
    units: number;
    type: ProxyType;
    region: string;
    timeoutMs: number;
    submitted: number;
    now: Date;
  }): Promise<ReserveOutcome>;
  /** Close the scan as completed; refund `refund` units that were reserved but not checked. */
  complete(i: { accountId: string; jobId: string; checked: number; working: number; resultRef: string; refund: number; now: Date }): Promise<void>;
  /** Close the scan as failed and refund `refund` units. */
  fail(i: { accountId: string; jobId: string; checked: number; working: number; refund: number; error: string; now: Date }): Promise<void>;
  /** `metadata.user` of the check response, read after settlement. */
  userInfo(accountId: string, now: Date): Promise<CheckUserInfo>;
}

export type { Shard } from '../probe/pool/pool-protocol';

/** The worker pool. */
export interface PoolPort {
  runShard(shard: Shard, onResults: (batch: ProbeResult[] | CustomUrlResult[]) => void, signal?: AbortSignal): Promise<unknown>;
}

export interface GeoPort {
  lookup(ip: string): GeoInfo;
}

/** Everything a probe needs that the actor does not decide (judge, own addresses, SSRF switch). */
export type SettingsFactory = (type: ProxyType, timeoutMs: number) => ProbeSettings;
