/**
 * Validation of the query string of GET /pools/{id}/proxies (DECISIONS
 * "Pools"; its schema: src/contract/pools.ts PoolProxiesQuery) into the typed query of src/pools/query.ts. Pure: throws ApiError
 * only. Every parameter is optional and may be given once (twice: 400, as on
 * /check-raw); unknown parameters are ignored.
 *
 *   status          working | failed | unchecked | all         (400 Invalid request)
 *   country         two letters (ISO alpha-2), any case          (400 Invalid request)
 *   anonymity       elite | anonymous | transparent              (400 Invalid request)
 *   type            http | socks4 | socks5                       (400 Invalid proxy type)
 *   https           true | false                                 (400 Invalid request)
 *   max_latency_ms  ASCII digits, 0..2 147 483 647               (400 Invalid request)
 *   min_uptime      a decimal from 0 to 1 ("0.95", "1", ".5")    (400 Invalid request)
 *   sort            latency | uptime | checked                   (400 Invalid request)
 *   limit           ASCII digits, 1..10 000                      (400 Invalid request)
 *   cursor          a next_cursor of this listing with the same sort (400 Invalid request)
 *   format          json | txt | csv                             (400 Invalid request)
 *   target          a target name: 1..32 of [a-z0-9-]             (400 Invalid request;
 *                   a name the pool does not have: the route's 400)
 *   scheme          true | false: txt lines as <protocol>://...  (400 Invalid request)
 *
 * `txt` and `csv` without `limit` list every match (`all`, streamed page
 * after page of MAX_PAGE_LIMIT); `json` keeps its pages (DECISIONS "Mixed
 * lists").
 */
import { invalidRequest, invalidType } from './api-errors';
import { booleanQueryValue, singleQueryValue } from './check-request';
import { PROXY_TYPES, type ProxyType } from '../proxy/types';
import { decodeCursor } from '../pools/cursor';
import { MAX_PAGE_LIMIT } from '../pools/limits';
import { isTargetName, TARGET_NAME_MAX } from '../pools/targets';
import { MAX_LATENCY_QUERY_MS, MIN_UPTIME_PATTERN } from '../contract/pools';
import { ANONYMITIES, DEFAULT_PROXIES_QUERY, PROXY_FORMATS, PROXY_SORTS, QUERY_STATUSES, type PoolProxiesQuery } from '../pools/query';

const DIGITS = /^[0-9]{1,10}$/;
const FRACTION = new RegExp(MIN_UPTIME_PATTERN);

function oneOf<T extends string>(query: URLSearchParams, name: string, allowed: readonly T[]): T | undefined {
  const v = singleQueryValue(query, name);
  if (v === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(v)) throw invalidRequest(`${name}: expected one of ${allowed.join(', ')}`);
  return v as T;
}

export function validateProxiesQuery(query: URLSearchParams): PoolProxiesQuery {
  const q: PoolProxiesQuery = { ...DEFAULT_PROXIES_QUERY };
  q.status = oneOf(query, 'status', QUERY_STATUSES) ?? q.status;

  const country = singleQueryValue(query, 'country');
  if (country !== undefined) {
    if (!/^[A-Za-z]{2}$/.test(country)) throw invalidRequest('country: expected an ISO 3166 alpha-2 code (two letters)');
    q.country = country.toUpperCase();
  }
  q.anonymity = oneOf(query, 'anonymity', ANONYMITIES) ?? null;

  const type = singleQueryValue(query, 'type');
  if (type !== undefined) {
    if (!(PROXY_TYPES as readonly string[]).includes(type)) throw invalidType(PROXY_TYPES);
    q.type = type as ProxyType;
  }

  const https = oneOf(query, 'https', ['true', 'false'] as const);
  if (https !== undefined) q.https = https === 'true';

  const maxLatency = singleQueryValue(query, 'max_latency_ms');
  if (maxLatency !== undefined) {
    if (!DIGITS.test(maxLatency) || Number(maxLatency) > MAX_LATENCY_QUERY_MS) throw invalidRequest('max_latency_ms: expected a whole number of milliseconds');
    q.maxLatencyMs = Number(maxLatency);
  }

  const minUptime = singleQueryValue(query, 'min_uptime');
  if (minUptime !== undefined) {
    const n = Number(minUptime);
    if (!FRACTION.test(minUptime)) {
      throw invalidRequest('min_uptime: expected a number from 0 to 1');
    }
    q.minUptime = n;
  }

  q.sort = oneOf(query, 'sort', PROXY_SORTS) ?? q.sort;

  const limit = singleQueryValue(query, 'limit');
  if (limit !== undefined) {
    if (!DIGITS.test(limit) || Number(limit) < 1 || Number(limit) > MAX_PAGE_LIMIT) throw invalidRequest(`limit: expected an integer from 1 to ${MAX_PAGE_LIMIT}`);
    q.limit = Number(limit);
  }

  const cursor = singleQueryValue(query, 'cursor');
  if (cursor !== undefined) {
    const c = decodeCursor(cursor);
    if (c === null) throw invalidRequest('cursor: not a next_cursor of this listing');
    if (c.sort !== q.sort) throw invalidRequest(`cursor: belongs to sort=${c.sort}, not sort=${q.sort}`);
    q.cursor = c;
  }

  q.format = oneOf(query, 'format', PROXY_FORMATS) ?? q.format;
  const scheme = booleanQueryValue(query, 'scheme');
  if (scheme !== undefined) q.scheme = scheme;
  if (q.format !== 'json' && limit === undefined) {
    q.all = true;
    q.limit = MAX_PAGE_LIMIT;
  }

  const target = singleQueryValue(query, 'target');
  if (target !== undefined) {
    if (!isTargetName(target)) throw invalidRequest(`target: expected a target name (1 to ${TARGET_NAME_MAX} of a-z, 0-9 and -)`);
    q.target = target;
  }
  return q;
}
