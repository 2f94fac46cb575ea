/**
 * Interop, the whole way a user goes: the service as a process (src/main.ts,
 * GATEWAY_PORT=0), a pool made over the API of real daemons on loopback
 * (squid and tinyproxy, HTTP; dante, SOCKS5, leaving from 127.0.0.2), its
 * proxies found working by the pool's own rounds (type auto: no verdict
 * seeded), then curl through the gateway as a scraper would:
 *
 * - absolute-form (`-x http://`) and CONNECT (`-p`): requests rotate over
 *   all three, the answer names its upstream (`X-Gateway-Upstream`);
 * - the SOCKS5 front (`--socks5-hostname`) with `-type-socks5`: dante only;
 * - `-session-abc` sticks to one; no key, a wrong key: 407.
 *
 * test/interop/gateway-pools.test.ts drives the same daemons with seeded
 * verdicts and a killed upstream; this file checks that what the rounds
 * write is what the gateway serves.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { curl, startTarget, type Target } from '../helpers/gateway';
import { serviceStore, spawnService, until, type ServiceProcess, type ServiceStore } from '../helpers/process';
import { call } from '../helpers/service';
import { missingPackages, missingReason, reportUnavailable, stopAllDaemons, type RunningDaemon } from './daemons';
import { DANTE_SOURCE, GATEWAY_ZOO, startDante, startSquid, startTinyproxy, throughWhom } from './zoo';

const missing = missingPackages(GATEWAY_ZOO);

if (missing.length > 0) {
  reportUnavailable('the gateway in the service over a checked pool', missingReason(missing));
} else {
  describe('the service: a pool of squid, tinyproxy and dante checked by its rounds, then curl through the gateway', () => {
    let squid: RunningDaemon, tinyproxy: RunningDaemon, dante: RunningDaemon;
    let target: Target;
    let store: ServiceStore;
    let p: ServiceProcess;
    let gatewayPort = 0;
    let poolId = '';
    const whose = new Map<string, string>();

    beforeAll(async () => {
      target = startTarget();
      [squid, tinyproxy, dante] = await Promise.all([
        startSquid('(gateway service)'),
        startTinyproxy('(gateway service)'),
        startDante('(gateway service)', { method: 'none', external: DANTE_SOURCE }),
      ]);
      whose.set(`127.0.0.1:${squid.port}`, 'squid').set(`127.0.0.1:${tinyproxy.port}`, 'tinyproxy').set(`127.0.0.1:${dante.port}`, 'dante');
      store = await serviceStore();
      p = await spawnService(store, { env: { GATEWAY_PORT: '0' } });
      gatewayPort = Number(p.logs.find((l) => l.msg === 'gateway listening')?.port);
      const made = await call(`${p.url}/pools`, {
        method: 'POST',
        headers: { 'x-api-key': p.key },
        json: { name: 'zoo', type: 'auto', proxies: [...whose.keys()] },
      });
      expect(made.status, made.text).toBe(201);
      poolId = String(made.body.id);
      await until('the rounds to find all three working', async () => (await call(`${p.url}/pools/${poolId}`, { headers: { 'x-api-key': p.key } })).body.counts?.working === 3, 30_000);
    }, 60_000);

    afterAll(async () => {
      p?.kill('SIGTERM');
      await p?.exited;
      await store?.cleanup();
      await stopAllDaemons();
      await target?.stop();
    }, 30_000);

    const proxyUrl = (user: string, key = p.key) => `http://${encodeURIComponent(user)}:${encodeURIComponent(key)}@127.0.0.1:${gatewayPort}`;

    test('absolute-form and CONNECT: requests rotate over all three; the answer names its upstream', async () => {
      for (const tunnel of [false, true]) {
        const before = target.seen.length;
        const upstreams: string[] = [];
        for (let i = 0; i < 6; i++) {
          const r = await curl([...(tunnel ? ['-p'] : []), '-x', proxyUrl(`pool-${poolId}`), `${target.url}/rot/${i}`]);
          expect({ exit: r.exit, status: r.status, stderr: r.stderr }).toEqual({ exit: 0, status: 200, stderr: '' });
          // a tunnel's upstream is named on the CONNECT answer (the first head)
          const head = tunnel ? (r.blocks[0] ?? '') : (r.blocks.at(-1) ?? '');
          upstreams.push(whose.get(/x-gateway-upstream:\s*(\S+)/i.exec(head)?.[1] ?? '') ?? 'none');
        }
        expect(target.seen.length - before).toBe(6);
        // through a tunnel squid and tinyproxy add no Via: the gateway's header says who carried it
        const who = tunnel ? upstreams : target.seen.slice(before).map(throughWhom);
        expect(who.slice(0, 3).sort(), tunnel ? 'CONNECT' : 'absolute-form').toEqual(['dante', 'squid', 'tinyproxy']);
        expect(who.slice(3)).toEqual(who.slice(0, 3));
        expect(upstreams).toEqual(who);
      }
    });

    test('the SOCKS5 front with -type-socks5: dante only; -session-abc sticks to one', async () => {
      let before = target.seen.length;
      for (let i = 0; i < 3; i++) {
        const r = await curl(['--socks5-hostname', `127.0.0.1:${gatewayPort}`, '--proxy-user', `pool-${poolId}-type-socks5:${p.key}`, `${target.url}/socks/${i}`]);
        expect({ exit: r.exit, status: r.status, stderr: r.stderr }).toEqual({ exit: 0, status: 200, stderr: '' });
      }
      expect(target.seen.slice(before).map(throughWhom)).toEqual(['dante', 'dante', 'dante']);
      before = target.seen.length;
      for (let i = 0; i < 4; i++) expect((await curl(['-x', proxyUrl(`pool-${poolId}-session-abc`), `${target.url}/s/${i}`])).status).toBe(200);
      expect(new Set(target.seen.slice(before).map(throughWhom)).size).toBe(1);
    });

    test('no key, a wrong key: 407 with Proxy-Authenticate', async () => {
      for (const args of [['-x', `http://127.0.0.1:${gatewayPort}`], ['-x', proxyUrl(`pool-${poolId}`, 'pc_not-a-key')]]) {
        const r = await curl([...args, `${target.url}/nokey`]);
        expect(r.status).toBe(407);
        expect(r.headers.get('proxy-authenticate') ?? '').toMatch(/^Basic/);
      }
    });
  });
}
