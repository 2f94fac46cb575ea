/**
 * One upstream try (src/gateway/upstream-leg.ts) with a fake socket and a
 * fake connect, no daemon: a tunnel through a SOCKS4 upstream, a forwarded
 * request through an HTTP one (its answer's head, a 407, an EOF before the
 * answer: `sent` says whether the request may have reached the target), the
 * deadline, one failure at most, and a connect given up on before it opened.
 */
import { describe, expect, test } from 'bun:test';
import type { Upstream } from '../../src/gateway/upstream-choice';
import { FakeSock } from '../helpers/fake-sock';
import { UpstreamLeg, type LegEvents, type LegFailure, type LegKind } from '../../src/gateway/upstream-leg';

const B = (...bytes: number[]) => Buffer.from(bytes);

function leg(type: Upstream['type'], kind: LegKind, target = { host: '1.2.3.4', port: 80 }) {
  const events: unknown[] = [];
  let dials = 0;
  const ev: LegEvents = {
    legReady: (_l, rest) => events.push({ ready: rest.toString() }),
    legResponse: (_l, status, _h, rest) => events.push({ response: status, rest: rest.toString() }),
    legFailed: (_l, f: LegFailure) => events.push({ failed: f }),
    legData: (_l, c) => events.push({ data: c.toString() }),
    legEnded: (_l, closed) => events.push({ ended: closed }),
  };
  const u: Upstream = { key: 'u', host: '127.0.0.1', port: 1080, type, protocols: [type], country: null };
  const l = new UpstreamLeg(ev, u, kind, target, () => dials++);
  l.dial();
  return { l, events, dials: () => dials };
}

describe('a tunnel', () => {
  test('SOCKS4: the request on open, ready with the first bytes, then data, FIN and close to the connection', () => {
    const { l, events, dials } = leg('socks4', 'tunnel');
    expect(dials()).toBe(1);
    const s = new FakeSock();
    l.opened(s);
    expect([s.noDelay, s.out[0]]).toEqual([true, B(4, 1, 0, 80, 1, 2, 3, 4, 0)]);
    l.received(Buffer.concat([B(0, 90, 0, 0, 0, 0, 0, 0), Buffer.from('hi')]));
    l.received(Buffer.from('more'));
    l.ended(false);
    l.ended(true);
    expect(events).toEqual([{ ready: 'hi' }, { data: 'more' }, { ended: false }, { ended: true }]);
  });

  test('a refusal fails once, blamed as the tunnel machine says, the socket reset; later events say nothing', () => {
    const { l, events } = leg('socks4', 'tunnel');
    const s = new FakeSock();
    l.opened(s);
    l.received(B(0, 91, 0, 0, 0, 0, 0, 0));
    l.received(Buffer.from('x'));
    l.timedOut();
    expect(events).toEqual([{ failed: { blame: 'target', reason: expect.any(String), rep: 1, sent: false } }]);
    expect(s.terminated).toBe(true);
  });
});

describe('a forwarded request', () => {
  test('HTTP upstream: ready at once (the connection writes its request), then the answer\'s head and the body\'s start', () => {
    const { l, events } = leg('http', 'forward');
    l.opened(new FakeSock());
    expect(events).toEqual([{ ready: '' }]);
    l.received(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel'));
    l.received(Buffer.from('lo'));
    expect(events.slice(1)).toEqual([{ response: 200, rest: 'hel' }, { data: 'lo' }]);
  });

  test('407: the upstream refused our credentials, the request went nowhere (sent false); EOF before the answer: sent', () => {
    const a = leg('http', 'forward');
    a.l.opened(new FakeSock());
    a.l.received(Buffer.from('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n'));
    expect(a.events[1]).toEqual({ failed: { blame: 'upstream', reason: 'the upstream answered 407', rep: 1, sent: false } });
    const b = leg('http', 'forward');
    b.l.opened(new FakeSock());
    b.l.ended(false);
    expect(b.events[1]).toMatchObject({ failed: { blame: 'upstream', sent: true } });
  });
});

describe('connecting', () => {
  test('a connect error or the deadline before open: failed once, not sent; a socket opening after that is reset', () => {
    const a = leg('http', 'tunnel');
    a.l.errored(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }));
    a.l.timedOut();
    expect(a.events).toEqual([{ failed: { blame: 'upstream', reason: 'socket error (ECONNREFUSED)', rep: 1, sent: false } }]);
    const b = leg('http', 'tunnel');
    b.l.timedOut();
    const late = new FakeSock();
    b.l.opened(late);
    expect([b.events.length, late.terminated, late.out.length]).toEqual([1, true, 0]);
  });
});
