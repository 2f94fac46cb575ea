/**
 * Job control between API nodes (pure: the subject, the messages and their
 * codec; no I/O). GET and DELETE /checks/{jobId} may reach any API node; the
 * job runs on one (its scan's node_id). The node that answers asks the owner:
 *
 *   API node -> pc.control.<node>   ControlRequest  (core NATS request/reply)
 *            <- reply               ControlReply
 *
 *   ControlRequest {v, op: "progress" | "cancel", run}
 *                  run: the run id (scans.job_id), never the client's jobId
 *   ControlReply   {v, state: "running", checked, total, working}   (progress of a running run)
 *                  {v, state: "completed" | "failed"}               (cancel: how the run settled)
 *                  {v, state: "not_running"}                        (the node has no such run now)
 *
 * The owner cancels through its own cancel path (CheckService.cancelRun) and
 * replies once the job has settled, so the answer to DELETE is the refund
 * already made. No responder (the node is gone) and no reply in time are the
 * requester's "unreachable" (src/cluster/job-control.ts).
 *
 * Decoders accept only what the encoders produce and return null otherwise.
 */
import { isSubjectToken } from './protocol';

export const CONTROL_WIRE_VERSION = 1;
export const CONTROL_SUBJECT_PREFIX = 'pc.control.';
/** Longest run id accepted ('run_' + 16 base64url characters today). */
export const MAX_RUN_CHARS = 256;

export type ControlOp = 'progress' | 'cancel';

export interface ControlRequest {
  v: typeof CONTROL_WIRE_VERSION;
  op: ControlOp;
  run: string;
}

export type ControlReply =
  | { v: typeof CONTROL_WIRE_VERSION; state: 'running'; checked: number; total: number; working: number }
  | { v: typeof CONTROL_WIRE_VERSION; state: 'completed' | 'failed' | 'not_running' };

/** `pc.control.<node>`; throws on a node id that is not one subject token. */
export function controlSubject(node: string): string {
  if (!isSubjectToken(node)) throw new Error(`not a node id: ${JSON.stringify(node)}`);
  return `${CONTROL_SUBJECT_PREFIX}${node}`;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

export function encodeControl(m: ControlRequest | ControlReply): Uint8Array {
  return enc.encode(JSON.stringify(m));
}

function parse(bytes: Uint8Array): Record<string, unknown> | null {
  if (bytes.length > 4096) return null;
  try {
    const v: unknown = JSON.parse(dec.decode(bytes));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

export function decodeControlRequest(bytes: Uint8Array): ControlRequest | null {
  const m = parse(bytes);
  if (m === null || m.v !== CONTROL_WIRE_VERSION) return null;
  if (m.op !== 'progress' && m.op !== 'cancel') return null;
  if (typeof m.run !== 'string' || m.run === '' || m.run.length > MAX_RUN_CHARS) return null;
  return { v: CONTROL_WIRE_VERSION, op: m.op, run: m.run };
}

export function decodeControlReply(bytes: Uint8Array): ControlReply | null {
  const m = parse(bytes);
  if (m === null || m.v !== CONTROL_WIRE_VERSION) return null;
  if (m.state === 'running') {
    if (!isCount(m.checked) || !isCount(m.total) || !isCount(m.working)) return null;
    return { v: CONTROL_WIRE_VERSION, state: 'running', checked: m.checked, total: m.total, working: m.working };
  }
  if (m.state === 'completed' || m.state === 'failed' || m.state === 'not_running') return { v: CONTROL_WIRE_VERSION, state: m.state };
  return null;
}
