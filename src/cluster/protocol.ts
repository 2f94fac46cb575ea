/**
 * The cluster's wire protocol on NATS (pure: names, message shapes and their
 * decoders; no I/O). API nodes and region agents speak only this.
 *
 * ## Probe work: a JetStream work queue per region
 *
 *   stream  PC_WORK  subjects pc.work.<region>, retention WorkQueue, file storage
 *   consumer pc_agents_<region> (durable, pull, filter pc.work.<region>,
 *            ack explicit, ack_wait 7.5 x AGENT_HEARTBEAT_MS, max_deliver WORK_MAX_DELIVER)
 *
 * An API node publishes a job's probes as WorkShard messages (at most
 * SHARD_MAX_TASKS tasks each) on pc.work.<region>, only as many as its
 * scheduler granted (the window: the region's live slots, shared fairly by the
 * node's jobs). Every agent of the region pulls from the one durable consumer,
 * so a shard goes to exactly one agent at a time.
 *
 * ## Results: core NATS to the owning API node, one report per flush
 *
 *   agent -> pc.results.<node>   ResultsReport   (publish; a request when it
 *                                                 ends a shard: reply ReportReply)
 *
 * An agent sends its owners reports, not a message per shard: every
 * RESULT_FLUSH_MS (agent-runner.ts) one report per owner node carries, for
 * each of that owner's shards with news, the shard's `start` (its delivery
 * began), the results since the last report, and its `done` (the delivery
 * ended: every result it has went in this or an earlier report). Messages from
 * one connection on one subject arrive in order, so a shard's `done` comes
 * after all its results. A report with a `done` is a request: the owner
 * replies with the done shards it still misses results of (`missing`: a
 * report was lost, say in a reconnect; or the shard is no longer here: not
 * missing). The agent then acks each done shard (not missing), naks it
 * (missing: it is delivered again, to any agent of the region), or terms it
 * (no responder: the owner is gone; its job is an orphan the lease sweep
 * refunds). The owner de-duplicates by (task index, url index): whatever NATS
 * redelivers, a result is counted once. Measured against a message per shard
 * and per kind in bench/RESULTS.md "Cluster" (H).
 *
 *   API node -> pc.cancel  CancelMessage: a run ended; agents drop its shards.
 *                          Also sent by the node whose orphan sweep refunded a
 *                          dead node's run: nobody will take its results.
 *
 *   API node -> pc.control.<node>  request/reply between API nodes about the
 *                          runs a node holds (GET / DELETE /checks/{jobId}):
 *                          its own codec, ./control-wire.ts.
 *
 * `start` carries the delivery count (JetStream's): > 1 is a redelivery (the
 * metrics count it), and it tells the owner the shard is alive, as any
 * result does: the owner fails a shard that showed no sign of life for
 * the shard deadline (120 s; its job fails and refunds what was not checked).
 *
 * ## Live agents: KV bucket pc_agents (TTL 5 x AGENT_HEARTBEAT_MS)
 *
 * Key `<region>.<agent id>`, value AgentHeartbeat, put every
 * AGENT_HEARTBEAT_MS; deleted on a graceful stop. An entry not renewed within
 * the TTL is gone (its region's capacity drops, GET /regions stops counting it).
 * nats-server 2.9 sends no watch event when a KV entry expires, so readers
 * (src/cluster/registry.ts) expire entries themselves, by when they received
 * the last put.
 *
 * ## Demand of API nodes: KV bucket pc_demand (TTL 5 x AGENT_HEARTBEAT_MS)
 *
 * Key `<node>`, value NodeDemand: per region, the probes this API node holds
 * in flight (published) plus those its jobs still wait to publish, and
 * (`background`) how many of them are background work (pool rounds, below
 * the checks in priority: demand.ts "Priority classes across nodes"); put every
 * AGENT_HEARTBEAT_MS while it has demand (and once more when it drops to
 * none), soon after a job starts, deleted on a graceful stop. Every API node
 * reads the others' and takes only its fair share of a region's live slots
 * (src/cluster/demand.ts), so the nodes' windows together stay within the
 * region's slots and the queue does not grow in front of a newcomer.
 *
 * ## Message shapes (JSON; every decoder below rejects anything else)
 *
 *   WorkShard      {v, node, run, shard, kind, type, timeoutMs, tasks, rules?, https?}
 *                  run: the job's run id at its owner (scans.job_id, unique per
 *                  run; never the client's reusable jobId, which only the
 *                  progress channel carries); shard: the message's id at its owner node (a subject-safe
 *                  token); tasks: [{index, proxy}] (at most SHARD_MAX_TASKS);
 *                  rules: custom_url only; https: false only, the job opted
 *                  out of the https check (absent: the check runs). The agent
 *                  adds what is its own: judge, calibrated addresses, judge
 *                  key, TLS judge (none when `https` is false).
 *   ResultsReport  {agent, shards: ShardNews[]}   (1 to REPORT_MAX_SHARDS, each shard once)
 *   ShardNews      {shard, delivery, start?: true, results?, done?: true}   (at least one of the three)
 *                  results: ProbeResult[] | CustomUrlResult[], compact (below)
 *   ReportReply    {missing: shard[]}
 *   CancelMessage  {node, run}
 *   AgentHeartbeat {v, region, agent, slots, inFlight, exitIps, version, judgeUrl}
 *   NodeDemand     {v, node, regions: {<region>: probes}, background?: {<region>: probes}}
 *                  (regions with demand > 0 only; background: the part of a
 *                  region's probes that is background work, <= its regions
 *                  entry; absent: none. Optional, so a node that does not send
 *                  it is read as all checks, as before)
 *
 * Compact results (a report's bulk): a result is an array, not an object,
 * its fields in a fixed order, trailing optional ones left out:
 *
 *   probe       [index, status, statusCode, responseTimeMs, anonymity, origin, error, protocols?, https?]
 *               status 1 working / 0 failed; error null or [code, message, certificate?]
 *               (certificate: [subject, fingerprint]); protocols omitted (or null
 *               when https follows) when absent; https true, false or null
 *   custom_url  [index, urlIndex, success (1/0), statusCode, responseTimeMs, error]
 *
 * The decoder checks every field as strictly as the object form did.
 */
import { ServiceError } from '../errors';
import { JOB_ERROR_CODES } from '../error-codes';
import { PROBE_ERROR_CODES, type CustomUrlResult, type CustomUrlRule, type ProbeResult, type ProbeTask } from '../probe/types';
import { CHECK_TYPES, PROXY_TYPES, type CheckType } from '../proxy/types';

/**
 * Every versioned message (WorkShard, AgentHeartbeat, NodeDemand) of another
 * version is refused, so nodes of two versions never work together: a region
 * served only by agents of another version is unavailable to an API node
 * (503), rather than sent shards they cannot read.
 */
export const PROTOCOL_VERSION = 2;

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
export const cancelMessage = (node: string, run: string): CancelMessage => ({ node, run });

export interface WorkShard {
  v: number;
  /** The owner API node (results go to pc.results.<node>). */
  node: string;
  /** The job's run id at its owner (scans.job_id, unique per run; cancel names it). */
  run: string;
  /** This message's id at the owner (subject-safe token). */
  shard: string;
  kind: 'probe' | 'custom_url';
  type: CheckType;
  timeoutMs: number;
  tasks: ProbeTask[];
  /** custom_url only. */
  rules?: CustomUrlRule[];
  /** false: the job opted out of the https check (the agent adds no TLS judge); absent: it runs. */
  https?: false;
}

/** One shard's news in a report (see the header). */
export interface ShardNews {
  shard: string;
  /** JetStream's delivery count of the shard at this agent. */
  delivery: number;
  /** This delivery began. */
  start?: true;
  results?: ProbeResult[] | CustomUrlResult[];
  /** This delivery ended: no result of it follows. */
  done?: true;
}

export interface ResultsReport {
  agent: string;
  shards: ShardNews[];
}

export interface ReportReply {
  /** Done shards of the report the owner still misses results of (the agent naks them). */
  missing: string[];
}

/** Shard entries in one report at most (an agent holds far fewer shards of one owner at once). */
export const REPORT_MAX_SHARDS = 4096;

export interface CancelMessage {
  node: string;
  /** The run that ended (WorkShard.run). */
  run: string;
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
  /** Per region: how many of `regions` are background work (only regions with some); absent: none. */
  background?: Record<string, number>;
}

// ---- decoding ---------------------------------------------------------------

const enc = new TextEncoder();
const dec = new TextDecoder();

export function encode(m: WorkShard | ReportReply | CancelMessage | AgentHeartbeat | NodeDemand): Uint8Array {
  return enc.encode(JSON.stringify(m));
}

type Wire = unknown[];

function errorWire(e: ProbeResult['error']): Wire | null {
  if (e === null) return null;
  return e.certificate === undefined ? [e.code, e.message] : [e.code, e.message, [e.certificate.subject, e.certificate.fingerprint]];
}

function resultWire(r: ProbeResult | CustomUrlResult): Wire {
  if ('urlIndex' in r) return [r.index, r.urlIndex, r.success ? 1 : 0, r.statusCode, r.responseTimeMs, errorWire(r.error)];
  const w: Wire = [r.index, r.status === 'working' ? 1 : 0, r.statusCode, r.responseTimeMs, r.anonymity, r.origin, errorWire(r.error)];
  if (r.https !== undefined) w.push(r.protocols ?? null, r.https);
  else if (r.protocols !== undefined) w.push(r.protocols);
  return w;
}

/** A report in its compact wire form (header: "Compact results"). */
export function encodeReport(r: ResultsReport): Uint8Array {
  const shards = r.shards.map((s) => {
    const o: Record<string, unknown> = { shard: s.shard, delivery: s.delivery };
    if (s.start === true) o.start = true;
    if (s.results !== undefined && s.results.length > 0) o.results = (s.results as (ProbeResult | CustomUrlResult)[]).map(resultWire);
    if (s.done === true) o.done = true;
    return o;
  });
  return enc.encode(JSON.stringify({ agent: r.agent, shards }));
}

function fail(why: string): never {
  throw new ServiceError(JOB_ERROR_CODES.CLUSTER_MESSAGE_INVALID, why);
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

function errorOf(v: unknown): ProbeResult['error'] | undefined {
  if (v === null) return null;
  if (!Array.isArray(v) || v.length < 2 || v.length > 3 || !ERROR_CODE_SET.has(v[0]) || !isStr(v[1])) return undefined;
  const e = { code: v[0] as NonNullable<ProbeResult['error']>['code'], message: v[1] as string };
  if (v.length === 2) return e;
  const c: unknown = v[2];
  if (!Array.isArray(c) || c.length !== 2 || !isStr(c[0]) || !isStr(c[1], 200)) return undefined;
  return { ...e, certificate: { subject: c[0], fingerprint: c[1] } };
}

const isMs = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const isStatusCode = (v: unknown): v is number | null => v === null || isInt(v, 0, 999);

function probeResultOf(v: unknown): ProbeResult | undefined {
  if (!Array.isArray(v) || v.length < 7 || v.length > 9) return undefined;
  const [index, status, statusCode, ms, anonymity, origin, err] = v;
  if (!isInt(index) || (status !== 0 && status !== 1) || !isStatusCode(statusCode) || !isMs(ms)) return undefined;
  if (anonymity !== null && !ANONYMITY.has(anonymity)) return undefined;
  if (!isNullOr(origin, (x): x is string => isStr(x, 255))) return undefined;
  const error = errorOf(err);
  if (error === undefined) return undefined;
  const r: ProbeResult = {
    index,
    status: status === 1 ? 'working' : 'failed',
    statusCode,
    responseTimeMs: ms,
    anonymity: anonymity as ProbeResult['anonymity'],
    origin: origin as string | null,
    error,
  };
  if (v.length >= 8) {
    const protocols: unknown = v[7];
    if (protocols === null) {
      if (v.length !== 9) return undefined; // null only holds the place of https
    } else if (Array.isArray(protocols) && protocols.every((p) => PROXY_TYPE_SET.has(p))) r.protocols = protocols as ProbeResult['protocols'];
    else return undefined;
  }
  if (v.length === 9) {
    if (typeof v[8] !== 'boolean' && v[8] !== null) return undefined;
    r.https = v[8];
  }
  return r;
}

function urlResultOf(v: unknown): CustomUrlResult | undefined {
  if (!Array.isArray(v) || v.length !== 6) return undefined;
  const [index, urlIndex, success, statusCode, ms, err] = v;
  if (!isInt(index) || !isInt(urlIndex) || (success !== 0 && success !== 1) || !isStatusCode(statusCode) || !isMs(ms)) return undefined;
  const error = errorOf(err);
  if (error === undefined) return undefined;
  return { index, urlIndex, success: success === 1, statusCode, responseTimeMs: ms, error };
}

/** Compact results of one kind (a shard's): probe results are 7-9 long, custom-URL ones 6. */
function resultsOf(v: unknown): ProbeResult[] | CustomUrlResult[] | undefined {
  if (!Array.isArray(v) || v.length === 0 || v.length > SHARD_MAX_TASKS * 64) return undefined;
  const first: unknown = v[0];
  const of = Array.isArray(first) && first.length === 6 ? urlResultOf : probeResultOf;
  const out: (ProbeResult | CustomUrlResult)[] = [];
  for (const x of v) {
    const r = of(x);
    if (r === undefined) return undefined;
    out.push(r);
  }
  return out as ProbeResult[] | CustomUrlResult[];
}

export function decodeWorkShard(data: Uint8Array | string): WorkShard {
  const m = parse(data);
  if (m.v !== PROTOCOL_VERSION) fail(`not protocol version ${PROTOCOL_VERSION}`);
  if (!isSubjectToken(m.node) || !isStr(m.run, 256) || m.run === '' || !isSubjectToken(m.shard)) fail('bad node, run or shard');
  if (m.kind !== 'probe' && m.kind !== 'custom_url') fail('bad kind');
  if (!CHECK_TYPE_SET.has(m.type)) fail('bad type');
  if (!isInt(m.timeoutMs, 1, 600_000)) fail('bad timeoutMs');
  if (!Array.isArray(m.tasks) || m.tasks.length === 0 || m.tasks.length > SHARD_MAX_TASKS || !m.tasks.every(isTask)) fail('bad tasks');
  if (m.https !== undefined && m.https !== false) fail('bad https');
  const base = {
    v: PROTOCOL_VERSION,
    node: m.node,
    run: m.run,
    shard: m.shard,
    type: m.type as CheckType,
    timeoutMs: m.timeoutMs,
    tasks: m.tasks,
    ...(m.https === false ? { https: false as const } : {}),
  };
  if (m.kind === 'probe') {
    if (m.rules !== undefined) fail('rules on a probe shard');
    return { ...base, kind: 'probe' };
  }
  if (!Array.isArray(m.rules) || m.rules.length === 0 || !m.rules.every(isRule)) fail('bad rules');
  return { ...base, kind: 'custom_url', rules: m.rules };
}

export function decodeResults(data: Uint8Array | string): ResultsReport {
  const m = parse(data);
  if (!isSubjectToken(m.agent)) fail('bad agent');
  if (!Array.isArray(m.shards) || m.shards.length === 0 || m.shards.length > REPORT_MAX_SHARDS) fail('bad shards');
  const seen = new Set<string>();
  const shards: ShardNews[] = [];
  for (const e of m.shards as unknown[]) {
    if (!isObj(e) || !isSubjectToken(e.shard) || seen.has(e.shard)) fail('bad or repeated shard');
    seen.add(e.shard);
    if (!isInt(e.delivery, 1)) fail('bad delivery');
    if ((e.start !== undefined && e.start !== true) || (e.done !== undefined && e.done !== true)) fail('bad start or done');
    const s: ShardNews = { shard: e.shard, delivery: e.delivery };
    if (e.start === true) s.start = true;
    if (e.results !== undefined) {
      const r = resultsOf(e.results);
      if (r === undefined) fail('bad results');
      s.results = r;
    }
    if (e.done === true) s.done = true;
    if (s.start === undefined && s.results === undefined && s.done === undefined) fail('an empty shard entry');
    shards.push(s);
  }
  return { agent: m.agent, shards };
}

export function decodeReportReply(data: Uint8Array | string): ReportReply {
  const m = parse(data);
  if (!Array.isArray(m.missing) || m.missing.length > REPORT_MAX_SHARDS || !m.missing.every(isSubjectToken)) fail('bad missing');
  return { missing: m.missing };
}

export function decodeCancel(data: Uint8Array | string): CancelMessage {
  const m = parse(data);
  if (!isSubjectToken(m.node) || !isStr(m.run, 256) || m.run === '') fail('bad node or run');
  return { node: m.node, run: m.run };
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
  const regions = Object.fromEntries(entries) as Record<string, number>;
  if (m.background === undefined) return { v: PROTOCOL_VERSION, node: m.node, regions };
  if (!isObj(m.background)) fail('bad background');
  const bg = Object.entries(m.background);
  if (bg.length > DEMAND_MAX_REGIONS) fail('too many regions');
  for (const [region, n] of bg) {
    if (!isSubjectToken(region) || !isInt(n, 1) || !Object.hasOwn(regions, region) || n > regions[region]!) fail('bad background demand');
  }
  return { v: PROTOCOL_VERSION, node: m.node, regions, background: Object.fromEntries(bg) as Record<string, number> };
}

/** Turns any string into a subject token (ids generated from host names). */
export function toSubjectToken(s: string): string {
  const t = s.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  return t === '' ? '_' : t;
}
