/**
 * The OpenAPI document's component schemas: every request and response shape
 * the service answers with (src/http/openapi.ts holds the operations that
 * refer to them). Responses are closed (additionalProperties: false), so the
 * e2e suite, which checks real responses against the document, catches drift.
 */
import { JOB_ID_PATTERN } from '../job-id';

/** A reference to one of these schemas. */
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const nullable = (type: string) => ({ type: [type, 'null'] });
const counts = { type: 'object', additionalProperties: { type: 'integer', minimum: 0 } };
export const int0 = { type: 'integer', minimum: 0 };
export const errorBody = (error: unknown, extra: Record<string, unknown> = {}, required: string[] = []) => ({
  type: 'object',
  required: ['error', 'message', ...required],
  additionalProperties: false,
  properties: { error, message: { type: 'string' }, ...extra },
});

/** Response and request shapes. Responses are closed (additionalProperties: false) so the e2e suite catches drift. */
export const schemas = {
  Error: {
    type: 'object',
    required: ['error', 'message'],
    properties: { error: { type: 'string' }, message: { type: 'string' } },
    additionalProperties: true,
  },
  BadRequest: {
    oneOf: [
      errorBody({ const: 'Invalid region' }, { available_regions: { type: 'array', items: { type: 'string' } } }, ['available_regions']),
      errorBody({ const: 'Invalid proxy type' }, { available_types: { type: 'array', items: { enum: ['http', 'socks4', 'socks5'] } } }, ['available_types']),
      errorBody({ const: 'Invalid timeout' }, { min: { const: 1000 }, max: { const: 20000 } }, ['min', 'max']),
      errorBody({ enum: ['Invalid request', 'No valid proxies found', 'Invalid jobId'] }),
    ],
  },
  InvalidJobId: errorBody({ const: 'Invalid jobId' }),
  Unauthorized: errorBody({ enum: ['API key is required', 'Invalid API key'] }),
  InsufficientChecks: errorBody(
    { const: 'Insufficient Checks' },
    { required: int0, available: int0, shortfall: { type: 'integer', minimum: 1 } },
    ['required', 'available', 'shortfall'],
  ),
  Forbidden: errorBody({ const: 'Forbidden' }),
  NotFound: errorBody({ const: 'Not found' }),
  MethodNotAllowed: { type: 'object', required: ['message'], additionalProperties: false, properties: { message: { type: 'string' } } },
  JobAlreadyRunning: errorBody({ const: 'Job already running' }, { jobId: { type: 'string' } }, ['jobId']),
  LinkExpired: errorBody({ const: 'Link expired' }),
  JobCancelled: errorBody({ const: 'Job cancelled' }),
  JobNotRunning: errorBody(
    { const: 'Job not running' },
    { jobId: { type: 'string' }, status: { enum: ['completed', 'failed', 'cancelled'] } },
    ['jobId', 'status'],
  ),
  TooLarge: errorBody({ enum: ['Too many proxies', 'Payload too large', 'Too many custom URLs'] }, { max: int0 }, ['max']),
  UnsupportedMediaType: errorBody({ const: 'Unsupported media type' }),
  InternalError: errorBody(
    { const: 'Internal server error' },
    { request_id: { type: 'string', maxLength: 128, description: 'The X-Request-Id of the request: quote it to the operator (every log line of the request carries it)' } },
    ['request_id'],
  ),
  ServiceUnavailable: errorBody({ const: 'Service unavailable' }),
  RegionUnavailable: errorBody({ const: 'Region unavailable' }, { region: { type: 'string' } }, ['region']),
  TooManyRequests: errorBody({ const: 'Too many requests' }),
  CustomUrl: {
    type: 'object',
    required: ['url'],
    properties: {
      url: { type: 'string', format: 'uri', maxLength: 2048, description: 'Absolute http:// or https:// URL' },
      requiredStatusCodes: { type: 'array', items: { type: 'integer', minimum: 100, maximum: 599 }, minItems: 1, maxItems: 100, default: [200] },
      requiredText: { type: 'string', maxLength: 1024 },
      caseSensitive: { type: 'boolean', default: false },
    },
  },
  CheckBody: {
    type: 'object',
    required: ['proxies'],
    properties: {
      proxies: {
        type: 'array',
        items: { type: 'string' },
        description: 'host:port, user:pass@host:port or host:port:user:pass; a leading http://, https://, socks4://, socks4a://, socks5:// or socks5h:// names that proxy\'s protocol, checked whatever `type` says (a mixed list)',
      },
      jobId: { type: 'string', pattern: JOB_ID_PATTERN },
      region: { type: 'string', default: 'us1' },
      type: {
        type: 'string',
        enum: ['http', 'socks4', 'socks5', 'auto'],
        default: 'http',
        description: '`auto` (an extension): each proxy is tried as http, socks4 and socks5 within the one timeout, one check charged; records get `type` and `protocols`, the summary `protocols`',
      },
      timeout: { type: 'integer', minimum: 1000, maximum: 20000, default: 2000 },
      samples: {
        type: 'integer',
        minimum: 1,
        maximum: 10,
        default: 1,
        description: 'An extension: each proxy is probed this many times, each on a fresh connection with the whole timeout; one check charged per sample. Above 1, records get `samples` and the summary `rotating`',
      },
      https: {
        type: 'boolean',
        description:
          'An extension, on by default (the server\'s JUDGE_TLS): each working proxy is also tried with a tunnel (CONNECT, or the SOCKS tunnel) + TLS to the judge\'s TLS listener with its pinned certificate, within the same timeout; working records get `https`, the summary `https`, and a proxy that presents another certificate is `failed` / `tls_intercepted`. false: no such check, no `https` fields',
      },
      customUrls: { type: 'array', maxItems: 10, items: ref('CustomUrl'), description: 'At most MAX_CUSTOM_URLS (default 10)' },
    },
  },
  SubscriptionDetail: {
    type: 'object',
    required: ['UnlimitedPro'],
    additionalProperties: false,
    properties: { UnlimitedPro: { type: 'boolean' }, unlimited_expired_at: { type: 'string', format: 'date-time' } },
  },
  Summary: {
    type: 'object',
    required: ['total_working', 'countries', 'anonymity_levels', 'top_isps', 'errors'],
    additionalProperties: false,
    properties: {
      total_working: int0,
      countries: counts,
      anonymity_levels: {
        type: 'object',
        required: ['elite', 'anonymous', 'transparent'],
        additionalProperties: false,
        properties: { elite: int0, anonymous: int0, transparent: int0 },
      },
      top_isps: { ...counts, maxProperties: 10 },
      errors: {
        ...counts,
        description:
          'Failed proxies per `error.code` (an addition), the most frequent first, ties by code; `{}` when none failed. Proxies refused before any connection count under `blocked_target`',
      },
      protocols: {
        type: 'object',
        description: '`type: "auto"` checks only: working proxies that passed each protocol (one that passed two counts in both)',
        required: ['http', 'socks4', 'socks5'],
        additionalProperties: false,
        properties: { http: int0, socks4: int0, socks5: int0 },
      },
      rotating: {
        ...int0,
        description: 'Checks with `samples` > 1 only: proxies whose samples left through more than one exit address',
      },
      https: {
        ...int0,
        description: 'Checks that ran the https check (the default; absent with `https: false`): working proxies whose record says `https: true`',
      },
    },
  },
  CheckMetadata: {
    type: 'object',
    required: ['user', 'region_used', 'region_name', 'proxy_type', 'timeout_used', 'total_checked', 'total_invalid', 'total_duplicates', 'total_blocked', 'invalid_lines', 'processing_time', 'job_id'],
    additionalProperties: false,
    properties: {
      user: {
        type: 'object',
        required: ['email', 'checks_used', 'remaining_checks', 'subscription_detail'],
        additionalProperties: false,
        properties: { email: { type: 'string' }, checks_used: int0, remaining_checks: int0, subscription_detail: ref('SubscriptionDetail') },
      },
      region_used: { type: 'string' },
      region_name: { type: 'string' },
      proxy_type: { enum: ['http', 'socks4', 'socks5', 'auto'] },
      timeout_used: { type: 'string', pattern: '^[0-9]+ms$' },
      total_checked: int0,
      total_invalid: int0,
      total_duplicates: int0,
      total_blocked: {
        ...int0,
        description: 'Proxies refused before any connection (literal loopback, private, link-local or reserved addresses while ALLOW_PRIVATE_TARGETS is off): not checked, not charged; failed `blocked_target` records in the result file',
      },
      invalid_lines: {
        type: 'array',
        maxItems: 20,
        items: ref('InvalidLine'),
        description: 'The first 20 invalid lines (the result file has all of them in `invalid_lines`)',
      },
      processing_time: { type: 'string', pattern: '^[0-9]+\\.[0-9]{2}s$' },
      job_id: { type: 'string' },
      retried_checker_lag: {
        ...int0,
        description:
          'Present only when not 0: probes that timed out while the checker itself was late reading them, tried again instead of judged (each proxy charged once)',
      },
      warnings: {
        type: 'array',
        description:
          'Present only when there is one: what the check should know about its results. `judge_local_only`: the judge is reachable from the service\'s machine only and some proxies are elsewhere (they fail); `judge_network_only`: the same for a judge on a private address',
        items: {
          type: 'object',
          required: ['code', 'message'],
          additionalProperties: false,
          properties: { code: { type: 'string' }, message: { type: 'string' } },
        },
      },
    },
  },
  CheckResponse: {
    type: 'object',
    required: ['summary', 'metadata', 'result_url', 'result_urls'],
    additionalProperties: false,
    properties: {
      summary: ref('Summary'),
      metadata: ref('CheckMetadata'),
      result_url: nullable('string'),
      result_urls: {
        type: ['object', 'null'],
        required: ['json', 'csv', 'txt'],
        additionalProperties: false,
        properties: { json: { type: 'string' }, csv: { type: 'string' }, txt: { type: 'string' } },
      },
    },
  },
  CheckAccepted: {
    type: 'object',
    required: ['jobId', 'status', 'status_url', 'progress_url'],
    additionalProperties: false,
    properties: {
      jobId: { type: 'string', pattern: JOB_ID_PATTERN },
      status: { const: 'running' },
      status_url: { type: 'string', format: 'uri', description: 'GET it for the state; DELETE it to cancel' },
      progress_url: { type: 'string', format: 'uri', description: 'The WebSocket progress channel: /ws?jobId=' },
    },
  },
  CheckJob: {
    type: 'object',
    required: ['jobId', 'status', 'created_at', 'progress'],
    additionalProperties: false,
    properties: {
      jobId: { type: 'string', pattern: JOB_ID_PATTERN },
      status: { enum: ['running', 'completed', 'failed', 'cancelled'] },
      created_at: { type: 'string', format: 'date-time' },
      finished_at: { type: 'string', format: 'date-time', description: 'Once the job ended' },
      progress: {
        type: 'object',
        required: ['checked', 'total', 'working_so_far'],
        additionalProperties: false,
        properties: { checked: int0, total: int0, working_so_far: int0 },
        description: 'Proxies checked of the unique valid ones, and working so far (final numbers once ended)',
      },
      error: {
        type: 'string',
        description: 'failed / cancelled only: the stable code (interrupted, shutting_down, client_cancelled, client_disconnected, shard_failed, ...)',
      },
      result: { ...ref('CheckResponse'), description: 'completed only: the body POST /check answered (or would have), its links signed afresh' },
    },
  },
  ProxyRecord: {
    type: 'object',
    required: ['proxy', 'status', 'statusCode', 'responseTime', 'anonymity', 'origin', 'country', 'country_name', 'location', 'isp', 'asn', 'coordinates'],
    additionalProperties: false,
    properties: {
      proxy: {
        type: 'object',
        required: ['host', 'port', 'hasAuth'],
        additionalProperties: false,
        properties: {
          host: { type: 'string' },
          port: { type: 'integer', minimum: 1, maximum: 65535 },
          hasAuth: { type: 'boolean' },
          username: { type: 'string' },
          password: { type: 'string' },
          format: { enum: ['standard', 'url_auth', 'colon_auth'] },
        },
      },
      status: { enum: ['working', 'failed'] },
      statusCode: nullable('integer'),
      responseTime: { type: 'string', pattern: '^[0-9]+\\.[0-9]{2} ms$' },
      anonymity: { enum: ['elite', 'anonymous', 'transparent', null] },
      origin: nullable('string'),
      country: nullable('string'),
      country_name: nullable('string'),
      location: nullable('string'),
      isp: nullable('string'),
      asn: nullable('integer'),
      coordinates: {
        type: ['object', 'null'],
        required: ['lat', 'lon'],
        additionalProperties: false,
        properties: { lat: { type: 'number' }, lon: { type: 'number' } },
      },
      type: {
        enum: ['http', 'socks4', 'socks5', null],
        description:
          '`type: "auto"` checks only: the first of socks5, socks4, http that passed; null when none did. A check of one type over a mixed list (lines with a scheme naming another protocol): every record, the protocol it was checked as',
      },
      protocols: {
        type: 'array',
        items: { enum: ['socks5', 'socks4', 'http'] },
        uniqueItems: true,
        description: '`type: "auto"` checks only: every protocol that passed the full judge check, in the order socks5, socks4, http; [] when none did',
      },
      samples: ref('SamplesBlock'),
      https: {
        type: ['boolean', 'null'],
        description:
          'Working records of a check that ran the https check only (the default): true when a tunnel (CONNECT or SOCKS) + TLS to the judge with its pinned certificate passed the judge check within the timeout, false when it did not, null when the TLS check could not run (the plain check used up the timeout, or the service ran out of file descriptors for it)',
      },
      error: {
        type: 'object',
        required: ['code', 'message'],
        additionalProperties: false,
        properties: {
          code: { type: 'string' },
          message: { type: 'string' },
          certificate: {
            type: 'object',
            description: '`tls_intercepted` only: the certificate the tunnel presented instead of the judge\'s pinned one',
            required: ['subject', 'fingerprint'],
            additionalProperties: false,
            properties: { subject: { type: 'string' }, fingerprint: { type: 'string', pattern: '^[0-9A-F]{2}(:[0-9A-F]{2}){31}$' } },
          },
        },
      },
    },
  },
  SamplesBlock: {
    type: 'object',
    description: 'Checks with `samples` > 1 only: the proxy\'s samples (the rest of the record is the first passing sample\'s)',
    required: ['count', 'succeeded', 'success_rate', 'exit_ips', 'unique_exit_ips', 'response_time_ms'],
    additionalProperties: false,
    properties: {
      count: { type: 'integer', minimum: 1 },
      succeeded: int0,
      success_rate: { type: 'string', pattern: '^[0-9]+\\.[0-9]{2}%$' },
      exit_ips: { type: 'array', items: { type: 'string' }, uniqueItems: true, description: 'distinct exit addresses of the passing samples, first seen first' },
      unique_exit_ips: int0,
      response_time_ms: {
        type: ['object', 'null'],
        description: 'over the passing samples (ms, 2 decimals; p50 the nearest-rank median); null when none passed',
        required: ['min', 'p50', 'max'],
        additionalProperties: false,
        properties: { min: { type: 'number', minimum: 0 }, p50: { type: 'number', minimum: 0 }, max: { type: 'number', minimum: 0 } },
      },
    },
  },
  CustomUrlValidation: {
    type: 'object',
    required: ['summary', 'per_url_summary'],
    additionalProperties: false,
    properties: {
      summary: {
        type: 'object',
        required: ['total_urls_tested', 'total_proxies_tested', 'processing_time'],
        additionalProperties: false,
        properties: { total_urls_tested: int0, total_proxies_tested: int0, processing_time: { type: 'string', pattern: '^[0-9]+\\.[0-9]{2}s$' } },
      },
      per_url_summary: {
        type: 'array',
        items: {
          type: 'object',
          required: ['url', 'success_count', 'failed_count', 'success_rate', 'successful_proxies', 'failed_proxies'],
          additionalProperties: false,
          properties: {
            url: { type: 'string' },
            success_count: int0,
            failed_count: int0,
            success_rate: { type: 'string', pattern: '^[0-9]+\\.[0-9]{2}%$' },
            successful_proxies: { type: 'array', items: ref('ProxyRef') },
            failed_proxies: { type: 'array', items: ref('ProxyRef') },
          },
        },
      },
    },
  },
  InvalidLine: {
    type: 'object',
    required: ['line', 'text', 'reason'],
    additionalProperties: false,
    properties: {
      line: { type: 'integer', minimum: 1, description: 'Line number from 1 (/check-raw: every line counts, blank and comment lines too; /check: the element of `proxies`)' },
      text: { type: 'string', maxLength: 101, description: 'The line, trimmed; over 100 characters it is cut there and ends with `…`' },
      reason: { type: 'string', description: 'Why it is not a proxy address (a fixed text, docs/API.md lists them)' },
    },
  },
  ProxyRef: {
    type: 'object',
    required: ['proxy'],
    additionalProperties: false,
    properties: {
      proxy: {
        type: 'object',
        required: ['host', 'port'],
        additionalProperties: false,
        properties: { host: { type: 'string' }, port: { type: 'integer' } },
      },
    },
  },
  ResultFile: {
    type: 'object',
    required: ['summary', 'metadata', 'proxies'],
    additionalProperties: false,
    properties: {
      summary: ref('Summary'),
      metadata: ref('CheckMetadata'),
      proxies: { type: 'array', items: ref('ProxyRecord'), description: 'Every checked proxy: working first by response time, then failed (with those refused before any connection)' },
      invalid_lines: { type: 'array', items: ref('InvalidLine'), description: 'Every invalid line of the request, in order' },
      custom_url_validation: ref('CustomUrlValidation'),
    },
  },
  Me: {
    type: 'object',
    required: ['user', 'history', 'history_count', 'usage_last_30_days'],
    additionalProperties: false,
    properties: {
      user: {
        type: 'object',
        required: ['id', 'email', 'checks', 'breakdown', 'subscription_detail'],
        additionalProperties: false,
        properties: {
          id: { type: 'string', format: 'uuid' },
          email: { type: 'string' },
          checks: int0,
          breakdown: {
            type: 'object',
            required: ['root_balance', 'temp_balance'],
            additionalProperties: false,
            properties: { root_balance: int0, temp_balance: int0 },
          },
          subscription_detail: ref('SubscriptionDetail'),
        },
      },
      history: {
        type: 'array',
        maxItems: 30,
        items: {
          type: 'object',
          required: ['id', 'total_checked', 'total_working', 'result_url', 'proxy_type', 'scanned_at', 'status', 'error'],
          additionalProperties: false,
          properties: {
            id: { type: 'integer' },
            total_checked: int0,
            total_working: int0,
            result_url: nullable('string'),
            proxy_type: { enum: ['http', 'socks4', 'socks5', 'auto'] },
            scanned_at: { type: 'string', format: 'date-time' },
            status: { enum: ['running', 'completed', 'failed', 'cancelled'] },
            error: nullable('string'),
          },
        },
      },
      history_count: int0,
      usage_last_30_days: {
        type: 'array',
        minItems: 30,
        maxItems: 30,
        items: {
          type: 'object',
          required: ['day', 'total_checked'],
          additionalProperties: false,
          properties: { day: { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' }, total_checked: int0 },
        },
      },
      gateway: {
        type: 'object',
        description: 'Gateway use of the last 24 hours (counted, not charged): connections and bytes relayed, as counted by the answering node',
        required: ['connections_24h', 'bytes_24h'],
        additionalProperties: false,
        properties: { connections_24h: int0, bytes_24h: int0 },
      },
    },
  },
  RegionList: {
    type: 'object',
    required: ['regions', 'default'],
    additionalProperties: false,
    properties: {
      regions: {
        type: 'array',
        items: {
          type: 'object',
          required: ['code', 'name', 'endpoints', 'agents', 'capacity'],
          additionalProperties: false,
          properties: {
            code: { type: 'string' },
            name: { type: 'string' },
            endpoints: { type: 'integer', minimum: 1 },
            agents: { ...int0, description: 'Live probe agents of the region (embedded: 1, the process itself)' },
            capacity: { ...int0, description: 'Probe slots of those agents together (embedded: endpoints x SLOTS_PER_ENDPOINT); 0: checks to the region answer 503' },
          },
        },
      },
      default: { type: 'string' },
    },
  },
  Health: {
    type: 'object',
    required: ['status', 'version', 'uptime', 'timestamp', 'regions', 'database'],
    additionalProperties: false,
    properties: {
      status: { enum: ['ok', 'degraded'] },
      version: { type: 'string' },
      uptime: { type: 'integer', minimum: 0, description: 'Seconds since start' },
      timestamp: { type: 'string', format: 'date-time' },
      regions: { type: 'integer', description: 'Count of regions a check accepts' },
      database: { enum: ['ok', 'down'] },
      judge_reachable: {
        enum: ['public', 'this network only', 'this machine only'],
        description:
          'Who can reach the built-in judge, decided at start (docs/OPERATIONS.md "The judge"); absent when the operator chose it (BASE_URL, JUDGE_URL, a listener on loopback only). Proxies elsewhere than `this machine only` / `this network only` fail every check',
      },
      gateway: {
        type: 'object',
        description: 'Only with GATEWAY_PORT: where the gateway listens. `host` null when it listens on every address (use the API\'s host name)',
        required: ['host', 'port'],
        additionalProperties: false,
        properties: { host: nullable('string'), port: { type: 'integer', minimum: 1, maximum: 65535 } },
      },
      agents: {
        type: 'array',
        description: 'A cluster only: the live region agents (from their heartbeats)',
        items: {
          type: 'object',
          required: ['region', 'agent', 'slots', 'inFlight', 'exitIps', 'version', 'lastSeenMs'],
          additionalProperties: false,
          properties: {
            region: { type: 'string' },
            agent: { type: 'string' },
            slots: int0,
            inFlight: int0,
            exitIps: { type: 'array', items: { type: 'string' } },
            version: { type: 'string' },
            lastSeenMs: { ...int0, description: 'Milliseconds since its last heartbeat reached this node' },
          },
        },
      },
    },
  },
  JudgeEcho: {
    type: 'object',
    required: ['judge', 'nonce', 'remoteAddress', 'requestLine', 'headers', 'sig'],
    additionalProperties: false,
    properties: {
      judge: { const: 'proxycheck/1' },
      nonce: nullable('string'),
      remoteAddress: { type: 'string' },
      requestLine: { type: 'string' },
      headers: { type: 'array', items: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 2 } },
      sig: {
        type: 'string',
        pattern: '^v1:[0-9]+:[0-9a-f]{64}$',
        description:
          'Always the last member: `v1:<L>:<hex HMAC-SHA256(judge key, the first L bytes of the body)>`; the L bytes are everything before `,"sig":"` (nonce included)',
      },
    },
  },
  ProgressMessage: {
    type: 'object',
    description: 'A WebSocket message on /ws (not an HTTP response)',
    required: ['jobId', 'status', 'currentStep', 'stepsCompleted', 'progress', 'eta', 'details', 'timestamp'],
    additionalProperties: false,
    properties: {
      jobId: { type: 'string' },
      status: { enum: ['in_progress', 'completed', 'failed'] },
      currentStep: { type: 'string', description: 'validating, checking_balance, proxy_check_batch_<i>_of_<n>, custom_url_validation, writing_results, completed' },
      stepsCompleted: int0,
      progress: { type: 'number', minimum: 0, maximum: 100 },
      eta: { type: ['integer', 'null'], minimum: 0 },
      details: {
        type: 'object',
        required: ['message', 'batches_done', 'working_so_far', 'checked', 'total'],
        additionalProperties: false,
        properties: { message: { type: 'string' }, batches_done: int0, working_so_far: int0, checked: int0, total: int0 },
      },
      timestamp: { type: 'string', format: 'date-time' },
      result_url: { type: 'string', description: 'Final `completed` message, for a subscriber authenticated as the job\'s owner' },
    },
  },
};
