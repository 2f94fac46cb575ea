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
 *                          Also sent by the node whose orphan sweep refunded a
 *                          dead node's job: nobody will take its results.
 *
 *   agent -> pc.results.<node>   ResultsMessage {t:'start'}   (publish, when it begins a delivery)
 *
 * `start` carries the delivery count (JetStream's): > 1 is a redelivery (the
 * metrics count it), and it tells the owner the shard is alive, as every
 * batch does: the owner fails a shard that showed no sign of life for
 * CLUSTER_SHARD_DEADLINE_MS (its job fails and refunds what was not checked).
 *
 * ## Live agents: KV bucket pc_agents (TTL AGENT_TTL_MS)
 *
 * Key `<region>.<agent id>`, value AgentHeartbeat, put every
 * AGENT_HEARTBEAT_MS; deleted on a graceful stop. An entry not renewed within
 * the TTL is gone (its region's capacity drops, GET /regions stops counting it).
 * nats-server 2.9 sends no watch event when a KV entry expires, so readers
 * (src/cluster/registry.ts) expire entries themselves, by when they received
 * the last put.
 *
 * ## Demand of API nodes: KV bucket pc_demand (TTL AGENT_TTL_MS)
 *
 * Key `<node>`, value NodeDemand: per region, the probes this API node holds
 * in flight (published) plus those its jobs still wait to publish; put every
 * AGENT_HEARTBEAT_MS while it has demand (and once more when it drops to
 * none), soon after a job starts, deleted on a graceful stop. Every API node
 * reads the others' and takes only its fair share of a region's live slots
 * (src/cluster/demand.ts), so the nodes' windows together stay within the
 * region's slots and the queue does not grow in front of a newcomer.
 *
 * ## Message shapes (JSON; every decoder below rejects anything else)
 *
 *   WorkShard      {v, node, job, shard, kind, type, timeoutMs, tasks, rules?}
 *                  shard: the message's id at its owner node (a subject-safe
 *                  token); tasks: [{index, proxy}] (at most SHARD_MAX_TASKS);
 *                  rules: custom_url only. The agent adds what is its own:
 *                  judge, calibrated addresses, judge key, TLS judge.
 *   ResultsMessage {t:'start', shard, agent, delivery}
 *                  {t:'batch', shard, results}   ProbeResult[] | CustomUrlResult[]
 *                  {t:'done',  shard, agent, delivery}
 *   DoneReply      {ok}
 *   CancelMessage  {node, job}
 *   AgentHeartbeat {v, region, agent, slots, inFlight, exitIps, version, judgeUrl}
 *   NodeDemand     {v, node, regions: {<region>: probes}}   (regions with demand > 0 only)
 */
import { ServiceError } from '../errors';
import { PROBE_ERROR_CODES, type CustomUrlResult, type CustomUrlRule, type ProbeResult, type ProbeTask } from '../probe/types';
import { CHECK_TYPES, PROXY_TYPES, type CheckType } from '../proxy/types';

export const PROTOCOL_VERSION = 1;

export const WORK_STREAM = 'PC_WORK';
export const WORK_SUBJECT_PREFIX = 'pc.work.';
export const RESULTS_SUBJECT_PREFIX = 'pc.results.';
export const CANCEL_SUBJECT = 'pc.cancel';
export const AGENTS_BUCKET = 'pc_agents';
export const DEMAND_BUCKET = 'pc_demand';
/** Regions one NodeDemand may name. */
export const DEMAND_MAX_REGIONS = 256;

/** Tasks per shard message: keeps a message far below NATS's default 1 MiB max_payload. */
export const SHARD_MAX_TASKS = 512;
/**
 * The API node's scheduler grants a cluster job at least this many probes at
 * once while it has that many to start (RegionScheduler minGrant; capped at an
 * eighth of the region's capacity, and a job with fewer pending gets them all):
 * every shard costs a JetStream publish, a fetch, `start`, `done` and its ack,
 * so shards of a few probes made those messages cost more than the probes'
 * results (bench/RESULTS.md "Cluster", H). The largest grant stays the
 * scheduler's 64, which agents' fetch sizes assume.
 */
export const CLUSTER_MIN_GRANT = 32;
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
export const cancelMessage = (node: string, job: string): CancelMessage => ({ node, job });

/** A malformed cluster message (the receiver drops it and logs; it never reaches a job). */
export const PROTOCOL_INVALID = 'cluster_message_invalid';

export interface WorkShard {
  v: number;
  /** The owner API node (results go to pc.results.<node>). */
  node: string;
  /** The job's run id at its owner (scans.job_id, unique per run; cancel names it). */
  job: string;
  /** This message's id at the owner (subject-safe token). */
  shard: string;
  kind: 'probe' | 'custom_url';
  type: CheckType;
  timeoutMs: number;
  tasks: ProbeTask[];
  /** custom_url only. */
  rules?: CustomUrlRule[];
}

export type ResultsMessage =
  | { t: 'start'; shard: string; agent: string; delivery: number }
  | { t: 'batch'; shard: string; results: ProbeResult[] | CustomUrlResult[] }
  | { t: 'done'; shard: string; agent: string; delivery: number };

export interface DoneReply {
  ok: boolean;
}

export interface CancelMessage {
  node: string;
  job: string;
}

export interface AgentHeartbeat {
  v: number;
  region: string;
  agent: string;
  /** Probes this agent runs at once at most (AGENT_SLOTS). */
  slots: number;
  /** Probes running now. */
  inFlight: number;
  /** Its exit addresses as its judge saw them (calibration). */
  exitIps: string[];
  version: string;
  /** Where its proxies reach the judge. */
  judgeUrl: string;
}

export interface NodeDemand {
  v: number;
  /** The API node (its NODE_ID). */
  node: string;
  /** Per region: probes in flight plus probes waiting for a window (only regions with some). */
  regions: Record<string, number>;
}

// ---- decoding ---------------------------------------------------------------

const enc = new TextEncoder();
const dec = new TextDecoder();

export function encode(m: WorkShard | ResultsMessage | DoneReply | CancelMessage | AgentHeartbeat | NodeDemand): Uint8Array {
  return enc.encode(JSON.stringify(m));
}

function fail(why: string): never {
  throw new ServiceError(PROTOCOL_INVALID, why);
}

function parse(data: Uint8Array | string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(typeof data === 'string' ? data : dec.decode(data));
  } catch {
    fail('not JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail('not an object');
  return v as Record<string, unknown>;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isInt = (v: unknown, min = 0, max = Number.MAX_SAFE_INTEGER): v is number => Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max;
const isStr = (v: unknown, max = 4096): v is string => typeof v === 'string' && v.length <= max;
const isNullOr = <T>(v: unknown, f: (x: unknown) => x is T): boolean => v === null || f(v);
const CHECK_TYPE_SET: ReadonlySet<unknown> = new Set(CHECK_TYPES);
const PROXY_TYPE_SET: ReadonlySet<unknown> = new Set(PROXY_TYPES);
const ERROR_CODE_SET: ReadonlySet<unknown> = new Set(PROBE_ERROR_CODES);
const ANONYMITY = new Set<unknown>(['elite', 'anonymous', 'transparent']);

function isTask(v: unknown): v is ProbeTask {
  if (!isObj(v) || !isInt(v.index) || !isObj(v.proxy)) return false;
  const p = v.proxy;
  if (!isStr(p.host, 255) || p.host === '' || !isInt(p.port, 1, 65535)) return false;
  if (p.username !== undefined && !isStr(p.username)) return false;
  if (p.password !== undefined && !isStr(p.password)) return false;
  return true;
}

function isRule(v: unknown): v is CustomUrlRule {
  if (!isObj(v) || !isStr(v.url) || typeof v.caseSensitive !== 'boolean') return false;
  if (!Array.isArray(v.requiredStatusCodes) || !v.requiredStatusCodes.every((c) => isInt(c, 100, 599))) return false;
  return v.requiredText === undefined || isStr(v.requiredText);
}

function isError(v: unknown): boolean {
  if (!isObj(v) || !ERROR_CODE_SET.has(v.code) || !isStr(v.message)) return false;
  if (v.certificate === undefined) return true;
  return isObj(v.certificate) && isStr(v.certificate.subject) && isStr(v.certificate.fingerprint, 200);
}

function isProbeResult(v: unknown): v is ProbeResult {
  if (!isObj(v) || !isInt(v.index) || (v.status !== 'working' && v.status !== 'failed')) return false;
  if (!isNullOr(v.statusCode, (x): x is number => isInt(x, 0, 999))) return false;
  if (typeof v.responseTimeMs !== 'number' || !Number.isFinite(v.responseTimeMs) || v.responseTimeMs < 0) return false;
  if (v.anonymity !== null && !ANONYMITY.has(v.anonymity)) return false;
  if (!isNullOr(v.origin, (x): x is string => isStr(x, 255))) return false;
  if (v.error !== null && !isError(v.error)) return false;
  if (v.protocols !== undefined && !(Array.isArray(v.protocols) && v.protocols.every((p) => PROXY_TYPE_SET.has(p)))) return false;
  return v.https === undefined || typeof v.https === 'boolean';
}

function isUrlResult(v: unknown): v is CustomUrlResult {
  if (!isObj(v) || !isInt(v.index) || !isInt(v.urlIndex) || typeof v.success !== 'boolean') return false;
  if (!isNullOr(v.statusCode, (x): x is number => isInt(x, 0, 999))) return false;
  if (typeof v.responseTimeMs !== 'number' || !Number.isFinite(v.responseTimeMs) || v.responseTimeMs < 0) return false;
  return v.error === null || isError(v.error);
}

export function decodeWorkShard(data: Uint8Array | string): WorkShard {
  const m = parse(data);
  if (m.v !== PROTOCOL_VERSION) fail(`not protocol version ${PROTOCOL_VERSION}`);
  if (!isSubjectToken(m.node) || !isStr(m.job, 256) || m.job === '' || !isSubjectToken(m.shard)) fail('bad node, job or shard');
  if (m.kind !== 'probe' && m.kind !== 'custom_url') fail('bad kind');
  if (!CHECK_TYPE_SET.has(m.type)) fail('bad type');
  if (!isInt(m.timeoutMs, 1, 600_000)) fail('bad timeoutMs');
  if (!Array.isArray(m.tasks) || m.tasks.length === 0 || m.tasks.length > SHARD_MAX_TASKS || !m.tasks.every(isTask)) fail('bad tasks');
  const base = { v: PROTOCOL_VERSION, node: m.node, job: m.job, shard: m.shard, type: m.type as CheckType, timeoutMs: m.timeoutMs, tasks: m.tasks };
  if (m.kind === 'probe') {
    if (m.rules !== undefined) fail('rules on a probe shard');
    return { ...base, kind: 'probe' };
  }
  if (!Array.isArray(m.rules) || m.rules.length === 0 || !m.rules.every(isRule)) fail('bad rules');
  return { ...base, kind: 'custom_url', rules: m.rules };
}

export function decodeResults(data: Uint8Array | string): ResultsMessage {
  const m = parse(data);
  if (!isSubjectToken(m.shard)) fail('bad shard');
  switch (m.t) {
    case 'start':
    case 'done':
      if (!isSubjectToken(m.agent) || !isInt(m.delivery, 1)) fail('bad agent or delivery');
      return { t: m.t, shard: m.shard, agent: m.agent, delivery: m.delivery };
    case 'batch': {
      const r = m.results;
      if (!Array.isArray(r) || r.length === 0) fail('bad results');
      // one kind per batch: the shard's
      if (!(r.every(isProbeResult) || r.every(isUrlResult))) fail('bad results');
      return { t: 'batch', shard: m.shard, results: r as ProbeResult[] | CustomUrlResult[] };
    }
    default:
      fail('bad t');
  }
}

export function decodeDoneReply(data: Uint8Array | string): DoneReply {
  const m = parse(data);
  if (typeof m.ok !== 'boolean') fail('bad ok');
  return { ok: m.ok };
}

export function decodeCancel(data: Uint8Array | string): CancelMessage {
  const m = parse(data);
  if (!isSubjectToken(m.node) || !isStr(m.job, 256) || m.job === '') fail('bad node or job');
  return { node: m.node, job: m.job };
}

export function decodeHeartbeat(data: Uint8Array | string): AgentHeartbeat {
  const m = parse(data);
  if (m.v !== PROTOCOL_VERSION) fail(`not protocol version ${PROTOCOL_VERSION}`);
  if (!isSubjectToken(m.region) || !isSubjectToken(m.agent)) fail('bad region or agent');
  if (!isInt(m.slots, 1) || !isInt(m.inFlight)) fail('bad slots or inFlight');
  if (!Array.isArray(m.exitIps) || m.exitIps.length > 64 || !m.exitIps.every((x) => isStr(x, 64))) fail('bad exitIps');
  if (!isStr(m.version, 64) || !isStr(m.judgeUrl, 2048)) fail('bad version or judgeUrl');
  return { v: PROTOCOL_VERSION, region: m.region, agent: m.agent, slots: m.slots, inFlight: m.inFlight, exitIps: m.exitIps, version: m.version, judgeUrl: m.judgeUrl };
}

export function decodeNodeDemand(data: Uint8Array | string): NodeDemand {
  const m = parse(data);
  if (m.v !== PROTOCOL_VERSION) fail(`not protocol version ${PROTOCOL_VERSION}`);
  if (!isSubjectToken(m.node)) fail('bad node');
  if (!isObj(m.regions)) fail('bad regions');
  const entries = Object.entries(m.regions);
  if (entries.length > DEMAND_MAX_REGIONS) fail('too many regions');
  for (const [region, n] of entries) if (!isSubjectToken(region) || !isInt(n, 1)) fail('bad region demand');
  // fromEntries defines own properties (a region named __proto__ stays data)
  return { v: PROTOCOL_VERSION, node: m.node, regions: Object.fromEntries(entries) as Record<string, number> };
}

/** Turns any string into a subject token (ids generated from host names). */
export function toSubjectToken(s: string): string {
  const t = s.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  return t === '' ? '_' : t;
}
