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
import { errorExamples as X } from '../contract/error-examples';
import { answer, bodyErrors, E400, err, keyed200, keyed204, keyedErrors, keyedOperations, pick, rateLimitHeaders, text, too, TXT_LIST } from './openapi';

const E404 = err(X.noPool, 'No pool with this id in this account (another account\'s pool answers the same)', 'NotFound');
const E413 = answer('TooLarge', 'Over a limit: proxies per pool (MAX_PROXIES_PER_POOL), proxies in all of the account\'s pools (twice MAX_PROXIES_PER_POOL), body size, custom URLs', { examples: { pool: X.poolProxies, account: X.accountProxies, body: X.body } });
const E429_POOLS = too('Over the account\'s request rate (Retry-After), or (POST) the account owns as many pools as it may (MAX_POOLS_PER_ACCOUNT; `limit`, no Retry-After: delete one)', 'PoolTooManyRequests', pick('pools'), 'Seconds to wait (the request rate only)');
const ONE = ['/pools/{id}', 'GET, PATCH, DELETE', E404] as const;

export const poolDocs = keyedOperations('Pools', {
  create: {
    operationId: 'createPool',
    summary: 'Create a pool of proxies kept checked',
    description:
      'A pool is re-checked on a schedule: new proxies at once, working ones every `interval_s`, failing ones backing off (doubling, at most a day), each round charged one check per proxy checked. Creating a pool charges nothing. `sources` are list URLs fetched every `every_s` seconds; their addresses join the pool. Invalid and duplicate entries are counted in `submitted` as /check counts them.',
    responses: {
      '201': keyed200('PoolChanged', 'The new pool', { Location: t.String({ description: '/pools/{id}' }) }),
      '400': E400({ shape: X.poolShape, ...pick('none', 'region', 'type') }),
      ...keyedErrors('/pools', 'GET, POST'),
      ...bodyErrors(E413),
      '429': E429_POOLS,
    },
  },
  list: {
    operationId: 'listPools',
    summary: 'The account\'s pools',
    responses: { '200': keyed200('PoolList', 'Oldest first'), ...keyedErrors('/pools', 'GET, POST') },
  },
  get: {
    operationId: 'getPool',
    summary: 'One pool',
    responses: { '200': keyed200('Pool', 'The pool'), ...keyedErrors(...ONE) },
  },
  update: {
    operationId: 'updatePool',
    summary: 'Change a pool: settings, pause or resume, add or remove proxies',
    description:
      'Any of `name, interval_s, timeout, https, state, customUrls, add, remove`, applied in one transaction: settings and state, then `remove`, then `add` (a request may make room and fill it), then the limits (over one: nothing of the request stays). `state: "paused"` pauses it for its owner; `"active"` resumes it (overdue proxies are spread over one interval). A shorter `interval_s` brings due times within the new interval.',
    responses: {
      '200': keyed200('PoolChanged', 'The pool after the change', {}, { ...POOL_EXAMPLE, state: 'paused', paused_reason: 'owner', next_due_at: null, submitted: { added: 0, removed: 0, total_invalid: 0, total_duplicates: 0 }, warnings: [] }),
      '400': E400({ shape: X.poolPatchShape, none: X.none }),
      ...keyedErrors(...ONE),
      ...bodyErrors(E413),
    },
  },
  delete: {
    operationId: 'deletePool',
    summary: 'Delete a pool (its proxies and history go with it)',
    responses: { '204': keyed204('Deleted'), ...keyedErrors(...ONE) },
  },
  proxies: {
    operationId: 'listPoolProxies',
    summary: 'The pool\'s proxies: working now, filtered, sorted, paged; json, txt or csv',
    description: `\`format=txt\` is one address per line as it was given (credentials kept) and nothing else (\`scheme=true\`: \`<protocol>://[user:pass@]host:port\`); \`csv\` a header row (${POOL_CSV_COLUMNS.length} columns) and a row per proxy. txt and csv without \`limit\` list every match, streamed; with \`limit\`, one page whose next cursor is the \`X-Next-Cursor\` header (absent on the last page). json pages: 100 by default, 10 000 at most.`,
    responses: {
      '200': answer('PoolProxyPage', 'One page', {
        headers: { ...rateLimitHeaders, 'X-Next-Cursor': t.String({ description: 'txt and csv with `limit`: the next page\'s cursor (absent on the last page, and without `limit`: every match is there)' }) },
        content: {
          'text/plain': text(TXT_LIST),
          'text/csv': text(`${POOL_CSV_COLUMNS.join(',')}\r\n203.0.113.7,8080,false,,,working,…\r\n`),
        },
      }),
      '400': E400({ shape: X.pageShape, type: X.type }),
      ...keyedErrors('/pools/{id}/proxies', 'GET', E404),
    },
  },
});

export const POOLS_TAG = { name: 'Pools', description: 'Proxies kept checked on a schedule: working now, uptime, latency (charged one check per proxy checked per round)' };

/** The document of openapi.ts with the pools' tag (the routes' schemas are the contract's, src/contract/pools.ts). */
export function withPools<D extends { tags: { name: string; description: string }[]; paths: Record<string, unknown> }>(doc: D): D {
  return { ...doc, tags: [...doc.tags, POOLS_TAG] };
}
