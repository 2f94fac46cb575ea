/**
 * The pool store: the statements of pools-sql.ts and proxies-sql.ts run on
 * the service's Database (db/client.ts), PGlite and PostgreSQL alike. The
 * only module of src/pools that does I/O; everything it decides is in the
 * pure modules beside it (limits.ts, shape.ts, the SQL builders).
 *
 * Every function takes the owner's account id: a pool of another account
 * reads as absent (null / false), never as forbidden, so the HTTP layer
 * answers 404 for both.
 *
 * Limits (limits.ts checkPoolLimits: pools per account, proxies per pool,
 * proxies in all of an account's pools): a change that can pass one runs in
 * ONE transaction that first takes the account's pool lock
 * (pools-sql.ts lockAccountPoolsStatement), then counts and writes, so two
 * concurrent requests of one account are serialised and cannot both pass a
 * limit. A new pool is checked before anything is written (its proxies are
 * unique and the pool empty, so the counts are exact); proxies added to a
 * pool are inserted first (an address already there is not added twice) and
 * the counts after the insert are checked, the transaction rolling back on
 * a breach: nothing of a refused request stays.
 *
 * PATCH order, in its one transaction: settings and state, then `remove`,
 * then `add` (so a request can make room and fill it), then the limits. A
 * pool that goes from paused to active has its overdue proxies spread over
 * one interval (proxies-sql.ts spreadOverdueStatement: no burst of every
 * proxy at once); a shorter interval brings due times later than one new
 * interval within it (pools-sql.ts clampDueStatement).
 *
 * The owner's side (src/jobs/pool-actor.ts) reads its pools here (allPoolRows,
 * poolRow) and pauses / resumes a pool for insufficient checks (rounds-sql.ts;
 * resumeForChecks spreads the overdue of the durable copy in the same
 * transaction); its lease, loads and fenced flushes are jobs/pool-durable.ts's.
 * dueProxies and applyResults (unfenced) serve tests that seed verdicts.
 *
 * A pool's list URLs (sources-sql.ts; the PoolSources service,
 * src/jobs/pool-sources.ts): dueSources, nextSourceDue, claimSource,
 * recordSource, and addSourceProxies, which adds a list's new addresses
 * under the account's pool lock up to the limits (never past one: what does
 * not fit is counted and left out, the rest of the change stays).
 */
import { rowsOf, type Db } from '../../db/client';
import type { CheckType } from '../proxy/types';
import type { ParsedProxy } from '../proxy/parse';
import { checkPoolLimits, type PoolLimits, type PoolUsage } from './limits';
import {
  clampDueStatement,
  deletePoolStatement,
  insertPoolStatement,
  lockAccountPoolsStatement,
  allPoolRowsStatement,
  poolObjectsStatement,
  poolRowStatement,
  poolRowsWithRoundsStatement,
  poolTypeStatement,
  updatePoolStatement,
} from './pools-sql';
import {
  accountUsageStatement,
  analyzeProxiesStatement,
  dueProxiesStatement,
  insertProxiesStatement,
  insertProxiesUpToStatement,
  pageOf,
  poolCountsStatement,
  proxiesPageStatement,
  removeProxiesStatement,
  poolStatsStatement,
  spreadOverdueStatement,
  statsOf,
  type ProxiesPage,
} from './proxies-sql';
import type { PoolProxiesQuery } from './query';
import type { ProxyListing } from './proxy-listing';
import type { ListingStream, ListingText } from './ports';
import { stateUpdateStatement, verdictFieldsStatement } from './flush-sql';
import { pauseForChecksStatement, resumeForChecksStatement } from './rounds-sql';
import { batchesOfRows } from './table-batch';
import type { TargetState } from './target-columns';
import { dropTargetsStatement, targetCountsStatement, targetRowFromSql, targetsOfStatement } from './targets-sql';
import { poolObject, poolRowFromSql, rowFromSql, type PoolObject, type PoolProxyRow, type PoolRow, type PoolStats, type SourceFetchOutcome } from './shape';
import { claimSourceStatement, dueSourcesStatement, nextSourceDueStatement, recordSourceStatement } from './sources-sql';
import { EMPTY_COUNTS, type PoolCounts, type PoolCreate, type PoolPatch, type PoolState } from './types';
import { nextTurn } from '../clock';

type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
type DbOrTx = Db | Tx;
type Row = Record<string, unknown>;

/**
 * Addresses per INSERT / DELETE statement (each list is one array parameter
 * per column), with a turn of the event loop between two: ~50 ms a statement
 * on PGlite, which runs in the main thread (10 000: ~230 ms, and 100 000
 * proxies held the thread for 2.6 s in one piece; issue 29).
 */
export const ADDRESS_BATCH = 2_000;
/** A change that adds this many proxies or more takes the tables' statistics again (analyzedAfter). */
export const ANALYZE_AFTER_ADDED = 1_000;

const run = async (db: DbOrTx, q: ReturnType<typeof lockAccountPoolsStatement>): Promise<Row[]> => rowsOf<Row>(await db.execute(q));

function objectOf(r: Row): PoolObject {
  return poolObject(poolRowFromSql(r), statsOf(r));
}

async function usageOf(db: DbOrTx, accountId: string, poolId?: string): Promise<PoolUsage> {
  const [u] = await run(db, accountUsageStatement(accountId, poolId));
  return { pools: Number(u?.pools ?? 0), proxies: Number(u?.proxies ?? 0), inPool: Number(u?.in_pool ?? 0) };
}

async function inBatches(proxies: readonly ParsedProxy[], write: (batch: readonly ParsedProxy[]) => Promise<Row[]>, column: string): Promise<number> {
  let n = 0;
  for (let i = 0; i < proxies.length; i += ADDRESS_BATCH) {
    if (i > 0) await nextTurn();
    const [r] = await write(proxies.slice(i, i + ADDRESS_BATCH));
    n += Number(r?.[column] ?? 0);
  }
  return n;
}

/**
 * `change`, after the proxy tables' statistics are taken again when it added
 * ANALYZE_AFTER_ADDED rows or more. The embedded database runs no autovacuum
 * (PostgreSQL's runs its ANALYZE a minute or more later): a new pool's rows
 * are otherwise planned with the statistics of the tables before it, the
 * owner's first load among its statements (flush-sql.ts loadProxiesStatement).
 * ANALYZE reads a sample (30 000 rows at most): proxies-sql.ts analyzeProxiesStatement.
 */
async function analyzedAfter<T extends { added: number }>(db: Db, change: T): Promise<T> {
  if (change.added >= ANALYZE_AFTER_ADDED) {
    await nextTurn();
    try {
      await db.execute(analyzeProxiesStatement());
    } catch {
      // statistics are the planner's hint, and the change has committed: a failure here (a
      // statement timeout on a server) must not answer an error for it (a retried create
      // would make a second pool); the owner's periodic VACUUM (ANALYZE) takes them later
    }
  }
  return change;
}

async function readPool(db: DbOrTx, accountId: string, poolId: string, nowMs: number): Promise<PoolObject | null> {
  const [r] = await run(db, poolObjectsStatement(accountId, poolId, nowMs));
  return r === undefined ? null : objectOf(r);
}

export interface PoolCreated {
  pool: PoolObject;
  /** Proxies in the new pool (the request's unique valid addresses). */
  added: number;
}

/** A new pool `id` of the account with the request's proxies, all due at once. Throws PoolLimitError (nothing written). */
export async function createPool(db: Db, accountId: string, id: string, req: PoolCreate, limits: PoolLimits, nowMs: number): Promise<PoolCreated> {
  return analyzedAfter(db, await db.transaction(async (tx) => {
    await run(tx, lockAccountPoolsStatement(accountId));
    const before = await usageOf(tx, accountId);
    checkPoolLimits({ pools: before.pools + 1, proxies: before.proxies + req.proxies.length, inPool: req.proxies.length }, limits);
    await run(tx, insertPoolStatement(id, accountId, req.settings, nowMs));
    const added = await inBatches(req.proxies, (b) => run(tx, insertProxiesStatement(id, req.settings.type, b, nowMs)), 'added');
    await nextTurn();
    const pool = await readPool(tx, accountId, id, nowMs);
    if (pool === null) throw new Error(`createPool: pool ${id} not readable after its insert`);
    return { pool, added };
  }));
}

/**
 * What a pool's owner knows of its proxies (src/jobs/pool-owner.ts: this
 * process's, or in a cluster the node holding the lease, asked over NATS):
 * the pool object's stats but checks_last_24h (pool_rounds), and pages;
 * null when no owner answers (then the durable copy answers).
 */
export interface OwnerReads {
  stats(poolId: string): Promise<Omit<PoolStats, 'checksLast24h'> | null>;
  page(poolId: string, query: PoolProxiesQuery): Promise<ProxiesPage | null>;
  /** `query.all`: every match in one pass from this process's memory (proxy-listing.ts); null (or absent): paged as ever. */
  listing?(poolId: string, query: PoolProxiesQuery): ProxyListing | null;
  /** `query.all` of a pool another node holds: its listing pulled from there (ports.ts ListingStream); null: the durable copy answers. */
  remoteListing?(poolId: string, query: PoolProxiesQuery, text: ListingText): Promise<ListingStream | null>;
}

/** The account's pools (or one of them): the stats from the owner's memory where it has them, else from the durable copy. */
async function readPools(db: DbOrTx, accountId: string, poolId: string | null, nowMs: number, owner: OwnerReads | undefined): Promise<PoolObject[]> {
  if (owner === undefined) {
    const objects = (await run(db, poolObjectsStatement(accountId, poolId, nowMs))).map(objectOf);
    const withTargets = objects.filter((o) => o.customUrls.length > 0);
    if (withTargets.length > 0) {
      const counts = await durableTargetCounts(db, withTargets.map((o) => o.id));
      for (const o of withTargets) o.counts.targets = Object.fromEntries(o.customUrls.map((t) => [t.name, counts.get(o.id)?.[t.name] ?? 0]));
    }
    return objects;
  }
  const rows = await run(db, poolRowsWithRoundsStatement(accountId, poolId, nowMs));
  const memory = new Map(await Promise.all(rows.map(async (r) => [String(r.id), await owner.stats(String(r.id))] as const)));
  const missing = [...memory].filter(([, m]) => m === null).map(([id]) => id);
  const durable = new Map(missing.length === 0 ? [] : (await run(db, poolStatsStatement(missing, nowMs))).map((r) => [String(r.pool_id), statsOf(r)]));
  const targetCounts = missing.length === 0 ? new Map<string, Record<string, number>>() : await durableTargetCounts(db, missing);
  return rows.map((r) => {
    const id = String(r.id);
    const m = memory.get(id);
    const stats: PoolStats = m
      ? { ...m, checksLast24h: Number(r.checks_last_24h ?? 0) }
      : { ...(durable.get(id) ?? { counts: { ...EMPTY_COUNTS }, nextDueAt: null, checksLast24h: 0, checksPerDay: 0 }), targetCounts: targetCounts.get(id) ?? {} };
    return poolObject(poolRowFromSql(r), stats);
  });
}

/** Working proxies passing each target, per pool, from the durable copy. */
async function durableTargetCounts(db: DbOrTx, poolIds: readonly string[]): Promise<Map<string, Record<string, number>>> {
  const out = new Map<string, Record<string, number>>();
  for (const r of await run(db, targetCountsStatement(poolIds))) {
    const id = String(r.pool_id);
    out.set(id, { ...out.get(id), [String(r.name)]: Number(r.n) });
  }
  return out;
}

/** The account's pools, oldest first. */
export async function listPools(db: Db, accountId: string, nowMs: number, owner?: OwnerReads): Promise<PoolObject[]> {
  return readPools(db, accountId, null, nowMs, owner);
}

/** The account's pool `poolId`, or null (none, or another account's). */
export async function getPool(db: Db, accountId: string, poolId: string, nowMs: number, owner?: OwnerReads): Promise<PoolObject | null> {
  return (await readPools(db, accountId, poolId, nowMs, owner))[0] ?? null;
}

export interface PoolUpdated {
  pool: PoolObject;
  added: number;
  removed: number;
  /** The state before the change (the pool object holds the one after). */
  previousState: PoolState;
}

/** Applies a PATCH; null when the pool is not the account's. Throws PoolLimitError (nothing written). */
export async function updatePool(db: Db, accountId: string, poolId: string, patch: PoolPatch, limits: PoolLimits, nowMs: number): Promise<PoolUpdated | null> {
  const updated = await db.transaction(async (tx) => {
    const adding = patch.add !== undefined && patch.add.proxies.length > 0;
    if (adding) await run(tx, lockAccountPoolsStatement(accountId));
    const change = {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.intervalS !== undefined ? { intervalS: patch.intervalS } : {}),
      ...(patch.timeoutMs !== undefined ? { timeoutMs: patch.timeoutMs } : {}),
      ...(patch.https !== undefined ? { https: patch.https } : {}),
      ...(patch.customUrls !== undefined ? { customUrls: patch.customUrls } : {}),
      ...(patch.state !== undefined ? { state: patch.state } : {}),
    };
    const [u] = await run(tx, updatePoolStatement(accountId, poolId, change, nowMs));
    if (u === undefined) return null;
    const type = String(u.type) as CheckType;
    const intervalS = Number(u.interval_s);
    const previousState = String(u.old_state) as PoolState;
    if (previousState === 'paused' && u.state === 'active') await run(tx, spreadOverdueStatement(poolId, nowMs, intervalS));
    else if (intervalS < Number(u.old_interval_s)) await run(tx, clampDueStatement(poolId, nowMs, intervalS));

    if (patch.customUrls !== undefined) await run(tx, dropTargetsStatement(poolId, patch.customUrls.map((t) => t.name)));
    const removed = patch.remove === undefined ? 0 : await inBatches(patch.remove.proxies, (b) => run(tx, removeProxiesStatement(poolId, b)), 'removed');
    let added = 0;
    if (adding) {
      added = await inBatches(patch.add!.proxies, (b) => run(tx, insertProxiesStatement(poolId, type, b, nowMs)), 'added');
      if (added > 0) checkPoolLimits(await usageOf(tx, accountId, poolId), limits);
    }
    const pool = await readPool(tx, accountId, poolId, nowMs);
    if (pool === null) throw new Error(`updatePool: pool ${poolId} not readable after its update`);
    return { pool, added, removed, previousState };
  });
  return updated === null ? null : analyzedAfter(db, updated);
}

/** true when the account's pool was deleted (its proxies and rounds go with it). */
export async function deletePool(db: Db, accountId: string, poolId: string): Promise<boolean> {
  return (await run(db, deletePoolStatement(accountId, poolId))).length > 0;
}

export interface PoolProxiesListing {
  /** The pool's type (decides whether pool proxy objects carry `protocols`). */
  type: CheckType;
  page: ProxiesPage;
  /** `query.all` answered from the owner's memory in this process: every match, read a chunk at a time (`page` is empty then). */
  all?: ProxyListing;
  /** `query.all` answered from the memory of the node holding the pool, its first chunk in hand (`page` is empty then). */
  stream?: ListingStream;
  /** The pool's target names; `query.target` not among them: the page is empty and `unknownTarget` true (the route's 400). */
  targets?: string[];
  unknownTarget?: true;
}

/**
 * One page of the account's pool `poolId` (from its owner's memory when it
 * has one here), or null when the pool is not the account's; an unlimited
 * txt / csv listing (`query.all`) of a pool this process's owner holds is
 * every match at once (`all`), of a pool another node holds its listing
 * pulled from there (`stream`, written as of `nowMs`); when that node does
 * not answer, the durable copy's first page at once (the node is not asked
 * for a page it just did not answer).
 */
export async function proxiesPage(db: Db, accountId: string, poolId: string, query: PoolProxiesQuery, owner?: OwnerReads, nowMs = Date.now()): Promise<PoolProxiesListing | null> {
  const [p] = await run(db, poolTypeStatement(accountId, poolId));
  if (p === undefined) return null;
  const type = String(p.type) as CheckType;
  const targets = poolRowFromSql({ ...p, custom_urls: p.custom_urls }).customUrls.map((t) => t.name);
  if (query.target != null && !targets.includes(query.target)) return { type, targets, page: { rows: [], nextCursor: null }, unknownTarget: true };
  const all = query.all === true ? (owner?.listing?.(poolId, query) ?? null) : null;
  if (all !== null) return { type, targets, page: { rows: [], nextCursor: null }, all };
  if (query.all === true && owner?.remoteListing !== undefined) {
    const stream = await owner.remoteListing(poolId, query, { poolType: type, nowMs });
    if (stream !== null) return { type, targets, page: { rows: [], nextCursor: null }, stream };
  }
  const memory = query.all === true && owner?.remoteListing !== undefined ? null : ((await owner?.page(poolId, query)) ?? null);
  if (memory !== null) return { type, targets, page: memory };
  const page = pageOf(await run(db, proxiesPageStatement(poolId, query)), query);
  if (targets.length > 0 && query.format !== 'txt') await withTargets(db, page.rows, targets);
  return { type, targets, page };
}

/** Each row's `targets` from the durable copy (a name never fetched through the proxy: null). */
async function withTargets(db: DbOrTx, rows: PoolProxyRow[], names: readonly string[]): Promise<void> {
  const byId = new Map<number, Record<string, TargetState | null>>();
  for (const r of rows) {
    r.targets = Object.fromEntries(names.map((n) => [n, null]));
    byId.set(r.id, r.targets);
  }
  if (rows.length === 0) return;
  for (const raw of await run(db, targetsOfStatement(rows.map((r) => r.id)))) {
    const t = targetRowFromSql(raw);
    const rec = byId.get(t.proxyId);
    if (rec !== undefined && t.name in rec) rec[t.name] = t.state;
  }
}

// ---- the owner's side (src/jobs/pool-actor.ts; its fenced flushes are jobs/pool-durable.ts's) ----------

/** Up to `limit` proxies of `poolId` due by `nowMs`, most overdue first. */
export async function dueProxies(db: DbOrTx, poolId: string, nowMs: number, limit: number): Promise<PoolProxyRow[]> {
  return (await run(db, dueProxiesStatement(poolId, nowMs, limit))).map(rowFromSql);
}

/** Whole rows of one pool written as they are, in one transaction, unfenced: a pool no owner holds (tests seeding verdicts). */
export async function applyResults(db: Db, poolId: string, rows: readonly PoolProxyRow[]): Promise<void> {
  if (rows.length === 0) return;
  const { state, verdicts } = batchesOfRows(rows);
  await db.transaction(async (tx) => {
    await run(tx, stateUpdateStatement(poolId, null, state));
    await run(tx, verdictFieldsStatement(poolId, null, verdicts));
  });
}

/** Every pool's row (an owner's start), oldest first. */
export async function allPoolRows(db: DbOrTx): Promise<PoolRow[]> {
  return (await run(db, allPoolRowsStatement())).map(poolRowFromSql);
}

/** One pool's row, or null when it is gone. */
export async function poolRow(db: DbOrTx, poolId: string): Promise<PoolRow | null> {
  const [r] = await run(db, poolRowStatement(poolId));
  return r === undefined ? null : poolRowFromSql(r);
}

/** true when the active pool became paused for insufficient checks. */
export async function pauseForChecks(db: DbOrTx, poolId: string, nowMs: number): Promise<boolean> {
  return (await run(db, pauseForChecksStatement(poolId, nowMs))).length > 0;
}

/** true when the pool paused for insufficient checks is active again; its overdue proxies are spread over its interval. */
export async function resumeForChecks(db: Db, poolId: string, nowMs: number): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [r] = await run(tx, resumeForChecksStatement(poolId, nowMs));
    if (r === undefined) return false;
    await run(tx, spreadOverdueStatement(poolId, nowMs, Number(r.interval_s)));
    return true;
  });
}

/** The pool's counts now (all 0 when it is gone). */
export async function poolCounts(db: DbOrTx, poolId: string): Promise<PoolCounts> {
  const [r] = await run(db, poolCountsStatement(poolId));
  const n = (v: unknown) => Number(v ?? 0);
  return r === undefined ? { ...EMPTY_COUNTS } : { total: n(r.total), working: n(r.working), failed: n(r.failed), unchecked: n(r.unchecked) };
}

// ---- a pool's list URLs (sources-sql.ts) --------------------------------------------------

/** A source of an active pool that is due (`due`: its stored due time, null when never fetched). */
export interface DueSource {
  poolId: string;
  accountId: string;
  type: CheckType;
  idx: number;
  url: string;
  everyS: number;
  due: string | null;
}

/** Up to `limit` sources of active pools due by `nowMs`, most overdue first. */
export async function dueSources(db: DbOrTx, nowMs: number, limit: number): Promise<DueSource[]> {
  return (await run(db, dueSourcesStatement(nowMs, limit))).map((r) => ({
    poolId: String(r.pool_id),
    accountId: String(r.account_id),
    type: String(r.type) as CheckType,
    idx: Number(r.idx),
    url: String(r.url),
    everyS: Number(r.every_s),
    due: r.due === null || r.due === undefined ? null : String(r.due),
  }));
}

/** When the next source of an active pool falls due (ms; `nowMs` for one never fetched), null with none. */
export async function nextSourceDue(db: DbOrTx, nowMs: number): Promise<number | null> {
  const [r] = await run(db, nextSourceDueStatement(nowMs));
  return r?.next_ms === null || r?.next_ms === undefined ? null : Number(r.next_ms);
}

/** true when this call claimed `s` at its due time (its next fetch is then at `nextMs`); false when another did, or it is gone. */
export async function claimSource(db: DbOrTx, s: DueSource, nextMs: number): Promise<boolean> {
  return (await run(db, claimSourceStatement(s.poolId, s.idx, s.url, s.due, nextMs))).length > 0;
}

/** A fetch's outcome (null: the last one stays); `nextMs` moves the due time. */
export async function recordSource(db: DbOrTx, s: Pick<DueSource, 'poolId' | 'idx' | 'url'>, outcome: SourceFetchOutcome | null, nextMs?: number): Promise<void> {
  await run(db, recordSourceStatement(s.poolId, s.idx, s.url, outcome, nextMs));
}

export interface SourceAdded {
  added: number;
  /** New addresses left out: the pool or the account had no room for them. */
  notAdded: number;
  /** Which limit left them out (the tighter one), null when none did. */
  limit: 'proxies_per_pool' | 'proxies_per_account' | null;
}

/**
 * Adds the addresses of `proxies` not in `poolId` yet, in their order, as
 * many as the pool's and the account's limits leave room for, under the
 * account's pool lock (so no other change of the account passes a limit
 * meanwhile). Never throws for a limit.
 */
export async function addSourceProxies(db: Db, accountId: string, poolId: string, type: CheckType, proxies: readonly ParsedProxy[], limits: PoolLimits, nowMs: number): Promise<SourceAdded> {
  return analyzedAfter(db, await db.transaction(async (tx) => {
    await run(tx, lockAccountPoolsStatement(accountId));
    const u = await usageOf(tx, accountId, poolId);
    const poolRoom = Math.max(0, limits.maxProxiesPerPool - u.inPool);
    const accountRoom = Math.max(0, limits.maxProxiesPerAccount - u.proxies);
    let room = Math.min(poolRoom, accountRoom);
    let added = 0;
    let fresh = 0;
    for (let i = 0; i < proxies.length; i += ADDRESS_BATCH) {
      if (i > 0) await nextTurn();
      const [r] = await run(tx, insertProxiesUpToStatement(poolId, type, proxies.slice(i, i + ADDRESS_BATCH), nowMs, room));
      const n = Number(r?.added ?? 0);
      added += n;
      fresh += Number(r?.fresh ?? 0);
      room -= n;
    }
    const notAdded = fresh - added;
    const limit = notAdded === 0 ? null : poolRoom <= accountRoom ? 'proxies_per_pool' : 'proxies_per_account';
    return { added, notAdded, limit };
  }));
}
