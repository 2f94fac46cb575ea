/**
 * Interop: the gateway chains through each upstream's own protocol and
 * credentials (real daemons on loopback, curl as the client): squid with
 * basic auth (its credentials from the pool; wrong ones are a 407 the
 * client never sees: the gateway tries the next upstream and reports it),
 * microsocks with RFC 1929 credentials, dante as a SOCKS4 upstream; bodies
 * of forwarded requests (Content-Length, chunked, Expect: 100-continue),
 * and a refused request sent again with its body, once.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { FailureThrottle } from '../../src/admin/throttle';
import type { RunningGateway } from '../../src/gateway/gateway';
import { curl, GATEWAY_KEY, MemoryGatewayPools, startTarget, startTestGateway, upstreamOf, type Target } from '../helpers/gateway';
import { htpasswdLine, randomPassword } from './credentials';
import { missingPackages, missingReason, reportUnavailable, stopAllDaemons, type RunningDaemon } from './daemons';
import { startDante, startMicrosocks, startSquid } from './zoo';

const missing = missingPackages([
  { pkg: 'squid', bin: 'squid' },
  { pkg: 'dante-server', bin: 'danted' },
  { pkg: 'microsocks', bin: 'microsocks' },
  { pkg: 'curl', bin: 'curl' },
  { pkg: 'openssl', bin: 'openssl' },
]);

if (missing.length > 0) {
  reportUnavailable('gateway chaining', missingReason(missing));
} else {
  describe('the gateway chains through each upstream\'s protocol and credentials (real daemons)', () => {
    const squidUser = 'gwuser';
    const squidPassword = randomPassword();
    const socksUser = 'gwsocks';
    const socksPassword = randomPassword();
    let squidAuth: RunningDaemon;
    let socksAuth: RunningDaemon;
    let dante: RunningDaemon;
    let target: Target;
    let pools: MemoryGatewayPools;
    let gw: RunningGateway;
    const proxy = (pool: string) => `http://pool-${pool}:${GATEWAY_KEY}@127.0.0.1:${gw.port}`;

    beforeAll(async () => {
      target = startTarget();
      const line = htpasswdLine(squidUser, squidPassword);
      [squidAuth, socksAuth, dante] = await Promise.all([
        startSquid('basic auth (gateway)', { htpasswd: line }),
        startMicrosocks('auth (gateway)', { user: socksUser, password: socksPassword }),
        startDante('socks4 (gateway)'),
      ]);
      const good = { user: squidUser, password: squidPassword };
      const bad = { user: squidUser, password: 'not-the-password' };
      pools = new MemoryGatewayPools();
      pools.addKey(GATEWAY_KEY, 'account-a');
      pools.setPool('squidauth01', 'account-a', [upstreamOf(squidAuth, 'http', null, good)]);
      // the first of a new pool's round-robin is its first upstream: the wrong credentials go first
      pools.setPool('squidretry01', 'account-a', [{ ...upstreamOf(squidAuth, 'http', null, bad), key: 'bad' }, upstreamOf(squidAuth, 'http', null, good)]);
      pools.setPool('socksauth01', 'account-a', [
        { ...upstreamOf(socksAuth, 'socks5', null, { user: socksUser, password: 'wrong' }), key: 'bad' },
        upstreamOf(socksAuth, 'socks5', null, { user: socksUser, password: socksPassword }),
      ]);
      pools.setPool('socksfour01', 'account-a', [upstreamOf(dante, 'socks4')]);
      gw = startTestGateway(pools, { throttle: new FailureThrottle({ maxFailures: 1_000_000 }) });
    }, 30_000);

    afterAll(async () => {
      await gw?.stop();
      await stopAllDaemons();
      await target?.stop();
    }, 20_000);

    test('squid with basic auth: the pool\'s credentials go upstream (absolute-form and CONNECT); the client\'s key does not', async () => {
      const before = target.seen.length;
      const a = await curl(['-x', proxy('squidauth01'), `${target.url}/auth-abs`]);
      const t = await curl(['-p', '-x', proxy('squidauth01'), `${target.url}/auth-tunnel`]);
      expect([a.status, t.status]).toEqual([200, 200]);
      const seen = target.seen.slice(before);
      expect(seen.map((s) => s.path)).toEqual(['/auth-abs', '/auth-tunnel']);
      expect(seen[0]?.via).toContain('squid');
      expect(seen.every((s) => s.proxyAuthorization === null)).toBe(true);
    });

    test('wrong upstream credentials (squid 407): the client sees 200 from the next upstream; the failing one is reported', async () => {
      const before = pools.reports.length;
      const a = await curl(['-x', proxy('squidretry01'), `${target.url}/retry`]);
      expect(a.status).toBe(200);
      expect(a.blocks.join('\n')).not.toContain('407');
      expect(pools.reports.slice(before)).toEqual([{ poolId: 'squidretry01', upstream: `127.0.0.1:${squidAuth.port}` }]);
    });

    test('a POST refused with 407 is sent again with its body to the next upstream, and reaches the target once', async () => {
      pools.setPool('squidretry02', 'account-a', [
        { ...upstreamOf(squidAuth, 'http', null, { user: squidUser, password: 'nope' }), key: 'bad' },
        upstreamOf(squidAuth, 'http', null, { user: squidUser, password: squidPassword }),
      ]);
      const before = target.seen.length;
      const body = 'x'.repeat(20_000);
      const a = await curl(['-x', proxy('squidretry02'), '--data-binary', body, `${target.url}/post-once`]);
      expect(a.status).toBe(200);
      const seen = target.seen.slice(before);
      expect(seen.map((s) => [s.method, s.path, s.bodyLength])).toEqual([['POST', '/post-once', 20_000]]);
    });

    test('a 200 KB POST refused with 407: sent again only whole (if the refusal came while at most 64 KiB of it had gone), else 502 upstream_failed; never a cut body, never a hang', async () => {
      pools.setPool('squidretry03', 'account-a', [
        { ...upstreamOf(squidAuth, 'http', null, { user: squidUser, password: 'nope' }), key: 'bad' },
        upstreamOf(squidAuth, 'http', null, { user: squidUser, password: squidPassword }),
      ]);
      const file = `${process.env.TMPDIR ?? '/tmp'}/gw-post-${process.pid}.bin`;
      await Bun.write(file, 'y'.repeat(200_000));
      try {
        const before = target.seen.length;
        const a = await curl(['-x', proxy('squidretry03'), '-H', 'Expect:', '--data-binary', `@${file}`, `${target.url}/post-big`]);
        const seen = target.seen.slice(before).map((x) => [x.path, x.bodyLength]);
        if (a.status === 502) {
          expect(a.headers.get('x-gateway-error')).toBe('upstream_failed');
          expect(seen).toEqual([]);
        } else {
          expect(a.status).toBe(200);
          expect(seen).toEqual([['/post-big', 200_000]]);
        }
      } finally {
        await Bun.file(file).delete();
      }
    });

    test('SOCKS5 with RFC 1929 credentials (microsocks): wrong ones fail over to the right ones, for CONNECT, absolute-form and a SOCKS5 client', async () => {
      const before = target.seen.length;
      const r1 = await curl(['-x', proxy('socksauth01'), `${target.url}/s5-abs`]);
      const r2 = await curl(['-p', '-x', proxy('socksauth01'), `${target.url}/s5-tunnel`]);
      const r3 = await curl(['--socks5-hostname', `127.0.0.1:${gw.port}`, '--proxy-user', `pool-socksauth01:${GATEWAY_KEY}`, `${target.url}/s5-socks`]);
      expect([r1.status, r2.status, r3.status]).toEqual([200, 200, 200]);
      expect(target.seen.slice(before).map((s) => s.path)).toEqual(['/s5-abs', '/s5-tunnel', '/s5-socks']);
      expect(pools.reports.some((r) => r.poolId === 'socksauth01')).toBe(true);
    });

    test('SOCKS4 upstream (dante): CONNECT, absolute-form and a SOCKS5 client with a host name (sent as the address the guard resolved: dante has no SOCKS4a)', async () => {
      const before = target.seen.length;
      const r1 = await curl(['-x', proxy('socksfour01'), `${target.url}/s4-abs`]);
      const r2 = await curl(['-p', '-x', proxy('socksfour01'), `${target.url}/s4-tunnel`]);
      const r3 = await curl(['--socks5-hostname', `127.0.0.1:${gw.port}`, '--proxy-user', `pool-socksfour01:${GATEWAY_KEY}`, `http://localhost:${target.port}/s4-socks`]);
      expect([r1.status, r2.status, r3.status]).toEqual([200, 200, 200]);
      expect(target.seen.slice(before).map((s) => s.path)).toEqual(['/s4-abs', '/s4-tunnel', '/s4-socks']);
    });

    test('forwarded bodies: 3 MB with Expect: 100-continue, chunked, through squid and through a SOCKS upstream', async () => {
      const file = `${process.env.TMPDIR ?? '/tmp'}/gw-body-${process.pid}.bin`;
      await Bun.write(file, new Uint8Array(3_000_000).fill(120));
      try {
        const before = target.seen.length;
        const big = await curl(['-x', proxy('squidauth01'), '--data-binary', `@${file}`, `${target.url}/big`]);
        const chunked = await curl(['-x', proxy('socksfour01'), '-H', 'Transfer-Encoding: chunked', '--data-binary', `@${file}`, `${target.url}/chunked`]);
        expect([big.status, chunked.status]).toEqual([200, 200]);
        expect(big.blocks[0]).toStartWith('HTTP/1.1 100 Continue');
        expect(target.seen.slice(before).map((s) => [s.path, s.bodyLength])).toEqual([
          ['/big', 3_000_000],
          ['/chunked', 3_000_000],
        ]);
      } finally {
        await Bun.file(file).delete();
      }
    });
  });
}
