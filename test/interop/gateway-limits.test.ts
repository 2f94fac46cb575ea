/**
 * Interop: the gateway's limits, in front of a real microsocks (SOCKS5 on
 * loopback): the SSRF guard on the client's target (and only there), the
 * per-key connection cap, the failed-attempt throttle, the idle timeout, a
 * client that stops reading (the relay's memory stays bounded and the
 * target is held back), and a port in use at start-up.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { FailureThrottle } from '../../src/admin/throttle';
import { bind } from '../../src/compose/bind';
import { ENTRY_ERROR_CODES } from '../../src/error-codes';
import { isServiceError } from '../../src/errors';
import type { RunningGateway } from '../../src/gateway/gateway';
import { basicAuth } from '../../src/probe/codec/http-request';
import { buildSocks5Auth, buildSocks5Connect } from '../../src/probe/codec/socks-codec';
import { curl, GATEWAY_KEY, MemoryGatewayPools, OTHER_KEY, startTarget, startTestGateway, upstreamOf, type Target } from '../helpers/gateway';
import { missingPackages, missingReason, reportUnavailable, stopAllDaemons, type RunningDaemon } from './daemons';
import { startMicrosocks } from './zoo';

const missing = missingPackages([
  { pkg: 'microsocks', bin: 'microsocks' },
  { pkg: 'curl', bin: 'curl' },
]);

const POOL = 'gwlimits000a';
const OTHER_POOL = 'gwlimits000b';
const USER = `pool-${POOL}`;

/** Reads from a socket until `done(all bytes so far)` says so or the socket closes. */
function readUntil(s: Socket, done: (b: Buffer) => boolean): Promise<Buffer> {
  return new Promise((resolve) => {
    let all = Buffer.alloc(0);
    const finish = () => {
      s.off('data', onData);
      s.off('close', finish);
      resolve(all);
    };
    const onData = (b: Buffer) => {
      all = Buffer.concat([all, b]);
      if (done(all)) finish();
    };
    s.on('data', onData);
    s.on('close', finish);
  });
}

const headDone = (b: Buffer) => b.includes('\r\n\r\n');

/** A CONNECT through the gateway with a raw socket; the tunnel stays open for the caller. */
async function tunnel(gwPort: number, user: string, key: string, host: string, port: number): Promise<{ socket: Socket; head: string }> {
  const socket = connect({ host: '127.0.0.1', port: gwPort });
  socket.write(`CONNECT ${host}:${port} HTTP/1.1\r\nHost: ${host}:${port}\r\nProxy-Authorization: ${basicAuth(user, key)}\r\n\r\n`);
  const got = await readUntil(socket, headDone);
  return { socket, head: got.toString('latin1').split('\r\n\r\n')[0] as string };
}

const proxy = (gw: RunningGateway, user = USER, key = GATEWAY_KEY) => `http://${user}:${key}@127.0.0.1:${gw.port}`;

function closed(s: Socket): Promise<void> {
  return s.destroyed ? Promise.resolve() : new Promise((r) => s.once('close', () => r()));
}

/** A stand-in HTTP upstream on loopback that answers every request itself (it never connects anywhere). */
function answeringUpstream(): Promise<{ port: number; lines: string[]; close(): Promise<void> }> {
  const lines: string[] = [];
  const srv: Server = createServer((s) => {
    void readUntil(s, headDone).then((b) => {
      const line = b.toString('latin1').split('\r\n')[0] as string;
      lines.push(line);
      const body = `upstream saw: ${line}\n`;
      s.end(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
    });
  });
  return new Promise((resolve) => {
    srv.listen(0, '127.0.0.1', () =>
      resolve({ port: (srv.address() as AddressInfo).port, lines, close: () => new Promise((r) => srv.close(() => r())) }),
    );
  });
}

if (missing.length > 0) {
  reportUnavailable('gateway limits', missingReason(missing));
} else {
  describe('the gateway\'s limits over microsocks (real daemon)', () => {
    let socks: RunningDaemon;
    let target: Target;
    let pools: MemoryGatewayPools;
    const gateways: RunningGateway[] = [];
    const start = (over: Parameters<typeof startTestGateway>[1]) => {
      const g = startTestGateway(pools, { throttle: new FailureThrottle({ maxFailures: 1_000_000 }), ...over });
      gateways.push(g);
      return g;
    };

    beforeAll(async () => {
      target = startTarget();
      socks = await startMicrosocks('(gateway)');
      pools = new MemoryGatewayPools();
      pools.addKey(GATEWAY_KEY, 'account-a');
      pools.addKey(OTHER_KEY, 'account-b');
      pools.setPool(POOL, 'account-a', [upstreamOf(socks, 'socks5')]);
      pools.setPool(OTHER_POOL, 'account-b', [upstreamOf(socks, 'socks5')]);
    }, 20_000);

    afterAll(async () => {
      await Promise.all(gateways.map((g) => g.stop()));
      await stopAllDaemons();
      await target?.stop();
    }, 20_000);

    test('SSRF guard on (ALLOW_PRIVATE_TARGETS off): private targets refused before any upstream, names after DNS; loopback upstreams still serve public targets', async () => {
      const fake = await answeringUpstream();
      try {
        pools.setPool('gwguard00001', 'account-a', [upstreamOf({ host: '127.0.0.1', port: fake.port }, 'http')]);
        const resolve = async (host: string) =>
          host === 'public.example' ? { addresses: ['93.184.215.14'], errorCode: null } : host === 'localhost' ? { addresses: ['127.0.0.1', '::1'], errorCode: null } : { addresses: [], errorCode: 'ENOTFOUND' };
        const gw = start({ allowPrivateTargets: false, resolve });
        const reportsBefore = pools.reports.length;
        const seenBefore = target.seen.length;
        for (const url of [`${target.url}/x`, 'http://10.1.2.3/', 'http://[::1]:8080/', `http://localhost:${target.port}/`]) {
          const a = await curl(['-x', proxy(gw, 'pool-gwguard00001'), url]);
          expect({ url, status: a.status }).toEqual({ url, status: 403 });
          expect(a.headers.get('x-gateway-error')).toBe('blocked_target');
        }
        const nx = await curl(['-x', proxy(gw, 'pool-gwguard00001'), 'http://no-such-host.invalid/']);
        expect(nx.status).toBe(502);
        expect(nx.headers.get('x-gateway-error')).toBe('dns_failed');
        // SOCKS5: REP 02 (not allowed by ruleset)
        const s = connect({ host: '127.0.0.1', port: gw.port });
        s.write(Buffer.concat([Buffer.from([5, 1, 2]), buildSocks5Auth(USER, GATEWAY_KEY), buildSocks5Connect('127.0.0.1', target.port)]));
        const r = await readUntil(s, (b) => b.length >= 14);
        s.destroy();
        expect([...r.subarray(0, 6)]).toEqual([5, 2, 1, 0, 5, 2]);
        expect(fake.lines).toEqual([]);
        expect(target.seen.length).toBe(seenBefore);
        expect(pools.reports.length).toBe(reportsBefore);
        // a public target goes through the pool's upstream on loopback: the guard is the target's, not the upstream's
        const ok = await curl(['-x', proxy(gw, 'pool-gwguard00001'), 'http://public.example/page']);
        expect(ok.status).toBe(200);
        expect(ok.headers.get('x-gateway-upstream')).toBe(`127.0.0.1:${fake.port}`);
        expect(fake.lines).toEqual(['GET http://public.example/page HTTP/1.1']);
      } finally {
        await fake.close();
      }
    });

    test('per-key cap: the key\'s connection over GATEWAY_MAX_CONNECTIONS gets 429 too_many_connections; another key does not; a closed one frees its slot', async () => {
      const gw = start({ maxConnectionsPerKey: 2 });
      const a = await tunnel(gw.port, USER, GATEWAY_KEY, '127.0.0.1', target.port);
      const b = await tunnel(gw.port, USER, GATEWAY_KEY, '127.0.0.1', target.port);
      expect(a.head).toStartWith('HTTP/1.1 200');
      expect(b.head).toStartWith('HTTP/1.1 200');
      const third = await curl(['-x', proxy(gw), `${target.url}/third`]);
      expect(third.status).toBe(429);
      expect(third.headers.get('x-gateway-error')).toBe('too_many_connections');
      const other = await curl(['-x', proxy(gw, `pool-${OTHER_POOL}`, OTHER_KEY), `${target.url}/other`]);
      expect(other.status).toBe(200);
      a.socket.destroy();
      for (let i = 0; i < 100 && gw.open > 1; i++) await Bun.sleep(10);
      expect((await curl(['-x', proxy(gw), `${target.url}/again`])).status).toBe(200);
      b.socket.destroy();
    });

    test('failed-attempt throttle: after 5 wrong keys from one address even the right key gets 429 auth_blocked with Retry-After (SOCKS5: auth failure)', async () => {
      const gw = start({ throttle: new FailureThrottle() });
      for (let i = 0; i < 5; i++) expect((await curl(['-x', proxy(gw, USER, `wrong-${i}-0123456789abcdef`), `${target.url}/t`])).status).toBe(407);
      const blocked = await curl(['-x', proxy(gw), `${target.url}/t`]);
      expect(blocked.status).toBe(429);
      expect(blocked.headers.get('x-gateway-error')).toBe('auth_blocked');
      expect(blocked.headers.get('retry-after')).toMatch(/^\d+$/);
      const s = connect({ host: '127.0.0.1', port: gw.port });
      s.write(Buffer.concat([Buffer.from([5, 1, 2]), buildSocks5Auth(USER, GATEWAY_KEY)]));
      const r = await readUntil(s, (b) => b.length >= 4);
      s.destroy();
      expect([...r]).toEqual([5, 2, 1, 1]);
    });

    test('idle timeout: a tunnel without a byte either way is closed', async () => {
      const gw = start({ idleTimeoutMs: 300 });
      const t = await tunnel(gw.port, USER, GATEWAY_KEY, '127.0.0.1', target.port);
      expect(t.head).toStartWith('HTTP/1.1 200');
      await closed(t.socket);
      expect(gw.open).toBe(0);
    });

    test('a client that stops reading: the gateway holds at most about a chunk per direction, the target is held back, memory does not grow', async () => {
      const gw = start({});
      const t = await tunnel(gw.port, USER, GATEWAY_KEY, '127.0.0.1', target.port);
      const total = 2_000_000_000;
      t.socket.write(`GET /stream/${total} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      await readUntil(t.socket, (b) => b.length > 1_000_000);
      t.socket.pause();
      // let the kernel's buffers on every hop fill up
      let last = -1;
      for (let i = 0; i < 50 && target.streamed() !== last; i++) {
        last = target.streamed();
        await Bun.sleep(100);
      }
      Bun.gc(true);
      const rss0 = process.memoryUsage().rss;
      const streamed0 = target.streamed();
      await Bun.sleep(1_000);
      Bun.gc(true);
      const rss1 = process.memoryUsage().rss;
      const streamed1 = target.streamed();
      expect(gw.buffered()).toBeLessThan(1024 * 1024);
      // the target produced only what the buffers on the way hold (kernel socket buffers), not the 2 GB
      expect(streamed1).toBeLessThan(64 * 1024 * 1024);
      expect(streamed1 - streamed0).toBeLessThan(4 * 1024 * 1024);
      expect(rss1 - rss0).toBeLessThan(32 * 1024 * 1024);
      t.socket.destroy();
    });

    test('a port in use: the listener throws EADDRINUSE, which the start step makes the one-line error of every listener', async () => {
      const holder = createServer();
      await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
      const port = (holder.address() as AddressInfo).port;
      try {
        let err: unknown = null;
        try {
          bind({ setting: 'GATEWAY_PORT', host: '127.0.0.1', port }, () => start({ port }));
        } catch (e) {
          err = e;
        }
        expect(isServiceError(err, ENTRY_ERROR_CODES.PORT_IN_USE)).toBe(true);
        expect(((err as Error).cause as { code?: unknown }).code).toBe('EADDRINUSE');
        expect((err as Error).message).toBe(`GATEWAY_PORT=${port} on 127.0.0.1 is in use by another process: stop it or set another GATEWAY_PORT`);
      } finally {
        await new Promise<void>((r) => holder.close(() => r()));
      }
    });
  });
}
