/**
 * An AppDeps for tests that build the HTTP app in-process: every port throws
 * "not used" unless the test passes its own (`over`).
 */
import { parseConfig } from '../../src/config';
import type { AppDeps } from '../../src/http/context';
import { memoryLogger } from '../../src/log';
import { DEFAULT_POOL_LIMITS } from '../../src/pools/limits';
import { regionCapacity } from '../../src/regions';
import { VERSION } from '../../src/version';

export function fakeAppDeps(over: Partial<AppDeps> = {}, what = 'this test'): AppDeps {
  const unused = () => {
    throw new Error(`not used by ${what}`);
  };
  const config = parseConfig({ PORT: '0', DATA_DIR: '/tmp/pc-app-deps-unused' }, process.cwd());
  return {
    limits: config.limits,
    http: config.http,
    regions: { region: (code) => ({ agents: 1, capacity: regionCapacity(code, config.probes.slotsPerEndpoint) }) },
    log: memoryLogger('debug'),
    version: VERSION,
    startedAt: Date.now(),
    now: () => new Date(),
    database: { ping: async () => true },
    accounts: { findByApiKey: unused, overview: unused },
    checks: { run: unused, submit: unused, assertAccepting: () => {} },
    jobs: { status: unused, cancel: unused },
    publicBase: () => 'http://127.0.0.1:3000',
    results: { secret: 'test-secret-0123456789abcdef', store: { open: unused } },
    progress: {} as AppDeps['progress'],
    pools: { limits: DEFAULT_POOL_LIMITS, create: unused, list: unused, get: unused, update: unused, delete: unused, proxies: unused },
    poolEvents: { subscribe: unused },
    judgeKey: 'test-judge-key-0123456789',
    ...over,
  };
}
