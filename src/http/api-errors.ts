/**
 * The one API error model. Every error the HTTP layer answers is an ApiError:
 * a status and the exact JSON body the seed contract / DECISIONS prescribe.
 * Handlers throw these; src/http/errors.ts maps them (and everything else) to
 * responses in one place. Probe failures are NOT errors: they are data
 * (`ProbeError` in src/probe/types.ts).
 */

import { ServiceError } from '../errors';
import { JOB_ID_RULE } from '../job-id';

export type ErrorBody = Record<string, unknown> & { message?: string };

export class ApiError extends ServiceError {
  readonly status: number;
  readonly body: ErrorBody;
  readonly headers: Record<string, string>;

  constructor(status: number, body: ErrorBody, headers: Record<string, string> = {}, options?: { cause?: unknown }) {
    super(`http_${status}`, typeof body.error === 'string' ? body.error : (body.message ?? `HTTP ${status}`), options);
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

// ---- 400 -------------------------------------------------------------------

export const invalidRequest = (message: string) =>
  new ApiError(400, { error: 'Invalid request', message });

export const invalidRegion = (available: readonly string[]) =>
  new ApiError(400, {
    error: 'Invalid region',
    message: `Region must be one of: ${available.join(', ')}`,
    available_regions: [...available],
  });

export const invalidType = (available: readonly string[]) =>
  new ApiError(400, {
    error: 'Invalid proxy type',
    message: `Proxy type must be one of: ${available.join(', ')}`,
    available_types: [...available],
  });

export const invalidTimeout = (min: number, max: number) =>
  new ApiError(400, {
    error: 'Invalid timeout',
    message: `timeout must be an integer number of milliseconds from ${min} to ${max}`,
    min,
    max,
  });

export const noValidProxies = () =>
  new ApiError(400, {
    error: 'No valid proxies found',
    message:
      'Please provide at least one proxy in a supported format: host:port, username:password@host:port or host:port:username:password',
  });

export const invalidJobId = () =>
  new ApiError(400, {
    error: 'Invalid jobId',
    message: `jobId must be ${JOB_ID_RULE}`,
  });

// ---- 401 / 402 / 403 -------------------------------------------------------

export const apiKeyRequired = () =>
  new ApiError(401, {
    error: 'API key is required',
    message: 'Please provide your API key in the X-API-Key header or the Authorization header (Bearer <key>)',
  });

/** /ws without a key on a server that requires one there (WS_REQUIRE_AUTH); elsewhere a key is always required (apiKeyRequired). */
export const wsApiKeyRequired = () =>
  new ApiError(401, {
    error: 'API key is required',
    message:
      'This server requires an API key on /ws (server setting WS_REQUIRE_AUTH): provide it in the X-API-Key header, the Authorization header (Bearer <key>) or the apiKey query parameter',
  });

/** /ws?pool= without a key (a pool's events are its owner's only, whatever WS_REQUIRE_AUTH says). */
export const poolWsApiKeyRequired = () =>
  new ApiError(401, {
    error: 'API key is required',
    message: "A pool's events need its owner's API key: provide it in the X-API-Key header, the Authorization header (Bearer <key>) or the apiKey query parameter",
  });

export const invalidApiKey = () =>
  new ApiError(401, { error: 'Invalid API key', message: 'The provided API key is not valid' });

export const insufficientChecks = (required: number, available: number) =>
  new ApiError(402, {
    error: 'Insufficient Checks',
    message: `You need ${required} checks but only have ${available} remaining.`,
    required,
    available,
    shortfall: required - available,
  });

export const forbidden = (message: string) => new ApiError(403, { error: 'Forbidden', message });

// ---- 404 / 405 / 409 / 410 -------------------------------------------------

export const notFound = (message = 'The requested resource does not exist') =>
  new ApiError(404, { error: 'Not found', message });

/** A pool id that is not the account's (another account's pool reads the same: 404, never 403). */
export const poolNotFound = () => notFound('No pool with this id in this account');

/** A webhook id that is not the account's (another account's reads the same: 404, never 403). */
export const webhookNotFound = () => notFound('No webhook with this id in this account');

export const methodNotAllowed = (path: string, allow: readonly string[]) =>
  new ApiError(
    405,
    { message: `The ${path} route accepts ${allow.filter((m) => m !== 'HEAD').join(', ')} only` },
    { Allow: allow.join(', ') },
  );

export const jobAlreadyRunning = (jobId: string) =>
  new ApiError(409, {
    error: 'Job already running',
    message: `A job with id ${jobId} is still running; wait for it to finish or use another jobId`,
    jobId,
  });

/** A synchronous check whose job its client cancelled meanwhile (DELETE /checks/{jobId}): no result. */
export const jobCancelled = () =>
  new ApiError(409, {
    error: 'Job cancelled',
    message: 'The job was cancelled (DELETE /checks/{jobId}); the checks not performed were refunded',
  });

/** DELETE /checks/{jobId} of a job that has ended: nothing to cancel. */
export const jobNotRunning = (jobId: string, status: string) =>
  new ApiError(409, {
    error: 'Job not running',
    message: `Job ${jobId} has already ended (${status}); there is nothing to cancel`,
    jobId,
    status,
  });

/** GET / DELETE /checks/{jobId}: no job of that id for this account (or past retention). */
export const jobNotFound = (jobId: string) => notFound(`No job ${jobId} for this API key (jobs are kept as long as their result files)`);

export const linkExpired = () =>
  new ApiError(410, { error: 'Link expired', message: 'This result link has expired; fetch a fresh one from GET /me' });

// ---- 413 / 415 / 429 -------------------------------------------------------

export const tooManyProxies = (max: number) =>
  new ApiError(413, { error: 'Too many proxies', message: `At most ${max} unique proxies per request (server setting MAX_PROXIES)`, max });

/** Pools (DECISIONS "Pools", limits): more proxies than one pool, or all of an account's pools, may hold. */
export const tooManyPoolProxies = (max: number, scope: 'pool' | 'account') =>
  new ApiError(413, {
    error: 'Too many proxies',
    message:
      scope === 'pool'
        ? `At most ${max} proxies per pool (server setting MAX_PROXIES_PER_POOL)`
        : `At most ${max} proxies in all of an account's pools together (twice the server setting MAX_PROXIES_PER_POOL)`,
    max,
  });

export const payloadTooLarge = (max: number) =>
  new ApiError(413, { error: 'Payload too large', message: `The request body may be at most ${max} bytes (server setting MAX_BODY_BYTES)`, max });

export const tooManyCustomUrls = (max: number) =>
  new ApiError(413, { error: 'Too many custom URLs', message: `At most ${max} custom URLs per request (server setting MAX_CUSTOM_URLS)`, max });

export const unsupportedMediaType = (expected: string) =>
  new ApiError(415, { error: 'Unsupported media type', message: `Content-Type must be ${expected}` });

/**
 * 429: over a per-account limit (docs/API.md "Limits"); Retry-After in whole
 * seconds (at least 1), and any more headers (`headers`: the RateLimit-*
 * fields of a keyed route).
 */
export const tooManyRequests = (
  retryAfterSeconds: number,
  message = `Slow down; retry in ${Math.max(1, Math.ceil(retryAfterSeconds))} s`,
  headers: Record<string, string> = {},
) =>
  new ApiError(
    429,
    { error: 'Too many requests', message },
    { ...headers, 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  );

/**
 * 429 without Retry-After: the account owns as many pools as it may; waiting
 * does not help, deleting one does.
 */
export const tooManyPools = (max: number) =>
  new ApiError(429, { error: 'Too many requests', message: `At most ${max} pools per account (server setting MAX_POOLS_PER_ACCOUNT); delete one to create another`, limit: max });

/** 429 without Retry-After: the account has as many webhooks as it may (DECISIONS "Webhooks": 10). */
export const tooManyWebhooks = (max: number) =>
  new ApiError(429, { error: 'Too many requests', message: `At most ${max} webhooks per account; delete one to add another`, limit: max });

// ---- 500 / 503 -------------------------------------------------------------

export const internalError = (cause?: unknown) =>
  new ApiError(500, { error: 'Internal server error', message: 'An unexpected error occurred' }, {}, { cause });

export const serviceUnavailable = (message: string) =>
  new ApiError(503, { error: 'Service unavailable', message });

/** The API node that runs a job does not answer (DELETE /checks/{jobId} in a cluster); nothing was changed. */
export const jobNodeUnreachable = () =>
  new ApiError(
    503,
    { error: 'Service unavailable', message: 'The server running this job does not answer; retry in a moment' },
    { 'Retry-After': '5' },
  );

/** A cluster region with no live agent (nothing was reserved). */
export const regionUnavailable = (region: string) =>
  new ApiError(503, { error: 'Region unavailable', message: `No probe agent is serving region ${region} right now; retry later or pick another region`, region });

/** Every slot for large request bodies is taken (src/http/body.ts). */
export const tooManyLargeBodies = (retryAfterSeconds: number) =>
  new ApiError(
    503,
    { error: 'Service unavailable', message: `Too many large request bodies are being read (2 at once); retry in ${retryAfterSeconds} s` },
    { 'Retry-After': String(retryAfterSeconds) },
  );
