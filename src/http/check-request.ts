/**
 * Validation of POST /check (JSON body) and POST /check-raw (text body + query)
 * into one CheckRequest. Pure: no I/O, throws ApiError (src/http/api-errors.ts) only.
 * The caller has already handled Content-Type (415), body size (413) and
 * malformed JSON (400).
 *
 * Order of checks (the first failure wins; cheap checks before work that
 * grows with the body):
 *   1. shape (400 Invalid request, message "<field path>: <what is wrong>"):
 *      body not an object; proxies missing / not an array; region, type or jobId
 *      not a string; customUrls not an array. /check-raw: a query parameter given
 *      more than once.
 *   2. region (400 Invalid region)   3. type (400 Invalid proxy type; `auto`
 *      is accepted, an extension, and the body lists the contract's three)
 *   4. timeout (400 Invalid timeout)
 *   4b. samples (an extension; 400 Invalid request, "samples: expected an
 *      integer from 1 to 10")   4c. https (an extension; 400 Invalid
 *      request, "https: expected a boolean" / "https: expected true or
 *      false")   5. jobId (400 Invalid jobId)
 *   6. customUrls count (413 Too many custom URLs): the array's length, before
 *      any rule is looked at (400 000 rules are one comparison, not 400 000 URL
 *      parses)
 *   6b. each custom URL rule (400 Invalid request, `customUrls[i]...`)
 *   7. parse proxies; none valid -> 400 No valid proxies found
 *   8. more unique proxies than maxProxies -> 413 Too many proxies (the parse
 *      stops at maxProxies + 1 unique ones). The proxies array's length alone
 *      decides nothing: invalid entries and duplicates are free and do not count.
 *
 * Choices:
 * - region and type are compared exactly (case-sensitive): the seed lists
 *   lower-case codes and those are what is accepted.
 * - In JSON, an absent field and `null` both mean "use the default". Unknown
 *   fields are ignored. Any timeout that is not an integer number 1000..20000
 *   (a fraction, a string, a boolean...) is 400 Invalid timeout. In the raw
 *   query, timeout must be all ASCII digits. An empty query value is a given
 *   (invalid) value, not an absent one. `samples` follows the same rules
 *   (an integer 1..10; all ASCII digits in the query), its 400 being the
 *   generic `Invalid request` naming the field: the contract has no body
 *   for it, and an extension adds no new error body. `https` (the https
 *   check, an extension) is a JSON boolean, or `true` / `false` in the
 *   query; absent (or null) takes the server's default
 *   (CheckRequestOptions.defaultHttps: JUDGE_TLS, on).
 * - Non-string elements of `proxies` count as invalid proxies, not as a shape error.
 * - A line's scheme names its own protocol, checked whatever `type` says
 *   (DECISIONS "Mixed lists"; ParsedProxy.protocol); `type` is for the
 *   lines without one. A default timeout is the `type`'s.
 * - Custom URL rule: url is required, an absolute http:// or https:// URL with a
 *   host (no spaces or control chars, nothing WHATWG would silently repair like
 *   "http:///x"), at most 2048 chars, kept as given; requiredStatusCodes defaults to
 *   [200], else a non-empty array (at most 100) of integers 100..599;
 *   requiredText optional, at most 1024 chars; caseSensitive defaults to false.
 *   /check-raw takes no custom URLs.
 */
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { CheckBodyAsRead, type CheckBodyType } from '../contract/checks';
import { JOB_ID } from '../job-id';
import { invalidJobId, invalidRegion, invalidRequest, invalidTimeout, invalidType, noValidProxies, tooManyCustomUrls, tooManyProxies } from './api-errors';
import type { CustomUrlRule } from '../probe/types';
import type { CheckRequest } from '../jobs/request';

export type { CheckRequest } from '../jobs/request';
import type { InvalidLines } from '../proxy/invalid-lines';
import { parseProxyList, type ParsedProxy } from '../proxy/parse';
import { CHECK_TYPES, PROXY_TYPES, type CheckType } from '../proxy/types';

export interface Limits {
  maxProxies: number;
  maxCustomUrls: number;
  acceptedRegions: readonly string[];
}

export interface CheckRequestOptions extends Limits {
  /** Default 'us1'. */
  defaultRegion?: string;
  /** Whether a request that does not say `https` gets the https check (JUDGE_TLS); default true. */
  defaultHttps?: boolean;
}


/** The bounds are the contract's (src/contract/bounds.ts): the schemas state them, this module enforces them. */
export {
  CUSTOM_URL_MAX_LENGTH, DEFAULT_REGION, DEFAULT_SAMPLES, MAX_STATUS_CODES, REQUIRED_TEXT_MAX_LENGTH, SAMPLES_MAX, SAMPLES_MIN, TIMEOUT_MAX_MS, TIMEOUT_MIN_MS,
} from '../contract/bounds';
import {
  CUSTOM_URL_MAX_LENGTH, DEFAULT_REGION, DEFAULT_SAMPLES, MAX_STATUS_CODES, REQUIRED_TEXT_MAX_LENGTH, SAMPLES_MAX, SAMPLES_MIN, TIMEOUT_MAX_MS, TIMEOUT_MIN_MS,
} from '../contract/bounds';
export const DEFAULT_TYPE: CheckType = 'http';

/**
 * The contract's POST /check body as the route reads it, compiled once
 * (contract/checks.ts CheckBodyAsRead: `proxies`' entries are the parser's).
 */
const CHECK_BODY = TypeCompiler.Compile(CheckBodyAsRead);

/**
 * DECISIONS defaults: /check 2000 ms; /check-raw 5000 ms for http, 3000 ms for
 * SOCKS, and 5000 ms for auto (its http attempt needs the http budget, and the
 * SOCKS attempts run in what the http one leaves: src/probe/auto.ts).
 */
export function defaultTimeoutMs(route: CheckRequest['route'], type: CheckType): number {
  if (route === 'check') return 2000;
  return type === 'socks4' || type === 'socks5' ? 3000 : 5000;
}

/** Scheme and "//" then a host char: no "///" (WHATWG would skip the extra slashes). */
const HTTP_URL_PREFIX = /^https?:\/\/[^/\\]/i;
/** Spaces and controls: WHATWG URL silently strips some of them; refuse instead. */
const URL_FORBIDDEN = /[\u0000-\u0020\u007f]/;

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export const isAbsent = (v: unknown) => v === undefined || v === null;

export function optionalString(v: unknown, path: string): string | undefined {
  if (isAbsent(v)) return undefined;
  if (typeof v !== 'string') throw invalidRequest(`${path}: expected a string`);
  return v;
}

/** An absolute http:// or https:// URL with a host, at most CUSTOM_URL_MAX_LENGTH chars, kept as given (`path` names it in the 400). */
export function httpUrl(url: unknown, path: string): string {
  if (isAbsent(url)) throw invalidRequest(`${path}: required`);
  if (typeof url !== 'string') throw invalidRequest(`${path}: expected a string`);
  if (url.length > CUSTOM_URL_MAX_LENGTH) throw invalidRequest(`${path}: longer than ${CUSTOM_URL_MAX_LENGTH} characters`);
  if (!HTTP_URL_PREFIX.test(url) || URL_FORBIDDEN.test(url) || !URL.canParse(url) || new URL(url).hostname === '') {
    throw invalidRequest(`${path}: expected an http or https URL`);
  }
  return url;
}

export function customUrlRule(v: unknown, path: string): CustomUrlRule {
  if (!isObject(v)) throw invalidRequest(`${path}: expected an object`);
  const url = httpUrl(v.url, `${path}.url`);

  let requiredStatusCodes = [200];
  const codes = v.requiredStatusCodes;
  if (!isAbsent(codes)) {
    if (!Array.isArray(codes) || codes.length === 0 || codes.length > MAX_STATUS_CODES) {
      throw invalidRequest(`${path}.requiredStatusCodes: expected a non-empty array of at most ${MAX_STATUS_CODES} integers`);
    }
    requiredStatusCodes = codes.map((c: unknown, i) => {
      if (typeof c !== 'number' || !Number.isInteger(c) || c < 100 || c > 599) {
        throw invalidRequest(`${path}.requiredStatusCodes[${i}]: expected an integer from 100 to 599`);
      }
      return c;
    });
  }

  const requiredText = optionalString(v.requiredText, `${path}.requiredText`);
  if (requiredText !== undefined && requiredText.length > REQUIRED_TEXT_MAX_LENGTH) {
    throw invalidRequest(`${path}.requiredText: longer than ${REQUIRED_TEXT_MAX_LENGTH} characters`);
  }

  const cs = v.caseSensitive;
  if (!isAbsent(cs) && typeof cs !== 'boolean') throw invalidRequest(`${path}.caseSensitive: expected a boolean`);

  const rule: CustomUrlRule = { url, requiredStatusCodes, caseSensitive: cs === true };
  if (requiredText !== undefined) rule.requiredText = requiredText;
  return rule;
}

export function checkRegion(region: string | undefined, opts: Pick<CheckRequestOptions, 'acceptedRegions' | 'defaultRegion'>): string {
  const r = region ?? opts.defaultRegion ?? DEFAULT_REGION;
  if (!opts.acceptedRegions.includes(r)) throw invalidRegion(opts.acceptedRegions);
  return r;
}

/** `auto` is accepted (an extension) but not named in the 400 body, which stays the contract's. */
export function checkType(type: string | undefined): CheckType {
  const t = type ?? DEFAULT_TYPE;
  if (!(CHECK_TYPES as readonly string[]).includes(t)) throw invalidType(PROXY_TYPES);
  return t as CheckType;
}

export function checkTimeoutValue(ms: number): number {
  if (!Number.isInteger(ms) || ms < TIMEOUT_MIN_MS || ms > TIMEOUT_MAX_MS) throw invalidTimeout(TIMEOUT_MIN_MS, TIMEOUT_MAX_MS);
  return ms;
}

/** Step 4b: `samples`, a JSON number (the query's digits converted by the caller). */
function checkSamples(n: unknown): number {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < SAMPLES_MIN || n > SAMPLES_MAX) {
    throw invalidRequest(`samples: expected an integer from ${SAMPLES_MIN} to ${SAMPLES_MAX}`);
  }
  return n;
}

/** Step 4c: `https` in JSON, a boolean; absent or null: the server's default. */
function httpsOfJson(v: unknown, opts: CheckRequestOptions): boolean {
  if (isAbsent(v)) return opts.defaultHttps ?? true;
  if (typeof v !== 'boolean') throw invalidRequest('https: expected a boolean');
  return v;
}

/** Step 4c: `https` in the query, `true` or `false`; absent: the server's default. */
function httpsOfQuery(query: URLSearchParams, opts: CheckRequestOptions): boolean {
  return booleanQueryValue(query, 'https') ?? opts.defaultHttps ?? true;
}

function checkJobId(jobId: string | undefined): string | null {
  if (jobId === undefined) return null;
  if (!JOB_ID.test(jobId)) throw invalidJobId();
  return jobId;
}

/** Steps 7-8: parse, then "none valid" and "too many unique". */
function parseProxies(input: string | readonly unknown[], type: CheckType, opts: CheckRequestOptions) {
  const list = parseProxyList(input, { maxUnique: opts.maxProxies, type });
  if (list.proxies.length === 0) throw noValidProxies();
  if (list.limitExceeded) throw tooManyProxies(opts.maxProxies);
  return list;
}

/**
 * POST /check: `body` is the already-parsed JSON. The contract's compiled
 * schema (src/contract/checks.ts CheckBody) first: a body of the right shape
 * needs only the checks a schema cannot make (an accepted region, the
 * custom URL count and each rule's URL, the list itself). Any other body goes
 * through the ordered checks (validateCheckJsonOrdered), the one place its
 * failure becomes the contract's exact 400 (the first failure in the order
 * above); they also take what the contract lets pass that the schema does not
 * say: `null` for an absent field.
 */
export function validateCheckJson(body: unknown, opts: CheckRequestOptions): CheckRequest {
  return CHECK_BODY.Check(body) ? checkRequestOfBody(body, opts) : validateCheckJsonOrdered(body, opts);
}

/**
 * POST /check for a body the compiled schema has accepted (the route's
 * declared `body`, or validateCheckJson): only the checks a schema cannot
 * make. 2 (3-5 hold by the schema), 6, 6b, 7-8: the order of the ordered checks.
 */
export function checkRequestOfBody(body: CheckBodyType, opts: CheckRequestOptions): CheckRequest {
  const r = checkRegion(body.region, opts);
  const t = body.type ?? DEFAULT_TYPE;
  const rules = body.customUrls ?? [];
  if (rules.length > opts.maxCustomUrls) throw tooManyCustomUrls(opts.maxCustomUrls);
  const customUrls = rules.map((rule, i) => customUrlRule(rule, `customUrls[${i}]`));
  return build('check', parseProxies(body.proxies, t, opts), {
    region: r,
    type: t,
    timeoutMs: body.timeout ?? defaultTimeoutMs('check', t),
    samples: body.samples ?? DEFAULT_SAMPLES,
    https: body.https ?? opts.defaultHttps ?? true,
    jobId: body.jobId ?? null,
    customUrls,
  });
}

/** POST /check by the ordered checks alone (steps 1-8 above): every body the compiled schema refuses. */
export function validateCheckJsonOrdered(body: unknown, opts: CheckRequestOptions): CheckRequest {
  // 1. shape
  if (!isObject(body)) throw invalidRequest('body: expected a JSON object');
  const proxies = body.proxies;
  if (isAbsent(proxies)) throw invalidRequest('proxies: required, expected an array of strings');
  if (!Array.isArray(proxies)) throw invalidRequest('proxies: expected an array of strings');
  const region = optionalString(body.region, 'region');
  const type = optionalString(body.type, 'type');
  const jobId = optionalString(body.jobId, 'jobId');
  const rules: readonly unknown[] = isAbsent(body.customUrls) ? [] : (body.customUrls as unknown[]);
  if (!Array.isArray(rules)) throw invalidRequest('customUrls: expected an array of objects');

  // 2-5, 6
  const r = checkRegion(region, opts);
  const t = checkType(type);
  const timeout = body.timeout;
  let timeoutMs = defaultTimeoutMs('check', t);
  if (!isAbsent(timeout)) {
    if (typeof timeout !== 'number') throw invalidTimeout(TIMEOUT_MIN_MS, TIMEOUT_MAX_MS);
    timeoutMs = checkTimeoutValue(timeout);
  }
  const samples = isAbsent(body.samples) ? DEFAULT_SAMPLES : checkSamples(body.samples);
  const https = httpsOfJson(body.https, opts);
  const id = checkJobId(jobId);
  if (rules.length > opts.maxCustomUrls) throw tooManyCustomUrls(opts.maxCustomUrls);
  // 6b: only now each rule (at most maxCustomUrls of them)
  const customUrls = rules.map((r, i) => customUrlRule(r, `customUrls[${i}]`));

  // 7-8
  return build('check', parseProxies(proxies, t, opts), { region: r, type: t, timeoutMs, samples, https, jobId: id, customUrls });
}

type RequestOptions = Pick<CheckRequest, 'region' | 'type' | 'timeoutMs' | 'samples' | 'https' | 'jobId' | 'customUrls'>;

function build(
  route: CheckRequest['route'],
  list: { proxies: ParsedProxy[]; invalid: number; invalidLines: InvalidLines; duplicates: number },
  o: RequestOptions,
): CheckRequest {
  return {
    route,
    proxies: list.proxies,
    totalInvalid: list.invalid,
    invalidLines: list.invalidLines,
    totalDuplicates: list.duplicates,
    region: o.region,
    type: o.type,
    timeoutMs: o.timeoutMs,
    samples: o.samples,
    https: o.https,
    jobId: o.jobId,
    customUrls: o.customUrls,
  };
}

/** One query parameter: absent, or given exactly once (twice or more is a shape error naming it). */
export function singleQueryValue(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length === 0) return undefined;
  if (values.length > 1) throw invalidRequest(`${name}: expected a single value, given ${values.length} times`);
  return values[0];
}

/** A query parameter that is `true` or `false` (once): its value, undefined when absent; anything else is 400 naming it. */
export function booleanQueryValue(query: URLSearchParams, name: string): boolean | undefined {
  const v = singleQueryValue(query, name);
  if (v === undefined) return undefined;
  if (v !== 'true' && v !== 'false') throw invalidRequest(`${name}: expected true or false`);
  return v === 'true';
}

/** POST /check-raw: the body as text, the query parameters region, type, timeout, samples, https, jobId (all of them, repeats included). */
export function validateCheckRaw(text: string, query: URLSearchParams, opts: CheckRequestOptions): CheckRequest {
  const o = checkRawQuery(query, opts);
  // 7-8
  return build('check-raw', parseProxies(text, o.type, opts), o);
}

/** POST /check-raw's query alone, steps 1-5 (no custom URLs on this route): the request's options, or the first failure's 400. */
export function checkRawQuery(query: URLSearchParams, opts: CheckRequestOptions): RequestOptions {
  // 1. shape
  const region = singleQueryValue(query, 'region');
  const type = singleQueryValue(query, 'type');
  const timeout = singleQueryValue(query, 'timeout');
  const samplesText = singleQueryValue(query, 'samples');
  const jobId = singleQueryValue(query, 'jobId');

  // 2-5
  const r = checkRegion(region, opts);
  const t = checkType(type);
  let timeoutMs = defaultTimeoutMs('check-raw', t);
  if (timeout !== undefined) {
    if (!/^[0-9]+$/.test(timeout)) throw invalidTimeout(TIMEOUT_MIN_MS, TIMEOUT_MAX_MS);
    timeoutMs = checkTimeoutValue(Number(timeout));
  }
  const samples = samplesText === undefined ? DEFAULT_SAMPLES : checkSamples(/^[0-9]+$/.test(samplesText) ? Number(samplesText) : NaN);
  const https = httpsOfQuery(query, opts);
  return { region: r, type: t, timeoutMs, samples, https, jobId: checkJobId(jobId), customUrls: [] };
}
