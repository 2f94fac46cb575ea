/**
 * One example per fixed error body of the contract (errors.ts holds their
 * schemas): the OpenAPI document's answers show them by name
 * (src/http/openapi*.ts), so a body written once is the same on every route
 * that answers it.
 */
import { JOB_ID_RULE } from '../job-id';
import { MAX_WEBHOOKS_PER_ACCOUNT } from '../webhooks/types';

const NONE = { error: 'No valid proxies found', message: 'Please provide at least one proxy in a supported format: …' };
const invalid = (message: string) => ({ error: 'Invalid request', message });
const notFound = (message: string) => ({ error: 'Not found', message });

export const errorExamples = {
  missingKey: { error: 'API key is required', message: 'Please provide your API key in the X-API-Key header or the Authorization header (Bearer <key>)' },
  invalidKey: { error: 'Invalid API key', message: 'The provided API key is not valid' },
  internal: { error: 'Internal server error', message: 'An unexpected error occurred', request_id: '0b8f3c1e-4b7a-4e55-9c2f-0a1b2c3d4e5f' },
  rate: { error: 'Too many requests', message: 'Rate limit: 20 requests per second per account, bursts of 40 (server setting RATE_LIMIT_PER_S; bursts are twice it); retry in 1 s' },
  notJson: { error: 'Unsupported media type', message: 'Content-Type must be application/json' },
  bodySlots: { error: 'Service unavailable', message: 'Too many large request bodies are being read (2 at once); retry in 1 s' },
  region: { error: 'Invalid region', message: 'Region must be one of: sg1, …', available_regions: ['sg1', '…'] },
  type: { error: 'Invalid proxy type', message: 'Proxy type must be one of: http, socks4, socks5', available_types: ['http', 'socks4', 'socks5'] },
  timeout: { error: 'Invalid timeout', message: 'timeout must be an integer number of milliseconds from 1000 to 20000', min: 1000, max: 20000 },
  none: NONE,
  jobId: { error: 'Invalid jobId', message: `jobId must be ${JOB_ID_RULE}` },
  checkShape: invalid('proxies: expected an array of strings'),
  insufficient: { error: 'Insufficient Checks', message: 'You need 500 checks but only have 120 remaining.', required: 500, available: 120, shortfall: 380 },
  jobRunning: { error: 'Job already running', message: 'A job with id my-job-1 is still running; wait for it to finish or use another jobId', jobId: 'my-job-1' },
  jobCancelled: { error: 'Job cancelled', message: 'The job was cancelled (DELETE /checks/{jobId}); the checks not performed were refunded' },
  proxies: { error: 'Too many proxies', message: 'At most 100000 unique proxies per request (server setting MAX_PROXIES)', max: 100000 },
  body: { error: 'Payload too large', message: 'The request body may be at most 16777216 bytes (server setting MAX_BODY_BYTES)', max: 16777216 },
  customUrls: { error: 'Too many custom URLs', message: 'At most 10 custom URLs per request (server setting MAX_CUSTOM_URLS)', max: 10 },
  shutdown: { error: 'Service unavailable', message: 'The service is shutting down; retry in a moment' },
  regionDown: { error: 'Region unavailable', message: 'No probe agent is serving region de1 right now; retry later or pick another region', region: 'de1' },
  nodeDown: { error: 'Service unavailable', message: 'The server running this job does not answer; retry in a moment' },
  noJob: notFound('No job my-job-1 for this API key (jobs are kept as long as their result files)'),
  jobEnded: { error: 'Job not running', message: 'Job my-job-1 has already ended (completed); there is nothing to cancel', jobId: 'my-job-1', status: 'completed' },
  badToken: { error: 'Forbidden', message: 'The result link token is not valid' },
  noResult: notFound('No such result (it may have passed its retention period: server settings RESULT_RETENTION_DAYS and RESULT_MAX_BYTES)'),
  linkExpired: { error: 'Link expired', message: 'This result link has expired; fetch a fresh one from GET /me' },
  noPool: notFound('No pool with this id in this account'),
  pools: { error: 'Too many requests', message: 'At most 20 pools per account (server setting MAX_POOLS_PER_ACCOUNT); delete one to create another', limit: 20 },
  poolProxies: { error: 'Too many proxies', message: 'At most 100000 proxies per pool (server setting MAX_PROXIES_PER_POOL)', max: 100000 },
  accountProxies: { error: 'Too many proxies', message: "At most 200000 proxies in all of an account's pools together (twice the server setting MAX_PROXIES_PER_POOL)", max: 200000 },
  poolShape: invalid('interval_s: expected an integer from 60 (server setting POOL_MIN_INTERVAL_S) to 86400'),
  poolPatchShape: invalid('body: expected at least one of name, interval_s, timeout, https, state, customUrls, add, remove'),
  pageShape: invalid('limit: expected an integer from 1 to 10000'),
  noWebhook: notFound('No webhook with this id in this account'),
  webhooks: { error: 'Too many requests', message: `At most ${MAX_WEBHOOKS_PER_ACCOUNT} webhooks per account; delete one to add another`, limit: MAX_WEBHOOKS_PER_ACCOUNT },
  url: invalid('url: expected an http or https URL'),
  private: invalid('url: 10.0.0.5 is in a private, loopback or reserved range; refused unless the server sets ALLOW_PRIVATE_TARGETS=true'),
  event: invalid('events[0]: unknown event "proxy.up"; expected one of pool.proxies_changed, pool.paused, pool.resumed, check.completed'),
  pool: invalid('pools[0]: no pool k3v9q2m7x1c8b5n4z6w0 in this account'),
  webhookPatchShape: invalid('body: expected at least one of url, events, pools, state'),
} as const;
export type ErrorExample = keyof typeof errorExamples;
