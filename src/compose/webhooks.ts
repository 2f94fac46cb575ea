/**
 * The webhooks' start step (DECISIONS "Webhooks"; docs/DESIGN.md
 * "Webhooks"): the WebhookService the HTTP layer takes, the outbox the pool
 * events are written to, and this node's delivery loop.
 *
 * - Sealing key: derived from RESULT_SECRET (src/webhooks/seal.ts), which a
 *   cluster's API nodes share: any node signs any endpoint's messages.
 * - Pool events: `poolEvents` is the PoolEventsPort the rounds publish to
 *   beside the events hub (src/server.ts), and the PoolService publishes the
 *   owner's pause and resume to the same port (src/jobs/pool-service.ts
 *   publishTo).
 * - check.completed is written where an async check's scan is closed
 *   (src/jobs/ledger.ts, src/accounts/orphans.ts); both poke the loop
 *   (src/server.ts `webhookWritten`: the settlements and the orphan sweep
 *   are made before the loop).
 *
 * Started after the database and the pools, before the pools' owner and
 * the listeners; its undo (the loop's stop: no new claims, attempts in flight
 * aborted and given back) runs after theirs and before the database closes.
 * `schedule` (tests): a shorter retry schedule and poll interval.
 */
import type { Config } from '../config';
import type { Logger } from '../log';
import type { ServiceMetrics } from '../metrics/service-metrics';
import type { PoolEventsPort } from '../pools/ports';
import type { StopStep } from '../stop-steps';
import { DeliveryLoop } from '../webhooks/delivery-loop';
import { WebhookOutbox } from '../webhooks/outbox';
import { sealingKey } from '../webhooks/seal';
import { WebhookService } from '../webhooks/service';
import type { Storage } from './storage';

/** Recorded attempts between two VACUUMs of the deliveries on PGlite. */
const VACUUM_EVERY = 5_000;

export interface WebhookSchedule {
  /** The retry delays (src/webhooks/schedule.ts RETRY_DELAYS_MS). */
  delaysMs?: readonly number[];
  /** How often a cluster node's loop looks for due deliveries (default 1 s; embedded it does not poll). */
  pollMs?: number;
}

export interface WebhooksRunning {
  service: WebhookService;
  outbox: WebhookOutbox;
  loop: DeliveryLoop;
  /** Where the pools' events go besides the hub. */
  poolEvents: PoolEventsPort;
}

export function startWebhooks(
  config: Config,
  p: { storage: Storage; secret: string; metrics?: ServiceMetrics; log: Logger; undo: StopStep[]; schedule?: WebhookSchedule },
): WebhooksRunning {
  const db = p.storage.database.db;
  const key = sealingKey(p.secret);
  const allowPrivateTargets = config.probes.allowPrivateTargets;
  const loop = new DeliveryLoop({
    db,
    nodeId: p.storage.nodeId,
    key,
    allowPrivateTargets,
    log: p.log,
    onAttempt: (_d, _o, state) => p.metrics?.webhookAttempt(state === 'pending' ? 'retry' : state),
    // PGlite runs no autovacuum: every claim and attempt rewrites a delivery's row
    ...(p.storage.database.driver === 'pglite' ? { vacuumEvery: VACUUM_EVERY } : {}),
    ...(p.schedule?.delaysMs !== undefined ? { delays: p.schedule.delaysMs } : {}),
    // embedded, every message is written by this process, which pokes the loop: no poll (an idle service runs no
    // statement of it); a cluster node also polls, for the other nodes' messages
    pollMs: config.cluster.natsUrl === undefined ? null : (p.schedule?.pollMs ?? 1_000),
  });
  p.metrics?.watchWebhooks(loop);
  const poke = () => loop.poke();
  const outbox = new WebhookOutbox({ db, log: p.log, onWritten: poke });
  const service = new WebhookService({ db, key, allowPrivateTargets, onWritten: poke });
  const poolEvents = outbox.poolEvents();
  loop.start();
  p.undo.push(async () => {
    await outbox.drain();
    await loop.stop();
  });
  return { service, outbox, loop, poolEvents };
}
