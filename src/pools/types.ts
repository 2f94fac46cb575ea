/**
 * The shapes of a pool (DECISIONS "Pools"): a named set of proxies the
 * service re-checks on a schedule. Shared by the pure pool modules
 * (schedule, history, verdicts, rounds, the proxies query and its SQL, the
 * API shapers) and by the HTTP validators that produce them. Data only.
 *
 * Vocabulary: a "pool" is always the user's kept set of proxies; a pool's
 * "round" is one batch of its due proxies checked (and charged) together.
 */
import type { ParsedProxy } from '../proxy/parse';
import type { CheckType } from '../proxy/types';
import type { PoolTarget } from './targets';

/** A pooled proxy's verdict: `unchecked` until its first check is in. */
export const PROXY_STATUSES = Object.freeze(['working', 'failed', 'unchecked'] as const);
export type ProxyStatus = (typeof PROXY_STATUSES)[number];

export const POOL_STATES = Object.freeze(['active', 'paused'] as const);
export type PoolState = (typeof POOL_STATES)[number];

/** Why a pool is paused: its owner said so, or a round could not be paid (it resumes by itself). */
export const PAUSED_REASONS = Object.freeze(['insufficient_checks', 'owner'] as const);
export type PausedReason = (typeof PAUSED_REASONS)[number];

/** A list URL the pool follows: re-fetched every `everyS` seconds, its addresses read as /check-raw reads lines. */
export interface PoolSource {
  url: string;
  everyS: number;
}

/** How a pool checks its proxies (what POST /pools sets and PATCH may change in part). */
export interface PoolSettings {
  name: string;
  type: CheckType;
  region: string;
  intervalS: number;
  timeoutMs: number;
  https: boolean;
  customUrls: PoolTarget[];
  sources: PoolSource[];
}

/** `counts` of the pool object and of every event. */
export interface PoolCounts {
  total: number;
  working: number;
  failed: number;
  unchecked: number;
}

export const EMPTY_COUNTS: Readonly<PoolCounts> = Object.freeze({ total: 0, working: 0, failed: 0, unchecked: 0 });

/** Addresses of a request, parsed and de-duplicated (the counts are reported as /check reports them). */
export interface AddressList {
  proxies: ParsedProxy[];
  totalInvalid: number;
  totalDuplicates: number;
}

/** A validated POST /pools (src/http/pool-request.ts validatePoolCreate). */
export interface PoolCreate extends AddressList {
  settings: PoolSettings;
}

/** A validated PATCH /pools/{id}: only what was given. */
export interface PoolPatch {
  name?: string;
  intervalS?: number;
  timeoutMs?: number;
  https?: boolean;
  state?: PoolState;
  /** Replaces the pool's targets (each proxy's next check uses them). */
  customUrls?: PoolTarget[];
  add?: AddressList;
  remove?: AddressList;
}
