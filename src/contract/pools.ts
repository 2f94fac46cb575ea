/**
 * The pools' shapes (DECISIONS "Pools"; src/http/routes/pools.ts): the pool
 * object (src/pools/shape.ts builds it), its sources, the pool proxy object,
 * the request bodies of POST and PATCH, the proxies listing's page.
 *
 * Bounds: `interval_s` on a body starts at POOL_MIN_INTERVAL_S's default
 * (60; an operator may lower it, so the pool object's own minimum is 1).
 */
import { Type as t, type Static } from '@sinclair/typebox';
import { DEFAULT_INTERVAL_S, DEFAULT_PAGE_LIMIT, DEFAULT_POOL_LIMITS, DEFAULT_POOL_TIMEOUT_MS, MAX_INTERVAL_S, MAX_PAGE_LIMIT, MAX_SOURCES, POOL_NAME_MAX, SOURCE_MAX_EVERY_S, SOURCE_MIN_EVERY_S } from '../pools/limits';
import { POOL_ID_PATTERN } from '../pools/pool-id';
import { ANONYMITIES, PROXY_FORMATS, PROXY_SORTS, QUERY_STATUSES } from '../pools/query';
import { DEFAULT_REGION } from './bounds';
import { anonymity, CustomUrl, customUrlAsRead, timeoutMs } from './checks';
import { AUTO_ORDER, checkType, closed, CodeMessage, dateTime, dateTimeOrNull, errorBody, exitFields, int0, oneOf, orNull, ProxyAddress, proxyType, queryBoolean, queryOneOf, RESPONSE_TIME_PATTERN } from './common';
import { PROXY_TYPES } from '../proxy/types';
import { TooManyRequests } from './errors';

/** The examples the document shows on these schemas (OpenAPI `examples`). */
export const POOL_EXAMPLE = {
  id: 'k3v9q2m7x1c8b5n4z6w0',
  name: 'scraper list',
  type: 'http',
  region: 'us1',
  interval_s: 600,
  timeout: 5000,
  https: true,
  state: 'active',
  paused_reason: null,
  created_at: '2026-11-22T10:00:00.000Z',
  counts: { total: 3, working: 2, failed: 1, unchecked: 0 },
  last_round_at: '2026-11-22T10:10:00.000Z',
  next_due_at: '2026-11-22T10:19:41.000Z',
  checks_last_24h: 6,
  checks_per_day: 439,
  customUrls: [],
  sources: [],
};
export const SUBMITTED_EXAMPLE = { added: 3, removed: 0, total_invalid: 1, total_duplicates: 1 };
export const PROXY_EXAMPLE = {
  proxy: { host: '203.0.113.7', port: 8080, hasAuth: false },
  status: 'working',
  type: 'http',
  anonymity: 'elite',
  https: true,
  origin: '203.0.113.7',
  country: 'DE',
  country_name: 'Germany',
  location: 'Frankfurt am Main',
  isp: 'Example ISP',
  asn: 64500,
  responseTime: '123.45 ms',
  latency_p50_ms: 118,
  uptime: { h1: 1, h24: 0.96, d7: 0.91 },
  checks: 1008,
  first_seen_at: '2026-11-15T10:00:00.000Z',
  last_checked_at: '2026-11-22T10:10:00.000Z',
  last_change_at: '2026-11-22T06:40:00.000Z',
  next_check_at: '2026-11-22T10:19:41.000Z',
};

/** A pool's name: not blank, no control characters (pool-request.ts checks it with this pattern). */
export const POOL_NAME_PATTERN = '^[^\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f][^\\u0000-\\u001f\\u007f]*$';
const name = () => t.String({ minLength: 1, maxLength: POOL_NAME_MAX, pattern: POOL_NAME_PATTERN });
const everyS = () => t.Integer({ minimum: SOURCE_MIN_EVERY_S, maximum: SOURCE_MAX_EVERY_S });
const fraction = () => orNull(t.Number({ minimum: 0, maximum: 1 }));
export const POOL_STATES = ['active', 'paused'] as const;
export const PAUSED_REASONS = ['insufficient_checks', 'owner'] as const;
export const POOL_PROXY_STATUSES = ['working', 'failed', 'unchecked'] as const;

/** A pool target's name (DECISIONS "Targets in pools"; src/pools/targets.ts). */
export const TARGET_NAME_PATTERN = '^[a-z0-9-]{1,32}$';
const targetName = (o: { description?: string } = {}) => t.String({ pattern: TARGET_NAME_PATTERN, ...o });

/** A custom URL rule (a target) as the pool object shows it back: its name and defaults filled in. */
export const CustomUrlRuleObject = t.Object(
  { name: targetName(), url: t.String(), requiredStatusCodes: t.Array(t.Integer()), requiredText: t.Optional(t.String()), caseSensitive: t.Boolean() },
  closed,
);

/** A target in POST / PATCH: /check's rule and an optional name. */
export const PoolTargetInput = t.Composite([
  CustomUrl,
  t.Object({ name: t.Optional(targetName({ description: 'Default: the URL\'s host, lower-cased, other characters -, made unique with -2, -3' })) }),
]);

/** A pool proxy's last fetch of one target (never fetched through it: ok false, the rest null). */
export const PoolProxyTarget = t.Object(
  {
    ok: t.Boolean(),
    status: orNull(t.Integer(), { description: 'The HTTP status seen; null: none came back' }),
    responseTime: orNull(t.String({ pattern: RESPONSE_TIME_PATTERN })),
    last_checked_at: dateTimeOrNull(),
    uptime_h24: orNull(t.Number({ minimum: 0, maximum: 1 }), { description: 'Fraction of its fetches that passed in the last 24 hours' }),
  },
  closed,
);

export const SourceFetch = t.Object(
  {
    at: dateTime(),
    error: orNull(t.String(), { description: 'null: the list was read; else why not (source_timeout, source_too_large, source_blocked_target, ...)' }),
    found: int0({ description: 'Unique valid addresses in the list' }),
    invalid: int0({ description: 'Lines that are no address (skipped)' }),
    added: int0({ description: 'Addresses new to the pool (due at once)' }),
    not_added: int0({ description: 'New addresses left out: the pool or the account was full' }),
    limit: orNull(oneOf(['proxies_per_pool', 'proxies_per_account'] as const), { description: 'Which limit left addresses out' }),
  },
  closed,
);
export type SourceFetchBody = Static<typeof SourceFetch>;

export const PoolSource = t.Object(
  {
    url: t.String({ format: 'uri', description: 'http:// or https:// list URL' }),
    every_s: everyS(),
    next_fetch_at: dateTimeOrNull({ description: 'When the list is fetched next; null: at once (never fetched yet)' }),
    last_fetch: orNull(SourceFetch, { description: 'The last fetch (null before the first one)' }),
  },
  closed,
);
export type PoolSourceBody = Static<typeof PoolSource>;

export const PoolCounts = t.Object(
  {
    total: int0(),
    working: int0(),
    failed: int0(),
    unchecked: int0(),
    targets: t.Optional(t.Record(t.String(), int0(), { description: 'Pools with customUrls: working proxies whose last fetch of each target (by name) passed' })),
  },
  closed,
);

const poolProperties = {
  id: t.String({ pattern: POOL_ID_PATTERN }),
  name: name(),
  type: checkType(),
  region: t.String(),
  interval_s: t.Integer({ minimum: 1, maximum: MAX_INTERVAL_S, description: 'A working proxy is checked again within this many seconds' }),
  timeout: timeoutMs({ description: 'Probe timeout, ms' }),
  https: t.Boolean(),
  state: oneOf(POOL_STATES),
  paused_reason: orNull(oneOf(PAUSED_REASONS), { description: 'null while active' }),
  created_at: dateTime(),
  counts: PoolCounts,
  last_round_at: dateTimeOrNull(),
  next_due_at: dateTimeOrNull({ description: 'When the next proxy falls due; null while paused or empty' }),
  checks_last_24h: int0(),
  checks_per_day: int0({ description: 'What the schedule costs per day at the proxies\' states now (working every interval_s, failing ones backing off)' }),
  customUrls: t.Array(CustomUrlRuleObject),
  sources: t.Array(PoolSource),
};

export const Pool = t.Object(poolProperties, { ...closed, examples: [POOL_EXAMPLE] });
export type PoolBody = Static<typeof Pool>;

export const Submitted = t.Object(
  {
    added: int0({ description: 'Proxies new to the pool (due at once)' }),
    removed: int0(),
    total_invalid: int0({ description: 'Entries that are no proxy address (PATCH: of add and remove together)' }),
    total_duplicates: int0({ description: 'Repeats within the request' }),
  },
  { ...closed, description: 'What the request\'s addresses did, counted as /check counts them' },
);
export type SubmittedBody = Static<typeof Submitted>;

export const POOL_WARNING_CODES = ['balance_runs_out'] as const;
export const PoolWarning = t.Object(
  {
    code: oneOf(POOL_WARNING_CODES),
    message: t.String(),
    hours_left: t.Optional(t.Number({ minimum: 0, description: 'balance_runs_out only: hours until the checks run out at this schedule, rounded down to a tenth' })),
  },
  closed,
);
export type PoolWarningBody = Static<typeof PoolWarning>;

export const PoolChanged = t.Object(
  {
    ...poolProperties,
    submitted: Submitted,
    warnings: t.Array(PoolWarning, {
      description:
        'What the owner should know of the pool as changed: [], balance_runs_out (its schedule, proxies x 86 400 / interval_s checks a day, costs more than the account has)',
    }),
  },
  { ...closed, description: 'The pool, and what the request\'s addresses did', examples: [{ ...POOL_EXAMPLE, counts: { total: 3, working: 0, failed: 0, unchecked: 3 }, last_round_at: null, next_due_at: '2026-11-22T10:00:00.000Z', checks_last_24h: 0, submitted: SUBMITTED_EXAMPLE, warnings: [] }] },
);
export type PoolChangedBody = Static<typeof PoolChanged>;

export const PoolList = t.Object({ pools: t.Array(Pool) }, { ...closed, examples: [{ pools: [POOL_EXAMPLE] }] });

export const PoolProxy = t.Object(
  {
    proxy: ProxyAddress,
    status: oneOf(POOL_PROXY_STATUSES),
    error: t.Optional(t.Object(CodeMessage.properties, { ...closed, description: 'While failed: the last check\'s error' })),
    type: orNull(proxyType(), { description: 'Its own protocol (its line\'s scheme), else the pool\'s type; an auto pool: the first of socks5, socks4, http that passed (null until one did)' }),
    protocols: t.Optional(t.Array(oneOf(AUTO_ORDER), { uniqueItems: true, description: 'Auto pools only: every protocol that passed the last passing check' })),
    anonymity: anonymity(),
    https: orNull(t.Boolean()),
    ...exitFields(),
    responseTime: orNull(t.String({ pattern: RESPONSE_TIME_PATTERN }), { description: 'The last check\'s; null while unchecked' }),
    latency_p50_ms: orNull(t.Integer({ minimum: 0 }), { description: 'Median latency of the passing checks of the last 24 h' }),
    uptime: t.Object(
      { h1: fraction(), h24: fraction(), d7: fraction() },
      { ...closed, description: 'Fraction of checks that passed in the last hour, 24 hours, 7 days; null without a check in the window' },
    ),
    checks: int0(),
    first_seen_at: dateTime(),
    last_checked_at: dateTimeOrNull(),
    last_change_at: dateTimeOrNull(),
    next_check_at: dateTime(),
    targets: t.Optional(t.Record(t.String(), PoolProxyTarget, { description: 'Pools with customUrls: each target\'s last fetch through the proxy, by name' })),
  },
  { ...closed, examples: [PROXY_EXAMPLE] },
);
export type PoolProxyBody = Static<typeof PoolProxy>;

export const PoolProxyPage = t.Object(
  { proxies: t.Array(PoolProxy), next_cursor: orNull(t.String(), { description: 'The `cursor` of the next page; null on the last' }) },
  { ...closed, examples: [{ proxies: [PROXY_EXAMPLE], next_cursor: null }] },
);

export const PoolCreateBody = t.Object(
  {
    name: name(),
    proxies: t.Optional(t.Array(t.String(), { description: 'host:port, user:pass@host:port or host:port:user:pass (as /check)' })),
    text: t.Optional(t.String({ description: 'One address per line (as /check-raw)' })),
    type: t.Optional(checkType({ default: 'http' })),
    region: t.Optional(t.String({ default: DEFAULT_REGION })),
    interval_s: t.Optional(
      t.Integer({ minimum: DEFAULT_POOL_LIMITS.minIntervalS, maximum: MAX_INTERVAL_S, default: DEFAULT_INTERVAL_S, description: 'From POOL_MIN_INTERVAL_S (default 60)' }),
    ),
    timeout: t.Optional(timeoutMs({ default: DEFAULT_POOL_TIMEOUT_MS })),
    https: t.Optional(t.Boolean({ default: true })),
    customUrls: t.Optional(t.Array(PoolTargetInput, { description: 'The pool\'s targets, at most MAX_CUSTOM_URLS (default 10); names given unique in the list' })),
    sources: t.Optional(
      t.Array(t.Object({ url: t.String({ format: 'uri' }), every_s: t.Optional(everyS()) }), {
        maxItems: MAX_SOURCES,
        description: 'List URLs fetched every every_s seconds (default 3600); their addresses join the pool',
      }),
    ),
  },
  {
    description: 'At least one of proxies, text, sources',
    examples: [{ name: 'scraper list', proxies: ['203.0.113.7:8080', 'user:pass@198.51.100.2:3128', '192.0.2.10:1080:user:pass'], type: 'http', interval_s: 600 }],
  },
);
export type PoolCreate = Static<typeof PoolCreateBody>;

export const PoolPatchBody = t.Object(
  {
    name: t.Optional(name()),
    interval_s: t.Optional(t.Integer({ minimum: DEFAULT_POOL_LIMITS.minIntervalS, maximum: MAX_INTERVAL_S })),
    timeout: t.Optional(timeoutMs()),
    https: t.Optional(t.Boolean()),
    state: t.Optional(oneOf(POOL_STATES, { description: 'paused: by the owner (stays paused); active: runs again' })),
    customUrls: t.Optional(t.Array(PoolTargetInput, { description: 'Replaces the targets (from each proxy\'s next check); [] removes them; names given unique in the list' })),
    add: t.Optional(t.Array(t.String())),
    remove: t.Optional(t.Array(t.String())),
  },
  { description: 'At least one field', examples: [{ state: 'paused' }] },
);
export type PoolPatch = Static<typeof PoolPatchBody>;

/**
 * The pool bodies as the routes read them (their declared `body`s): the
 * shapes above, with what pool-request.ts checks itself left open: the
 * address lists' entries (one that is no string is an invalid line), a
 * name's length (counted in code points) and pattern, the URLs (httpUrl:
 * the uri format refuses some it takes) and `interval_s` from this server's
 * POOL_MIN_INTERVAL_S (`minIntervalS`; the document states the default).
 */
export function poolBodiesAsRead(minIntervalS: number) {
  const interval = () => t.Optional(t.Integer({ minimum: minIntervalS, maximum: MAX_INTERVAL_S }));
  const list = () => t.Optional(t.Array(t.Unknown()));
  const source = t.Object({ ...PoolCreateBody.properties.sources.items.properties, url: t.String() });
  // a target: /check's rule as read, its name left to pool-request.ts too
  const targets = () => t.Optional(t.Array(t.Object({ ...customUrlAsRead().properties, name: t.Optional(t.String()) })));
  return {
    PoolCreateBody: t.Object({
      ...PoolCreateBody.properties,
      name: t.String(),
      proxies: list(),
      interval_s: interval(),
      customUrls: targets(),
      sources: t.Optional(t.Array(source, { maxItems: MAX_SOURCES })),
    }),
    PoolPatchBody: t.Object({ ...PoolPatchBody.properties, name: t.Optional(t.String()), interval_s: interval(), customUrls: targets(), add: list(), remove: list() }),
  };
}

export const PoolTooManyRequests = t.Union([TooManyRequests, errorBody(t.Literal('Too many requests'), { limit: int0() })]);

/** The pool routes' path: a pool's id (any other text answers 404, as an unknown pool). */
export const PoolIdParams = t.Object({ id: t.String({ pattern: POOL_ID_PATTERN, description: 'The pool\'s id' }) });

/** `min_uptime`: a decimal from 0 to 1, at most 9 decimals, no exponent ("0", "1", ".5", "0.95", "1.0"). */
export const MIN_UPTIME_PATTERN = '^(?:[01]|0?\\.[0-9]{1,9}|1\\.0{1,9})$';
/** `max_latency_ms`'s largest value (the column is a 4-byte integer). */
export const MAX_LATENCY_QUERY_MS = 2_147_483_647;

/** GET /pools/{id}/proxies (src/http/pool-proxies-query.ts checks it). */
export const PoolProxiesQuery = t.Object({
  status: t.Optional(queryOneOf(QUERY_STATUSES, { default: 'working' })),
  country: t.Optional(t.String({ pattern: '^[A-Za-z]{2}$', description: 'ISO 3166 alpha-2' })),
  anonymity: t.Optional(queryOneOf(ANONYMITIES)),
  type: t.Optional(queryOneOf(PROXY_TYPES, { description: 'The proxy\'s type, or one of the protocols it passed' })),
  https: t.Optional(queryBoolean()),
  max_latency_ms: t.Optional(t.Integer({ minimum: 0, maximum: MAX_LATENCY_QUERY_MS, description: 'On latency_p50_ms' })),
  min_uptime: t.Optional(t.String({ pattern: MIN_UPTIME_PATTERN, description: 'A number from 0 to 1 (at most 9 decimals), on uptime.h24' })),
  sort: t.Optional(queryOneOf(PROXY_SORTS, { default: 'latency', description: 'latency: fastest first; uptime: highest first; checked: most recently checked first' })),
  limit: t.Optional(t.Integer({ minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT })),
  cursor: t.Optional(t.String({ description: 'next_cursor (or X-Next-Cursor) of the previous page, with the same sort' })),
  format: t.Optional(queryOneOf(PROXY_FORMATS, { default: 'json' })),
  scheme: t.Optional(
    queryBoolean({ default: 'false', description: 'txt: each line as <protocol>://[user:pass@]host:port (the pool\'s type, or the protocol an auto pool found)' }),
  ),
  target: t.Optional(targetName({ description: 'Only working proxies whose last fetch of this target (a customUrls name of the pool) passed; a name the pool does not have: 400' })),
});
