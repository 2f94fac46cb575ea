/**
 * Progress on NATS (pure: names, the message and its codec; no I/O).
 *
 *   API node -> pc.progress.<jobId>   ProgressWire (core NATS, ~10/s per job, the final always)
 *   KV bucket pc_finals, key <jobId>  the job's final ProgressWire (bucket TTL = the hub's linger, 60 s)
 *
 * A job's node (its origin) publishes every state its ProgressHub would send,
 * throttled per job; every other node that has a WebSocket waiting on that
 * jobId subscribes to the subject and feeds what it hears into its own hub.
 * The origin stores the final in the KV *before* it publishes it on the
 * subject, and a follower subscribes *before* it reads the KV, so a follower
 * gets the final one way or the other (see src/cluster/progress.ts).
 *
 * A message carries the job's state (the hub builds the client's message from
 * it, so `timestamp` stays the origin's), the owner account (the receiving
 * hub closes another account's subscriber with 1008), the origin node id (a
 * node drops its own echo) and, on the final only, the result URL (internal
 * network: the receiving hub gives it only to the owner's authenticated
 * subscribers, exactly as the origin's does).
 *
 * jobIds (src/job-id.ts: [A-Za-z0-9_-]{3,64}) are valid single subject tokens
 * and valid KV keys as they are: no encoding. `progressSubject` refuses
 * anything else rather than build a wildcard or multi-token subject.
 *
 * `decodeProgressWire` accepts only what `encodeProgressWire` can produce
 * (bounded strings, finite non-negative counts, known phases, a final only on
 * a completed/failed state) and returns null for anything else.
 */
import { isJobId } from '../job-id';
import { PROGRESS_PHASES, type ProgressPhase, type ProgressState, type WorkPhase } from '../jobs/progress';
import { isSubjectToken } from './protocol';

export const PROGRESS_WIRE_VERSION = 1;
export const PROGRESS_SUBJECT_PREFIX = 'pc.progress.';
export const FINALS_BUCKET = 'pc_finals';

/** Longest owner account id, result URL and state message accepted. */
export const MAX_OWNER_CHARS = 128;
export const MAX_URL_CHARS = 4096;
export const MAX_MESSAGE_CHARS = 2048;
/** Longest encoded message accepted (far above a real one, ~600 bytes). */
export const MAX_WIRE_BYTES = 16 * 1024;

export interface ProgressWire {
  v: typeof PROGRESS_WIRE_VERSION;
  /** The origin node's id. */
  node: string;
  /** The job's owner account. */
  owner: string;
  state: ProgressState;
  /** Non-null only on a completed/failed state. */
  final: { resultUrl: string | null } | null;
}

/** `pc.progress.<jobId>`; throws on anything that is not a valid jobId. */
export function progressSubject(jobId: string): string {
  if (!isJobId(jobId)) throw new Error(`not a jobId: ${JSON.stringify(jobId)}`);
  return `${PROGRESS_SUBJECT_PREFIX}${jobId}`;
}

export function isTerminalPhase(phase: ProgressPhase): boolean {
  return phase === PROGRESS_PHASES.COMPLETED || phase === PROGRESS_PHASES.FAILED;
}

const PHASES = new Set<string>(Object.values(PROGRESS_PHASES));
const WORK_PHASES = new Set<string>(Object.values(PROGRESS_PHASES).filter((p) => p !== 'completed' && p !== 'failed'));

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** The message's bytes (JSON). A final given with a non-terminal state is dropped. */
export function encodeProgressWire(node: string, owner: string, state: ProgressState, final: { resultUrl: string | null } | null): Uint8Array {
  const w: ProgressWire = {
    v: PROGRESS_WIRE_VERSION,
    node,
    owner,
    state,
    final: isTerminalPhase(state.phase) && final !== null ? { resultUrl: final.resultUrl } : null,
  };
  return encoder.encode(JSON.stringify(w));
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
const isCount = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
const isTime = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0;
const isText = (x: unknown, max: number): x is string => typeof x === 'string' && x.length <= max;
const optional = <T>(x: unknown, ok: (y: unknown) => y is T): boolean => x === undefined || ok(x);
const optionalOrNull = <T>(x: unknown, ok: (y: unknown) => y is T): boolean => x === undefined || x === null || ok(x);

function decodeState(s: unknown): ProgressState | null {
  if (!isObject(s)) return null;
  if (typeof s.jobId !== 'string' || !isJobId(s.jobId)) return null;
  if (typeof s.phase !== 'string' || !PHASES.has(s.phase)) return null;
  if (s.failedIn !== undefined && (typeof s.failedIn !== 'string' || !WORK_PHASES.has(s.failedIn))) return null;
  if (!isCount(s.total) || !isCount(s.checked) || !isCount(s.working)) return null;
  if (typeof s.hasCustomUrls !== 'boolean' || !isTime(s.now)) return null;
  if (!optional(s.batchSize, isCount) || s.batchSize === 0) return null;
  if (!optional(s.customChecked, isCount) || !optional(s.customTotal, isCount)) return null;
  if (!optionalOrNull(s.probeStartedAt, isTime) || !optionalOrNull(s.customStartedAt, isTime)) return null;
  if (!optional(s.message, (x): x is string => isText(x, MAX_MESSAGE_CHARS))) return null;
  const state: ProgressState = {
    jobId: s.jobId,
    phase: s.phase as ProgressPhase,
    total: s.total,
    checked: s.checked,
    working: s.working,
    hasCustomUrls: s.hasCustomUrls,
    now: s.now,
  };
  if (s.failedIn !== undefined) state.failedIn = s.failedIn as WorkPhase;
  if (s.batchSize !== undefined) state.batchSize = s.batchSize as number;
  if (s.customChecked !== undefined) state.customChecked = s.customChecked as number;
  if (s.customTotal !== undefined) state.customTotal = s.customTotal as number;
  if (s.probeStartedAt !== undefined) state.probeStartedAt = s.probeStartedAt as number | null;
  if (s.customStartedAt !== undefined) state.customStartedAt = s.customStartedAt as number | null;
  if (s.message !== undefined) state.message = s.message as string;
  return state;
}

/** The message in `bytes`, or null when it is not a well-formed ProgressWire. */
export function decodeProgressWire(bytes: Uint8Array): ProgressWire | null {
  if (bytes.byteLength > MAX_WIRE_BYTES) return null;
  let j: unknown;
  try {
    j = JSON.parse(decoder.decode(bytes));
  } catch {
    return null;
  }
  if (!isObject(j) || j.v !== PROGRESS_WIRE_VERSION) return null;
  if (!isSubjectToken(j.node)) return null;
  if (typeof j.owner !== 'string' || j.owner.length === 0 || j.owner.length > MAX_OWNER_CHARS) return null;
  const state = decodeState(j.state);
  if (state === null) return null;
  let final: ProgressWire['final'] = null;
  if (j.final !== null) {
    if (!isObject(j.final) || !isTerminalPhase(state.phase)) return null;
    const u = j.final.resultUrl;
    if (u !== null && !(isText(u, MAX_URL_CHARS) && /^https?:\/\//.test(u))) return null;
    final = { resultUrl: u };
  }
  return { v: PROGRESS_WIRE_VERSION, node: j.node, owner: j.owner, state, final };
}
