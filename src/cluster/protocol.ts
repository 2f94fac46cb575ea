/**
 * The cluster's wire protocol on NATS (pure: names, message shapes and their
 * decoders; no I/O). API nodes and region agents speak only this.
 *
 * ## Probe work: a JetStream work queue per region
 *
 *   stream  PC_WORK  subjects pc.work.<region>, retention WorkQueue, file storage
 *   consumer pc_agents_<region> (durable, pull, filter pc.work.<region>,
 *            ack explicit, ack_wait CLUSTER_ACK_WAIT_MS, max_deliver WORK_MAX_DELIVER)
 *
 * An API node publishes a job's probes as WorkShard messages (at most
 * SHARD_MAX_TASKS tasks each) on pc.work.<region>, only as many as its
 * scheduler granted (the window: the region's live slots, shared fairly by the
 * node's jobs). Every agent of the region pulls from the one durable consumer,
 * so a shard goes to exactly one agent at a time.
 *
 * ## Results: core NATS to the owning API node
 *
 *   agent -> pc.results.<node>   ResultsMessage {t:'batch'}   (publish, many per shard)
 *   agent -> pc.results.<node>   ResultsMessage {t:'done'}    (request; reply DoneReply)
 *
 * Messages from one connection on one subject arrive in order, so a shard's
 * `done` comes after its batches. The owner replies `{ok:true}` when it holds
 * a result for every task of the shard (or no longer runs the job), else
 * `{ok:false}` (a batch was lost, say in a reconnect). The agent then acks
 * the shard (ok), naks it (not ok: it is delivered again, to any agent of the
 * region), or terms it (no responder: the owner is gone; its job is an orphan
 * the lease sweep refunds). The owner de-duplicates by (task index, url
 * index): whatever NATS redelivers, a result is counted once.
 *
 *   API node -> pc.cancel  CancelMessage: a job ended; agents drop its shards.
 *
 * ## Live agents: KV bucket pc_agents (TTL AGENT_TTL_MS)
 *
 * Key `<region>.<agent id>`, value AgentHeartbeat, put every
 * AGENT_HEARTBEAT_MS; deleted on a graceful stop. An entry not renewed within
 * the TTL is gone (its region's capacity drops, GET /regions stops counting it).
 */

export const PROTOCOL_VERSION = 1;

export const WORK_STREAM = 'PC_WORK';
export const WORK_SUBJECT_PREFIX = 'pc.work.';
export const RESULTS_SUBJECT_PREFIX = 'pc.results.';
export const CANCEL_SUBJECT = 'pc.cancel';
export const AGENTS_BUCKET = 'pc_agents';

/** Tasks per shard message: keeps a message far below NATS's default 1 MiB max_payload. */
export const SHARD_MAX_TASKS = 512;
/** Deliveries of one shard before JetStream stops offering it (the owner's deadline then fails the job, with refunds). */
export const WORK_MAX_DELIVER = 5;

/** Region codes and ids used in subjects: letters, digits, '-' and '_' only. */
const TOKEN = /^[A-Za-z0-9_-]{1,64}$/;

export function isSubjectToken(s: unknown): s is string {
  return typeof s === 'string' && TOKEN.test(s);
}

export const workSubject = (region: string): string => `${WORK_SUBJECT_PREFIX}${region}`;
export const workConsumer = (region: string): string => `pc_agents_${region}`;
export const resultsSubject = (node: string): string => `${RESULTS_SUBJECT_PREFIX}${node}`;
export const agentKey = (region: string, agent: string): string => `${region}.${agent}`;
