/**
 * A cluster API node's probe backend (NATS_URL, ROLE=api|all): no probe
 * threads; the node connects to NATS, ensures the work stream, every
 * region's consumer and the agents' bucket, watches the live agents
 * (src/cluster/registry.ts: a region's slots = its agents' slots; a change
 * pokes the scheduler), shares a region's slots with the other API nodes by
 * their demand (src/cluster/demand.ts: the scheduler's capacity is this
 * node's fair share) and sends shards through the NatsWorkers
 * (src/cluster/nats-workers.ts) behind the same RegionScheduler, without a
 * process-wide cap (each agent bounds itself). Result files live in
 * PostgreSQL (one store for every node), progress follows any node's job
 * over NATS, and so do pool events (src/cluster/pool-events.ts). A check to a region without a live agent is refused before the
 * reservation (503). Undone in reverse: progress (finals out first), result
 * store, the workers (waiting shards fail), demand board, registry, NATS (drained).
 */
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import type { RefundedOrphan } from '../accounts/orphans';
import { DemandBoard, nudgingExecution } from '../cluster/demand';
import { connectNats, ensureWork, openAgentsBucket, openDemandBucket, subscribeResults, workTransport } from '../cluster/nats';
import { NatsWorkers, type WorkTransport } from '../cluster/nats-workers';
import { ClusterPoolEvents } from '../cluster/pool-events';
import { createClusterProgress } from '../cluster/progress';
import { CLUSTER_MIN_GRANT } from '../cluster/protocol';
import { consumerReader, QueueDepth } from '../cluster/queue-depth';
import { AgentRegistry } from '../cluster/registry';
import type { ClusterConfig, Config } from '../config';
import { ENTRY_ERROR_CODES } from '../error-codes';
import { ServiceError } from '../errors';
import { jobControlClient, serveJobControl } from '../cluster/job-control';
import { poolReadsClient, servePoolReads } from '../cluster/pool-reads';
import type { RegionsPort } from '../http/context';
import { maxInFlightFor, openFilesLimit } from '../limits';
import type { Logger } from '../log';
import { ACCEPTED_REGIONS, REGIONS } from '../regions';
import { openPgResultStore } from '../results/pg-store';
import type { StopStep } from '../stop-steps';
import { isOwnJudge } from './own-judge';
import type { BackendContext, OpenBackend, ProbeBackend } from './probe-backend';

/** Refuses an API node without RESULT_SECRET and ADMIN_TOKEN in its environment (generated per DATA_DIR they would differ per node: a link minted on one would fail on another). */
export function clusterBackend(config: Config): OpenBackend {
  if (config.storage.resultSecret === undefined || config.http.adminToken === undefined) {
    throw new ServiceError(ENTRY_ERROR_CODES.CLUSTER_SECRETS_MISSING, 'an API node of a cluster needs RESULT_SECRET and ADMIN_TOKEN in its environment, the same on every node');
  }
  return openCluster;
}

async function openCluster(ctx: BackendContext): Promise<ProbeBackend> {
  const { storage, log, undo } = ctx;
  const { cluster, limits } = ctx.config;
  const nodeId = storage.nodeId;
  const nc = await connect(cluster, nodeId, log, undo);
  const jsm = await ensureWork(nc, REGIONS.map((r) => r.code), cluster.ackWaitMs, log);
  const registry = await AgentRegistry.start({ kv: await openAgentsBucket(nc, cluster.agentTtlMs), ttlMs: cluster.agentTtlMs, log });
  undo.push(() => registry.stop());
  // fairness across API nodes: this node's scheduler takes its share of a region's slots
  const board = await DemandBoard.start({
    kv: await openDemandBucket(nc, cluster.agentTtlMs),
    node: nodeId,
    ttlMs: cluster.agentTtlMs,
    heartbeatMs: cluster.heartbeatMs,
    regions: ACCEPTED_REGIONS,
    capacity: (region) => registry.capacity(region),
    log,
  });
  undo.push(() => board.stop());
  const transport = workTransport(nc);
  const orphanRefunded = tellAgents(transport, log);
  // the orphans refunded at start, before NATS was connected: their shards may still be queued or running
  for (const o of storage.refundedAtStart) orphanRefunded(o);
  const workers = new NatsWorkers({ node: nodeId, transport, deadlineMs: cluster.shardDeadlineMs, log, counters: ctx.metrics });
  const sub = subscribeResults(nc, nodeId, workers, log);
  undo.push(() => {
    workers.close();
    sub.unsubscribe();
  });
  // one staging dir per node id (NODE_ID is unique per running process); a link minted by one node downloads from any other
  const results = await openPgResultStore({ db: storage.database.db, stagingDir: join(ctx.config.storage.dataDir, 'results-staging', nodeId) });
  undo.push(() => results.close());
  const hub = await createClusterProgress({ nc, nodeId, log, hubOptions: { maxPerAccount: limits.wsMaxPerAccount, maxPerAddress: limits.wsMaxPerAddress } });
  undo.push(async () => {
    hub.closeAll();
    await hub.settled();
  });
  const poolEvents = new ClusterPoolEvents({ nc, nodeId, log, hubOptions: { maxPerAccount: limits.wsMaxPerAccount } });
  undo.push(() => poolEvents.closeAll());
  return {
    workers,
    capacity: (code) => board.share(code),
    // each shard costs messages: at least CLUSTER_MIN_GRANT probes; no process-wide cap (each agent bounds its own probes)
    // background work (pool rounds) holds at most what the checks of every node leave (demand.ts backgroundWindow)
    schedulerOptions: { minGrant: CLUSTER_MIN_GRANT, backgroundCapacityFor: (code) => board.backgroundWindow(code) },
    // reported only: the agents hold the probes
    maxInFlight: ctx.config.probes.maxInFlight ?? maxInFlightFor(openFilesLimit(), isOwnJudge(ctx.config.judge) ? 'guarded' : 'elsewhere'),
    execution: (local) => nudgingExecution(local, board),
    follow: (scheduler) => {
      registry.follow((region) => scheduler.poke(region));
      board.follow({
        demandOf: (region) => scheduler.demand(region),
        backgroundOf: (region) => scheduler.demand(region, 'background'),
        reserveOf: (slots) => scheduler.checkReserve(slots),
        onChange: (region) => scheduler.poke(region),
      });
    },
    hub,
    poolEvents,
    results,
    regions: liveRegions(registry),
    regionAvailable: (region) => registry.capacity(region) > 0,
    queue: new QueueDepth({ regions: ACCEPTED_REGIONS, read: consumerReader(jsm) }),
    orphanRefunded,
    calibrates: false,
    jobControl: (runs) => {
      const control = serveJobControl(nc, nodeId, runs, log);
      undo.push(() => control.unsubscribe());
      return jobControlClient(nc, log);
    },
    poolReads: (pools) => {
      const served = servePoolReads(nc, nodeId, pools, log);
      undo.push(() => served.unsubscribe());
      return poolReadsClient(nc, log);
    },
  };
}

async function connect(cluster: ClusterConfig, nodeId: string, log: Logger, undo: StopStep[]): Promise<NatsConnection> {
  const nc = await connectNats(cluster.natsUrl!, `proxycheck-api-${nodeId}`, log);
  undo.push(async () => {
    await nc.drain().catch(() => nc.close());
  });
  return nc;
}

/** The agents drop a refunded orphan's shards at once instead of probing them to their timeout for nobody (pc.cancel). */
function tellAgents(transport: WorkTransport, log: Logger): (o: RefundedOrphan) => void {
  return (o) => {
    if (o.nodeId === null) return;
    try {
      transport.publishCancel(o.nodeId, o.runId);
    } catch (err) {
      log.warn('telling the agents of a refunded orphan failed (they probe its shards to their timeout)', { runId: o.runId, err });
    }
  };
}

/** /regions and /health from the live agents. */
function liveRegions(registry: AgentRegistry): RegionsPort {
  return {
    region: (code) => ({ agents: registry.agentCount(code), capacity: registry.capacity(code) }),
    agents: () => {
      const now = Date.now();
      return registry.list().map((a) => ({
        region: a.region,
        agent: a.agent,
        slots: a.slots,
        inFlight: a.inFlight,
        exitIps: a.exitIps,
        version: a.version,
        lastSeenMs: Math.max(0, now - a.seenAt),
      }));
    },
  };
}
