/**
 * When a failed upstream try may be replaced by another, and what is sent
 * again (pure). The gateway's promise: the client sees one answer, and a
 * request is never sent twice where that could do something twice.
 *
 * A failed try is replaced only when all of these hold:
 *   - no byte of an answer reached the client yet (a tunnel is answered only
 *     once an upstream's tunnel is up; a forwarded request's answer only once
 *     its head came);
 *   - fewer than MAX_TRIES upstreams were tried (upstream-choice.ts offers
 *     at most that many, never one twice);
 *   - for a forwarded request: its body went out whole into the replay
 *     buffer (at most REPLAY_MAX bytes are kept; past that nothing is), and,
 *     once the request may have reached the target (`sent`: it was written
 *     and not refused with 407), its method is idempotent.
 * What is replayed: the request head (built again for the next upstream)
 * and the body bytes kept, in order, then what the client sends after.
 *
 * No try left: the last failure says the answer (`exhaustedRefusal`):
 * none at all (no upstream could be offered) no_upstream; the target
 * refused through a working upstream target_unreachable (the upstream's
 * SOCKS5 REP to a SOCKS5 client); else upstream_failed.
 */
import type { GatewayErrorCode } from './codec/response-head';
import { MAX_TRIES } from './upstream-choice';
import type { LegFailure } from './upstream-leg';

/** A forwarded body kept for a retry at most. */
export const REPLAY_MAX = 64 * 1024;
const IDEMPOTENT: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

export function isIdempotent(method: string): boolean {
  return IDEMPOTENT.has(method);
}

/** The body bytes of a forwarded request that went to an upstream, kept for a retry while small. */
export class ReplayBuffer {
  #chunks: Buffer[] | null = [];
  #length = 0;
  #sent = false;

  /** Bytes kept. */
  get length(): number {
    return this.#length;
  }

  /** Every body byte sent so far is kept (true before any was sent). */
  get whole(): boolean {
    return !this.#sent || this.#chunks !== null;
  }

  /** What to send again to the next upstream, in order. */
  get chunks(): readonly Buffer[] {
    return this.#chunks ?? [];
  }

  /** `chunk` of the body went to an upstream; `keep`: its answer is not in yet (a retry may need it). */
  sent(chunk: Buffer, keep: boolean): void {
    this.#sent = true;
    if (this.#chunks === null) return;
    if (!keep) {
      this.drop();
      return;
    }
    this.#length += chunk.length;
    if (this.#length > REPLAY_MAX) this.drop();
    else this.#chunks.push(chunk);
  }

  /** Nothing is kept from now on (the answer came, or the connection ends). */
  drop(): void {
    this.#chunks = null;
    this.#length = 0;
  }
}

export interface FailedTry {
  /** Bytes of an answer reached the client. */
  answered: boolean;
  /** Upstreams tried so far (the failed one included). */
  tries: number;
  /** The client's request is forwarded (not a tunnel): its method, and whether its body is kept whole. */
  forward: { method: string; replayWhole: boolean } | null;
  failure: Pick<LegFailure, 'sent' | 'blame' | 'rep'>;
}

export type AfterFailure = { kind: 'retry' } | { kind: 'refuse'; code: GatewayErrorCode; rep: number | undefined };

const RETRY: AfterFailure = Object.freeze({ kind: 'retry' });

/** After a failed try: another upstream, or the one answer the client gets. */
export function afterFailure(t: FailedTry): AfterFailure {
  const f = t.forward;
  // a forwarded request goes again only whole and, once it may have reached the target, only when idempotent
  if (t.answered || (f !== null && (!f.replayWhole || (t.failure.sent && !isIdempotent(f.method))))) return { kind: 'refuse', code: 'upstream_failed', rep: undefined };
  if (t.tries >= MAX_TRIES) return { kind: 'refuse', ...exhaustedRefusal(t.failure) };
  return RETRY;
}

/** The answer when no try is left (`last`: the last failure, null when none could be offered). */
export function exhaustedRefusal(last: Pick<LegFailure, 'blame' | 'rep'> | null): { code: GatewayErrorCode; rep: number | undefined } {
  if (last === null) return { code: 'no_upstream', rep: undefined };
  return last.blame === 'target' ? { code: 'target_unreachable', rep: last.rep } : { code: 'upstream_failed', rep: last.rep };
}
