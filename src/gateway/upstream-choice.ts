/**
 * Which of a pool's working proxies a gateway connection goes through
 * (DECISIONS "Gateway"), as pure state: no sockets, no clock of its own
 * (`nowMs` is a parameter), an injected random source.
 *
 * - Matches: the working proxies of the pool whose country is the asked one
 *   and that speak the asked type (their `type`, or one of their passing
 *   `protocols`). The working set is a snapshot the caller keeps (refreshed
 *   from the pool's state and events); the matches of one snapshot and one
 *   filter are computed once and cached with it.
 * - Rotation: round-robin among the matches by default (one cursor per pool
 *   and filter, so every connection moves it on: no "best proxy" that always
 *   wins), uniformly random with `-rotate-random`.
 * - Sessions: a session token keeps its upstream while that upstream keeps
 *   working, at most STICKY_MS (30 minutes) from when it was bound; after
 *   that, or once the upstream failed or left the working set, the next
 *   connection binds a new one. At most `maxSessions` are remembered (the
 *   oldest binding goes first).
 * - Tries: one connection gets an UpstreamAttempt: at most MAX_TRIES
 *   distinct upstreams (the sticky one first, when there is one), each one
 *   `failed` is not offered again and should be re-checked by the pool at
 *   once; `succeeded` binds the session.
 * - Suspects: an upstream that `failed` is offered to no connection of any
 *   filter for SUSPECT_MS (30 s) while another match is left, so the
 *   connections that follow a failure go elsewhere at once instead of each
 *   paying a failed try until the pool's re-check drops it from the working
 *   set. When every match is a suspect, suspects are offered again.
 *
 * An attempt's states: offering (next() gives a candidate) -> succeeded |
 * exhausted (next() gives null: no match left or MAX_TRIES reached; the
 * client gets 502 / SOCKS 0x01).
 */
import type { Random } from '../pools/schedule';
import type { PoolUpstream } from '../pools/working-set';
import type { ProxyType } from '../proxy/types';
import type { Rotation } from './username';

export const STICKY_MS = 30 * 60_000;
export const MAX_TRIES = 3;
export const DEFAULT_MAX_SESSIONS = 100_000;
export const SUSPECT_MS = 30_000;

/** One working proxy as the gateway chains through it: the pools make them (src/pools/working-set.ts). */
export type Upstream = PoolUpstream;

/** A pool's working proxies at one moment; replace the object (not its array) when they change. */
export interface WorkingSet {
  readonly poolId: string;
  readonly upstreams: readonly Upstream[];
}

export interface UpstreamWant {
  country: string | null;
  type: ProxyType | null;
  /** Only upstreams whose last fetch of this pool target passed (`-target-<name>`); absent: any. */
  target?: string | null;
  session: string | null;
  rotate: Rotation;
}

interface Binding {
  key: string;
  since: number;
}

interface Matches {
  list: readonly Upstream[];
  byKey: Map<string, Upstream>;
}

export function matchesWant(u: Upstream, want: Pick<UpstreamWant, 'country' | 'type' | 'target'>): boolean {
  if (want.country !== null && u.country !== want.country) return false;
  if (want.target != null && !(u.targets ?? []).includes(want.target)) return false;
  if (want.type !== null && u.type !== want.type && !u.protocols.includes(want.type)) return false;
  return true;
}

const filterKey = (want: Pick<UpstreamWant, 'country' | 'type' | 'target'>): string => `${want.country ?? ''}|${want.type ?? ''}|${want.target ?? ''}`;

export class UpstreamChooser {
  readonly #random: Random;
  readonly #stickyMs: number;
  readonly #maxSessions: number;
  readonly #matches = new WeakMap<WorkingSet, Map<string, Matches>>();
  /** Round-robin cursors, per pool and filter. */
  readonly #cursors = new Map<string, number>();
  /** Session bindings, per pool and token, oldest first. */
  readonly #sessions = new Map<string, Binding>();
  /** Upstreams that failed recently, per pool and key: until when (ms), oldest first. */
  readonly #suspects = new Map<string, number>();

  constructor(opts: { random?: Random; stickyMs?: number; maxSessions?: number } = {}) {
    this.#random = opts.random ?? Math.random;
    this.#stickyMs = opts.stickyMs ?? STICKY_MS;
    this.#maxSessions = opts.maxSessions ?? DEFAULT_MAX_SESSIONS;
  }

  /** Session bindings remembered. */
  get sessions(): number {
    return this.#sessions.size;
  }

  /** Start choosing for one connection. */
  begin(working: WorkingSet, want: UpstreamWant, nowMs: number): UpstreamAttempt {
    const m = this.#matchesOf(working, want);
    let sticky: Upstream | null = null;
    const sessionKey = want.session === null ? null : `${working.poolId}|${want.session}`;
    if (sessionKey !== null) {
      const b = this.#sessions.get(sessionKey);
      const u = b === undefined ? undefined : m.byKey.get(b.key);
      if (b !== undefined && (u === undefined || nowMs - b.since >= this.#stickyMs)) this.#sessions.delete(sessionKey);
      else if (u !== undefined) sticky = u;
    }
    return new UpstreamAttempt(this, m.list, working.poolId, `${working.poolId}|${filterKey(want)}`, want.rotate, sessionKey, sticky, nowMs);
  }

  /** Forget bindings older than the sticky limit and suspects whose time is over. */
  prune(nowMs: number): void {
    for (const [k, b] of this.#sessions) if (nowMs - b.since >= this.#stickyMs) this.#sessions.delete(k);
    for (const [k, until] of this.#suspects) if (until <= nowMs) this.#suspects.delete(k);
  }

  /** Suspects remembered (until pruned). */
  get suspects(): number {
    return this.#suspects.size;
  }

  /** @internal whether an upstream of a pool failed within SUSPECT_MS. */
  isSuspect(poolId: string, key: string, nowMs: number): boolean {
    if (this.#suspects.size === 0) return false;
    const until = this.#suspects.get(`${poolId}|${key}`);
    return until !== undefined && until > nowMs;
  }

  /** @internal an upstream failed: offered to nobody for SUSPECT_MS while another match is left. */
  suspect(poolId: string, key: string, nowMs: number): void {
    const k = `${poolId}|${key}`;
    this.#suspects.delete(k);
    if (this.#suspects.size >= this.#maxSessions) {
      const oldest = this.#suspects.keys().next();
      if (!oldest.done) this.#suspects.delete(oldest.value);
    }
    this.#suspects.set(k, nowMs + SUSPECT_MS);
  }

  #matchesOf(working: WorkingSet, want: UpstreamWant): Matches {
    let perSet = this.#matches.get(working);
    if (perSet === undefined) {
      perSet = new Map();
      this.#matches.set(working, perSet);
    }
    const k = filterKey(want);
    let m = perSet.get(k);
    if (m === undefined) {
      const list = want.country === null && want.type === null && want.target == null ? working.upstreams : working.upstreams.filter((u) => matchesWant(u, want));
      m = { list, byKey: new Map(list.map((u) => [u.key, u])) };
      perSet.set(k, m);
    }
    return m;
  }

  /** @internal the next round-robin index for a cursor (UpstreamAttempt). */
  nextIndex(cursorKey: string, n: number): number {
    const i = this.#cursors.get(cursorKey) ?? 0;
    this.#cursors.set(cursorKey, (i + 1) % Number.MAX_SAFE_INTEGER);
    return i % n;
  }

  /** @internal a uniformly random index below n. */
  randomIndex(n: number): number {
    const r = this.#random();
    return Math.min(n - 1, Math.floor((r >= 0 && r < 1 ? r : 0) * n));
  }

  /** @internal bind (or keep) a session's upstream. */
  bind(sessionKey: string, key: string, nowMs: number): void {
    const b = this.#sessions.get(sessionKey);
    if (b !== undefined && b.key === key) return;
    this.#sessions.delete(sessionKey);
    if (this.#sessions.size >= this.#maxSessions) {
      const oldest = this.#sessions.keys().next();
      if (!oldest.done) this.#sessions.delete(oldest.value);
    }
    this.#sessions.set(sessionKey, { key, since: nowMs });
  }

  /** @internal a session's upstream failed: the next connection binds another. */
  unbind(sessionKey: string, key: string): void {
    if (this.#sessions.get(sessionKey)?.key === key) this.#sessions.delete(sessionKey);
  }
}

export class UpstreamAttempt {
  readonly #chooser: UpstreamChooser;
  readonly #list: readonly Upstream[];
  readonly #poolId: string;
  readonly #cursorKey: string;
  readonly #rotate: Rotation;
  readonly #sessionKey: string | null;
  readonly #nowMs: number;
  #sticky: Upstream | null;
  readonly #tried = new Set<string>();
  /** Upstreams that failed in this attempt (the pool re-checks them). */
  readonly failedUpstreams: Upstream[] = [];
  #done = false;

  constructor(
    chooser: UpstreamChooser,
    list: readonly Upstream[],
    poolId: string,
    cursorKey: string,
    rotate: Rotation,
    sessionKey: string | null,
    sticky: Upstream | null,
    nowMs: number,
  ) {
    this.#chooser = chooser;
    this.#list = list;
    this.#poolId = poolId;
    this.#cursorKey = cursorKey;
    this.#rotate = rotate;
    this.#sessionKey = sessionKey;
    this.#sticky = sticky;
    this.#nowMs = nowMs;
  }

  /** Candidates offered so far. */
  get tries(): number {
    return this.#tried.size;
  }

  /** Working proxies that match (0: the client gets no_upstream). */
  get matches(): number {
    return this.#list.length;
  }

  /** The next upstream to try, or null: no match left, MAX_TRIES reached, or already succeeded. */
  next(): Upstream | null {
    if (this.#done || this.#tried.size >= MAX_TRIES || this.#tried.size >= this.#list.length) return null;
    let u: Upstream | null = null;
    if (this.#sticky !== null) {
      u = this.#sticky;
      this.#sticky = null;
    } else {
      u = this.#rotate === 'random' ? this.#pickRandom() : this.#pickRoundRobin();
    }
    if (u !== null) this.#tried.add(u.key);
    return u;
  }

  /** `u` itself failed (not the target): not offered again, suspect for SUSPECT_MS, its session unbound. */
  failed(u: Upstream): void {
    this.failedUpstreams.push(u);
    this.#chooser.suspect(this.#poolId, u.key, this.#nowMs);
    if (this.#sessionKey !== null) this.#chooser.unbind(this.#sessionKey, u.key);
  }

  succeeded(u: Upstream): void {
    this.#done = true;
    if (this.#sessionKey !== null) this.#chooser.bind(this.#sessionKey, u.key, this.#nowMs);
  }

  #usable(u: Upstream, suspectsToo: boolean): boolean {
    return !this.#tried.has(u.key) && (suspectsToo || !this.#chooser.isSuspect(this.#poolId, u.key, this.#nowMs));
  }

  #pickRoundRobin(): Upstream | null {
    const n = this.#list.length;
    for (const suspectsToo of [false, true]) {
      for (let k = 0; k < n; k++) {
        const u = this.#list[this.#chooser.nextIndex(this.#cursorKey, n)] as Upstream;
        if (this.#usable(u, suspectsToo)) return u;
      }
    }
    return null;
  }

  #pickRandom(): Upstream | null {
    for (const suspectsToo of [false, true]) {
      const left = this.#list.filter((u) => this.#usable(u, suspectsToo));
      if (left.length > 0) return left[this.#chooser.randomIndex(left.length)] as Upstream;
    }
    return null;
  }
}
