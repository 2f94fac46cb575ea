/**
 * The gateway connection's driver (src/gateway/connection.ts) with fake
 * sockets and fake ports, no daemon: a CONNECT tunnel end to end, SOCKS5
 * through a SOCKS5 upstream after a failed one, a forwarded request retried
 * or not by the policy, the per-key cap, wrong and throttled credentials,
 * the deadlines, legs given up on, bounded early bytes, and the phases'
 * table (src/state-machine.ts).
 */
import { describe, expect, test } from 'bun:test';
import { KeySlots } from '../../src/gateway/admit';
import { connectEstablished, gatewayError, proxyAuthRequired } from '../../src/gateway/codec/response-head';
import { SOCKS5_REP, socks5Reply } from '../../src/gateway/codec/socks5-server';
import { ClientConnection, CONNECTION_PHASES, EARLY_MAX, type GatewayContext } from '../../src/gateway/connection';
import type { GatewayPools } from '../../src/gateway/ports';
import { UpstreamChooser, type Upstream } from '../../src/gateway/upstream-choice';
import type { UpstreamLeg } from '../../src/gateway/upstream-leg';
import { createLogger } from '../../src/log';
import { basicAuth } from '../../src/probe/codec/http-request';
import { transition } from '../../src/state-machine';
import { FakeClock } from '../helpers/fake-clock';
import { FakeSock } from '../helpers/fake-sock';

const KEY = 'key-0123456789';
const POOL = 'abcdefghij';
const B = (...bytes: number[]) => Buffer.from(bytes);

const upstream = (n: number, type: Upstream['type'] = 'http'): Upstream => ({ key: `u${n}`, host: '127.0.0.1', port: 9000 + n, type, protocols: [type], country: null });
const settle = () => new Promise((r) => setTimeout(r, 0));

function harness(o: { upstreams?: Upstream[]; maxPerKey?: number; blockedFor?: number | null; authenticate?: GatewayPools['authenticate'] } = {}) {
  const clock = new FakeClock(1_000);
  const legs: UpstreamLeg[] = [];
  const seen = { reports: [] as string[], refused: [] as string[], fails: [] as string[], bytes: 0, connections: 0, closed: 0, authentications: 0 };
  const working = { poolId: POOL, upstreams: o.upstreams ?? [upstream(1)] };
  const ctx: GatewayContext = {
    pools: {
      authenticate:
        o.authenticate ??
        (async (k) => {
          seen.authentications++;
          return k === KEY ? { id: 'acct' } : null;
        }),
      workingSet: async (_a, p) => (p === POOL ? working : null),
      reportFailure: (_p, u) => seen.reports.push(u.key),
    },
    chooser: new UpstreamChooser(),
    throttle: { blockedFor: () => o.blockedFor ?? null, fail: (a) => (seen.fails.push(a), false) },
    counters: {
      connection: () => seen.connections++,
      bytes: (_a, n) => (seen.bytes += n),
      refused: (r) => seen.refused.push(r),
      upstreamFailed: () => {},
    },
    log: createLogger('error', () => {}),
    slots: new KeySlots(o.maxPerKey ?? 10),
    allowPrivateTargets: false,
    resolve: async () => ({ addresses: ['93.184.216.34'] }) as never,
    handshakeTimeoutMs: 10_000,
    connectTimeoutMs: 5_000,
    idleTimeoutMs: 60_000,
    clock,
    connect: (leg) => legs.push(leg),
    closed: () => seen.closed++,
  };
  const open = () => {
    const sock = new FakeSock();
    return { sock, conn: new ClientConnection(ctx, sock, '127.0.0.9', clock.now()) };
  };
  return { ctx, clock, legs, seen, open };
}

const AUTH = `Proxy-Authorization: ${basicAuth(`pool-${POOL}`, KEY)}\r\n`;
const CONNECT = `CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n${AUTH}\r\n`;

describe('a CONNECT tunnel', () => {
  test('front, check, admit, the upstream\'s CONNECT, the 200, the relay both ways, half-closes, one clean close', async () => {
    const h = harness();
    const { sock, conn } = h.open();
    conn.received(Buffer.from(CONNECT + 'early'), h.clock.now());
    expect(conn.phase).toBe('checking');
    await settle();
    expect(conn.phase).toBe('dialing');
    expect(h.ctx.slots.keys).toBe(1);
    const leg = h.legs[0] as UpstreamLeg;
    const up = new FakeSock();
    leg.opened(up);
    expect(up.take()).toStartWith('CONNECT example.com:443 HTTP/1.1\r\n');
    leg.received(Buffer.from('HTTP/1.1 200 Connection established\r\n\r\nhello'));
    expect(conn.phase).toBe('relay');
    expect(sock.take()).toBe(connectEstablished(leg.upstream) + 'hello');
    expect(up.take()).toBe('early');
    conn.received(Buffer.from('more'), h.clock.now());
    expect(up.take()).toBe('more');
    conn.ended();
    expect(up.shut).toBe(true);
    expect(conn.phase).toBe('relay');
    leg.ended(false);
    expect(sock.shut).toBe(true);
    expect(conn.phase).toBe('closed');
    expect([sock.ended, h.ctx.slots.keys, h.seen.closed, h.seen.connections, h.seen.bytes]).toEqual([true, 0, 1, 1, 'hello'.length + 'early'.length + 'more'.length]);
  });
});

describe('SOCKS5', () => {
  test('a failed upstream is reported and replaced; the next one\'s SOCKS5 handshake; the client\'s success reply', async () => {
    const h = harness({ upstreams: [upstream(1, 'socks5'), upstream(2, 'socks5')] });
    const { sock, conn } = h.open();
    conn.received(B(5, 1, 2), h.clock.now());
    const user = `pool-${POOL}`;
    conn.received(Buffer.concat([B(1, user.length), Buffer.from(user), B(KEY.length), Buffer.from(KEY)]), h.clock.now());
    await settle();
    conn.received(Buffer.concat([B(5, 1, 0, 1, 93, 184, 216, 34, 0, 80)]), h.clock.now());
    await settle();
    expect(conn.phase).toBe('dialing');
    const first = h.legs[0] as UpstreamLeg;
    first.errored(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
    expect(h.seen.reports).toEqual([first.upstream.key]);
    expect(h.legs).toHaveLength(2);
    const second = h.legs[1] as UpstreamLeg;
    expect(second.upstream.key).not.toBe(first.upstream.key);
    const up = new FakeSock();
    second.opened(up);
    expect(up.out[0]).toEqual(B(5, 1, 0));
    second.received(B(5, 0));
    expect(up.out[1]).toEqual(B(5, 1, 0, 1, 93, 184, 216, 34, 0, 80));
    sock.take();
    second.received(B(5, 0, 0, 1, 0, 0, 0, 0, 0, 0));
    expect(conn.phase).toBe('relay');
    expect(sock.take()).toBe(socks5Reply(SOCKS5_REP.SUCCEEDED).toString('latin1'));
    // the leg given up on says nothing more
    first.received(Buffer.from('late'));
    expect(sock.take()).toBe('');
  });
});

describe('a forwarded request', () => {
  const request = (method: string) => Buffer.from(`${method} http://example.com/x HTTP/1.1\r\nHost: example.com\r\n${AUTH}Content-Length: 4\r\n\r\nabcd`);

  test('GET: sent again to the next upstream when the first failed after it was sent; the answer relayed', async () => {
    const h = harness({ upstreams: [upstream(1), upstream(2)] });
    const { sock, conn } = h.open();
    conn.received(request('GET'), h.clock.now());
    await settle();
    const a = h.legs[0] as UpstreamLeg;
    const upA = new FakeSock();
    a.opened(upA);
    expect(conn.phase).toBe('forwarding');
    expect(upA.take()).toMatch(/^GET http:\/\/example\.com\/x HTTP\/1\.1\r\n[^]*\r\n\r\nabcd$/);
    a.errored(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    const b = h.legs[1] as UpstreamLeg;
    const upB = new FakeSock();
    b.opened(upB);
    expect(upB.take()).toEndWith('\r\n\r\nabcd');
    b.received(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'));
    expect(conn.phase).toBe('relay');
    const answer = sock.take();
    expect(answer).toStartWith('HTTP/1.1 200 OK\r\n');
    expect(answer).toEndWith('\r\n\r\nok');
  });

  test('POST: not sent twice; the client gets upstream_failed and the connection closes', async () => {
    const h = harness({ upstreams: [upstream(1), upstream(2)] });
    const { sock, conn } = h.open();
    conn.received(request('POST'), h.clock.now());
    await settle();
    const a = h.legs[0] as UpstreamLeg;
    a.opened(new FakeSock());
    a.errored(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    expect(h.legs).toHaveLength(1);
    expect(sock.take()).toBe(gatewayError('upstream_failed'));
    expect([conn.phase, sock.shut, h.seen.refused]).toEqual(['closing', true, ['upstream_failed']]);
    conn.ended();
    expect(conn.phase).toBe('closed');
  });
});

describe('refusals', () => {
  test('the per-key cap: 429 too_many_connections; a closed connection gives its slot back', async () => {
    const h = harness({ maxPerKey: 1 });
    const one = h.open();
    one.conn.received(Buffer.from(CONNECT), h.clock.now());
    await settle();
    const two = h.open();
    two.conn.received(Buffer.from(CONNECT), h.clock.now());
    await settle();
    expect(two.sock.take()).toBe(gatewayError('too_many_connections'));
    one.conn.close(false);
    expect([one.sock.terminated, h.ctx.slots.keys]).toEqual([true, 0]);
  });

  test('a wrong key: 407 and a failed attempt; a throttled address: auth_blocked before any look-up', async () => {
    const h = harness();
    const { sock, conn } = h.open();
    conn.received(Buffer.from(CONNECT.replace(basicAuth(`pool-${POOL}`, KEY), basicAuth(`pool-${POOL}`, 'wrong'))), h.clock.now());
    await settle();
    expect([sock.take(), h.seen.fails, h.seen.refused]).toEqual([proxyAuthRequired(), ['127.0.0.9'], ['auth']]);
    const blocked = harness({ blockedFor: 7 });
    const c = blocked.open();
    c.conn.received(Buffer.from(CONNECT), blocked.clock.now());
    await settle();
    expect([c.sock.take(), blocked.seen.authentications]).toEqual([gatewayError('auth_blocked', 7), 0]);
  });

  test('a private target: blocked_target, no upstream dialed', async () => {
    const h = harness();
    const { sock, conn } = h.open();
    conn.received(Buffer.from(CONNECT.replaceAll('example.com', '10.1.2.3')), h.clock.now());
    await settle();
    expect([sock.take(), h.legs.length, h.ctx.slots.keys]).toEqual([gatewayError('blocked_target'), 0, 0]);
  });
});

describe('time and memory', () => {
  test('the handshake deadline resets a silent client; a try past the connect timeout fails and, none left, answers', async () => {
    const h = harness();
    const silent = h.open();
    silent.conn.tick(h.clock.now() + 9_999);
    expect(silent.conn.phase).toBe('front');
    silent.conn.tick(h.clock.now() + 10_000);
    expect([silent.conn.phase, silent.sock.terminated]).toEqual(['closed', true]);
    const { sock, conn } = h.open();
    conn.received(Buffer.from(CONNECT), h.clock.now());
    await settle();
    conn.tick(h.clock.now() + 5_000);
    expect(sock.take()).toBe(gatewayError('upstream_failed'));
    expect(h.seen.reports).toEqual(['u1']);
  });

  test('bytes while the credentials are checked are kept up to EARLY_MAX, then the client is paused; the check ends it', async () => {
    let pass: (a: { id: string } | null) => void = () => {};
    const h = harness({ authenticate: () => new Promise((r) => (pass = r)) });
    const { sock, conn } = h.open();
    conn.received(Buffer.from(CONNECT), h.clock.now());
    conn.received(Buffer.alloc(EARLY_MAX), h.clock.now());
    expect(sock.paused).toBe(false);
    conn.received(Buffer.alloc(1), h.clock.now());
    expect([sock.paused, conn.buffered]).toEqual([true, EARLY_MAX + 1]);
    pass({ id: 'acct' });
    await settle();
    expect(conn.phase).toBe('dialing');
  });
});

describe('a bug in an async step', () => {
  test('closes that connection (reset), logged, instead of an unhandled rejection', async () => {
    const h = harness();
    const lines: unknown[] = [];
    const ctx: GatewayContext = {
      ...h.ctx,
      chooser: {
        begin: () => {
          throw new Error('bug');
        },
      } as unknown as UpstreamChooser,
      log: createLogger('error', (l) => lines.push(l)),
    };
    const sock = new FakeSock();
    const conn = new ClientConnection(ctx, sock, '127.0.0.9', h.clock.now());
    conn.received(Buffer.from(CONNECT), h.clock.now());
    await settle();
    expect([conn.phase, sock.terminated, ctx.slots.keys, lines.length]).toEqual(['closed', true, 0, 1]);
  });
});

describe('phases', () => {
  test('relay and closing leave only for closed; closed is final; a move not in the table throws', () => {
    expect(CONNECTION_PHASES.relay).toEqual(['closed']);
    expect(CONNECTION_PHASES.closing).toEqual(['closed']);
    expect(CONNECTION_PHASES.closed).toEqual([]);
    expect(() => transition('gateway connection', CONNECTION_PHASES, 'relay', 'relay', 'dialing')).toThrow('gateway connection: relay -> dialing');
    for (const [from, to] of Object.entries(CONNECTION_PHASES)) if (from !== 'closed') expect(to).toContain('closed');
  });
});
