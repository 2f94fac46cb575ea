/**
 * OpenAPI content: the document header (info, both auth schemes, the
 * WebSocket channel), and per route its operation (tags, summary,
 * description) and its answers (answer(): which of the contract's schemas
 * each status answers with, its description, examples and headers). The
 * schemas themselves are the contract's (src/contract): none is written
 * here. Route files spread `docs.<route>` into their options (`detail` and
 * `response`); the @elysiajs/openapi plugin assembles the document at
 * /docs/json and servedDocument() puts its examples and descriptions where
 * OpenAPI readers show them.
 */
import type { DocumentDecoration } from 'elysia';
import { withHeaders } from '@elysiajs/openapi';
import { Type as t, type TSchema } from '@sinclair/typebox';
import { VERSION } from '../version';
import { componentSchemas, type ComponentName } from '../contract';
import { HEALTH_EXAMPLE } from '../contract/service';
import { WsQuery } from '../contract/ws';
import { errorExamples as X, type ErrorExample } from '../contract/error-examples';

/** A reference to one of the contract's schemas (src/contract). */
export const ref = (name: ComponentName) => ({ $ref: `#/components/schemas/${name}` });

type Named = Record<string, unknown>;
/** An answer's extras: one example or named ones, headers (TypeBox, their descriptions on them), more media types (`{type: {schema, example}}`). */
type AnswerOptions = { example?: unknown; examples?: Named; headers?: Record<string, TSchema>; content?: Named };
/**
 * One answer a route declares (its `response` at a status): the contract's
 * schema by reference (several: oneOf; none: no body), this route's
 * description, examples and headers. Elysia does not check it (noValidate:
 * the handlers answer Response objects, which it would not check anyway);
 * the plugin writes it into the document and servedDocument() moves the
 * examples (`x-` members) where OpenAPI puts them.
 */
export function answer(schema: ComponentName | ComponentName[] | null, description: string, opts: AnswerOptions = {}): TSchema {
  const body = schema === null ? {} : Array.isArray(schema) ? { oneOf: schema.map(ref) } : ref(schema);
  const extras = { 'x-example': opts.example, 'x-examples': opts.examples, 'x-content': opts.content };
  const answered = t.Any({ ...body, description, noValidate: true, ...JSON.parse(JSON.stringify(extras)) });
  return opts.headers === undefined ? answered : withHeaders(answered, opts.headers);
}
/** A route's `detail` (the operation: tags, summary, description, security) and `response` (status -> answer). */
export type Operation = Omit<DocumentDecoration, 'responses'> & { responses: Record<string, TSchema> };
export const operation = ({ responses, ...detail }: Operation): { detail: DocumentDecoration; response: Record<string, TSchema> } => ({ detail, response: responses });
/** operation() of each; `tag`: each under that tag. */
export const operations = <K extends string>(ops: Record<K, Operation>, tag?: string) =>
  Object.fromEntries(Object.entries<Operation>(ops).map(([k, v]) => [k, operation(tag === undefined ? v : { tags: [tag], ...v })])) as Record<K, ReturnType<typeof operation>>;
/** operation() of each keyed route (a key needed: `security`) under `tag`. */
export const keyedOperations = <K extends string>(tag: string, ops: Record<K, Operation>) =>
  operations(Object.fromEntries(Object.entries<Operation>(ops).map(([k, v]) => [k, { ...v, security }])) as Record<K, Operation>, tag);

type Media = { schema?: Named; example?: unknown; examples?: Named };
type Parameter = { description?: string; example?: unknown; schema?: { description?: string; examples?: unknown[] } };
type DocOperation = { parameters?: Parameter[]; responses?: Record<string, { headers?: Record<string, Parameter>; content?: Record<string, Media> }> };
/**
 * The generated document as served, in place (the plugin serves the one it
 * built once): the description and example of each parameter and response
 * header moved from its schema onto it, where OpenAPI readers (Swagger UI)
 * show them; each answer's examples and more media types (answer()) onto its
 * media type; an answer with no body left without content.
 */
export function servedDocument(doc: { paths?: Record<string, Record<string, DocOperation>> }): void {
  const lift = (p: Parameter) => {
    const { description, examples, ...schema } = p.schema ?? {};
    if (description === undefined && examples === undefined) return;
    p.schema = schema;
    if (description !== undefined) p.description ??= description;
    if (examples !== undefined) p.example ??= examples[0];
  };
  for (const op of Object.values(doc.paths ?? {}).flatMap((item) => Object.values(item))) {
    (op.parameters ?? []).forEach(lift);
    for (const [status, response] of Object.entries(op.responses ?? {})) {
      Object.values(response.headers ?? {}).forEach(lift);
      const media = response.content?.['application/json'];
      if (media?.schema?.noValidate !== true) continue;
      const { description: _, noValidate: __, 'x-example': example, 'x-examples': examples, 'x-content': more, ...schema } = media.schema;
      const content: Record<string, Media> = Object.keys(schema).length === 0 ? {} : { 'application/json': { schema, example, ...(examples === undefined ? {} : { examples: examplesOf(examples as Named) }) } };
      op.responses![status] = { ...response, content: { ...content, ...(more as Record<string, Media>) } };
      if (Object.keys(op.responses![status]!.content!).length === 0) delete op.responses![status]!.content;
    }
  }
}

/** Named examples (`{name: value}`) as an OpenAPI media type's `examples`. */
export const examplesOf = (named: Named) => Object.fromEntries(Object.entries(named).map(([k, v]) => [k, { value: v }]));
export const err = (example: Named, description: string, schema: ComponentName = 'Error') => answer(schema, description, { example });

/** The contract's error examples (src/contract/error-examples.ts) of these names, as answer()'s named examples. */
export const pick = (...names: ErrorExample[]) => Object.fromEntries(names.map((n) => [n, X[n]]));
export const E401 = answer('Unauthorized', 'API key missing or invalid', { examples: { missing: X.missingKey, invalid: X.invalidKey } });
const requestId = 'On every answer: the request\'s own X-Request-Id when it sent a sane one (1..128 of A-Z a-z 0-9 . _ : + / = -), else a generated UUID';
export const requestIdHeader = { 'X-Request-Id': t.String({ maxLength: 128, description: requestId }) };
export const E500 = answer('InternalError', 'Unexpected failure; `request_id` is the request\'s X-Request-Id, on every log line of the request', { example: X.internal, headers: requestIdHeader });
export const E405 = (path: string, methods: string) =>
  answer('MethodNotAllowed', 'Wrong method (the Allow header lists the accepted ones)', {
    example: { message: `The ${path} route accepts ${methods} only` },
    headers: { Allow: t.String({ description: 'The methods the route accepts' }) },
  });
/** The IETF httpapi draft's RateLimit fields, on every answer of a keyed route once the key is known (docs/API.md "Per-account limits"). */
export const rateLimitHeaders = {
  'RateLimit-Limit': t.Integer({ minimum: 1, description: 'Requests an account may make at once after a quiet spell (twice RATE_LIMIT_PER_S)' }),
  'RateLimit-Remaining': t.Integer({ minimum: 0, description: 'Requests left now (0 on a 429)' }),
  'RateLimit-Reset': t.Integer({ minimum: 0, description: 'Seconds until the account may make RateLimit-Limit requests again (on a 429: the same as Retry-After)' }),
};
export const retryAfter = (description = 'Seconds to wait before retrying') => ({ 'Retry-After': t.Integer({ minimum: 1, description }) });
/** A keyed route's 429 (its description and body when it has another limit too). */
export const too = (description: string, schema: ComponentName = 'TooManyRequests', more: Named = {}, retry?: string) =>
  answer(schema, description, { ...(Object.keys(more).length === 0 ? { example: X.rate } : { examples: { rate: X.rate, ...more } }), headers: { ...retryAfter(retry), ...rateLimitHeaders } });
export const E429 = too('Over a per-account limit (requests per second; on the check routes also checks running at once and proxies in flight); nothing was reserved');
/** The JSON routes' 415, and their 503 when every slot for bodies over 1 MiB is taken (body.ts). */
/** A 400 with these named examples. */
export const E400 = (examples: Named) => answer('BadRequest', 'Invalid input', { examples });
export const E415 = err(X.notJson, 'Not JSON', 'UnsupportedMediaType');
export const E503_BODIES = err(X.bodySlots, 'Every slot for request bodies over 1 MiB (2 at once) is taken: `Retry-After: 1`', 'ServiceUnavailable');
/** What a route that reads a JSON body adds: its 413, 415 and the 503 of E503_BODIES. */
export const bodyErrors = (e413: TSchema) => ({ '413': e413, '415': E415, '503': E503_BODIES });
/** An answer whose example is its component's (the contract's `examples`), or this one. */
export const json = (schema: ComponentName, description: string, example?: unknown) => answer(schema, description, { example });
/** A keyed route's 200 (201, 202): the RateLimit fields too, and more headers. */
export const keyed200 = (schema: ComponentName, description: string, headers: Record<string, TSchema> = {}, example?: unknown) =>
  answer(schema, description, { example, headers: { ...rateLimitHeaders, ...headers } });
/** A text media type with its example (the result files and pool proxies as csv or txt), and a txt list's example. */
export const text = (example: string) => ({ schema: { type: 'string' }, example });
export const TXT_LIST = '203.0.113.7:8080\nuser:pass@198.51.100.2:3128\n';
/** A keyed route's 204. */
export const keyed204 = (description: string) => answer(null, description, { headers: rateLimitHeaders });
export const security: Record<string, string[]>[] = [{ ApiKeyHeader: [] }, { BearerAuth: [] }];
/** The answers every keyed route shares: 401, its 405, 429, 500 (and a 404 when it names one thing). */
export const keyedErrors = (path: string, methods: string, e404?: TSchema) => ({ '401': E401, ...(e404 && { '404': e404 }), '405': E405(path, methods), '429': E429, '500': E500 });

const checkErrors = {
  '400': E400({ ...pick('region', 'type', 'timeout', 'none', 'jobId'), shape: X.checkShape }),
  '401': E401,
  '402': err(X.insufficient, 'Quota smaller than the checks the request needs: unique valid proxies x `samples` (`required` counts samples)', 'InsufficientChecks'),
  '409': answer(['JobAlreadyRunning', 'JobCancelled'], 'jobId in use (nothing reserved); or a synchronous check cancelled meanwhile with DELETE /checks/{jobId} (the checks not performed refunded)', { examples: { running: X.jobRunning, cancelled: X.jobCancelled } }),
  '413': answer('TooLarge', 'Over a limit (proxies, body size, custom URLs)', { examples: pick('proxies', 'body', 'customUrls') }),
  '429': E429,
  '500': E500,
  '503': answer(['ServiceUnavailable', 'RegionUnavailable'], 'Shutting down (also a check that was still running when the shutdown grace ran out; its unchecked units are refunded); or every slot for request bodies over 1 MiB (2 at once) is taken: `Retry-After: 1`, nothing charged; or (a cluster) no live agent serves the region: `Region unavailable`, nothing charged', { examples: { shutdown: X.shutdown, region: X.regionDown } }),
};

/** The 202 of an asynchronous check, and what asks for it (docs/API.md "Checks that outlive their connection"). */
const asyncAccepted = keyed200(
  'CheckAccepted',
  'Asynchronous check (`Prefer: respond-async` or `?async=true`): reserved and running; everything before the reservation answered as for a synchronous check. The job runs on whatever happens to this connection: follow it on `progress_url`, read it at `status_url`, cancel it with DELETE there.',
  { Location: t.String({ description: '/checks/{jobId}' }), 'Preference-Applied': t.String({ description: '`respond-async` when the Prefer header asked for it' }) },
);
const jobNotFoundExample = err(X.noJob, 'No job of this id for this key (another account\'s job too), or one past the result retention', 'NotFound');
const E400JobId = err(X.jobId, 'Not a jobId', 'InvalidJobId');

/** Each route's `detail` and `response`, spread into its options. */
export const docs = {
  ...operations({
    regions: {
      summary: 'List regions',
      description:
        'The region catalogue. `test1` is listed but not accepted by the check routes. `agents` and `capacity` say who probes from the region now: in a cluster, its live agents and their probe slots together (0 and 0: a check to it answers 503 `Region unavailable`); in one embedded process, 1 (the process) and endpoints x SLOTS_PER_ENDPOINT.',
      responses: { '200': json('RegionList', 'Regions'), '405': E405('/regions', 'GET') },
    },
    health: {
      summary: 'Service health',
      responses: {
        '200': json('Health', 'Healthy'),
        '503': json('Health', 'Database not answering', { ...HEALTH_EXAMPLE, status: 'degraded', database: 'down' }),
        '405': E405('/health', 'GET'),
      },
    },
    judge: {
      summary: 'Proxy judge',
      description:
        'Echoes the request line, the request headers, the remote address and the nonce (`?n=`) of the request as JSON (ASCII only), signed: `sig`, the last member, is an HMAC over the exact body bytes before it, so a proxy that changes the answer is `tampered`. Probes are sent here through the proxy under test (`JUDGE_URL`).',
      responses: { '200': json('JudgeEcho', 'Echo'), '405': E405('/judge', 'GET') },
    },
  }, 'Service'),
  ...keyedOperations('Account', {
    me: {
      summary: 'Account, quota, history and usage',
      responses: { '200': keyed200('Me', 'Account information'), ...keyedErrors('/me', 'GET') },
    },
  }),
  ...keyedOperations('Checks', {
    check: {
      summary: 'Check proxies (JSON body)',
      description:
        'Checks every unique valid proxy through the judge from the chosen region. Costs one quota unit per unique valid proxy. Defaults: region us1, type http, timeout 2000 ms. `type: "auto"` (an extension) tries each proxy as http, socks4 and socks5 within the one timeout for one check. `samples` (an extension, 1..10, default 1) probes each proxy that many times on fresh connections and costs one check per sample. `https` (an extension, default true): each working proxy is also tried through a tunnel + TLS to the judge, pinned (records get `https`; a proxy that intercepts TLS is `failed` / `tls_intercepted`); `false` skips it. Follow progress on the WebSocket `/ws?jobId=<jobId>`. With `Prefer: respond-async` or `?async=true` it answers 202 once the checks are reserved and the job outlives the connection (GET /checks/{jobId}).',
      responses: { '200': keyed200('CheckResponse', 'Check response'), '202': asyncAccepted, ...checkErrors, '405': E405('/check', 'POST'), '415': E415 },
    },
    checkRaw: {
      summary: 'Check proxies (plain-text body, one per line)',
      description:
        'Same as POST /check with the list as text (read as text whatever its Content-Type). Query: `region` (default us1), `type` (default http), `timeout` (default 5000 ms for http and auto, 3000 ms for socks4/socks5), `samples` (an extension, 1..10, default 1), `https` (an extension, `true` or `false`, default true: the https check), `jobId`. Custom URLs are not taken here.',
      responses: { '200': keyed200('CheckResponse', 'Check response'), '202': asyncAccepted, ...checkErrors, '405': E405('/check-raw', 'POST') },
    },
    checkJob: {
      summary: 'A check job: state, progress, and its response once completed',
      description:
        'The account\'s most recent run of `jobId` (any check: asynchronous or not, the client\'s jobId or the generated one in `metadata.job_id`), from any API node. `running` with live progress; `completed` with `result`, exactly the body POST /check answered (or would have), its links signed afresh; `failed` or `cancelled` with `error` (a stable code: `interrupted` for a job cut by a crash, refunded in full). Found as long as its result file is kept (RESULT_RETENTION_DAYS).',
      responses: { '200': keyed200('CheckJob', 'The job'), '400': E400JobId, ...keyedErrors('/checks/{jobId}', 'GET, DELETE', jobNotFoundExample) },
    },
    cancelCheckJob: {
      summary: 'Cancel a running check job',
      description:
        'Cancels the account\'s running job `jobId` on whichever API node runs it and answers once it is settled: the checks not performed are refunded, the ones performed are charged, and the job reads `cancelled` / `client_cancelled`. A job that has ended answers 409.',
      responses: {
        '204': keyed204('Cancelled; the checks not performed are refunded'),
        '400': E400JobId,
        ...keyedErrors('/checks/{jobId}', 'GET, DELETE', jobNotFoundExample),
        '409': err(X.jobEnded, 'The job has already ended', 'JobNotRunning'),
        '503': answer('ServiceUnavailable', 'The API node running the job does not answer (a cluster); nothing changed', { example: X.nodeDown, headers: retryAfter() }),
      },
    },
  }),
  ...operations({
    result: {
      operationId: 'getResultByName',
      summary: 'Download a result file (signed link)',
      description:
        'The link comes from `result_url` / `result_urls` of a check response or from GET /me history; it needs no key (the token is the credential) and is valid 12 hours. `name` is `<result id>.json` (the file itself, inline), `.csv` (every field, one row per proxy, RFC 4180, attachment) or `.txt` (working proxies, one per line, in the submitted form, attachment). One token serves all three. Bad or missing token 403 (checked first), expired 410, unknown id, unknown extension or a file past retention 404.',
      responses: {
        '200': answer('ResultFile', 'The result, in the form the extension names', {
          content: {
            'text/csv': text(
              'proxy_host,proxy_port,proxy_has_auth,proxy_username,proxy_password,status,status_code,response_time_ms,anonymity,origin,country,country_name,location,isp,asn,lat,lon,error_code,error_message\r\n203.0.113.7,8080,false,,,working,200,123.45,elite,203.0.113.7,US,United States,Ashburn,Example ISP,64500,39.04,-77.49,,\r\n',
            ),
            'text/plain': text(TXT_LIST),
          },
        }),
        '403': err(X.badToken, 'Missing or bad token', 'Forbidden'),
        '404': err(X.noResult, 'Unknown result, unknown extension or a file past retention', 'NotFound'),
        '405': E405('/result/{name}', 'GET'),
        '410': err(X.linkExpired, 'The link has expired', 'LinkExpired'),
      },
    },
  }, 'Checks'),
};

/** An answer as the plugin writes a declared one into the document (for /ws, a route it does not describe). */
const responseOf = (a: TSchema) => {
  const { headers, ...schema } = a as TSchema & { headers?: Record<string, TSchema> };
  const headed = headers === undefined ? {} : { headers: Object.fromEntries(Object.entries(headers).map(([k, h]) => [k, { schema: h }])) };
  return { description: schema.description as string, ...headed, content: { 'application/json': { schema } } };
};

/**
 * The operation the plugin cannot describe from its route, merged over the
 * generated paths (documentation.paths): the WebSocket route (the plugin
 * would list it under a non-OpenAPI method "ws"). The admin API is not here:
 * it has its own listener (src/admin/app.ts; docs/API.md "Operators").
 */
const paths = {
  '/ws': {
    get: {
      operationId: 'getWs',
      tags: ['Checks'],
      summary: 'Progress of a check, or the events of a pool (WebSocket)',
      description:
        'Upgrades to a WebSocket that receives the progress messages of the job `jobId` (schema `ProgressMessage`), server to client only, then a close with 1000. The upgrade is refused with a JSON error before it happens: 400 for a missing or malformed jobId, 401 for a missing key when `WS_REQUIRE_AUTH=true` or an invalid key. Other close codes: 1008 (the job belongs to another account than the key\'s), 1013 (too many subscriptions for this account (`WS_MAX_PER_ACCOUNT`) or, without a key, for this client address (a quarter of `WS_MAX_PER_ACCOUNT`); too many subscribers of the job / jobs waited on; or a subscriber too slow to read).' +
        ' With `pool` instead of `jobId`: the events of the key\'s pool (`{pool, event, at, proxy?, counts}`, event one of proxy.up, proxy.down, round.completed, pool.paused, pool.resumed; docs/API.md "GET /ws?pool={id}"), one JSON text message each; a key is required (401 without), a pool that is not the key\'s account\'s is 404 (unknown, malformed and another account\'s alike); closed with 1000 `pool deleted` when the pool is deleted, 1013 over the caps or for a slow reader.',
      // the route's query (the plugin does not describe the ws route); servedDocument lifts their descriptions as for the others
      parameters: Object.entries(WsQuery.properties).map(([name, schema]) => ({ name, in: 'query', required: false, schema })),
      responses: {
        '101': { description: 'Switching Protocols: the WebSocket is open; messages follow the ProgressMessage schema' },
        '400': responseOf(err(X.jobId, 'jobId missing or malformed', 'InvalidJobId')),
        '401': responseOf(E401),
        '404': responseOf(err(X.noPool, '`pool`: not a pool of the key\'s account')),
      },
    },
  },
};


export const documentation = {
  info: {
    title: 'Proxy checking API',
    version: VERSION,
    description: [
      'Checks lists of HTTP, SOCKS4 and SOCKS5 proxies from a chosen region: which work, how fast, how anonymous, where they exit.',
      '',
      'Authentication: `X-API-Key: <key>` or `Authorization: Bearer <key>` on /check, /check-raw, /me and /pools (every pool route).',
      '',
      'Every error body is JSON. A known path called with another method answers 405 `{message}` with an `Allow` header; an unknown path answers 404 `{"error": "Not found", "message": "No route <METHOD> <path>"}`.',
      '',
      'Every response carries `X-Request-Id`: the one the request sent when it is 1 to 128 characters of `A-Z a-z 0-9 . _ : + / = -`, else a generated UUID. Every log line of the request carries it, and a 500 body adds it as `request_id`: quote it when you report a failure.',
      '',
      '## Progress over WebSocket',
      'Connect to `GET /ws?jobId=<id>` (before or during the check request that carries the same `jobId`). No key is needed unless the server sets `WS_REQUIRE_AUTH=true`; a key (`X-API-Key`, `Authorization: Bearer` or `?apiKey=`) limits the subscription to that account\'s jobs.',
      'Messages are JSON: `{jobId, status: "in_progress"|"completed"|"failed", currentStep, stepsCompleted, progress (0-100), eta, details: {message, batches_done, working_so_far, checked, total}, timestamp}`. Steps: `validating`, `checking_balance`, `proxy_check_batch_<i>_of_<n>`, `custom_url_validation`, `writing_results`. At most ~10 messages a second per job; always a final `completed` (carrying `result_url` for an authenticated subscriber) or `failed`, then the server closes with code 1000.',
      '',
      '## Checks that outlive their connection',
      'A big check is a long request. With `Prefer: respond-async` (or `?async=true`) POST /check and /check-raw answer 202 once the checks are reserved (`Location: /checks/{jobId}`); the job then runs on whatever happens to the connection. GET /checks/{jobId} reads its state, progress and, once completed, the body /check would have answered; DELETE cancels it and refunds the checks not performed.',
      '',
      '## Result files',
      '`result_url` is `<CONTENT_URL>/result/<id>.json?token=<hmac>&expires=<unix s>`, valid 12 hours, fetched without a key. Bad token 403, expired 410, unknown 404.',
      'The same link with `.csv` (one row per proxy, every field flattened, RFC 4180, formula-safe) or `.txt` (working proxies only, one per line, in the address form they were submitted in) serves the other download forms; the check response lists all three in `result_urls: {json, csv, txt}` next to `result_url`.',
    ].join('\n'),
  },
  tags: [
    { name: 'Checks', description: 'Proxy checks (cost one unit per unique valid proxy), their progress and their result files' },
    { name: 'Account', description: 'Quota, plan, history' },
    { name: 'Service', description: 'Regions, health, judge' },
  ],
  paths,
  components: {
    securitySchemes: {
      ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      BearerAuth: { type: 'http', scheme: 'bearer' },
    },
    schemas: componentSchemas,
  },
};
