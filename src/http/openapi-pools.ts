/**
 * The OpenAPI content of the pools (src/http/routes/pools.ts): each route's
 * `detail` and `response` (poolDocs: descriptions, answers with examples; the plugin writes
 * the path parameter and the bodies from the routes' schemas), the Pools
 * tag, and withPools(), which docs.ts applies to the document of openapi.ts.
 * The shapes are the contract's (src/contract/pools.ts).
 */
import { Type as t } from '@sinclair/typebox';
import { POOL_CSV_COLUMNS } from '../pools/render';
import { POOL_EXAMPLE } from '../contract/pools';
import { answer, E401, E405, E415, E429, E500, E503_BODIES, err, keyed200, keyed204, operations, rateLimitHeaders, security, too } from './openapi';

const E404 = err({ error: 'Not found', message: 'No pool with this id in this account' }, 'No pool with this id in this account (another account\'s pool answers the same)', 'NotFound');
const E400 = (examples: Record<string, unknown>) => answer('BadRequest', 'Invalid input', { examples });
const E413 = (examples: Record<string, unknown>) =>
  answer('TooLarge', 'Over a limit: proxies per pool (MAX_PROXIES_PER_POOL), proxies in all of the account\'s pools (twice MAX_PROXIES_PER_POOL), body size, custom URLs', { examples });
const E429_POOLS = too(
  'Over the account\'s request rate (Retry-After), or (POST) the account owns as many pools as it may (MAX_POOLS_PER_ACCOUNT; `limit`, no Retry-After: delete one)',
  'PoolTooManyRequests',
  { pools: { error: 'Too many requests', message: 'At most 20 pools per account (server setting MAX_POOLS_PER_ACCOUNT); delete one to create another', limit: 20 } },
  'Seconds to wait (the request rate only)',
);
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

export const poolDocs = operations({
  create: {
    operationId: 'createPool',
    tags: ['Pools'],
    summary: 'Create a pool of proxies kept checked',
    description:
      'A pool is re-checked on a schedule: new proxies at once, working ones every `interval_s`, failing ones backing off (doubling, at most a day), each round charged one check per proxy checked. Creating a pool charges nothing. `sources` are list URLs fetched every `every_s` seconds; their addresses join the pool. Invalid and duplicate entries are counted in `submitted` as /check counts them.',
    security,
    responses: {
      '201': keyed200('PoolChanged', 'The new pool', { Location: t.String({ description: '/pools/{id}' }) }),
      '400': E400(BAD),
      '401': E401,
      '405': E405('/pools', 'GET, POST'),
      '413': E413(TOO_MANY),
      '415': E415,
      '429': E429_POOLS,
      '500': E500,
      '503': E503_BODIES,
    },
  },
  list: {
    operationId: 'listPools',
    tags: ['Pools'],
    summary: 'The account\'s pools',
    security,
    responses: { '200': keyed200('PoolList', 'Oldest first'), '401': E401, '405': E405('/pools', 'GET, POST'), '429': E429, '500': E500 },
  },
  get: {
    operationId: 'getPool',
    tags: ['Pools'],
    summary: 'One pool',
    security,
    responses: { '200': keyed200('Pool', 'The pool'), '401': E401, '404': E404, '405': E405('/pools/{id}', 'GET, PATCH, DELETE'), '429': E429, '500': E500 },
  },
  update: {
    operationId: 'updatePool',
    tags: ['Pools'],
    summary: 'Change a pool: settings, pause or resume, add or remove proxies',
    description:
      'Any of `name, interval_s, timeout, https, state, customUrls, add, remove`, applied in one transaction: settings and state, then `remove`, then `add` (a request may make room and fill it), then the limits (over one: nothing of the request stays). `state: "paused"` pauses it for its owner; `"active"` resumes it (overdue proxies are spread over one interval). A shorter `interval_s` brings due times within the new interval.',
    security,
    responses: {
      '200': keyed200('PoolChanged', 'The pool after the change', {}, { ...POOL_EXAMPLE, state: 'paused', paused_reason: 'owner', next_due_at: null, submitted: { added: 0, removed: 0, total_invalid: 0, total_duplicates: 0 }, warnings: [] }),
      '400': E400({ shape: { error: 'Invalid request', message: 'body: expected at least one of name, interval_s, timeout, https, state, customUrls, add, remove' }, none: BAD.none }),
      '401': E401,
      '404': E404,
      '405': E405('/pools/{id}', 'GET, PATCH, DELETE'),
      '413': E413(TOO_MANY),
      '415': E415,
      '429': E429,
      '500': E500,
      '503': E503_BODIES,
    },
  },
  delete: {
    operationId: 'deletePool',
    tags: ['Pools'],
    summary: 'Delete a pool (its proxies and history go with it)',
    security,
    responses: { '204': keyed204('Deleted'), '401': E401, '404': E404, '405': E405('/pools/{id}', 'GET, PATCH, DELETE'), '429': E429, '500': E500 },
  },
  proxies: {
    operationId: 'listPoolProxies',
    tags: ['Pools'],
    summary: 'The pool\'s proxies: working now, filtered, sorted, paged; json, txt or csv',
    description: `\`format=txt\` is one address per line as it was given (credentials kept) and nothing else (\`scheme=true\`: \`<protocol>://[user:pass@]host:port\`); \`csv\` a header row (${POOL_CSV_COLUMNS.length} columns) and a row per proxy. txt and csv without \`limit\` list every match, streamed; with \`limit\`, one page whose next cursor is the \`X-Next-Cursor\` header (absent on the last page). json pages: 100 by default, 10 000 at most.`,
    security,
    responses: {
      '200': answer('PoolProxyPage', 'One page', {
        headers: { ...rateLimitHeaders, 'X-Next-Cursor': t.String({ description: 'txt and csv with `limit`: the next page\'s cursor (absent on the last page, and without `limit`: every match is there)' }) },
        content: {
          'text/plain': { schema: { type: 'string' }, example: '203.0.113.7:8080\nuser:pass@198.51.100.2:3128\n' },
          'text/csv': { schema: { type: 'string' }, example: `${POOL_CSV_COLUMNS.join(',')}\r\n203.0.113.7,8080,false,,,working,…\r\n` },
        },
      }),
      '400': E400({ shape: { error: 'Invalid request', message: 'limit: expected an integer from 1 to 10000' }, type: { error: 'Invalid proxy type', message: 'Proxy type must be one of: http, socks4, socks5', available_types: ['http', 'socks4', 'socks5'] } }),
      '401': E401,
      '404': E404,
      '405': E405('/pools/{id}/proxies', 'GET'),
      '429': E429,
      '500': E500,
    },
  },
});

export const POOLS_TAG = { name: 'Pools', description: 'Proxies kept checked on a schedule: working now, uptime, latency (charged one check per proxy checked per round)' };

/** The document of openapi.ts with the pools' tag (the routes' schemas are the contract's, src/contract/pools.ts). */
export function withPools<D extends { tags: { name: string; description: string }[]; paths: Record<string, unknown> }>(doc: D): D {
  return {
    ...doc,
    tags: [...doc.tags, POOLS_TAG],
  };
}
