/**
 * Job control over NATS (I/O; the wire is ./control-wire.ts): each API node
 * answers requests about the runs it holds on `pc.control.<its node id>`,
 * and asks another node about its runs with a request/reply.
 *
 * Serving: `progress` -> the run's live numbers, `cancel` -> the run is
 * cancelled through CheckService's own cancel path and the reply goes once it
 * has settled (refund made). A malformed request gets no reply (the requester
 * times out: unreachable). Asking: no responder (no node subscribes: it is
 * gone) and no reply within the timeout are `unreachable`; so is a reply that
 * does not decode.
 */
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { LocalRun, RemoteJobControl } from '../jobs/ports';
import type { Logger } from '../log';
import { controlSubject, CONTROL_WIRE_VERSION, decodeControlReply, decodeControlRequest, encodeControl, type ControlOp, type ControlReply } from './control-wire';
import { isNoResponders } from './nats-errors';

/** What a node's control subject serves: its running jobs (CheckService). */
export interface ControlledRuns {
  runProgress(runId: string): LocalRun | null;
  cancelRun(runId: string): Promise<'completed' | 'failed' | null>;
}

/** A progress answer is a map read: 2 s is a node that does not answer. */
export const PROGRESS_TIMEOUT_MS = 2_000;
/** A cancel waits for the job's settlement (writer aborted, scan closed and refunded in one transaction). */
export const CANCEL_TIMEOUT_MS = 15_000;

export function serveJobControl(nc: NatsConnection, nodeId: string, runs: ControlledRuns, log: Logger): Subscription {
  return nc.subscribe(controlSubject(nodeId), {
    callback: (err, msg) => {
      if (err !== null) {
        log.warn('job control subscription error', { err });
        return;
      }
      const req = decodeControlRequest(msg.data);
      if (req === null || !msg.reply) {
        log.warn('dropped a malformed job control request', { subject: msg.subject });
        return;
      }
      void answer(req.op, req.run, runs).then(
        (reply) => msg.respond(encodeControl(reply)),
        (e: unknown) => log.error('job control request failed', { op: req.op, run: req.run, err: e }),
      );
    },
  });
}

async function answer(op: ControlOp, run: string, runs: ControlledRuns): Promise<ControlReply> {
  if (op === 'progress') {
    const p = runs.runProgress(run);
    return p === null ? { v: CONTROL_WIRE_VERSION, state: 'not_running' } : { v: CONTROL_WIRE_VERSION, state: 'running', ...p };
  }
  const end = await runs.cancelRun(run);
  return { v: CONTROL_WIRE_VERSION, state: end ?? 'not_running' };
}

export function jobControlClient(nc: NatsConnection, log: Logger, timeouts = { progressMs: PROGRESS_TIMEOUT_MS, cancelMs: CANCEL_TIMEOUT_MS }): RemoteJobControl {
  const ask = async (node: string, op: ControlOp, run: string, timeout: number): Promise<ControlReply | null> => {
    try {
      const msg = await nc.request(controlSubject(node), encodeControl({ v: CONTROL_WIRE_VERSION, op, run }), { timeout });
      const reply = decodeControlReply(msg.data);
      if (reply === null) log.warn('a malformed job control reply', { node, op, run });
      return reply;
    } catch (err) {
      if (!isNoResponders(err)) log.warn('job control request got no answer', { node, op, run, err });
      return null;
    }
  };
  return {
    async progress(node, runId) {
      const r = await ask(node, 'progress', runId, timeouts.progressMs);
      if (r === null) return 'unreachable';
      if (r.state === 'running') return { checked: r.checked, total: r.total, working: r.working };
      return 'not_running';
    },
    async cancel(node, runId) {
      const r = await ask(node, 'cancel', runId, timeouts.cancelMs);
      if (r === null) return 'unreachable';
      return r.state === 'running' ? 'unreachable' : r.state;
    },
  };
}
