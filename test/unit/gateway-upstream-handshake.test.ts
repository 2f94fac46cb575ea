/**
 * The gateway's side of an upstream's handshake (src/gateway/codec/upstream-handshake.ts):
 * round trips with the house's own SOCKS5 server codec (socks5-server.ts) and
 * HTTP answers, whom each refusal blames, and (fast-check) no throw on any
 * bytes and the same steps for any split of the upstream's answer.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { SOCKS5_REP, Socks5ServerReader, socks5AuthReply, socks5MethodReply, socks5Reply } from '../../src/gateway/codec/socks5-server';
import { UpstreamHandshake, type HandshakeStep, type HandshakeUpstream } from '../../src/gateway/codec/upstream-handshake';
import { SOCKS5_USER_PASS } from '../../src/probe/codec/socks-codec';

const B = (...bytes: number[]) => Buffer.from(bytes);
const T = { host: 'example.com', port: 443 };

/**
 * Pushes `answer` in pieces cut at `cuts`; the steps other than need_more. A
 * `ready` carries every byte after the reply, its own `rest` and the pieces
 * not pushed (they are tunnel bytes).
 */
function feed(h: UpstreamHandshake, answer: Buffer, cuts: number[] = []): HandshakeStep[] {
  const out: HandshakeStep[] = [];
  let at = 0;
  for (const c of [...new Set(cuts.map((x) => x % (answer.length + 1)))].sort((a, b) => a - b).concat(answer.length)) {
    const step = h.push(answer.subarray(at, c));
    at = c;
    if (step.kind === 'ready') {
      out.push({ kind: 'ready', rest: Buffer.concat([step.rest, answer.subarray(at)]) });
      break;
    }
    if (step.kind !== 'need_more') out.push(step);
    if (step.kind === 'fail') break;
  }
  return out;
}

const summary = (steps: HandshakeStep[]) =>
  steps.map((s) => (s.kind === 'send' ? { send: s.bytes.toString('hex') } : s.kind === 'ready' ? { ready: s.rest.toString('latin1') } : s));

describe('HTTP upstream: CONNECT', () => {
  test('the CONNECT request, with the upstream\'s own credentials', () => {
    const h = new UpstreamHandshake({ type: 'http', username: 'u', password: 'p' }, T);
    const first = h.start();
    expect(first.kind).toBe('send');
    const text = (first as { bytes: Buffer }).bytes.toString('latin1');
    expect(text).toStartWith('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n');
    expect(text).toContain(`Proxy-Authorization: Basic ${Buffer.from('u:p').toString('base64')}\r\n`);
    expect(new UpstreamHandshake({ type: 'http' }, T).start()).not.toMatchObject({ bytes: expect.stringContaining('Proxy-Authorization') });
  });

  test('2xx: ready, with what followed the answer (the target\'s first bytes)', () => {
    const h = new UpstreamHandshake({ type: 'http' }, T);
    h.start();
    expect(summary(feed(h, Buffer.from('HTTP/1.1 200 Connection established\r\nVia: x\r\n\r\nSSH-2.0')))).toEqual([{ ready: 'SSH-2.0' }]);
  });

  test('407 blames the upstream; another status the target; garbage and EOF the upstream', () => {
    const answer = (text: string) => {
      const h = new UpstreamHandshake({ type: 'http' }, T);
      h.start();
      return feed(h, Buffer.from(text))[0];
    };
    expect(answer('HTTP/1.1 407 Proxy Authentication Required\r\n\r\n')).toMatchObject({ kind: 'fail', blame: 'upstream' });
    expect(answer('HTTP/1.1 503 Service Unavailable\r\n\r\n')).toMatchObject({ kind: 'fail', blame: 'target', rep: SOCKS5_REP.HOST_UNREACHABLE });
    expect(answer('HTTP/1.1 403 Forbidden\r\n\r\n')).toMatchObject({ kind: 'fail', blame: 'target' });
    expect(answer('SSH-2.0-OpenSSH\r\n\r\n')).toMatchObject({ kind: 'fail', blame: 'upstream' });
    const h = new UpstreamHandshake({ type: 'http' }, T);
    h.start();
    h.push(Buffer.from('HTTP/1.1 200'));
    expect(h.end()).toMatchObject({ kind: 'fail', blame: 'upstream' });
  });
});

describe('SOCKS5 upstream against the gateway\'s own SOCKS5 server codec', () => {
  /** Runs the whole dialog; the server's replies are cut at `cuts` on their way back. */
  function dialog(up: HandshakeUpstream, target: { host: string; port: number }, cuts: number[] = []) {
    const h = new UpstreamHandshake(up, target);
    const server = new Socks5ServerReader();
    const seen: unknown[] = [];
    let step = h.start();
    for (let round = 0; round < 4 && step.kind === 'send'; round++) {
      server.push(step.bytes);
      const m = server.next();
      seen.push(m);
      const reply =
        m.kind === 'greeting'
          ? socks5MethodReply(SOCKS5_USER_PASS)
          : m.kind === 'auth'
            ? socks5AuthReply(true)
            : m.kind === 'request'
              ? Buffer.concat([socks5Reply(SOCKS5_REP.SUCCEEDED), Buffer.from('first')])
              : Buffer.alloc(0);
      const steps = feed(h, reply, cuts);
      step = steps[steps.length - 1] ?? { kind: 'need_more' };
    }
    return { seen, last: step };
  }

  test('greeting, auth with the upstream\'s credentials, CONNECT: ready with the target\'s first bytes', () => {
    const r = dialog({ type: 'socks5', username: 'user', password: 'pass' }, { host: 'example.com', port: 8080 });
    expect(r.seen).toEqual([
      { kind: 'greeting', methods: [0, 2] },
      { kind: 'auth', username: 'user', password: 'pass' },
      { kind: 'request', command: 1, host: 'example.com', port: 8080, addressType: 'domain' },
    ]);
    expect(r.last).toEqual({ kind: 'ready', rest: Buffer.from('first') });
  });

  test('any target, credentials and split of the replies: the server reads what was asked, the tunnel comes up', () => {
    const host = fc.oneof(
      fc.ipV4(),
      fc.domain().filter((d) => d.length <= 255),
    );
    fc.assert(
      fc.property(host, fc.integer({ min: 1, max: 65535 }), fc.option(fc.tuple(fc.string({ minLength: 1, maxLength: 40 }), fc.string({ maxLength: 40 }))), fc.array(fc.nat(40)), (h, port, creds, cuts) => {
        const up: HandshakeUpstream = creds === null ? { type: 'socks5' } : { type: 'socks5', username: creds[0], password: creds[1] };
        // the gateway's server always asks for username/password: offer it only with credentials
        if (creds === null) return;
        const r = dialog(up, { host: h, port }, cuts);
        const req = r.seen[2] as { host: string; port: number };
        expect([req.host, req.port]).toEqual([h.toLowerCase(), port]);
        expect(r.last).toEqual({ kind: 'ready', rest: Buffer.from('first') });
      }),
    );
  });

  test('no credentials: offers no-auth only, and goes straight to CONNECT when the server takes it', () => {
    const h = new UpstreamHandshake({ type: 'socks5' }, { host: '10.0.0.1', port: 80 });
    expect(h.start()).toEqual({ kind: 'send', bytes: B(5, 1, 0) });
    const step = h.push(B(5, 0));
    expect(step).toEqual({ kind: 'send', bytes: B(5, 1, 0, 1, 10, 0, 0, 1, 0, 80) });
    expect(h.push(B(5, 0, 0, 1, 0, 0, 0, 0, 0, 0))).toEqual({ kind: 'ready', rest: Buffer.alloc(0) });
  });

  test('whom the refusals blame: no acceptable method and a refused auth the upstream; a REP the target, with that REP', () => {
    const at = (up: HandshakeUpstream, answers: Buffer[]) => {
      const h = new UpstreamHandshake(up, T);
      h.start();
      let s: HandshakeStep = { kind: 'need_more' };
      for (const a of answers) s = h.push(a);
      return s;
    };
    const creds: HandshakeUpstream = { type: 'socks5', username: 'u', password: 'p' };
    expect(at(creds, [B(5, 0xff)])).toMatchObject({ kind: 'fail', blame: 'upstream' });
    expect(at(creds, [B(5, 2), B(1, 1)])).toMatchObject({ kind: 'fail', blame: 'upstream' });
    expect(at(creds, [B(5, 2, 9)])).toMatchObject({ kind: 'fail', blame: 'upstream', reason: expect.stringContaining('unexpected bytes') });
    expect(at(creds, [B(5, 2), B(1, 0), B(5, 5, 0, 1, 0, 0, 0, 0, 0, 0)])).toMatchObject({ kind: 'fail', blame: 'target', rep: 5 });
    expect(at(creds, [B(5, 2), B(1, 0), B(5, 2, 0, 1, 0, 0, 0, 0, 0, 0)])).toMatchObject({ kind: 'fail', blame: 'target', rep: 2 });
    expect(at(creds, [B(5, 2), B(1, 0), B(5, 99)])).toMatchObject({ kind: 'fail', blame: 'upstream' });
    expect(at(creds, [B(4, 0)])).toMatchObject({ kind: 'fail', blame: 'upstream' });
  });
});

describe('SOCKS4 upstream', () => {
  test('an IPv4 target, a name (SOCKS4a) with the user id, the 8-byte reply', () => {
    const h = new UpstreamHandshake({ type: 'socks4', username: 'id' }, { host: '1.2.3.4', port: 80 });
    expect(h.start()).toEqual({ kind: 'send', bytes: B(4, 1, 0, 80, 1, 2, 3, 4, 105, 100, 0) });
    expect(h.push(Buffer.concat([B(0, 90, 0, 0, 0, 0, 0, 0), Buffer.from('hi')]))).toEqual({ kind: 'ready', rest: Buffer.from('hi') });
    const n = new UpstreamHandshake({ type: 'socks4' }, { host: 'a.example', port: 80 });
    expect((n.start() as { bytes: Buffer }).bytes.subarray(4, 8)).toEqual(B(0, 0, 0, 1));
  });

  test('91 blames the target; 92 and 93 the upstream; an IPv6 target cannot be carried (the target, REP 08)', () => {
    const reply = (cd: number) => {
      const h = new UpstreamHandshake({ type: 'socks4' }, { host: '1.2.3.4', port: 80 });
      h.start();
      return h.push(B(0, cd, 0, 0, 0, 0, 0, 0));
    };
    expect(reply(91)).toMatchObject({ kind: 'fail', blame: 'target' });
    expect(reply(92)).toMatchObject({ kind: 'fail', blame: 'upstream' });
    expect(reply(93)).toMatchObject({ kind: 'fail', blame: 'upstream' });
    expect(new UpstreamHandshake({ type: 'socks4' }, { host: '2001:db8::1', port: 80 }).start()).toMatchObject({ kind: 'fail', blame: 'target', rep: 8 });
  });
});

describe('any bytes from the upstream (fast-check)', () => {
  const type = fc.constantFrom('http', 'socks4', 'socks5') as fc.Arbitrary<HandshakeUpstream['type']>;
  const creds = fc.option(fc.tuple(fc.string({ maxLength: 10 }), fc.string({ maxLength: 10 })));

  test('never throws, whatever the split; a failure stays the answer to every later push', () => {
    fc.assert(
      fc.property(type, creds, fc.uint8Array({ maxLength: 200 }), fc.array(fc.nat(200)), (t, c, bytes, cuts) => {
        const up: HandshakeUpstream = c === null ? { type: t } : { type: t, username: c[0], password: c[1] };
        const h = new UpstreamHandshake(up, T);
        h.start();
        const steps = feed(h, Buffer.from(bytes), cuts);
        const last = steps[steps.length - 1];
        if (last?.kind === 'fail') {
          expect(h.push(B(1, 2, 3))).toEqual(last);
          expect(h.end()).toEqual(last);
        }
      }),
    );
  });
});
