/**
 * The OpenAPI content of the pools (src/http/routes/pools.ts): one operation
 * object per route with example bodies (as document paths: poolPaths), the
 * pools' component schemas
 * (closed, like openapi-schemas.ts's, so the e2e suite's response checks
 * catch drift), the Pools tag, and withPools(), which docs.ts applies to
 * the document of openapi.ts.
 */
import type { DocumentDecoration } from 'elysia';
import { MAX_INTERVAL_S, MAX_PAGE_LIMIT, MAX_SOURCES, POOL_NAME_MAX, SOURCE_MAX_EVERY_S, SOURCE_MIN_EVERY_S } from '../pools/limits';
import { POOL_ID_PATTERN } from '../pools/pool-id';
import { POOL_CSV_COLUMNS } from '../pools/render';
import { E401, E405, E429, E500, err, json, keyed200, rateLimitHeaders, security } from './openapi';
import { errorBody, int0, nullable, ref } from './openapi-schemas';

const dateTime = { type: 'string', format: 'date-time' };
const dateTimeOrNull = { type: ['string', 'null'], format: 'date-time' };
const fraction = { type: ['number', 'null'], minimum: 0, maximum: 1 };
const PROXY_TYPE = { enum: ['http', 'socks4', 'socks5'] };

const poolProperties = {
  id: { type: 'string', pattern: POOL_ID_PATTERN },
  name: { type: 'string', minLength: 1, maxLength: POOL_NAME_MAX },
  type: { enum: ['http', 'socks4', 'socks5', 'auto'] },
  region: { type: 'string' },
  interval_s: { type: 'integer', minimum: 1, maximum: MAX_INTERVAL_S, description: 'A working proxy is checked again within this many seconds' },
  timeout: { type: 'integer', minimum: 1000, maximum: 20000, description: 'Probe timeout, ms' },
  https: { type: 'boolean' },
  state: { enum: ['active', 'paused'] },
  paused_reason: { enum: ['insufficient_checks', 'owner', null], description: 'null while active' },
  created_at: dateTime,
  counts: {
    type: 'object',
    required: ['total', 'working', 'failed', 'unchecked'],
    additionalProperties: false,
    properties: {
      total: int0,
      working: int0,
      failed: int0,
      unchecked: int0,
      targets: { type: 'object', additionalProperties: int0, description: 'Pools with customUrls: working proxies whose last fetch of each target (by name) passed' },
    },
  },
  last_round_at: dateTimeOrNull,
  next_due_at: { ...dateTimeOrNull, description: 'When the next proxy falls due; null while paused or empty' },
  checks_last_24h: int0,
  checks_per_day: { ...int0, description: 'What the schedule costs per day at the proxies\' states now (working every interval_s, failing ones backing off)' },
  customUrls: { type: 'array', items: ref('PoolTarget'), description: 'The pool\'s targets: fetched through each proxy that passed the judge check' },
  sources: { type: 'array', items: ref('PoolSource') },
};

const TARGET_NAME = { type: 'string', pattern: '^[a-z0-9-]{1,32}$', description: '1..32 of a-z, 0-9, -; default: the URL\'s host (other characters -), made unique with -2, -3' };
const targetRule = (named: boolean) => ({
  type: 'object',
  required: named ? ['name', 'url', 'requiredStatusCodes', 'caseSensitive'] : ['url'],
  ...(named ? { additionalProperties: false } : {}),
  properties: {
    name: TARGET_NAME,
    url: { type: 'string', format: 'uri', maxLength: 2048, description: 'Absolute http:// or https:// URL' },
    requiredStatusCodes: { type: 'array', items: { type: 'integer', minimum: 100, maximum: 599 }, minItems: 1, maxItems: 100, default: [200] },
    requiredText: { type: 'string', maxLength: 1024 },
    caseSensitive: { type: 'boolean', default: false },
  },
});
const POOL_REQUIRED = Object.keys(poolProperties);

const submitted = {
  type: 'object',
  description: 'What the request\'s addresses did, counted as /check counts them',
  required: ['added', 'removed', 'total_invalid', 'total_duplicates'],
  additionalProperties: false,
  properties: {
    added: { ...int0, description: 'Proxies new to the pool (due at once)' },
    removed: int0,
    total_invalid: { ...int0, description: 'Entries that are no proxy address (PATCH: of add and remove together)' },
    total_duplicates: { ...int0, description: 'Repeats within the request' },
  },
};

const warnings = {
  type: 'array',
  description:
    'What the owner should know of the pool as changed: [], balance_runs_out (its schedule, proxies x 86 400 / interval_s checks a day, costs more than the account has)',
  items: {
    type: 'object',
    required: ['code', 'message'],
    additionalProperties: false,
    properties: {
      code: { enum: ['balance_runs_out'] },
      message: { type: 'string' },
      hours_left: { type: 'number', minimum: 0, description: 'balance_runs_out only: hours until the checks run out at this schedule, rounded down to a tenth' },
    },
  },
};

export const poolSchemas = {
  PoolSource: {
    type: 'object',
    required: ['url', 'every_s', 'next_fetch_at', 'last_fetch'],
    additionalProperties: false,
    properties: {
      url: { type: 'string', format: 'uri', description: 'http:// or https:// list URL' },
      every_s: { type: 'integer', minimum: SOURCE_MIN_EVERY_S, maximum: SOURCE_MAX_EVERY_S },
      next_fetch_at: { ...dateTimeOrNull, description: 'When the list is fetched next; null: at once (never fetched yet)' },
      last_fetch: {
        type: ['object', 'null'],
        description: 'The last fetch (null before the first one)',
        required: ['at', 'error', 'found', 'invalid', 'added', 'not_added', 'limit'],
        additionalProperties: false,
        properties: {
          at: dateTime,
          error: { type: ['string', 'null'], description: 'null: the list was read; else why not (source_timeout, source_too_large, source_blocked_target, ...)' },
          found: { ...int0, description: 'Unique valid addresses in the list' },
          invalid: { ...int0, description: 'Lines that are no address (skipped)' },
          added: { ...int0, description: 'Addresses new to the pool (due at once)' },
          not_added: { ...int0, description: 'New addresses left out: the pool or the account was full' },
          limit: { enum: ['proxies_per_pool', 'proxies_per_account', null], description: 'Which limit left addresses out' },
        },
      },
    },
  },
  Pool: { type: 'object', required: POOL_REQUIRED, additionalProperties: false, properties: poolProperties },
  PoolChanged: {
    type: 'object',
    description: 'The pool, and what the request\'s addresses did',
    required: [...POOL_REQUIRED, 'submitted', 'warnings'],
    additionalProperties: false,
    properties: { ...poolProperties, submitted, warnings },
  },
  PoolList: { type: 'object', required: ['pools'], additionalProperties: false, properties: { pools: { type: 'array', items: ref('Pool') } } },
  PoolTarget: targetRule(true),
  PoolTargetInput: targetRule(false),
  PoolProxyTarget: {
    type: 'object',
    description: 'A pool proxy\'s last fetch of one target (never fetched: ok false, the rest null)',
    required: ['ok', 'status', 'responseTime', 'last_checked_at', 'uptime_h24'],
    additionalProperties: false,
    properties: {
      ok: { type: 'boolean' },
      status: { type: ['integer', 'null'], description: 'The HTTP status seen; null: none came back' },
      responseTime: { type: ['string', 'null'], pattern: '^[0-9]+\\.[0-9]{2} ms$' },
      last_checked_at: dateTimeOrNull,
      uptime_h24: { ...fraction, description: 'Fraction of its fetches that passed in the last 24 hours' },
    },
  },
  PoolProxy: {
    type: 'object',
    required: [
      'proxy', 'status', 'type', 'anonymity', 'https', 'origin', 'country', 'country_name', 'location', 'isp', 'asn', 'responseTime',
      'latency_p50_ms', 'uptime', 'checks', 'first_seen_at', 'last_checked_at', 'last_change_at', 'next_check_at',
    ],
    additionalProperties: false,
    properties: {
      proxy: {
        type: 'object',
        required: ['host', 'port', 'hasAuth'],
        additionalProperties: false,
        properties: { host: { type: 'string' }, port: { type: 'integer', minimum: 1, maximum: 65535 }, hasAuth: { type: 'boolean' }, username: { type: 'string' }, password: { type: 'string' } },
      },
      status: { enum: ['working', 'failed', 'unchecked'] },
      error: {
        type: 'object',
        description: 'While failed: the last check\'s error',
        required: ['code', 'message'],
        additionalProperties: false,
        properties: { code: { type: 'string' }, message: { type: 'string' } },
      },
      type: { enum: ['http', 'socks4', 'socks5', null], description: 'The pool\'s type; an auto pool: the first of socks5, socks4, http that passed (null until one did)' },
      protocols: { type: 'array', items: { enum: ['socks5', 'socks4', 'http'] }, uniqueItems: true, description: 'Auto pools only: every protocol that passed the last passing check' },
      anonymity: { enum: ['elite', 'anonymous', 'transparent', null] },
      https: nullable('boolean'),
      origin: nullable('string'),
      country: nullable('string'),
      country_name: nullable('string'),
      location: nullable('string'),
      isp: nullable('string'),
      asn: nullable('integer'),
      responseTime: { type: ['string', 'null'], pattern: '^[0-9]+\\.[0-9]{2} ms$', description: 'The last check\'s; null while unchecked' },
      latency_p50_ms: { type: ['integer', 'null'], minimum: 0, description: 'Median latency of the passing checks of the last 24 h' },
      uptime: {
        type: 'object',
        description: 'Fraction of checks that passed in the last hour, 24 hours, 7 days; null without a check in the window',
        required: ['h1', 'h24', 'd7'],
        additionalProperties: false,
        properties: { h1: fraction, h24: fraction, d7: fraction },
      },
      checks: int0,
      first_seen_at: dateTime,
      last_checked_at: dateTimeOrNull,
      last_change_at: dateTimeOrNull,
      next_check_at: dateTime,
      targets: { type: 'object', additionalProperties: ref('PoolProxyTarget'), description: 'Pools with customUrls: per target, by name' },
    },
  },
  PoolProxyPage: {
    type: 'object',
    required: ['proxies', 'next_cursor'],
    additionalProperties: false,
    properties: { proxies: { type: 'array', items: ref('PoolProxy') }, next_cursor: { ...nullable('string'), description: 'The `cursor` of the next page; null on the last' } },
  },
  PoolCreateBody: {
    type: 'object',
    required: ['name'],
    description: 'At least one of proxies, text, sources',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: POOL_NAME_MAX },
      proxies: { type: 'array', items: { type: 'string' }, description: 'host:port, user:pass@host:port or host:port:user:pass (as /check)' },
      text: { type: 'string', description: 'One address per line (as /check-raw)' },
      type: { enum: ['http', 'socks4', 'socks5', 'auto'], default: 'http' },
      region: { type: 'string', default: 'us1' },
      interval_s: { type: 'integer', minimum: 60, maximum: MAX_INTERVAL_S, default: 600, description: 'From POOL_MIN_INTERVAL_S (default 60)' },
      timeout: { type: 'integer', minimum: 1000, maximum: 20000, default: 5000 },
      https: { type: 'boolean', default: true },
      customUrls: { type: 'array', items: ref('PoolTargetInput'), description: 'The pool\'s targets, at most MAX_CUSTOM_URLS (default 10); name optional' },
      sources: {
        type: 'array',
        maxItems: MAX_SOURCES,
        description: 'List URLs fetched every every_s seconds (default 3600); their addresses join the pool',
        items: { type: 'object', required: ['url'], properties: { url: { type: 'string', format: 'uri' }, every_s: { type: 'integer', minimum: SOURCE_MIN_EVERY_S, maximum: SOURCE_MAX_EVERY_S } } },
      },
    },
  },
  PoolPatchBody: {
    type: 'object',
    description: 'At least one field',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: POOL_NAME_MAX },
      interval_s: { type: 'integer', minimum: 60, maximum: MAX_INTERVAL_S },
      timeout: { type: 'integer', minimum: 1000, maximum: 20000 },
      https: { type: 'boolean' },
      state: { enum: ['active', 'paused'], description: 'paused: by the owner (stays paused); active: runs again' },
      customUrls: { type: 'array', items: ref('PoolTargetInput'), description: 'Replaces the targets (from each proxy\'s next check); [] removes them' },
      add: { type: 'array', items: { type: 'string' } },
      remove: { type: 'array', items: { type: 'string' } },
    },
  },
  PoolTooManyRequests: {
    oneOf: [ref('TooManyRequests'), errorBody({ const: 'Too many requests' }, { limit: int0 }, ['limit'])],
  },
};

const POOL_EXAMPLE = {
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
const SUBMITTED_EXAMPLE = { added: 3, removed: 0, total_invalid: 1, total_duplicates: 1 };
const PROXY_EXAMPLE = {
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

const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' as const, pattern: POOL_ID_PATTERN }, description: 'The pool\'s id' };
const E404 = err({ error: 'Not found', message: 'No pool with this id in this account' }, 'No pool with this id in this account (another account\'s pool answers the same)', 'NotFound');
const E415 = err({ error: 'Unsupported media type', message: 'Content-Type must be application/json' }, 'Not JSON', 'UnsupportedMediaType');
const E503 = err(
  { error: 'Service unavailable', message: 'Too many large request bodies are being read (2 at once); retry in 1 s' },
  'Every slot for request bodies over 1 MiB (2 at once) is taken: `Retry-After: 1`',
  'ServiceUnavailable',
);
const E400 = (examples: Record<string, unknown>) => ({
  description: 'Invalid input',
  content: { 'application/json': { schema: ref('BadRequest'), examples: Object.fromEntries(Object.entries(examples).map(([k, v]) => [k, { value: v }])) } },
});
const E413 = (examples: Record<string, unknown>) => ({
  description: 'Over a limit: proxies per pool (MAX_PROXIES_PER_POOL), proxies in all of the account\'s pools (twice MAX_PROXIES_PER_POOL), body size, custom URLs',
  content: { 'application/json': { schema: ref('TooLarge'), examples: Object.fromEntries(Object.entries(examples).map(([k, v]) => [k, { value: v }])) } },
});
const E429_POOLS = {
  ...E429,
  description: 'Over the account\'s request rate (Retry-After), or (POST) the account owns as many pools as it may (MAX_POOLS_PER_ACCOUNT; `limit`, no Retry-After: delete one)',
  content: {
    'application/json': {
      schema: ref('PoolTooManyRequests'),
      examples: {
        rate: { value: { error: 'Too many requests', message: 'Rate limit: 20 requests per second per account, bursts of 40; retry in 1 s' } },
        pools: { value: { error: 'Too many requests', message: 'At most 20 pools per account (server setting MAX_POOLS_PER_ACCOUNT); delete one to create another', limit: 20 } },
      },
    },
  },
  headers: { 'Retry-After': { description: 'Seconds to wait (the request rate only)', schema: { type: 'integer' as const, minimum: 1 } }, ...rateLimitHeaders },
};
const TOO_MANY = {
  pool: { error: 'Too many proxies', message: 'At most 100000 proxies per pool (server setting MAX_PROXIES_PER_POOL)', max: 100000 },
  account: { error: 'Too many proxies', message: "At most 200000 proxies in all of an account's pools together (twice the server setting MAX_PROXIES_PER_POOL)", max: 200000 },
  body: { error: 'Payload too large', message: 'The request body may be at most 16777216 bytes (server setting MAX_BODY_BYTES)', max: 16777216 },
};
const BAD = {
  shape: { error: 'Invalid request', message: 'interval_s: expected an integer from 60 (server setting POOL_MIN_INTERVAL_S) to 86400' },
  none: { error: 'No valid proxies found', message: 'Please provide at least one proxy in a supported format: …' },
  region: { error: 'Invalid region', message: 'Region must be one of: sg1, …', available_regions: ['sg1', '…'] },
  type: { error: 'Invalid proxy type', message: 'Proxy type must be one of: http, socks4, socks5', available_types: ['http', 'socks4', 'socks5'] },
};

const ops: Record<'create' | 'list' | 'get' | 'update' | 'delete' | 'proxies', DocumentDecoration> = {
  create: {
    operationId: 'createPool',
    tags: ['Pools'],
    summary: 'Create a pool of proxies kept checked',
    description:
      'A pool is re-checked on a schedule: new proxies at once, working ones every `interval_s`, failing ones backing off (doubling, at most a day), each round charged one check per proxy checked. Creating a pool charges nothing. `sources` are list URLs fetched every `every_s` seconds; their addresses join the pool. Invalid and duplicate entries are counted in `submitted` as /check counts them.',
    security,
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: ref('PoolCreateBody'),
          example: { name: 'scraper list', proxies: ['203.0.113.7:8080', 'user:pass@198.51.100.2:3128', '192.0.2.10:1080:user:pass'], type: 'http', interval_s: 600 },
        },
      },
    },
    responses: {
      '201': { ...keyed200('PoolChanged', { ...POOL_EXAMPLE, counts: { total: 3, working: 0, failed: 0, unchecked: 3 }, last_round_at: null, next_due_at: '2026-11-22T10:00:00.000Z', checks_last_24h: 0, submitted: SUBMITTED_EXAMPLE, warnings: [] }, 'The new pool'), headers: { ...rateLimitHeaders, Location: { description: '/pools/{id}', schema: { type: 'string' as const } } } },
      '400': E400(BAD),
      '401': E401,
      '405': E405('/pools', 'GET, POST'),
      '413': E413(TOO_MANY),
      '415': E415,
      '429': E429_POOLS,
      '500': E500,
      '503': E503,
    },
  },
  list: {
    operationId: 'listPools',
    tags: ['Pools'],
    summary: 'The account\'s pools',
    security,
    responses: { '200': keyed200('PoolList', { pools: [POOL_EXAMPLE] }, 'Oldest first'), '401': E401, '405': E405('/pools', 'GET, POST'), '429': E429, '500': E500 },
  },
  get: {
    operationId: 'getPool',
    tags: ['Pools'],
    summary: 'One pool',
    security,
    parameters: [idParam],
    responses: { '200': keyed200('Pool', POOL_EXAMPLE, 'The pool'), '401': E401, '404': E404, '405': E405('/pools/{id}', 'GET, PATCH, DELETE'), '429': E429, '500': E500 },
  },
  update: {
    operationId: 'updatePool',
    tags: ['Pools'],
    summary: 'Change a pool: settings, pause or resume, add or remove proxies',
    description:
      'Any of `name, interval_s, timeout, https, state, customUrls, add, remove`, applied in one transaction: settings and state, then `remove`, then `add` (a request may make room and fill it), then the limits (over one: nothing of the request stays). `state: "paused"` pauses it for its owner; `"active"` resumes it (overdue proxies are spread over one interval). A shorter `interval_s` brings due times within the new interval.',
    security,
    parameters: [idParam],
    requestBody: { required: true, content: { 'application/json': { schema: ref('PoolPatchBody'), example: { state: 'paused' } } } },
    responses: {
      '200': keyed200('PoolChanged', { ...POOL_EXAMPLE, state: 'paused', paused_reason: 'owner', next_due_at: null, submitted: { added: 0, removed: 0, total_invalid: 0, total_duplicates: 0 }, warnings: [] }, 'The pool after the change'),
      '400': E400({ shape: { error: 'Invalid request', message: 'body: expected at least one of name, interval_s, timeout, https, state, customUrls, add, remove' }, none: BAD.none }),
      '401': E401,
      '404': E404,
      '405': E405('/pools/{id}', 'GET, PATCH, DELETE'),
      '413': E413(TOO_MANY),
      '415': E415,
      '429': E429,
      '500': E500,
      '503': E503,
    },
  },
  delete: {
    operationId: 'deletePool',
    tags: ['Pools'],
    summary: 'Delete a pool (its proxies and history go with it)',
    security,
    parameters: [idParam],
    responses: { '204': { description: 'Deleted', headers: rateLimitHeaders }, '401': E401, '404': E404, '405': E405('/pools/{id}', 'GET, PATCH, DELETE'), '429': E429, '500': E500 },
  },
  proxies: {
    operationId: 'listPoolProxies',
    tags: ['Pools'],
    summary: 'The pool\'s proxies: working now, filtered, sorted, paged; json, txt or csv',
    description: `\`format=txt\` is one address per line as it was given (credentials kept) and nothing else (\`scheme=true\`: \`<protocol>://[user:pass@]host:port\`); \`csv\` a header row (${POOL_CSV_COLUMNS.length} columns) and a row per proxy. txt and csv without \`limit\` list every match, streamed; with \`limit\`, one page whose next cursor is the \`X-Next-Cursor\` header (absent on the last page). json pages: 100 by default, 10 000 at most.`,
    security,
    parameters: [
      idParam,
      { name: 'status', in: 'query', schema: { enum: ['working', 'failed', 'unchecked', 'all'], default: 'working' } },
      { name: 'country', in: 'query', schema: { type: 'string', pattern: '^[A-Za-z]{2}$' }, description: 'ISO 3166 alpha-2' },
      { name: 'anonymity', in: 'query', schema: { enum: ['elite', 'anonymous', 'transparent'] } },
      { name: 'type', in: 'query', schema: PROXY_TYPE, description: 'The proxy\'s type, or one of the protocols it passed' },
      { name: 'https', in: 'query', schema: { enum: ['true', 'false'] } },
      { name: 'max_latency_ms', in: 'query', schema: { type: 'integer', minimum: 0 }, description: 'On latency_p50_ms' },
      { name: 'min_uptime', in: 'query', schema: { type: 'number', minimum: 0, maximum: 1 }, description: 'On uptime.h24' },
      { name: 'sort', in: 'query', schema: { enum: ['latency', 'uptime', 'checked'], default: 'latency' }, description: 'latency: fastest first; uptime: highest first; checked: most recently checked first' },
      { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_LIMIT, default: 100 } },
      { name: 'cursor', in: 'query', schema: { type: 'string' }, description: 'next_cursor (or X-Next-Cursor) of the previous page, with the same sort' },
      { name: 'format', in: 'query', schema: { enum: ['json', 'txt', 'csv'], default: 'json' } },
      { name: 'target', in: 'query', schema: { type: 'string', pattern: '^[a-z0-9-]{1,32}$' }, description: 'Only working proxies whose last fetch of this target (a customUrls name of the pool) passed; a name the pool does not have: 400' },
      { name: 'scheme', in: 'query', schema: { enum: ['true', 'false'], default: 'false' }, description: 'txt: each line as <protocol>://[user:pass@]host:port (the pool\'s type, or the protocol an auto pool found)' },
    ],
    responses: {
      '200': {
        description: 'One page',
        headers: { ...rateLimitHeaders, 'X-Next-Cursor': { description: 'txt and csv with `limit`: the next page\'s cursor (absent on the last page, and without `limit`: every match is there)', schema: { type: 'string' as const } } },
        content: {
          'application/json': { schema: ref('PoolProxyPage'), example: { proxies: [PROXY_EXAMPLE], next_cursor: null } },
          'text/plain': { schema: { type: 'string' }, example: '203.0.113.7:8080\nuser:pass@198.51.100.2:3128\n' },
          'text/csv': { schema: { type: 'string' }, example: `${POOL_CSV_COLUMNS.join(',')}\r\n203.0.113.7,8080,false,,,working,…\r\n` },
        },
      },
      '400': E400({ shape: { error: 'Invalid request', message: 'limit: expected an integer from 1 to 10000' }, type: { error: 'Invalid proxy type', message: 'Proxy type must be one of: http, socks4, socks5', available_types: ['http', 'socks4', 'socks5'] } }),
      '401': E401,
      '404': E404,
      '405': E405('/pools/{id}/proxies', 'GET'),
      '429': E429,
      '500': E500,
    },
  },
};

export const POOLS_TAG = { name: 'Pools', description: 'Proxies kept checked on a schedule: working now, uptime, latency (charged one check per proxy checked per round)' };

/**
 * The operations as document paths. The routes are hidden from the plugin's
 * generator (it would replace these path and query parameters with a bare
 * `id`), as /result/{name} is in openapi.ts.
 */
export const poolPaths = {
  '/pools': { post: ops.create, get: ops.list },
  '/pools/{id}': { get: ops.get, patch: ops.update, delete: ops.delete },
  '/pools/{id}/proxies': { get: ops.proxies },
};

/** The document of openapi.ts with the pools' paths, schemas and tag. */
export function withPools<
  D extends { tags: { name: string; description: string }[]; paths: Record<string, unknown>; components: { schemas: Record<string, unknown> } & Record<string, unknown> },
>(doc: D): D {
  return {
    ...doc,
    tags: [...doc.tags, POOLS_TAG],
    paths: { ...doc.paths, ...poolPaths },
    components: { ...doc.components, schemas: { ...doc.components.schemas, ...poolSchemas } },
  };
}
