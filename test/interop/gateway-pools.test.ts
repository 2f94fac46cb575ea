/**
 * Interop: the gateway over a REAL pool (src/gateway/working-sets.ts over the
 * pool store on PGlite), in front of real daemons (squid and tinyproxy as
 * HTTP upstreams, dante as the SOCKS5 one: daemons.ts, loopback), driven by
 * curl as a user would. The pool is an `auto` pool whose proxies were
 * checked as working (rows folded by src/pools/fold.ts, written by the
 * store's applyResults), so the working set, its types and countries come
 * from the database exactly as the rounds leave them.
 *
 * - requests rotate over all three; `-session-abc` sticks to one;
 *   `-type-socks5` goes through dante only; another account's key: 407.
 * - tinyproxy killed: the next connections go elsewhere with no client-visible
 *   error; the pool is asked to re-check it (PoolRecheckPort, coalesced),
 *   and once the re-check writes it down and publishes proxy.down (what the
 *   rounds do), the working set no longer holds it.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createAccount } from '../../src/accounts/accounts';
import type { RunningGateway } from '../../src/gateway/gateway';
import { PoolWorkingSets } from '../../src/gateway/working-sets';
import { memoryLogger } from '../../src/log';
import { proxyEvent } from '../../src/pools/events';
import { PoolEventsHub } from '../../src/pools/events-hub';
import { DEFAULT_POOL_LIMITS } from '../../src/pools/limits';
import type { PoolRecheckPort } from '../../src/pools/ports';
import { createPool } from '../../src/pools/store';
import { parseProxyLine, type ParsedProxy } from '../../src/proxy/parse';
import type { ProxyAddress } from '../../src/proxy/types';
import { freshPglite, type TestDatabase } from '../helpers/db';
import { curl, GATEWAY_KEY, OTHER_KEY, startTarget, startTestGateway, type CurlResult, type Target } from '../helpers/gateway';
import { failed, seedVerdicts, working } from '../helpers/pool-seed';
import { missingPackages, missingReason, reportUnavailable, stopAllDaemons, type RunningDaemon } from './daemons';
import { DANTE_SOURCE, GATEWAY_ZOO, startDante, startSquid, startTinyproxy, throughWhom } from './zoo';

const missing = missingPackages(GATEWAY_ZOO);

const POOL = 'realpool0001';
if (missing.length > 0) {
  reportUnavailable('gateway over a real pool', missingReason(missing));
} else {
  describe('the gateway over a real pool of squid, tinyproxy and dante (store, events, re-checks)', () => {
    let squid: RunningDaemon;
    let tinyproxy: RunningDaemon;
    let dante: RunningDaemon;
    let target: Target;
    let tdb: TestDatabase;
    let account: string;
    let hub: PoolEventsHub;
    let sets: PoolWorkingSets;
    let gw: RunningGateway;
    const rechecks: { poolId: string; proxies: ProxyAddress[] }[] = [];
    const proxyUrl = (user: string, key = GATEWAY_KEY) => `http://${encodeURIComponent(user)}:${encodeURIComponent(key)}@127.0.0.1:${gw.port}`;

    beforeAll(async () => {
      target = startTarget();
      [squid, tinyproxy, dante] = await Promise.all([
        startSquid('(gateway pools)'),
        startTinyproxy('(gateway pools)'),
        startDante('(gateway pools)', { method: 'none', external: DANTE_SOURCE }),
      ]);
      tdb = await freshPglite();
      account = (await createAccount(tdb.db, { email: 'gw@pools.test' })).id;
      const other = (await createAccount(tdb.db, { email: 'other@pools.test' })).id;
      const now = Date.now();
      const lines = [squid, tinyproxy, dante].map((d) => parseProxyLine(`127.0.0.1:${d.port}`) as ParsedProxy);
      const settings = { name: 'zoo', type: 'auto' as const, region: 'us1', intervalS: 600, timeoutMs: 5000, https: false, customUrls: [], sources: [] };
      await createPool(tdb.db, account, POOL, { settings, proxies: lines, totalInvalid: 0, totalDuplicates: 0 }, DEFAULT_POOL_LIMITS, now);
      // as the rounds fold a passing auto check: squid and tinyproxy passed as http, dante as socks5
      await seedVerdicts(tdb.db, POOL, {
        poolType: 'auto',
        intervalS: 600,
        nowMs: now,
        plan: (row) => [{ probe: working(20, { protocols: row.port === dante.port ? ['socks5'] : ['http'] }), geo: { country: 'DE' } as never }],
      });
      hub = new PoolEventsHub();
      // what the rounds do on a re-check of a dead proxy: write it down, publish proxy.down
      const recheck: PoolRecheckPort = {
        recheck(poolId, proxies) {
          rechecks.push({ poolId, proxies: [...proxies] });
          void (async () => {
            const dead = new Set(proxies.map((p) => p.port));
            await seedVerdicts(tdb.db, poolId, { poolType: 'auto', intervalS: 600, nowMs: Date.now(), plan: (row) => (dead.has(row.port) ? [{ probe: failed('connect_refused') }] : null) });
            for (const p of proxies) hub.publish(account, proxyEvent(poolId, 'proxy.down', Date.now(), p, { total: 3, working: 2, failed: 1, unchecked: 0 }, { error: { code: 'connect_refused', message: 'refused' } }));
          })();
        },
      };
      const keys = new Map([
        [GATEWAY_KEY, account],
        [OTHER_KEY, other],
      ]);
      sets = new PoolWorkingSets({ db: tdb.db, events: hub, recheck, authenticate: async (k) => (keys.has(k) ? { id: keys.get(k) as string } : null), log: memoryLogger('warn') });
      gw = startTestGateway(sets);
    }, 60_000);

    afterAll(async () => {
      await gw?.stop();
      sets?.stop();
      await stopAllDaemons();
      await target?.stop();
      await tdb?.cleanup();
    }, 20_000);

    test('absolute-form: requests rotate over all three working proxies of the pool', async () => {
      const before = target.seen.length;
      const answers: CurlResult[] = [];
      for (let i = 0; i < 6; i++) answers.push(await curl(['-x', proxyUrl(`pool-${POOL}`), `${target.url}/rot/${i}`]));
      for (const a of answers) expect({ exit: a.exit, status: a.status, stderr: a.stderr }).toEqual({ exit: 0, status: 200, stderr: '' });
      const seen = target.seen.slice(before).map(throughWhom);
      expect(seen.slice(0, 3).sort()).toEqual(['dante', 'squid', 'tinyproxy']);
      expect(seen.slice(3)).toEqual(seen.slice(0, 3));
    });

    test('-session-abc sticks to one; -type-socks5 only dante; another account\'s key 407', async () => {
      let before = target.seen.length;
      for (let i = 0; i < 4; i++) expect((await curl(['-x', proxyUrl(`pool-${POOL}-session-abc`), `${target.url}/s/${i}`])).status).toBe(200);
      expect(new Set(target.seen.slice(before).map(throughWhom)).size).toBe(1);
      before = target.seen.length;
      for (let i = 0; i < 3; i++) expect((await curl(['-x', proxyUrl(`pool-${POOL}-type-socks5`), `${target.url}/t/${i}`])).status).toBe(200);
      expect(target.seen.slice(before).map(throughWhom)).toEqual(['dante', 'dante', 'dante']);
      expect((await curl(['-x', proxyUrl(`pool-${POOL}`, OTHER_KEY), `${target.url}/o`])).status).toBe(407);
    });

    test('tinyproxy killed: the next connections go elsewhere, no client-visible error; the pool re-checks it and its working set drops it', async () => {
      const killedPort = tinyproxy.port;
      await tinyproxy.stop();
      const before = target.seen.length;
      const answers: CurlResult[] = [];
      for (let i = 0; i < 6; i++) answers.push(await curl(['-x', proxyUrl(`pool-${POOL}`), `${target.url}/k/${i}`]));
      for (const a of answers) expect({ exit: a.exit, status: a.status }).toEqual({ exit: 0, status: 200 });
      expect(target.seen.slice(before).map(throughWhom).every((w) => w === 'squid' || w === 'dante')).toBe(true);
      for (let i = 0; i < 200 && rechecks.length === 0; i++) await Bun.sleep(10);
      expect(rechecks).toEqual([{ poolId: POOL, proxies: [{ host: '127.0.0.1', port: killedPort }] }]);
      let ports: number[] = [];
      for (let i = 0; i < 200; i++) {
        ports = ((await sets.workingSet(account, POOL))?.upstreams ?? []).map((u) => u.port);
        if (!ports.includes(killedPort)) break;
        await Bun.sleep(10);
      }
      expect(ports.sort()).toEqual([squid.port, dante.port].sort());
    });
  });
}
