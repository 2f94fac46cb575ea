/**
 * The delivery loop (DECISIONS "Webhooks"; docs/DESIGN.md "Webhooks"): every
 * API node runs one. It claims due deliveries (store.claimDeliveries: FOR
 * UPDATE SKIP LOCKED, a claim until CLAIM_MS (20 s) from now, so a dead
 * node's claims are taken over once they expire), signs each attempt with the
 * `standardwebhooks` library (the same `webhook-id` on every attempt of a
 * message, `webhook-timestamp` of this attempt), sends it (sender.ts: 15 s,
 * no redirects, 64 KiB read, the SSRF guard on every attempt) and records
 * the outcome and the next step (delivery-states.ts, schedule.ts) while it
 * still holds the claim. At most `perEndpoint` attempts per endpoint are in
 * flight on this node, at most `maxInFlight` in all.
 *
 * It looks at once when poked (a message written on this node, an endpoint
 * enabled, an attempt ended) and, in a cluster, every `pollMs` (other
 * nodes' messages). With `pollMs` null (embedded: every message is written
 * by this process, which pokes) it does not poll: after each look it asks
 * when the next pending delivery can be claimed (store.nextDueAt: a retry's
 * time, a held claim's end) and sleeps until then, or, with nothing pending,
 * until a poke or the hourly prune: an idle service runs no statement of it
 * (issue 29). A look that fails is tried again after `pollMs` (1 s when
 * null).
 *
 * States (src/state-machine.ts):
 *   created ─start─> running ─stop─> stopping ─> stopped
 *      └──────────────stop───────────────────────────┘
 * stop(): no new claims; attempts in flight are aborted and their claims
 * given back untried (another node, or this one after a restart, sends them:
 * at least once); safe to call twice (one promise); bounded (STOP_WAIT_MS
 * for the attempts to end, then the claims expire on their own).
 */
import { Webhook } from 'standardwebhooks';
import type { Db } from '../../db/client';
import { systemClock, type Clock } from '../clock';
import type { Logger } from '../log';
import { StateMachine, transitionTable } from '../state-machine';
import { afterAttempt } from './delivery-states';
import { messageBody } from './payloads';
import { RETRY_DELAYS_MS } from './schedule';
import { openSecret } from './seal';
import type { DeliveryState } from './types';
import { ATTEMPT_TIMEOUT_MS, sendAttempt, type SendInput, type SendOutcome } from './sender';
import { claimDeliveries, nextDueAt, pruneFinished, recordAttempt, releaseClaims, vacuumDeliveries, type ClaimedDelivery } from './store';

type LoopState = 'created' | 'running' | 'stopping' | 'stopped';
const TABLE = transitionTable<LoopState>({ created: ['running', 'stopped'], running: ['stopping'], stopping: ['stopped'], stopped: [] });

export const STOP_WAIT_MS = 5_000;
/** How long a claim holds: one attempt's deadline and 5 s to record it. A dead node's claims are taken over after it. */
export const CLAIM_MS = ATTEMPT_TIMEOUT_MS + 5_000;
/** Finished deliveries (and their messages) are kept this long for GET /webhooks/{id}/deliveries. */
export const DELIVERY_RETENTION_MS = 7 * 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;
const WARN_EVERY_MS = 60_000;
/** With no poll: the next look after a failed one, or while due deliveries wait for room (an attempt's end pokes sooner). */
const LOOK_AGAIN_MS = 1_000;

export interface DeliveryLoopDeps {
  db: Db;
  nodeId: string;
  /** The sealing key (seal.ts sealingKey(RESULT_SECRET)). */
  key: Buffer;
  allowPrivateTargets: boolean;
  log: Logger;
  clock?: Clock;
  random?: () => number;
  /** How often it looks while not poked (default 1 000); null: never (embedded, see the header). */
  pollMs?: number | null;
  claimMs?: number;
  perEndpoint?: number;
  maxInFlight?: number;
  /** The retry schedule (schedule.ts RETRY_DELAYS_MS; tests shorten it). */
  delays?: readonly number[];
  /** One attempt (sender.ts sendAttempt; tests may wrap it). */
  send?: (input: SendInput, signal: AbortSignal) => Promise<SendOutcome>;
  /** VACUUM the deliveries after this many recorded attempts (PGlite runs no autovacuum); absent: never (PostgreSQL). */
  vacuumEvery?: number;
  /** Told each recorded attempt and the delivery's state after it (metrics, tests). */
  onAttempt?: (d: ClaimedDelivery, outcome: SendOutcome, state: DeliveryState) => void;
}

export class DeliveryLoop {
  readonly #d: Required<Omit<DeliveryLoopDeps, 'onAttempt' | 'vacuumEvery'>> & Pick<DeliveryLoopDeps, 'onAttempt' | 'vacuumEvery'>;
  #sinceVacuum = 0;
  readonly #machine = new StateMachine<LoopState>('webhook delivery loop', TABLE, 'created');
  readonly #busy = new Map<string, number>();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #abort = new AbortController();
  #cancelTimer: () => void = () => {};
  #ticking: Promise<void> | null = null;
  #again = false;
  #lastWarnMs = -Infinity;
  #lastPruneMs = 0;
  #stopping: Promise<void> | null = null;

  constructor(deps: DeliveryLoopDeps) {
    const allow = deps.allowPrivateTargets;
    this.#d = {
      clock: systemClock,
      random: Math.random,
      pollMs: 1_000,
      claimMs: CLAIM_MS,
      perEndpoint: 3,
      maxInFlight: 64,
      delays: RETRY_DELAYS_MS,
      send: (input, signal) => sendAttempt(input, { allowPrivateTargets: allow, signal }),
      ...deps,
    };
  }

  get state(): LoopState {
    return this.#machine.state;
  }

  /** Attempts in flight on this node. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  start(): void {
    this.#machine.move('created', 'running');
    this.#lastPruneMs = this.#d.clock.now();
    this.poke();
  }

  /** Looks for due deliveries now (a message was written on this node). */
  poke(): void {
    if (this.#machine.state !== 'running') return;
    if (this.#ticking !== null) {
      this.#again = true;
      return;
    }
    this.#cancelTimer();
    this.#ticking = this.#tick();
  }

  async #tick(): Promise<void> {
    // ms until the next look when not poked; null: none (the hourly prune only)
    let wait: number | null = this.#d.pollMs;
    try {
      do {
        this.#again = false;
        await this.#claimAndSend();
      } while (this.#again && this.#machine.state === 'running');
      await this.#pruneWhenDue();
      if (this.#d.pollMs === null) wait = await this.#untilDue();
    } catch (err) {
      // the database away: said once a minute, tried again every poll
      wait = this.#d.pollMs ?? LOOK_AGAIN_MS;
      const nowMs = this.#d.clock.now();
      if (nowMs - this.#lastWarnMs >= WARN_EVERY_MS) {
        this.#lastWarnMs = nowMs;
        this.#d.log.warn('webhook delivery loop: a look failed; tried again', { err });
      }
    } finally {
      this.#ticking = null;
      if (this.#machine.state === 'running') {
        const untilPrune = Math.max(0, this.#lastPruneMs + PRUNE_EVERY_MS - this.#d.clock.now());
        // a poke that came after the last claim (during the prune or the due-time read) set #again: look at once,
        // or its message, committed after that claim, would wait for the next poke (with no poll: maybe an hour)
        const delay = this.#again ? 0 : wait === null ? untilPrune : Math.min(wait, untilPrune);
        this.#cancelTimer = this.#d.clock.after(delay, () => this.poke(), { unref: true });
      }
    }
  }

  /** With no poll: ms until the next pending delivery can be claimed (+1: claims compare strictly), null when none is pending. */
  async #untilDue(): Promise<number | null> {
    const at = await nextDueAt(this.#d.db);
    if (at === null) return null;
    const ms = at - this.#d.clock.now();
    // due but not claimed: no room, or its endpoint has perEndpoint in flight (their ends poke)
    return ms >= 0 ? ms + 1 : LOOK_AGAIN_MS;
  }

  async #claimAndSend(): Promise<void> {
    const room = this.#d.maxInFlight - this.#inFlight.size;
    if (room <= 0) return;
    const nowMs = this.#d.clock.now();
    const claimed = await claimDeliveries(this.#d.db, {
      nodeId: this.#d.nodeId,
      nowMs,
      untilMs: nowMs + this.#d.claimMs,
      limit: room,
      perEndpoint: this.#d.perEndpoint,
      busy: this.#busy,
    });
    if (this.#machine.state !== 'running') {
      await releaseClaims(this.#d.db, claimed.map((c) => c.id), this.#d.nodeId);
      return;
    }
    for (const c of claimed) {
      this.#busy.set(c.webhookId, (this.#busy.get(c.webhookId) ?? 0) + 1);
      const p = this.#attempt(c)
        .catch((err: unknown) => this.#d.log.warn('webhook attempt not recorded; its claim expires and it is sent again', { delivery: c.id, err }))
        .finally(() => {
          this.#inFlight.delete(p);
          const n = (this.#busy.get(c.webhookId) ?? 1) - 1;
          if (n <= 0) this.#busy.delete(c.webhookId);
          else this.#busy.set(c.webhookId, n);
          this.poke();
        });
      this.#inFlight.add(p);
    }
  }

  async #attempt(c: ClaimedDelivery): Promise<void> {
    const { clock, db, nodeId } = this.#d;
    const secret = openSecret(this.#d.key, c.webhookId, c.secretSealed);
    const at = clock.now();
    let outcome: SendOutcome;
    if (secret === null) {
      outcome = { status: null, error: 'secret unreadable (RESULT_SECRET changed?): rotate the secret', durationMs: 0 };
    } else {
      const body = messageBody(c.type, new Date(c.createdAtMs).toISOString(), c.data);
      const when = new Date(at);
      const signature = new Webhook(secret).sign(c.messageId, when, body);
      const headers = { 'webhook-id': c.messageId, 'webhook-timestamp': String(Math.floor(at / 1000)), 'webhook-signature': signature };
      outcome = await this.#d.send({ url: c.url, body, headers }, this.#abort.signal);
    }
    if (outcome.aborted === true) {
      // stopping: not an attempt of the receiver's making; given back untried
      await releaseClaims(db, [c.id], nodeId);
      return;
    }
    const endMs = clock.now();
    const next = afterAttempt(c.attempts + 1, outcome, endMs, this.#d.random(), this.#d.delays);
    const attempt = { at: new Date(at).toISOString(), status: outcome.status, error: outcome.error, duration_ms: outcome.durationMs };
    const r = await recordAttempt(db, { deliveryId: c.id, webhookId: c.webhookId, nodeId, attempt, state: next.state, nextAttemptAtMs: next.nextAttemptAtMs, success: next.success, atMs: endMs });
    if (r.disabled) this.#d.log.warn('webhook disabled: no successful delivery for 3 days', { webhook: c.webhookId });
    if (r.recorded) this.#d.onAttempt?.(c, outcome, next.state);
    if (this.#d.vacuumEvery !== undefined && ++this.#sinceVacuum >= this.#d.vacuumEvery) {
      this.#sinceVacuum = 0;
      await vacuumDeliveries(db);
    }
  }

  async #pruneWhenDue(): Promise<void> {
    const nowMs = this.#d.clock.now();
    if (nowMs - this.#lastPruneMs < PRUNE_EVERY_MS) return;
    this.#lastPruneMs = nowMs;
    await pruneFinished(this.#d.db, nowMs - DELIVERY_RETENTION_MS);
  }

  stop(): Promise<void> {
    if (this.#stopping !== null) return this.#stopping;
    if (this.#machine.state === 'created') {
      this.#machine.move('created', 'stopped');
      return (this.#stopping = Promise.resolve());
    }
    this.#machine.move('running', 'stopping');
    this.#cancelTimer();
    this.#abort.abort();
    this.#stopping = (async () => {
      // the look under way (its claims given back when it sees the stop) and the attempts in flight
      const all = Promise.all([this.#ticking, ...this.#inFlight]);
      let cancel = (): void => {};
      const bound = new Promise<void>((resolve) => (cancel = this.#d.clock.after(STOP_WAIT_MS, resolve, { unref: true })));
      await Promise.race([all, bound]);
      cancel();
      this.#machine.move('stopping', 'stopped');
    })();
    return this.#stopping;
  }
}
