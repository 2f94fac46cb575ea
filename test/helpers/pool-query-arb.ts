/**
 * The proxies listing's filters, sort and page size as fast-check
 * arbitraries (few values each, so random pools meet them often): the
 * property tests of the SQL pages (test/integration/pools-sql.test.ts) and
 * of the one-pass listing (test/unit/pools-proxy-listing.test.ts) spread
 * them into their own fc.record beside what else they vary.
 */
import fc from 'fast-check';

export const queryFilterArbs = {
  status: fc.constantFrom('working' as const, 'failed' as const, 'unchecked' as const, 'all' as const),
  country: fc.constantFrom(null, 'DE'),
  anonymity: fc.constantFrom(null, 'elite' as const),
  type: fc.constantFrom(null, 'http' as const, 'socks5' as const),
  https: fc.constantFrom(null, true),
  maxLatencyMs: fc.constantFrom(null, 15),
  minUptime: fc.constantFrom(null, 0.5),
  sort: fc.constantFrom('latency' as const, 'uptime' as const, 'checked' as const),
  limit: fc.integer({ min: 1, max: 7 }),
};
