/**
 * The error bodies of the contract (src/errors.ts builds them; src/http/api-errors.ts
 * names each): `{error, message}` and, for some, fields that say more.
 */
import { Type as t, type Static } from '@sinclair/typebox';
import { PROXY_TYPES } from '../proxy/types';
import { TIMEOUT_MAX_MS, TIMEOUT_MIN_MS } from './bounds';
import { closed, errorBody, int0, oneOf } from './common';

export const ErrorBody = t.Object({ error: t.String(), message: t.String() }, { additionalProperties: true });
export type ErrorBodyType = Static<typeof ErrorBody>;

/** The contract's 400 errors (the fixed `error` texts). */
export const BAD_REQUEST_ERRORS = ['Invalid request', 'No valid proxies found', 'Invalid jobId'] as const;

export const BadRequest = t.Union([
  errorBody(t.Literal('Invalid region'), { available_regions: t.Array(t.String()) }),
  errorBody(t.Literal('Invalid proxy type'), { available_types: t.Array(oneOf(PROXY_TYPES)) }),
  errorBody(t.Literal('Invalid timeout'), { min: t.Literal(TIMEOUT_MIN_MS), max: t.Literal(TIMEOUT_MAX_MS) }),
  errorBody(oneOf(BAD_REQUEST_ERRORS)),
]);
export type BadRequestBody = Static<typeof BadRequest>;

export const InvalidJobId = errorBody(t.Literal('Invalid jobId'));
export const Unauthorized = errorBody(oneOf(['API key is required', 'Invalid API key'] as const));
export const InsufficientChecks = errorBody(t.Literal('Insufficient Checks'), { required: int0(), available: int0(), shortfall: t.Integer({ minimum: 1 }) });
export type InsufficientChecksBody = Static<typeof InsufficientChecks>;
export const Forbidden = errorBody(t.Literal('Forbidden'));
export const NotFound = errorBody(t.Literal('Not found'));
export const MethodNotAllowed = t.Object({ message: t.String() }, closed);
export const JobAlreadyRunning = errorBody(t.Literal('Job already running'), { jobId: t.String() });
export const LinkExpired = errorBody(t.Literal('Link expired'));
export const JobCancelled = errorBody(t.Literal('Job cancelled'));
export const JobNotRunning = errorBody(t.Literal('Job not running'), { jobId: t.String(), status: oneOf(['completed', 'failed', 'cancelled'] as const) });
export const TooLarge = errorBody(oneOf(['Too many proxies', 'Payload too large', 'Too many custom URLs'] as const), { max: int0() });
export const UnsupportedMediaType = errorBody(t.Literal('Unsupported media type'));
export const InternalError = errorBody(t.Literal('Internal server error'), {
  request_id: t.String({ maxLength: 128, description: 'The X-Request-Id of the request: quote it to the operator (every log line of the request carries it)' }),
});
export const ServiceUnavailable = errorBody(t.Literal('Service unavailable'));
export const RegionUnavailable = errorBody(t.Literal('Region unavailable'), { region: t.String() });
export const TooManyRequests = errorBody(t.Literal('Too many requests'));
