/**
 * Validation of POST /pools and PATCH /pools/{id} bodies (DECISIONS "Pools")
 * into typed values. Pure: no I/O, throws ApiError (api-errors.ts) only,
 * with the same bodies and field rules as /check (check-request.ts: region,
 * type, timeout, customUrls and the proxy list parser are its own functions,
 * reused here). The caller has already handled Content-Type (415), body size
 * (413) and malformed JSON (400). The limits are parameters (PoolLimits,
 * src/pools/limits.ts); those that need the database's counts (pools per
 * account, proxies per account, proxies already in a pool) are the store's,
 * checked in the transaction that writes (src/pools/store.ts).
 *
 * POST order of checks (the first failure wins; cheap before costly):
 *   1. shape (400 Invalid request "<field>: <what is wrong>"): body an
 *      object; name required, a string; proxies an array, text a string,
 *      type, region strings; customUrls, sources arrays; at least one of
 *      proxies, text, sources
 *   2. name: 1..100 characters, no control characters
 *   3. region (400 Invalid region)   4. type (400 Invalid proxy type; auto accepted)
 *   5. interval_s: an integer from POOL_MIN_INTERVAL_S to 86 400 (default 600)
 *   6. timeout (400 Invalid timeout; default 5000)   7. https a boolean (default true)
 *   8. customUrls: count (413 Too many custom URLs), then each rule as /check,
 *      and its optional name (1..32 of [a-z0-9-], unique in the list)
 *   9. sources: at most MAX_SOURCES, each {url (http/https), every_s 300..86 400,
 *      default 3600}
 *  10. proxies and text parsed (as /check and /check-raw read them), merged
 *      and de-duplicated; no valid one and no sources: 400 No valid proxies
 *      found; more unique ones than a pool holds: 413 Too many proxies
 *
 * PATCH: any of name, interval_s, timeout, https, state ("active" |
 * "paused"), customUrls (replaces the list: [] removes every target), add and remove (arrays of addresses), each checked as in POST;
 * a body with none of them is 400 (a misspelt field is not silently a
 * no-op). `add` with entries but no valid one: 400 No valid proxies found;
 * `remove` counts its invalid entries and goes on.
 *
 * Choices: absent and null both mean "not given" (as /check); unknown fields
 * are ignored; names are counted in code points. A line's scheme is the
 * proxy's own protocol (DECISIONS "Mixed lists"): `socks5://h:p` is checked
 * as socks5 whatever the pool's type, and is another pool proxy than `h:p`
 * (identity as /check's dedupe); a scheme naming the pool's own type is no
 * protocol of its own (POST parses with the pool's type; PATCH's add and
 * remove, which do not know it, are normalised so by the store's SQL,
 * proxies-sql.ts). The schemes named are counted (`schemes`).
 */
import {
  checkRegion,
  checkTimeoutValue,
  checkType,
  customUrlRule,
  httpUrl,
  isAbsent,
  isObject,
  optionalString,
  TIMEOUT_MAX_MS,
  TIMEOUT_MIN_MS,
} from './check-request';
import { invalidRequest, invalidTimeout, noValidProxies, tooManyCustomUrls, tooManyPoolProxies } from './api-errors';
import type { CustomUrlRule } from '../probe/types';
import { parseProxyList, type ParsedProxy } from '../proxy/parse';
import { PROXY_TYPES, type CheckType, type ProxyType } from '../proxy/types';
import { ProxySet } from '../proxy/dedupe';
import {
  DEFAULT_INTERVAL_S,
  DEFAULT_POOL_TIMEOUT_MS,
  DEFAULT_SOURCE_EVERY_S,
  MAX_INTERVAL_S,
  MAX_SOURCES,
  POOL_NAME_MAX,
  SOURCE_MAX_EVERY_S,
  SOURCE_MIN_EVERY_S,
  type PoolLimits,
} from '../pools/limits';
import { isTargetName, nameTargets, TARGET_NAME_MAX, type PoolTarget } from '../pools/targets';
import type { AddressList, PoolCreate, PoolPatch, PoolSource, PoolState } from '../pools/types';
import { POOL_NAME_PATTERN } from '../contract/pools';

export type { AddressList, PoolCreate, PoolPatch } from '../pools/types';

/** The addresses' lines whose scheme named each protocol (ParsedList.schemes): a pool keeps none (schemesWarnings). */
export type SchemeCounts = Record<ProxyType, number>;
/** What the routes get: the request, and the schemes its addresses named. */
export type CheckedPoolCreate = PoolCreate & { schemes: SchemeCounts };
export type CheckedPoolPatch = PoolPatch & { schemes: SchemeCounts };

export interface PoolRequestOptions {
  limits: PoolLimits;
  maxCustomUrls: number;
  acceptedRegions: readonly string[];
  /** Default 'us1'. */
  defaultRegion?: string;
}

const PATCH_FIELDS = Object.freeze(['name', 'interval_s', 'timeout', 'https', 'state', 'customUrls', 'add', 'remove'] as const);
/** Not blank, no control characters: the contract's pattern (src/contract/pools.ts). */
const NAME = new RegExp(POOL_NAME_PATTERN, 'u');

function checkName(v: unknown): string {
  if (typeof v !== 'string') throw invalidRequest('name: expected a string');
  const chars = [...v].length;
  if (chars < 1 || chars > POOL_NAME_MAX || !NAME.test(v)) {
    throw invalidRequest(`name: expected 1 to ${POOL_NAME_MAX} characters, not blank, no control characters`);
  }
  return v;
}

function checkInterval(v: unknown, limits: PoolLimits): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < limits.minIntervalS || v > MAX_INTERVAL_S) {
    throw invalidRequest(`interval_s: expected an integer from ${limits.minIntervalS} (server setting POOL_MIN_INTERVAL_S) to ${MAX_INTERVAL_S}`);
  }
  return v;
}

function checkTimeout(v: unknown): number {
  if (typeof v !== 'number') throw invalidTimeout(TIMEOUT_MIN_MS, TIMEOUT_MAX_MS);
  return checkTimeoutValue(v);
}

function checkBoolean(v: unknown, path: string): boolean {
  if (typeof v !== 'boolean') throw invalidRequest(`${path}: expected true or false`);
  return v;
}

function checkState(v: unknown): PoolState {
  if (v !== 'active' && v !== 'paused') throw invalidRequest('state: expected "active" or "paused"');
  return v;
}

function optionalArray(v: unknown, path: string, what: string): readonly unknown[] | undefined {
  if (isAbsent(v)) return undefined;
  if (!Array.isArray(v)) throw invalidRequest(`${path}: expected an array of ${what}`);
  return v;
}

/** Each rule as /check reads it, plus its `name` (targets.ts: 1..32 of [a-z0-9-], unique; default from the host). */
function checkCustomUrls(rules: readonly unknown[], opts: PoolRequestOptions): PoolTarget[] {
  if (rules.length > opts.maxCustomUrls) throw tooManyCustomUrls(opts.maxCustomUrls);
  const seen = new Set<string>();
  return nameTargets(
    rules.map((r, i): CustomUrlRule & { name?: string } => {
      const path = `customUrls[${i}]`;
      const rule = customUrlRule(r, path);
      const name = (r as Record<string, unknown>).name;
      if (isAbsent(name)) return rule;
      if (!isTargetName(name)) throw invalidRequest(`${path}.name: expected 1 to ${TARGET_NAME_MAX} of a-z, 0-9 and -`);
      if (seen.has(name)) throw invalidRequest(`${path}.name: "${name}" given twice`);
      seen.add(name);
      return { ...rule, name };
    }),
  );
}

function checkSources(sources: readonly unknown[]): PoolSource[] {
  if (sources.length > MAX_SOURCES) throw invalidRequest(`sources: at most ${MAX_SOURCES} list URLs`);
  return sources.map((s, i) => {
    const path = `sources[${i}]`;
    if (!isObject(s)) throw invalidRequest(`${path}: expected an object {url, every_s}`);
    const url = httpUrl(s.url, `${path}.url`);
    const every = s.every_s;
    if (isAbsent(every)) return { url, everyS: DEFAULT_SOURCE_EVERY_S };
    if (typeof every !== 'number' || !Number.isInteger(every) || every < SOURCE_MIN_EVERY_S || every > SOURCE_MAX_EVERY_S) {
      throw invalidRequest(`${path}.every_s: expected an integer from ${SOURCE_MIN_EVERY_S} to ${SOURCE_MAX_EVERY_S}`);
    }
    return { url, everyS: every };
  });
}

/**
 * Parse each input (an array of entries or a text), merge them in order and
 * de-duplicate across them. `limitExceeded` when more unique proxies than
 * `max` were seen (parsing stops there).
 */
function parseAddresses(inputs: readonly (string | readonly unknown[])[], max: number, type?: CheckType): AddressList & { limitExceeded: boolean; schemes: SchemeCounts } {
  let totalInvalid = 0;
  let totalDuplicates = 0;
  const schemes: SchemeCounts = { http: 0, socks4: 0, socks5: 0 };
  const count = (s: SchemeCounts) => {
    for (const t of PROXY_TYPES) schemes[t] += s[t];
  };
  if (inputs.length === 1) {
    const l = parseProxyList(inputs[0] as string | readonly unknown[], { maxUnique: max, ...(type === undefined ? {} : { type }) });
    return { proxies: l.proxies, totalInvalid: l.invalid, totalDuplicates: l.duplicates, limitExceeded: l.limitExceeded, schemes: l.schemes };
  }
  const merged = new ProxySet<ParsedProxy>();
  for (const input of inputs) {
    const l = parseProxyList(input, { maxUnique: max, ...(type === undefined ? {} : { type }) });
    totalInvalid += l.invalid;
    totalDuplicates += l.duplicates;
    count(l.schemes);
    for (const p of l.proxies) if (!merged.add(p)) totalDuplicates++;
    if (l.limitExceeded || merged.size > max) return { proxies: merged.values(), totalInvalid, totalDuplicates, limitExceeded: true, schemes };
  }
  return { proxies: merged.values(), totalInvalid, totalDuplicates, limitExceeded: false, schemes };
}

/** POST /pools: `body` is the already-parsed JSON. */
export function validatePoolCreate(body: unknown, opts: PoolRequestOptions): CheckedPoolCreate {
  // 1. shape
  if (!isObject(body)) throw invalidRequest('body: expected a JSON object');
  if (isAbsent(body.name)) throw invalidRequest('name: required');
  const proxies = optionalArray(body.proxies, 'proxies', 'strings');
  const text = optionalString(body.text, 'text');
  const type = optionalString(body.type, 'type');
  const region = optionalString(body.region, 'region');
  const rules = optionalArray(body.customUrls, 'customUrls', 'objects') ?? [];
  const sources = optionalArray(body.sources, 'sources', 'objects');
  if (proxies === undefined && text === undefined && sources === undefined) {
    throw invalidRequest('proxies: required (an array of addresses), or text, or sources');
  }

  // 2-9
  const name = checkName(body.name);
  const r = checkRegion(region, opts);
  const t = checkType(type);
  const intervalS = isAbsent(body.interval_s) ? DEFAULT_INTERVAL_S : checkInterval(body.interval_s, opts.limits);
  const timeoutMs = isAbsent(body.timeout) ? DEFAULT_POOL_TIMEOUT_MS : checkTimeout(body.timeout);
  const https = isAbsent(body.https) ? true : checkBoolean(body.https, 'https');
  const customUrls = checkCustomUrls(rules, opts);
  const followed = checkSources(sources ?? []);

  // 10
  const inputs: (string | readonly unknown[])[] = [];
  if (proxies !== undefined) inputs.push(proxies);
  if (text !== undefined) inputs.push(text);
  const list = parseAddresses(inputs, opts.limits.maxProxiesPerPool, t);
  if (list.proxies.length === 0 && followed.length === 0) throw noValidProxies();
  if (list.limitExceeded) throw tooManyPoolProxies(opts.limits.maxProxiesPerPool, 'pool');
  return {
    settings: { name, type: t, region: r, intervalS, timeoutMs, https, customUrls, sources: followed },
    proxies: list.proxies,
    totalInvalid: list.totalInvalid,
    totalDuplicates: list.totalDuplicates,
    schemes: list.schemes,
  };
}

/** PATCH /pools/{id}: `body` is the already-parsed JSON. */
export function validatePoolPatch(body: unknown, opts: PoolRequestOptions): CheckedPoolPatch {
  if (!isObject(body)) throw invalidRequest('body: expected a JSON object');
  if (!PATCH_FIELDS.some((f) => !isAbsent(body[f]))) throw invalidRequest(`body: expected at least one of ${PATCH_FIELDS.join(', ')}`);
  const add = optionalArray(body.add, 'add', 'strings');
  const remove = optionalArray(body.remove, 'remove', 'strings');

  const patch: CheckedPoolPatch = { schemes: { http: 0, socks4: 0, socks5: 0 } };
  if (!isAbsent(body.name)) patch.name = checkName(body.name);
  if (!isAbsent(body.interval_s)) patch.intervalS = checkInterval(body.interval_s, opts.limits);
  if (!isAbsent(body.timeout)) patch.timeoutMs = checkTimeout(body.timeout);
  if (!isAbsent(body.https)) patch.https = checkBoolean(body.https, 'https');
  if (!isAbsent(body.state)) patch.state = checkState(body.state);
  if (!isAbsent(body.customUrls)) patch.customUrls = checkCustomUrls(optionalArray(body.customUrls, 'customUrls', 'objects')!, opts);
  if (add !== undefined) {
    const list = parseAddresses([add], opts.limits.maxProxiesPerPool);
    if (list.proxies.length === 0 && add.length > 0) throw noValidProxies();
    if (list.limitExceeded) throw tooManyPoolProxies(opts.limits.maxProxiesPerPool, 'pool');
    patch.add = { proxies: list.proxies, totalInvalid: list.totalInvalid, totalDuplicates: list.totalDuplicates };
    patch.schemes = list.schemes;
  }
  if (remove !== undefined) {
    const list = parseAddresses([remove], Number.POSITIVE_INFINITY);
    patch.remove = { proxies: list.proxies, totalInvalid: list.totalInvalid, totalDuplicates: list.totalDuplicates };
  }
  return patch;
}
