/**
 * OpenAPI content: the document header (info, both auth schemes, shared
 * schemas, the WebSocket channel) and one operation object per route, with
 * example bodies for every answer. Route files attach these as `detail`; the
 * @elysiajs/openapi plugin assembles them at /docs/json.
 */
import type { DocumentDecoration } from 'elysia';
import { JOB_ID_PATTERN, JOB_ID_RULE } from '../job-id';
import { VERSION } from '../version';

const err = (example: Record<string, unknown>, description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, example } },
});

const E401 = {
  description: 'API key missing or invalid',
  content: {
    'application/json': {
      schema: { $ref: '#/components/schemas/Error' },
      examples: {
        missing: {
          value: {
            error: 'API key is required',
            message: 'Please provide your API key in the X-API-Key header or the Authorization header (Bearer <key>)',
          },
        },
        invalid: { value: { error: 'Invalid API key', message: 'The provided API key is not valid' } },
      },
    },
  },
};
const E500 = err({ error: 'Internal server error', message: 'An unexpected error occurred' }, 'Unexpected failure');
const E405 = (methods: string) =>
  err({ message: `The route accepts ${methods} only` }, `Wrong method (an Allow header lists the accepted ones)`);
const security: Record<string, string[]>[] = [{ ApiKeyHeader: [] }, { BearerAuth: [] }];

const checkResponseExample = {
  summary: {
    total_working: 2,
    countries: { 'United States': 1, Germany: 1 },
    anonymity_levels: { elite: 1, anonymous: 1, transparent: 0 },
    top_isps: { 'Example ISP': 1, 'Other AS': 1 },
  },
  metadata: {
    user: {
      email: 'demo@localhost',
      checks_used: 3,
      remaining_checks: 997,
      subscription_detail: { UnlimitedPro: false },
    },
    region_used: 'us1',
    region_name: 'Washington DC, USA',
    proxy_type: 'http',
    timeout_used: '2000ms',
    total_checked: 3,
    total_invalid: 0,
    total_duplicates: 0,
    processing_time: '2.01s',
    job_id: 'my-job-1',
  },
  result_url: 'http://127.0.0.1:3000/result/3q2-7wEAAABh1nLpAAAAAA.json?token=5f0c…&expires=1790000000',
  result_urls: {
    json: 'http://127.0.0.1:3000/result/3q2-7wEAAABh1nLpAAAAAA.json?token=5f0c…&expires=1790000000',
    csv: 'http://127.0.0.1:3000/result/3q2-7wEAAABh1nLpAAAAAA.csv?token=5f0c…&expires=1790000000',
    txt: 'http://127.0.0.1:3000/result/3q2-7wEAAABh1nLpAAAAAA.txt?token=5f0c…&expires=1790000000',
  },
};

const checkErrors = {
  '400': {
    description: 'Invalid input',
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/Error' },
        examples: {
          region: { value: { error: 'Invalid region', message: 'Region must be one of: sg1, …', available_regions: ['sg1', '…'] } },
          type: { value: { error: 'Invalid proxy type', message: 'Proxy type must be one of: http, socks4, socks5', available_types: ['http', 'socks4', 'socks5'] } },
          timeout: { value: { error: 'Invalid timeout', message: 'timeout must be an integer number of milliseconds from 1000 to 20000', min: 1000, max: 20000 } },
          none: { value: { error: 'No valid proxies found', message: 'Please provide at least one proxy in a supported format: …' } },
          jobId: { value: { error: 'Invalid jobId', message: `jobId must be ${JOB_ID_RULE}` } },
          shape: { value: { error: 'Invalid request', message: 'proxies: expected an array of strings' } },
        },
      },
    },
  },
  '401': E401,
  '402': err(
    { error: 'Insufficient Checks', message: 'You need 500 checks but only have 120 remaining.', required: 500, available: 120, shortfall: 380 },
    'Quota smaller than the unique valid proxies submitted',
  ),
  '405': E405('POST'),
  '409': err({ error: 'Job already running', message: 'A job with id my-job-1 is still running; …', jobId: 'my-job-1' }, 'jobId in use'),
  '413': err({ error: 'Too many proxies', message: 'At most 100000 unique proxies per request', max: 100000 }, 'Over a limit (proxies, body size, custom URLs)'),
  '500': E500,
  '503': err({ error: 'Service unavailable', message: 'The service is shutting down; retry in a moment' }, 'Shutting down'),
};

export const docs: Record<'regions' | 'health' | 'judge' | 'me' | 'check' | 'checkRaw', DocumentDecoration> = {
  regions: {
    tags: ['Service'],
    summary: 'List regions',
    description: 'The region catalogue. `test1` is listed but not accepted by the check routes.',
    responses: {
      '200': {
        description: 'Regions',
        content: {
          'application/json': {
            example: { regions: [{ code: 'sg1', name: 'Singapore', endpoints: 16 }, { code: 'test1', name: 'TEST - DO NOT USE', endpoints: 6 }], default: 'us1' },
          },
        },
      },
      '405': E405('GET'),
    },
  },
  health: {
    tags: ['Service'],
    summary: 'Service health',
    responses: {
      '200': { description: 'Healthy', content: { 'application/json': { example: { status: 'ok', version: VERSION, uptime: 42, timestamp: '2026-11-22T10:00:00.000Z', regions: 19, database: 'ok' } } } },
      '503': { description: 'Database not answering', content: { 'application/json': { example: { status: 'degraded', version: VERSION, uptime: 42, timestamp: '2026-11-22T10:00:00.000Z', regions: 19, database: 'down' } } } },
      '405': E405('GET'),
    },
  },
  judge: {
    tags: ['Service'],
    summary: 'Proxy judge',
    description:
      'Echoes the request line, the request headers, the remote address and the nonce (`?n=`) of the request as JSON. Probes are sent here through the proxy under test (`JUDGE_URL`).',
    responses: {
      '200': { description: 'Echo', content: { 'application/json': { example: { nonce: 'b3c1…', remoteAddress: '203.0.113.7', requestLine: 'GET /judge?n=b3c1… HTTP/1.1', headers: [['host', 'judge.example:3000'], ['via', '1.1 proxy']] } } } },
    },
  },
  me: {
    tags: ['Account'],
    summary: 'Account, quota, history and usage',
    security,
    responses: {
      '200': {
        description: 'Account information',
        content: {
          'application/json': {
            example: {
              user: {
                id: '0b8f3c1e-4b7a-4e55-9c2f-0a1b2c3d4e5f',
                email: 'demo@localhost',
                checks: 997,
                breakdown: { root_balance: 997, temp_balance: 0 },
                subscription_detail: { UnlimitedPro: false },
              },
              history: [{ id: 1, total_checked: 3, total_working: 2, result_url: 'http://127.0.0.1:3000/result/….json?token=…&expires=…', proxy_type: 'http', scanned_at: '2026-11-22T10:00:00.000Z' }],
              history_count: 1,
              usage_last_30_days: [{ day: '2026-10-24', total_checked: 0 }, { day: '…', total_checked: 0 }, { day: '2026-11-22', total_checked: 3 }],
            },
          },
        },
      },
      '401': E401,
      '405': E405('GET'),
      '500': E500,
    },
  },
  check: {
    tags: ['Checks'],
    summary: 'Check proxies (JSON body)',
    description:
      'Checks every unique valid proxy through the judge from the chosen region. Costs one quota unit per unique valid proxy. Defaults: region us1, type http, timeout 2000 ms. Follow progress on the WebSocket `/ws?jobId=<jobId>`.',
    security,
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/CheckBody' },
          example: {
            proxies: ['203.0.113.7:8080', 'user:pass@198.51.100.2:3128', '192.0.2.10:1080:user:pass'],
            type: 'http',
            region: 'us1',
            timeout: 2000,
            jobId: 'my-job-1',
            customUrls: [{ url: 'https://example.com/', requiredStatusCodes: [200], requiredText: 'Example Domain', caseSensitive: false }],
          },
        },
      },
    },
    responses: { '200': { description: 'Check response', content: { 'application/json': { example: checkResponseExample } } }, '415': err({ error: 'Unsupported media type', message: 'Content-Type must be application/json' }, 'Not JSON'), ...checkErrors },
  },
  checkRaw: {
    tags: ['Checks'],
    summary: 'Check proxies (plain-text body, one per line)',
    description:
      'Same as POST /check with the list as text. Query: `region` (default us1), `type` (default http), `timeout` (default 5000 ms for http, 3000 ms for socks4/socks5), `jobId`. Custom URLs are not taken here.',
    security,
    parameters: [
      { name: 'region', in: 'query', schema: { type: 'string', default: 'us1' } },
      { name: 'type', in: 'query', schema: { type: 'string', enum: ['http', 'socks4', 'socks5'], default: 'http' } },
      { name: 'timeout', in: 'query', schema: { type: 'integer', minimum: 1000, maximum: 20000 } },
      { name: 'jobId', in: 'query', schema: { type: 'string', pattern: JOB_ID_PATTERN } },
    ],
    requestBody: { required: true, content: { 'text/plain': { schema: { type: 'string' }, example: '203.0.113.7:8080\nuser:pass@198.51.100.2:3128\n' } } },
    responses: { '200': { description: 'Check response', content: { 'application/json': { example: checkResponseExample } } }, ...checkErrors },
  },
};

export const documentation = {
  info: {
    title: 'Proxy checking API',
    version: VERSION,
    description: [
      'Checks lists of HTTP, SOCKS4 and SOCKS5 proxies from a chosen region: which work, how fast, how anonymous, where they exit.',
      '',
      'Authentication: `X-API-Key: <key>` or `Authorization: Bearer <key>` on /check, /check-raw and /me.',
      '',
      '## Progress over WebSocket',
      'Connect to `GET /ws?jobId=<id>` (before or during the check request that carries the same `jobId`). No key is needed unless the server sets `WS_REQUIRE_AUTH=true`; a key (`X-API-Key`, `Authorization: Bearer` or `?apiKey=`) limits the subscription to that account\'s jobs.',
      'Messages are JSON: `{jobId, status: "in_progress"|"completed"|"failed", currentStep, stepsCompleted, progress (0-100), eta, details: {message, batches_done, working_so_far, checked, total}, timestamp}`. Steps: `validating`, `checking_balance`, `proxy_check_batch_<i>_of_<n>`, `custom_url_validation`, `writing_results`. At most ~10 messages a second per job; always a final `completed` (carrying `result_url` for an authenticated subscriber) or `failed`, then the server closes with code 1000.',
      '',
      '## Result files',
      '`result_url` is `<CONTENT_URL>/result/<id>.json?token=<hmac>&expires=<unix s>`, valid 12 hours, fetched without a key. Bad token 403, expired 410, unknown 404.',
      'The same link with `.csv` (one row per proxy, every field flattened, RFC 4180, formula-safe) or `.txt` (working proxies only, one per line, in the address form they were submitted in) serves the other download forms; the check response lists all three in `result_urls: {json, csv, txt}` next to `result_url`.',
    ].join('\n'),
  },
  tags: [
    { name: 'Checks', description: 'Proxy checks (cost one unit per unique valid proxy)' },
    { name: 'Account', description: 'Quota, plan, history' },
    { name: 'Service', description: 'Regions, health, judge' },
  ],
  components: {
    securitySchemes: {
      ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      BearerAuth: { type: 'http', scheme: 'bearer' },
    },
    schemas: {
      Error: {
        type: 'object',
        properties: { error: { type: 'string' }, message: { type: 'string' } },
        additionalProperties: true,
      },
      CustomUrl: {
        type: 'object',
        required: ['url'],
        properties: {
          url: { type: 'string', format: 'uri' },
          requiredStatusCodes: { type: 'array', items: { type: 'integer' }, default: [200] },
          requiredText: { type: 'string' },
          caseSensitive: { type: 'boolean', default: false },
        },
      },
      CheckBody: {
        type: 'object',
        required: ['proxies'],
        properties: {
          proxies: { type: 'array', items: { type: 'string' }, description: 'host:port, user:pass@host:port or host:port:user:pass' },
          jobId: { type: 'string', pattern: JOB_ID_PATTERN },
          region: { type: 'string', default: 'us1' },
          type: { type: 'string', enum: ['http', 'socks4', 'socks5'], default: 'http' },
          timeout: { type: 'integer', minimum: 1000, maximum: 20000, default: 2000 },
          customUrls: { type: 'array', maxItems: 10, items: { $ref: '#/components/schemas/CustomUrl' } },
        },
      },
    },
  },
};
