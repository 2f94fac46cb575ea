/**
 * The request bounds of the checks, in one place: the schemas (checks.ts,
 * pools.ts) state them, the validators (src/http/check-request.ts,
 * pool-request.ts) enforce them, and docs/API.md tells them.
 */
export const TIMEOUT_MIN_MS = 1000;
export const TIMEOUT_MAX_MS = 20000;
export const DEFAULT_REGION = 'us1';
export const CUSTOM_URL_MAX_LENGTH = 2048;
export const REQUIRED_TEXT_MAX_LENGTH = 1024;
export const MAX_STATUS_CODES = 100;
/** `samples` (an extension): probes per proxy, each on a fresh connection. */
export const SAMPLES_MIN = 1;
export const SAMPLES_MAX = 10;
export const DEFAULT_SAMPLES = 1;
