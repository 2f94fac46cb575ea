/**
 * A pool object as GET /pools/{id} answers it (src/pools/shape.ts
 * PoolObject), for the tests of what renders one (the CLI's tables, the
 * dashboard's rows and cards); `over` changes any field.
 */
import type { PoolObject } from '../../src/pools/shape';

export function poolObjectFixture(nowMs: number, over: Partial<PoolObject> = {}): PoolObject {
  return {
    id: 'k3v9q2m7x1c8b5n4z6w0',
    name: 'scraper list',
    type: 'http',
    region: 'us1',
    interval_s: 600,
    timeout: 5000,
    https: true,
    state: 'active',
    paused_reason: null,
    created_at: new Date(nowMs - 2 * 86_400_000).toISOString(),
    counts: { total: 1200, working: 800, failed: 300, unchecked: 100 },
    last_round_at: new Date(nowMs - 300_000).toISOString(),
    next_due_at: new Date(nowMs + 250_000).toISOString(),
    checks_last_24h: 150_000,
    checks_per_day: 180_000,
    customUrls: [{ name: 'example-com', url: 'https://example.com/', requiredStatusCodes: [200, 204], requiredText: 'Example', caseSensitive: false }],
    sources: [{ url: 'https://lists.example/p.txt', every_s: 3600, next_fetch_at: null, last_fetch: null }],
    ...over,
  };
}
