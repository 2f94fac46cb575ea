/**
 * Signed result links (DECISIONS "Responses and files"):
 *   <CONTENT_URL>/result/<resultId>.<ext>?token=<hmac hex>&expires=<unix s>
 *
 * token = hex HMAC-SHA256(secret, "result-link:v1:<resultId>:<expires>"). It
 * covers the id and the expiry, NOT the extension, so one token serves the
 * .json, .csv and .txt forms of the same result. Links are valid 12 hours.
 *
 * `verifyResultLink` checks the token first, in constant time
 * (crypto.timingSafeEqual on equal-length buffers; a malformed token or
 * expiry is `bad_token` without comparing), and only then the expiry, so a
 * caller without a valid token learns nothing about expiry (403 before 410).
 *
 * Result ids are 16 random bytes as base64url (22 characters of
 * [A-Za-z0-9_-]); `isResultId` validates the form before any file lookup.
 * No I/O apart from the random bytes of `newResultId`.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../errors';
import { DOMAIN_ERROR_CODES } from '../error-codes';

/** Link validity: 12 hours, in seconds. */
export const RESULT_LINK_TTL_SECONDS = 12 * 60 * 60;

export const RESULT_EXTS = Object.freeze(['json', 'csv', 'txt'] as const);
export type ResultExt = (typeof RESULT_EXTS)[number];

export type LinkVerdict = 'ok' | 'bad_token' | 'expired';

const RESULT_ID_RE = /^[A-Za-z0-9_-]{22}$/;
const TOKEN_RE = /^[0-9a-f]{64}$/;
const EXPIRES_RE = /^[1-9][0-9]{0,11}$/;

/** A fresh random result id (22 characters, base64url). */
export function newResultId(): string {
  return randomBytes(16).toString('base64url');
}

export function isResultId(s: string): boolean {
  return RESULT_ID_RE.test(s);
}

/** Unix seconds a link issued at `nowSeconds` expires at. */
export function linkExpiry(nowSeconds: number, ttlSeconds = RESULT_LINK_TTL_SECONDS): number {
  return Math.floor(nowSeconds) + ttlSeconds;
}

function tokenFor(resultId: string, expires: number, secret: string): Buffer {
  return createHmac('sha256', secret).update(`result-link:v1:${resultId}:${expires}`).digest();
}

export interface SignInput {
  /** Base URL, no trailing slash needed (one is tolerated). */
  contentUrl: string;
  resultId: string;
  secret: string;
  /** Unix seconds. */
  expiresAt: number;
  ext: ResultExt;
}

export function signResultLink({ contentUrl, resultId, secret, expiresAt, ext }: SignInput): string {
  if (!isResultId(resultId)) throw new ServiceError(DOMAIN_ERROR_CODES.LINK_BAD_RESULT_ID, `not a result id: ${JSON.stringify(resultId)}`);
  if (!Number.isSafeInteger(expiresAt) || expiresAt <= 0) {
    throw new ServiceError(DOMAIN_ERROR_CODES.LINK_BAD_EXPIRY, `expiresAt must be positive unix seconds, got ${expiresAt}`);
  }
  if (!RESULT_EXTS.includes(ext)) throw new ServiceError(DOMAIN_ERROR_CODES.LINK_BAD_EXT, `unknown result extension ${JSON.stringify(ext)}`);
  if (secret.length === 0) throw new ServiceError(DOMAIN_ERROR_CODES.LINK_NO_SECRET, 'the result-link secret is empty');
  const token = tokenFor(resultId, expiresAt, secret).toString('hex');
  return `${contentUrl.replace(/\/+$/, '')}/result/${resultId}.${ext}?token=${token}&expires=${expiresAt}`;
}

export interface VerifyInput {
  resultId: string;
  /** As received (query string); null/undefined when absent. */
  token: string | null | undefined;
  /** As received: the decimal string of the query, or a number. */
  expires: string | number | null | undefined;
  secret: string;
  /** Unix SECONDS (not ms). */
  now: number;
}

export function verifyResultLink({ resultId, token, expires, secret, now }: VerifyInput): LinkVerdict {
  if (now > 1e11) throw new ServiceError(DOMAIN_ERROR_CODES.LINK_NOW_IN_MS, `now must be unix seconds, got ${now} (milliseconds?)`);
  const exp = typeof expires === 'number' ? String(expires) : expires;
  if (typeof token !== 'string' || typeof exp !== 'string') return 'bad_token';
  if (!TOKEN_RE.test(token) || !EXPIRES_RE.test(exp) || !isResultId(resultId) || secret.length === 0) return 'bad_token';
  const expected = tokenFor(resultId, Number(exp), secret);
  const given = Buffer.from(token, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'bad_token';
  return now >= Number(exp) ? 'expired' : 'ok';
}

/** Splits the last path segment "<id>.<ext>" of a result URL; null unless both are valid. */
export function parseResultName(name: string): { resultId: string; ext: ResultExt } | null {
  const dot = name.lastIndexOf('.');
  if (dot < 0) return null;
  const resultId = name.slice(0, dot);
  const ext = name.slice(dot + 1) as ResultExt;
  if (!isResultId(resultId) || !RESULT_EXTS.includes(ext)) return null;
  return { resultId, ext };
}
