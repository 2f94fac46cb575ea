/**
 * The check routes' shapes: POST /check's body (and its custom URL rule),
 * the check response (summary, metadata, links), the result file and its
 * records. Responses are closed (additionalProperties: false), so the e2e
 * suite, which checks real responses against the served document, catches drift.
 */
import { Type as t, type Static } from '@sinclair/typebox';
import { JOB_ID_PATTERN } from '../job-id';
import { CHECK_TYPES } from '../proxy/types';
import {
  CUSTOM_URL_MAX_LENGTH, DEFAULT_REGION, DEFAULT_SAMPLES, MAX_STATUS_CODES, REQUIRED_TEXT_MAX_LENGTH, SAMPLES_MAX, SAMPLES_MIN, TIMEOUT_MAX_MS, TIMEOUT_MIN_MS,
} from './bounds';
import {
  AUTO_ORDER, checkType, closed, CodeMessage, counts, exitFields, int0, oneOf, orNull, PERCENT_PATTERN, queryOneOf, ProxyAddress, proxyType, queryBoolean, RESPONSE_TIME_PATTERN, SECONDS_PATTERN,
} from './common';

/** The examples the document shows on these schemas (OpenAPI `examples`). */
export const CHECK_RESPONSE_EXAMPLE = {
  summary: {
    total_working: 2,
    countries: { 'United States': 1, Germany: 1 },
    anonymity_levels: { elite: 1, anonymous: 1, transparent: 0 },
    top_isps: { 'Example ISP': 1, 'Other AS': 1 },
    errors: { connect_timeout: 1, blocked_target: 1 },
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
    total_invalid: 1,
    total_duplicates: 0,
    total_blocked: 1,
    invalid_lines: [{ line: 5, text: '203.0.113.7:99999', reason: 'port is not a number from 1 to 65535' }],
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

export const CustomUrl = t.Object({
  url: t.String({ format: 'uri', maxLength: CUSTOM_URL_MAX_LENGTH, description: 'Absolute http:// or https:// URL' }),
  requiredStatusCodes: t.Optional(t.Array(t.Integer({ minimum: 100, maximum: 599 }), { minItems: 1, maxItems: MAX_STATUS_CODES, default: [200] })),
  requiredText: t.Optional(t.String({ maxLength: REQUIRED_TEXT_MAX_LENGTH })),
  caseSensitive: t.Optional(t.Boolean({ default: false })),
});
export type CustomUrlBody = Static<typeof CustomUrl>;

export const timeoutMs = (opts: { default?: number; description?: string } = {}) => t.Integer({ minimum: TIMEOUT_MIN_MS, maximum: TIMEOUT_MAX_MS, ...opts });

export const CheckBody = t.Object({
  proxies: t.Array(t.String(), {
    description:
      'host:port, user:pass@host:port or host:port:user:pass; a leading http://, https://, socks4://, socks4a://, socks5:// or socks5h:// names that proxy\'s protocol, checked whatever `type` says (a mixed list)',
  }),
  jobId: t.Optional(t.String({ pattern: JOB_ID_PATTERN })),
  region: t.Optional(t.String({ default: DEFAULT_REGION })),
  type: t.Optional(
    checkType({
      default: 'http',
      description: '`auto` (an extension): each proxy is tried as http, socks4 and socks5 within the one timeout, one check charged; records get `type` and `protocols`, the summary `protocols`',
    }),
  ),
  timeout: t.Optional(timeoutMs({ default: 2000 })),
  samples: t.Optional(
    t.Integer({
      minimum: SAMPLES_MIN,
      maximum: SAMPLES_MAX,
      default: DEFAULT_SAMPLES,
      description: 'An extension: each proxy is probed this many times, each on a fresh connection with the whole timeout; one check charged per sample. Above 1, records get `samples` and the summary `rotating`',
    }),
  ),
  https: t.Optional(
    t.Boolean({
      description:
        'An extension, on by default (the server\'s JUDGE_TLS): each working proxy is also tried with a tunnel (CONNECT, or the SOCKS tunnel) + TLS to the judge\'s TLS listener with its pinned certificate, within the same timeout; working records get `https`, the summary `https`, and a proxy that presents another certificate is `failed` / `tls_intercepted`. false: no such check, no `https` fields',
    }),
  ),
  customUrls: t.Optional(t.Array(CustomUrl, { description: 'At most MAX_CUSTOM_URLS (default 10; more: 413 Too many custom URLs)' })),
}, {
  description: 'A member that is null is the same as one left out',
  examples: [
    {
      proxies: ['203.0.113.7:8080', 'user:pass@198.51.100.2:3128', '192.0.2.10:1080:user:pass'],
      type: 'http',
      region: 'us1',
      timeout: 2000,
      jobId: 'my-job-1',
      customUrls: [{ url: 'https://example.com/', requiredStatusCodes: [200], requiredText: 'Example Domain', caseSensitive: false }],
    },
  ],
});
export type CheckBodyType = Static<typeof CheckBody>;

/**
 * A custom URL rule as the routes read it: its `url` any string, which
 * check-request.ts httpUrl checks (an http or https URL WHATWG parses; the
 * `uri` format would refuse some it takes, a non-ASCII path for one).
 */
export const customUrlAsRead = () => t.Object({ ...CustomUrl.properties, url: t.String({ maxLength: CUSTOM_URL_MAX_LENGTH }) });

/**
 * POST /check's body as the route reads it (its declared `body`): CheckBody
 * whose `proxies` entries are left to the parser, which counts an entry that
 * is no string as an invalid line (the contract's rule); so the schema costs
 * the same for 10 proxies as for 100 000. Its rules' URLs: customUrlAsRead.
 */
export const CheckBodyAsRead = t.Object(
  {
    ...CheckBody.properties,
    proxies: t.Array(t.Unsafe<string>(t.Unknown()), { description: CheckBody.properties.proxies.description }),
    customUrls: t.Optional(t.Array(customUrlAsRead(), { description: CheckBody.properties.customUrls.description })),
  },
  { description: CheckBody.description, examples: CheckBody.examples },
);

/** `async` on POST /check and /check-raw (docs/API.md "Checks that outlive their connection"). */
const asyncParameter = () =>
  queryBoolean({ description: '`true`: the same as `Prefer: respond-async`; `false`: the synchronous answer whatever Prefer says' });

/** The header of POST /check and /check-raw that asks for an asynchronous check (named as RFC 7240 writes it; names are case-insensitive: async-check.ts reads it). */
export const CheckHeaders = t.Object({
  Prefer: t.Optional(
    t.String({ description: 'RFC 7240: `respond-async` answers 202 once the checks are reserved, and the job outlives the connection', examples: ['respond-async'] }),
  ),
});

/** POST /check-raw's body: the list as text, one proxy per line (read as text whatever its Content-Type). */
export const CheckRawBody = t.String({ examples: ['203.0.113.7:8080\nuser:pass@198.51.100.2:3128\n'] });

/** POST /check's query. */
export const CheckQuery = t.Object({ async: t.Optional(asyncParameter()) });

/** POST /check-raw's query (the body is the list as text). */
export const CheckRawQuery = t.Object({
  region: t.Optional(t.String({ default: DEFAULT_REGION })),
  type: t.Optional(queryOneOf(CHECK_TYPES, { default: 'http' })),
  timeout: t.Optional(timeoutMs({ description: 'Default 5000 (http, auto) or 3000 (socks4, socks5)' })),
  samples: t.Optional(
    t.Integer({ minimum: SAMPLES_MIN, maximum: SAMPLES_MAX, default: DEFAULT_SAMPLES, description: 'An extension: probes per proxy, each on a fresh connection; one check charged per sample' }),
  ),
  https: t.Optional(
    queryBoolean({ default: 'true', description: 'An extension: the https check of working proxies (tunnel + TLS to the judge, pinned); default the server\'s JUDGE_TLS (true)' }),
  ),
  jobId: t.Optional(t.String({ pattern: JOB_ID_PATTERN })),
  async: t.Optional(asyncParameter()),
});

/** GET /result/{name}: the file's name and its signed link's query. */
export const ResultParams = t.Object({ name: t.String({ pattern: '^[A-Za-z0-9_-]{22}\\.(json|csv|txt)$', examples: ['3q2-7wEAAABh1nLpAAAAAA.json'] }) });
export const ResultQuery = t.Object({ token: t.String({ pattern: '^[0-9a-f]{64}$' }), expires: t.Integer({ description: 'Unix seconds' }) });

export const SubscriptionDetail = t.Object({ UnlimitedPro: t.Boolean(), unlimited_expired_at: t.Optional(t.String({ format: 'date-time' })) }, closed);

export const Summary = t.Object(
  {
    total_working: int0(),
    countries: counts(),
    anonymity_levels: t.Object({ elite: int0(), anonymous: int0(), transparent: int0() }, closed),
    top_isps: counts({ maxProperties: 10 }),
    errors: counts({
      description:
        'Failed proxies per `error.code` (an addition), the most frequent first, ties by code; `{}` when none failed. Proxies refused before any connection count under `blocked_target`',
    }),
    protocols: t.Optional(
      t.Object(
        { http: int0(), socks4: int0(), socks5: int0() },
        { ...closed, description: '`type: "auto"` checks only: working proxies that passed each protocol (one that passed two counts in both)' },
      ),
    ),
    rotating: t.Optional(int0({ description: 'Checks with `samples` > 1 only: proxies whose samples left through more than one exit address' })),
    https: t.Optional(int0({ description: 'Checks that ran the https check (the default; absent with `https: false`): working proxies whose record says `https: true`' })),
  },
  closed,
);
export type SummaryBody = Static<typeof Summary>;

export const InvalidLine = t.Object(
  {
    line: t.Integer({ minimum: 1, description: 'Line number from 1 (/check-raw: every line counts, blank and comment lines too; /check: the element of `proxies`)' }),
    text: t.String({ maxLength: 101, description: 'The line, trimmed; over 100 characters it is cut there and ends with `…`' }),
    reason: t.String({ description: 'Why it is not a proxy address (a fixed text, docs/API.md lists them)' }),
  },
  closed,
);

export const CheckMetadata = t.Object(
  {
    user: t.Object({ email: t.String(), checks_used: int0(), remaining_checks: int0(), subscription_detail: SubscriptionDetail }, closed),
    region_used: t.String(),
    region_name: t.String(),
    proxy_type: oneOf(CHECK_TYPES),
    timeout_used: t.String({ pattern: '^[0-9]+ms$' }),
    total_checked: int0(),
    total_invalid: int0(),
    total_duplicates: int0(),
    total_blocked: int0({
      description:
        'Proxies refused before any connection (literal loopback, private, link-local or reserved addresses while ALLOW_PRIVATE_TARGETS is off): not checked, not charged; failed `blocked_target` records in the result file',
    }),
    invalid_lines: t.Array(InvalidLine, { maxItems: 20, description: 'The first 20 invalid lines (the result file has all of them in `invalid_lines`)' }),
    processing_time: t.String({ pattern: SECONDS_PATTERN }),
    job_id: t.String(),
    retried_checker_lag: t.Optional(
      int0({
        description:
          'Present only when not 0: probes that timed out while the checker itself was late reading them, tried again instead of judged (each proxy charged once)',
      }),
    ),
    warnings: t.Optional(
      t.Array(CodeMessage, {
        description:
          'Present only when there is one: what the check should know about its results. `judge_local_only`: the judge is reachable from the service\'s machine only and some proxies are elsewhere (they fail); `judge_network_only`: the same for a judge on a private address',
      }),
    ),
  },
  closed,
);
export type CheckMetadataBody = Static<typeof CheckMetadata>;

export const ResultUrls = t.Object({ json: t.String(), csv: t.String(), txt: t.String() }, closed);

export const CheckResponse = t.Object(
  { summary: Summary, metadata: CheckMetadata, result_url: orNull(t.String()), result_urls: orNull(ResultUrls) },
  { ...closed, examples: [CHECK_RESPONSE_EXAMPLE] },
);
export type CheckResponseBody = Static<typeof CheckResponse>;

export const SamplesBlock = t.Object(
  {
    count: t.Integer({ minimum: 1 }),
    succeeded: int0(),
    success_rate: t.String({ pattern: PERCENT_PATTERN }),
    exit_ips: t.Array(t.String(), { uniqueItems: true, description: 'distinct exit addresses of the passing samples, first seen first' }),
    unique_exit_ips: int0(),
    response_time_ms: orNull(
      t.Object({ min: t.Number({ minimum: 0 }), p50: t.Number({ minimum: 0 }), max: t.Number({ minimum: 0 }) }, closed),
      { description: 'over the passing samples (ms, 2 decimals; p50 the nearest-rank median); null when none passed' },
    ),
  },
  { ...closed, description: 'Checks with `samples` > 1 only: the proxy\'s samples (the rest of the record is the first passing sample\'s)' },
);

export const anonymity = () => orNull(oneOf(['elite', 'anonymous', 'transparent'] as const));

export const ProxyRecord = t.Object(
  {
    proxy: t.Object({ ...ProxyAddress.properties, format: t.Optional(oneOf(['standard', 'url_auth', 'colon_auth'] as const)) }, closed),
    status: oneOf(['working', 'failed'] as const),
    statusCode: orNull(t.Integer()),
    responseTime: t.String({ pattern: RESPONSE_TIME_PATTERN }),
    anonymity: anonymity(),
    ...exitFields(),
    coordinates: orNull(t.Object({ lat: t.Number(), lon: t.Number() }, closed)),
    type: t.Optional(
      orNull(proxyType(), {
        description:
          '`type: "auto"` checks only: the first of socks5, socks4, http that passed; null when none did. A check of one type over a mixed list (lines with a scheme naming another protocol): every record, the protocol it was checked as',
      }),
    ),
    protocols: t.Optional(
      t.Array(oneOf(AUTO_ORDER), {
        uniqueItems: true,
        description: '`type: "auto"` checks only: every protocol that passed the full judge check, in the order socks5, socks4, http; [] when none did',
      }),
    ),
    samples: t.Optional(SamplesBlock),
    https: t.Optional(
      orNull(t.Boolean(), {
        description:
          'Working records of a check that ran the https check only (the default): true when a tunnel (CONNECT or SOCKS) + TLS to the judge with its pinned certificate passed the judge check within the timeout, false when it did not, null when the TLS check could not run (the plain check used up the timeout, or the service ran out of file descriptors for it)',
      }),
    ),
    error: t.Optional(
      t.Object(
        {
          code: t.String(),
          message: t.String(),
          certificate: t.Optional(
            t.Object(
              { subject: t.String(), fingerprint: t.String({ pattern: '^[0-9A-F]{2}(:[0-9A-F]{2}){31}$' }) },
              { ...closed, description: '`tls_intercepted` only: the certificate the tunnel presented instead of the judge\'s pinned one' },
            ),
          ),
        },
        closed,
      ),
    ),
  },
  closed,
);
export type ProxyRecordBody = Static<typeof ProxyRecord>;

export const ProxyRef = t.Object({ proxy: t.Object({ host: t.String(), port: t.Integer() }, closed) }, closed);

export const CustomUrlValidation = t.Object(
  {
    summary: t.Object({ total_urls_tested: int0(), total_proxies_tested: int0(), processing_time: t.String({ pattern: SECONDS_PATTERN }) }, closed),
    per_url_summary: t.Array(
      t.Object(
        {
          url: t.String(),
          success_count: int0(),
          failed_count: int0(),
          success_rate: t.String({ pattern: PERCENT_PATTERN }),
          successful_proxies: t.Array(ProxyRef),
          failed_proxies: t.Array(ProxyRef),
        },
        closed,
      ),
    ),
  },
  closed,
);

export const ResultFile = t.Object(
  {
    summary: Summary,
    metadata: CheckMetadata,
    proxies: t.Array(ProxyRecord, { description: 'Every checked proxy: working first by response time, then failed (with those refused before any connection)' }),
    invalid_lines: t.Optional(t.Array(InvalidLine, { description: 'Every invalid line of the request, in order' })),
    custom_url_validation: t.Optional(CustomUrlValidation),
  },
  closed,
);
export type ResultFileBody = Static<typeof ResultFile>;
