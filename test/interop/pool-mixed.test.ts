/**
 * Interop: a pool keeps each proxy's own protocol from its line's scheme
 * (DECISIONS "Mixed lists"), in the running service (its pool owner and
 * probes) over real daemons on loopback: a pool of type http holding a
 * `socks5://` microsocks line and a plain tinyproxy line finds both working
 * (microsocks checked as socks5, tinyproxy as the pool's http), each with
 * its own `type`; `format=txt&scheme=true` writes each one's protocol; the
 * same address with and without the scheme are two pool proxies (identity
 * as /check's), and `http://` in an http pool is the plain line's.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { call, startTestService, type TestService } from '../helpers/service';
import { missingPackages, missingReason, reportUnavailable, stopAllDaemons, type RunningDaemon } from './daemons';
import { startMicrosocks, startTinyproxy } from './zoo';

const missing = missingPackages([
  { pkg: 'microsocks', bin: 'microsocks' },
  { pkg: 'tinyproxy', bin: 'tinyproxy' },
]);

if (missing.length > 0) {
  reportUnavailable('pool of mixed protocols', missingReason(missing));
} else {
  describe('a pool of type http with a socks5:// line (microsocks) and a plain one (tinyproxy)', () => {
    let t: TestService;
    let socks: RunningDaemon;
    let tiny: RunningDaemon;

    beforeAll(async () => {
      [socks, tiny] = await Promise.all([startMicrosocks('(pool mixed)'), startTinyproxy('(pool mixed)')]);
      t = await startTestService({ POOL_MIN_INTERVAL_S: '1', POOL_FLUSH_S: '1', RATE_LIMIT_PER_S: '100000' });
    }, 60_000);
    afterAll(async () => {
      await t?.stop();
      await stopAllDaemons();
    }, 20_000);

    test('both working, each checked as its own protocol; txt with scheme=true writes each one\'s', async () => {
      const headers = { 'x-api-key': t.key };
      const created = await call(`${t.url}/pools`, {
        method: 'POST',
        headers,
        json: { name: 'mixed', type: 'http', interval_s: 86400, proxies: [`socks5://127.0.0.1:${socks.port}`, `127.0.0.1:${tiny.port}`, `http://127.0.0.1:${tiny.port}`] },
      });
      expect(created.status).toBe(201);
      // http:// in an http pool is the plain line: one proxy; no warning any more
      expect(created.body.submitted).toMatchObject({ added: 2, total_duplicates: 1 });
      expect(created.body.warnings.map((w: { code: string }) => w.code)).not.toContain('schemes_ignored');
      const id = created.body.id as string;
      const end = Date.now() + 20_000;
      let list: { proxy: { port: number }; status: string; type: string | null; error?: unknown }[] = [];
      while (Date.now() < end) {
        list = (await call(`${t.url}/pools/${id}/proxies?status=all`, { headers })).body.proxies;
        if (list.length === 2 && list.every((p) => p.status !== 'unchecked')) break;
        await Bun.sleep(100);
      }
      const byPort = new Map(list.map((p) => [p.proxy.port, p]));
      expect(byPort.get(socks.port)).toMatchObject({ status: 'working', type: 'socks5' });
      expect(byPort.get(tiny.port)).toMatchObject({ status: 'working', type: 'http' });
      const txt = await (await fetch(`${t.url}/pools/${id}/proxies?format=txt&scheme=true&sort=checked`, { headers })).text();
      expect(txt.split('\n').filter(Boolean).sort()).toEqual([`http://127.0.0.1:${tiny.port}`, `socks5://127.0.0.1:${socks.port}`].sort());
      // the same address under another scheme is another pool proxy; removing by its scheme removes that one only
      const patched = await call(`${t.url}/pools/${id}`, { method: 'PATCH', headers, json: { add: [`socks4://127.0.0.1:${socks.port}`], remove: [`http://127.0.0.1:${tiny.port}`] } });
      expect(patched.body.submitted).toMatchObject({ added: 1, removed: 1 });
      expect(patched.body.counts.total).toBe(2);
    }, 60_000);
  });
}
