/**
 * ProgressHub: fans a job's progress out to its WebSocket subscribers.
 *
 * A subscriber may arrive before the job starts (it waits), while it runs, or
 * shortly after it ended (it gets the final message at once; finals linger
 * `lingerMs`). Per job one ProgressThrottle lets ~10 messages a second
 * through, coalesced to the latest state; the final `completed` / `failed`
 * always goes out, then every subscriber is closed with 1000.
 *
 * Access: a subscriber that authenticated carries its account id. Once the
 * job's owner is known, a subscriber of another account is closed with 1008
 * and never sees a message. Anonymous subscribers (allowed unless
 * WS_REQUIRE_AUTH) see every message, but the final `result_url` goes only to
 * the owner's authenticated subscribers.
 *
 * In a cluster (src/cluster/progress.ts) the same hub is also fed with the
 * states of jobs that run on other nodes; `ended` and `forget` serve that
 * adapter (is a final lingering here; drop a remote job nobody follows).
 *
 * Memory: a subscriber whose unsent buffer passes `maxBufferedBytes` is closed
 * with 1013 (it does not read); waiting subscribers per job and jobs waited on
 * are capped, so nothing here grows without bound.
 *
 * Caps between tenants (refused with 1013, like the global ones): an
 * authenticated subscriber counts against its account (`maxPerAccount`, 64),
 * an anonymous one against its client address (`maxPerAddress`, 16; a
 * subscriber without an address counts only against the global caps). A
 * subscription counts while it is open and waits for messages; a late
 * subscriber served a lingering final at once does not count. So one client
 * at its cap leaves the global caps (32 per job, 10 000 jobs waited on) to
 * everyone else; those stay as the last resort.
 */
import { systemClock, type Clock } from '../clock';
import type { ProgressPort, Subscriber, SubscribeOutcome } from './ports';
import { progressMessage, ProgressThrottle, type ProgressMessage, type ProgressState } from './progress';

export type { Subscriber, SubscribeOutcome } from './ports';


export const WS_CLOSE = Object.freeze({
  NORMAL: 1000,
  POLICY: 1008,
  TRY_AGAIN_LATER: 1013,
} as const);

export interface HubOptions {
  maxBufferedBytes?: number;
  /** How long a final message is kept for late subscribers. */
  lingerMs?: number;
  maxSubscribersPerJob?: number;
  maxWaitingJobs?: number;
  /** Open subscriptions per authenticated account. */
  maxPerAccount?: number;
  /** Open subscriptions per client address, anonymous subscribers. */
  maxPerAddress?: number;
  intervalMs?: number;
  /** The throttle's and the linger's clock (default systemClock; tests pass a fake one). */
  clock?: Clock;
}

/** Whom a subscription counts against: its account, else its address, else nobody (global caps only). */
function tenantOf(sub: Subscriber): { key: string; kind: 'account' | 'address' } | null {
  if (sub.accountId !== null) return { key: `account:${sub.accountId}`, kind: 'account' };
  if (sub.address !== undefined && sub.address !== null && sub.address !== '') return { key: `address:${sub.address}`, kind: 'address' };
  return null;
}

interface Entry {
  owner: string | null;
  subs: Set<Subscriber>;
  throttle: ProgressThrottle<ProgressMessage> | null;
  final: ProgressMessage | null;
  resultUrl: string | null;
  /** cancels the linger timer */
  lingerTimer: (() => void) | null;
}

export class ProgressHub implements ProgressPort {
  readonly #jobs = new Map<string, Entry>();
  readonly #maxBuffered: number;
  readonly #lingerMs: number;
  readonly #maxSubs: number;
  readonly #maxWaiting: number;
  readonly #intervalMs: number;
  readonly #clock: Clock;
  readonly #maxPerAccount: number;
  readonly #maxPerAddress: number;
  /** Open subscriptions, every job together (`subscribers`). */
  #subscribers = 0;
  /** Open subscriptions per tenant (tenantOf); an entry goes at 0. */
  readonly #perTenant = new Map<string, number>();

  constructor(opts: HubOptions = {}) {
    this.#maxBuffered = opts.maxBufferedBytes ?? 256 * 1024;
    this.#lingerMs = opts.lingerMs ?? 60_000;
    this.#maxSubs = opts.maxSubscribersPerJob ?? 32;
    this.#maxWaiting = opts.maxWaitingJobs ?? 10_000;
    this.#intervalMs = opts.intervalMs ?? 100;
    this.#maxPerAccount = opts.maxPerAccount ?? 64;
    this.#maxPerAddress = opts.maxPerAddress ?? 16;
    this.#clock = opts.clock ?? systemClock;
  }

  /** Open subscriptions counted against an account (or, anonymous, an address): for tests and metrics. */
  openFor(who: { accountId: string | null; address?: string | null }): number {
    const t = tenantOf(who as Subscriber);
    return t === null ? 0 : (this.#perTenant.get(t.key) ?? 0);
  }

  /** Open subscriptions (WebSockets following a job), all jobs together: for metrics. */
  get subscribers(): number {
    return this.#subscribers;
  }

  /** Jobs known to the hub (running, waited on, or lingering): for tests and metrics. */
  get size(): number {
    return this.#jobs.size;
  }

  /** True while the job's final message lingers here (a subscriber now gets it at once). */
  ended(jobId: string): boolean {
    return (this.#jobs.get(jobId)?.final ?? null) !== null;
  }

  /**
   * Drops a job that nobody waits on and that has not ended (a job run by
   * another node and no longer followed: its final will never come here).
   * No-op otherwise.
   */
  forget(jobId: string): void {
    const e = this.#jobs.get(jobId);
    if (e === undefined || e.final !== null || e.subs.size > 0) return;
    e.throttle?.close();
    this.#jobs.delete(jobId);
  }

  subscribe(jobId: string, sub: Subscriber): SubscribeOutcome {
    let e = this.#jobs.get(jobId);
    if (e !== undefined && e.owner !== null && sub.accountId !== null && sub.accountId !== e.owner) {
      return { ok: false, code: WS_CLOSE.POLICY, reason: 'job belongs to another account' };
    }
    if (e !== undefined && e.final !== null) {
      this.#deliver(sub, e.final, e.owner, e.resultUrl);
      sub.close(WS_CLOSE.NORMAL, e.final.status);
      return { ok: true, unsubscribe: () => {} };
    }
    if (e !== undefined && e.subs.size >= this.#maxSubs) return { ok: false, code: WS_CLOSE.TRY_AGAIN_LATER, reason: 'too many subscribers for this job' };
    const tenant = tenantOf(sub);
    if (tenant !== null && (this.#perTenant.get(tenant.key) ?? 0) >= (tenant.kind === 'account' ? this.#maxPerAccount : this.#maxPerAddress)) {
      return { ok: false, code: WS_CLOSE.TRY_AGAIN_LATER, reason: `too many subscriptions for this ${tenant.kind} (${tenant.kind === 'account' ? 'WS_MAX_PER_ACCOUNT' : 'a quarter of WS_MAX_PER_ACCOUNT'})` };
    }
    if (e === undefined) {
      if (this.#jobs.size >= this.#maxWaiting) return { ok: false, code: WS_CLOSE.TRY_AGAIN_LATER, reason: 'too many jobs waited on' };
      e = { owner: null, subs: new Set(), throttle: null, final: null, resultUrl: null, lingerTimer: null };
      this.#jobs.set(jobId, e);
    }
    e.subs.add(sub);
    this.#subscribers++;
    if (tenant !== null) this.#perTenant.set(tenant.key, (this.#perTenant.get(tenant.key) ?? 0) + 1);
    const entry = e;
    return {
      ok: true,
      unsubscribe: () => {
        this.#remove(entry, sub);
        if (entry.subs.size === 0 && entry.owner === null && entry.final === null && this.#jobs.get(jobId) === entry) {
          this.#jobs.delete(jobId);
        }
      },
    };
  }

  /** Takes `s` out of `e` and uncounts it (once, however often it is called). */
  #remove(e: Entry, s: Subscriber): void {
    if (!e.subs.delete(s)) return;
    this.#subscribers--;
    const tenant = tenantOf(s);
    if (tenant === null) return;
    const n = (this.#perTenant.get(tenant.key) ?? 1) - 1;
    if (n <= 0) this.#perTenant.delete(tenant.key);
    else this.#perTenant.set(tenant.key, n);
  }

  #removeAll(e: Entry): void {
    for (const s of [...e.subs]) this.#remove(e, s);
  }

  /** A job's progress. `final` marks the last message (with the owner's result link, if any). */
  publish(owner: string, state: ProgressState, final: { resultUrl: string | null } | null = null): void {
    let e = this.#jobs.get(state.jobId);
    if (e === undefined || e.final !== null) {
      e?.lingerTimer?.();
      e = { owner: null, subs: new Set(), throttle: null, final: null, resultUrl: null, lingerTimer: null };
      this.#jobs.set(state.jobId, e);
    }
    if (e.owner === null) {
      e.owner = owner;
      for (const s of e.subs) {
        if (s.accountId !== null && s.accountId !== owner) {
          this.#remove(e, s);
          s.close(WS_CLOSE.POLICY, 'job belongs to another account');
        }
      }
    }
    const entry = e;
    // Nobody listening: skip building the message (a job publishes per result
    // batch). Finals are always built: they linger for late subscribers.
    const isFinal = state.phase === 'completed' || state.phase === 'failed';
    if (entry.subs.size === 0 && !isFinal) return;
    if (entry.throttle === null) {
      entry.throttle = new ProgressThrottle<ProgressMessage>({
        intervalMs: this.#intervalMs,
        emit: (msg) => this.#emit(state.jobId, entry, msg),
        clock: this.#clock,
      });
    }
    const msg = progressMessage(state);
    if (msg.status !== 'in_progress') entry.resultUrl = final?.resultUrl ?? null;
    entry.throttle.offer(msg);
  }

  /** Close every subscriber (shutdown). Safe to call twice. */
  closeAll(): void {
    for (const [, e] of this.#jobs) {
      e.throttle?.close();
      e.lingerTimer?.();
      for (const s of e.subs) s.close(WS_CLOSE.NORMAL, 'server shutting down');
      this.#removeAll(e);
    }
    this.#jobs.clear();
  }

  #emit(jobId: string, e: Entry, msg: ProgressMessage): void {
    for (const s of e.subs) {
      if (s.bufferedAmount() > this.#maxBuffered) {
        this.#remove(e, s);
        s.close(WS_CLOSE.TRY_AGAIN_LATER, 'subscriber too slow');
        continue;
      }
      this.#deliver(s, msg, e.owner, e.resultUrl);
    }
    if (msg.status === 'in_progress') return;
    e.final = msg;
    for (const s of e.subs) s.close(WS_CLOSE.NORMAL, msg.status);
    this.#removeAll(e);
    e.throttle = null;
    e.lingerTimer = this.#clock.after(
      this.#lingerMs,
      () => {
        if (this.#jobs.get(jobId) === e) this.#jobs.delete(jobId);
      },
      { unref: true },
    );
  }

  #deliver(s: Subscriber, msg: ProgressMessage, owner: string | null, resultUrl: string | null): void {
    const withLink = msg.status === 'completed' && resultUrl !== null && s.accountId !== null && s.accountId === owner;
    try {
      s.send(JSON.stringify(withLink ? { ...msg, result_url: resultUrl } : msg));
    } catch {
      // a closed socket: its close handler unsubscribes it
    }
  }
}
