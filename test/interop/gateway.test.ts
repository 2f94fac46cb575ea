/**
 * Interop: the gateway (src/gateway) in front of a pool of real daemons
 * (squid and tinyproxy as HTTP upstreams, dante as the SOCKS5 one, started
 * by daemons.ts on loopback), driven by curl exactly as a user would
 * (`-x http://pool-<id>:<key>@...`, `-p` for CONNECT, `--socks5-hostname`),
 * to a local target that records who reached it: squid and tinyproxy add
 * their Via, dante connects out from 127.0.0.2 (its `external`).
 *
 * The pool side is in memory (test/helpers/gateway.ts): the keys, the
 * working sets, and on a reported failure a re-check that drops the upstream.
 * The gateway allows private targets here (the target is on loopback); the
 * SSRF guard's own tests use a second gateway with it off, and show that the
 * guard applies to the client's target only, never to the pool's upstreams.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connect, type Socket } from 'node:net';
import { FailureThrottle } from '../../src/admin/throttle';
import type { RunningGateway } from '../../src/gateway/gateway';
import { buildSocks5Auth, buildSocks5Connect } from '../../src/probe/codec/socks-codec';
import { curl, GATEWAY_KEY, MemoryGatewayPools, OTHER_KEY, startTarget, startTestGateway, upstreamOf, type CurlResult, type Target } from '../helpers/gateway';
import { missingPackages, missingReason, reportUnavailable, stopAllDaemons, type RunningDaemon } from './daemons';
import { DANTE_SOURCE, GATEWAY_ZOO, startDante, startSquid, startTinyproxy, throughWhom } from './zoo';

const missing = missingPackages(GATEWAY_ZOO);

const POOL = 'gwpool0000a';
const OTHER_POOL = 'gwpool0000b';
function proxyUrl(gw: RunningGateway, user: string, key: string): string {
  return `http://${encodeURIComponent(user)}:${encodeURIComponent(key)}@127.0.0.1:${gw.port}`;
}

/** A raw SOCKS5 dialog with the gateway: greeting, auth, CONNECT; the replies as bytes. */
async function socksDialog(port: number, user: string, key: string, host: string, targetPort: number): Promise<{ method: number[]; auth: number[]; reply: number[] }> {
  const s = connect({ host: '127.0.0.1', port });
  const got: Buffer[] = [];
  let total = 0;
  const need = (n: number) =>
    new Promise<Buffer>((resolve) => {
      const check = () => {
        if (total >= n || s.destroyed) {
          s.off('data', onData);
          s.off('close', check);
          const all = Buffer.concat(got);
          resolve(all.subarray(0, Math.min(n, all.length)));
        }
      };
      const onData = (b: Buffer) => {
        got.push(b);
        total += b.length;
        check();
      };
      s.on('data', onData);
      s.on('close', check);
      check();
    });
  try {
    s.write(Buffer.from([5, 1, 2])); // username/password only
    const method = [...(await need(2))];
    s.write(buildSocks5Auth(user, key));
    const auth = [...(await need(4))].slice(2);
    if (auth[1] !== 0) return { method, auth, reply: [] };
    s.write(buildSocks5Connect(host, targetPort));
    const reply = [...(await need(14))].slice(4);
    return { method, auth, reply };
  } finally {
    s.destroy();
  }
}

if (missing.length > 0) {
  reportUnavailable('gateway', missingReason(missing));
} else {
  describe('the gateway over squid, tinyproxy and dante (real daemons, curl)', () => {
    let squid: RunningDaemon;
    let tinyproxy: RunningDaemon;
    let dante: RunningDaemon;
    let target: Target;
    let pools: MemoryGatewayPools;
    let gw: RunningGateway;
    const user = `pool-${POOL}`;

    beforeAll(async () => {
      target = startTarget();
      [squid, tinyproxy, dante] = await Promise.all([
        startSquid('(gateway)'),
        startTinyproxy('(gateway)'),
        startDante('(gateway)', { method: 'none', external: DANTE_SOURCE }),
      ]);
      pools = new MemoryGatewayPools();
      pools.addKey(GATEWAY_KEY, 'account-a');
      pools.addKey(OTHER_KEY, 'account-b');
      pools.setPool(POOL, 'account-a', [upstreamOf(squid, 'http', 'DE'), upstreamOf(tinyproxy, 'http', 'FR'), upstreamOf(dante, 'socks5', 'DE')]);
      pools.setPool(OTHER_POOL, 'account-b', [upstreamOf(squid, 'http')]);
      // the main gateway never blocks 127.0.0.1 (the throttle has its own gateway below)
      gw = startTestGateway(pools, { throttle: new FailureThrottle({ maxFailures: 1_000_000 }) });
    }, 30_000);

    afterAll(async () => {
      await gw?.stop();
      await stopAllDaemons();
      await target?.stop();
    }, 20_000);

    test('absolute-form (-x http://): requests rotate over all three, each seen by the target as itself, X-Gateway-Upstream on every answer', async () => {
      const before = target.seen.length;
      const answers: CurlResult[] = [];
      for (let i = 0; i < 6; i++) answers.push(await curl(['-x', proxyUrl(gw, user, GATEWAY_KEY), `${target.url}/abs/${i}`]));
      for (const a of answers) expect({ exit: a.exit, status: a.status, stderr: a.stderr }).toEqual({ exit: 0, status: 200, stderr: '' });
      const seen = target.seen.slice(before).map(throughWhom);
      expect(seen.slice(0, 3).sort()).toEqual(['dante', 'squid', 'tinyproxy']);
      expect(seen.slice(3)).toEqual(seen.slice(0, 3));
      const names = new Map([[`127.0.0.1:${squid.port}`, 'squid'], [`127.0.0.1:${tinyproxy.port}`, 'tinyproxy'], [`127.0.0.1:${dante.port}`, 'dante']]);
      expect(answers.map((a) => names.get(a.headers.get('x-gateway-upstream') ?? ''))).toEqual(seen);
      // the client's key never reaches an upstream or the target
      expect(target.seen.slice(before).every((s) => s.proxyAuthorization === null)).toBe(true);
    });

    test('CONNECT (-p): rotates too; the 200 answer names the upstream', async () => {
      const before = target.seen.length;
      const answers: CurlResult[] = [];
      for (let i = 0; i < 3; i++) answers.push(await curl(['-p', '-x', proxyUrl(gw, user, GATEWAY_KEY), `${target.url}/tunnel/${i}`]));
      for (const a of answers) {
        expect({ exit: a.exit, status: a.status }).toEqual({ exit: 0, status: 200 });
        expect(a.blocks[0]).toMatch(/^HTTP\/1\.1 200 Connection established\r\nX-Gateway-Upstream: 127\.0\.0\.1:\d+/);
      }
      const ups = answers.map((a) => /X-Gateway-Upstream: (\S+)/.exec(a.blocks[0] as string)?.[1]);
      expect(new Set(ups).size).toBe(3);
      // through a tunnel nobody adds a Via: dante still shows by its source address
      const seen = target.seen.slice(before);
      expect(seen.filter((s) => s.peer.endsWith(DANTE_SOURCE)).length).toBe(1);
      expect(seen.every((s) => s.via === null)).toBe(true);
    });

    test('SOCKS5 (--socks5-hostname): rotates over all three', async () => {
      const before = target.seen.length;
      const answers: CurlResult[] = [];
      for (let i = 0; i < 3; i++) {
        answers.push(await curl(['--socks5-hostname', `127.0.0.1:${gw.port}`, '--proxy-user', `${user}:${GATEWAY_KEY}`, `${target.url}/socks/${i}`]));
      }
      for (const a of answers) expect({ exit: a.exit, status: a.status, stderr: a.stderr }).toEqual({ exit: 0, status: 200, stderr: '' });
      const seen = target.seen.slice(before);
      expect(seen.length).toBe(3);
      expect(seen.filter((s) => s.peer.endsWith(DANTE_SOURCE)).length).toBe(1);
    });

    test('-session-abc sticks to one upstream; another token may get another', async () => {
      const before = target.seen.length;
      for (let i = 0; i < 5; i++) {
        const a = await curl(['-x', proxyUrl(gw, `${user}-session-abc`, GATEWAY_KEY), `${target.url}/session/${i}`]);
        expect(a.status).toBe(200);
      }
      const seen = target.seen.slice(before).map(throughWhom);
      expect(new Set(seen).size).toBe(1);
    });

    test('-type-socks5 goes through dante only; -country-FR through tinyproxy only', async () => {
      let before = target.seen.length;
      for (let i = 0; i < 4; i++) expect((await curl(['-x', proxyUrl(gw, `${user}-type-socks5`, GATEWAY_KEY), `${target.url}/type/${i}`])).status).toBe(200);
      expect(target.seen.slice(before).map(throughWhom)).toEqual(['dante', 'dante', 'dante', 'dante']);
      before = target.seen.length;
      for (let i = 0; i < 3; i++) expect((await curl(['-x', proxyUrl(gw, `${user}-country-fr`, GATEWAY_KEY), `${target.url}/country/${i}`])).status).toBe(200);
      expect(target.seen.slice(before).map(throughWhom)).toEqual(['tinyproxy', 'tinyproxy', 'tinyproxy']);
    });

    test('no match: 502 with X-Gateway-Error no_upstream', async () => {
      const a = await curl(['-x', proxyUrl(gw, `${user}-country-jp`, GATEWAY_KEY), `${target.url}/none`]);
      expect(a.status).toBe(502);
      expect(a.headers.get('x-gateway-error')).toBe('no_upstream');
    });

    test('407 with Proxy-Authenticate: no credentials, a wrong key, another account\'s pool, a username outside the grammar', async () => {
      const cases = [
        ['-x', `http://127.0.0.1:${gw.port}`],
        ['-x', proxyUrl(gw, user, 'wrong-key-0123456789abcdef')],
        ['-x', proxyUrl(gw, `pool-${OTHER_POOL}`, GATEWAY_KEY)],
        ['-x', proxyUrl(gw, `pool-${POOL}-colour-red`, GATEWAY_KEY)],
      ];
      const before = target.seen.length;
      for (const c of cases) {
        const a = await curl([...c, `${target.url}/auth`]);
        expect(a.status).toBe(407);
        expect(a.headers.get('proxy-authenticate')).toBe('Basic realm="proxycheck gateway"');
      }
      // CONNECT too
      const t = await curl(['-p', '-x', proxyUrl(gw, user, 'wrong-key-0123456789abcdef'), `${target.url}/auth`]);
      expect(t.blocks[0]).toMatch(/^HTTP\/1\.1 407 /);
      expect(target.seen.length).toBe(before);
    });

    test('SOCKS5: a wrong key and another account\'s pool fail the auth (01 01); the right one connects (REP 0)', async () => {
      expect((await socksDialog(gw.port, user, 'wrong-key-0123456789abcdef', '127.0.0.1', target.port)).auth).toEqual([1, 1]);
      expect((await socksDialog(gw.port, `pool-${OTHER_POOL}`, GATEWAY_KEY, '127.0.0.1', target.port)).auth).toEqual([1, 1]);
      const ok = await socksDialog(gw.port, user, GATEWAY_KEY, '127.0.0.1', target.port);
      expect(ok.method).toEqual([5, 2]);
      expect(ok.auth).toEqual([1, 0]);
      expect(ok.reply.slice(0, 2)).toEqual([5, 0]);
      // curl sees the refusal as a failed SOCKS handshake
      const a = await curl(['--socks5-hostname', `127.0.0.1:${gw.port}`, '--proxy-user', `${user}:nope-0123456789abcdef`, `${target.url}/x`]);
      expect(a.exit).not.toBe(0);
    });

    test('an upstream killed mid-test: the next connections go elsewhere with no client-visible error; it is reported and the pool drops it', async () => {
      const killed = `127.0.0.1:${tinyproxy.port}`;
      await tinyproxy.stop();
      const before = target.seen.length;
      const answers: CurlResult[] = [];
      for (let i = 0; i < 6; i++) answers.push(await curl(['-x', proxyUrl(gw, user, GATEWAY_KEY), `${target.url}/after-kill/${i}`]));
      for (const a of answers) expect({ exit: a.exit, status: a.status }).toEqual({ exit: 0, status: 200 });
      expect(answers.every((a) => a.headers.get('x-gateway-upstream') !== killed)).toBe(true);
      const seen = target.seen.slice(before).map(throughWhom);
      expect(seen.length).toBe(6);
      expect(seen.every((w) => w === 'squid' || w === 'dante')).toBe(true);
      expect(pools.reports.some((r) => r.poolId === POOL && r.upstream === killed)).toBe(true);
      for (let i = 0; i < 100 && pools.working(POOL).length === 3; i++) await Bun.sleep(20);
      expect(pools.working(POOL).map((u) => `${u.host}:${u.port}`)).not.toContain(killed);
    });
  });
}
