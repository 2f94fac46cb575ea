/**
 * The client-side tunnel machine (src/probe/codec/tunnel-client.ts), shared by
 * the probe and the gateway: the bytes of each stage, the neutral failure of
 * each refusal (kind, stage, detail), the CONNECT status kept, the same steps
 * for any split (fast-check); and the probe's mapping of its failures to
 * error codes (exchange-states.ts tunnelError, stateOfTunnelStage). The
 * gateway's mapping to blame is test/unit/gateway-upstream-handshake.test.ts.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { proxyAuthorization, readTunnelReply, TunnelClient, type TunnelProxy, type TunnelStep } from '../../src/probe/codec/tunnel-client';
import { ExchangeState, stateOfTunnelStage, tunnelError } from '../../src/probe/net/exchange-states';

const B = (...bytes: number[]) => Buffer.from(bytes);
const T = { host: 'example.com', port: 443 };

function run(proxy: TunnelProxy, answers: Buffer[], target = T): { client: TunnelClient; steps: TunnelStep[] } {
  const client = new TunnelClient(proxy, target);
  const steps = [client.start()];
  for (const a of answers) steps.push(client.push(a));
  return { client, steps };
}
const last = (r: { steps: TunnelStep[] }) => r.steps[r.steps.length - 1] as TunnelStep;
const failure = (r: { steps: TunnelStep[] }) => (last(r) as Extract<TunnelStep, { kind: 'fail' }>).failure;

describe('stages', () => {
  test('HTTP: CONNECT with the given authorization; 2xx ready with the rest and the status, kept after', () => {
    const c = new TunnelClient({ type: 'http', username: 'u', password: 'p' }, T);
    const first = c.start() as { kind: 'send'; bytes: Buffer };
    expect(first.bytes.toString('latin1')).toContain(`Proxy-Authorization: ${proxyAuthorization({ type: 'http', username: 'u', password: 'p' })}\r\n`);
    expect(c.stage).toBe('http_connect');
    expect(c.push(Buffer.from('HTTP/1.1 200 OK\r\n'))).toEqual({ kind: 'need_more' });
    expect(c.push(Buffer.from('\r\nhello'))).toEqual({ kind: 'ready', rest: Buffer.from('hello'), status: 200 });
    expect([c.stage, c.statusCode]).toEqual(['ready', 200]);
    expect(c.push(B(1))).toEqual({ kind: 'need_more' });
    expect(c.end()).toEqual({ kind: 'need_more' });
    const own = new TunnelClient({ type: 'http' }, T, 'Basic eA==').start() as { bytes: Buffer };
    expect(own.bytes.toString('latin1')).toContain('Proxy-Authorization: Basic eA==\r\n');
  });

  test('SOCKS5 with credentials: method, auth, CONNECT, each stage named', () => {
    const c = new TunnelClient({ type: 'socks5', username: 'u', password: 'p' }, { host: '10.0.0.1', port: 80 });
    expect(c.start()).toEqual({ kind: 'send', bytes: B(5, 2, 0, 2) });
    expect(c.stage).toBe('socks5_method');
    expect(c.push(B(5, 2))).toEqual({ kind: 'send', bytes: B(1, 1, 0x75, 1, 0x70) });
    expect(c.stage).toBe('socks5_auth');
    expect(c.push(B(1, 0))).toEqual({ kind: 'send', bytes: B(5, 1, 0, 1, 10, 0, 0, 1, 0, 80) });
    expect(c.stage).toBe('socks5_reply');
    expect(c.push(B(5, 0, 0, 1, 0, 0, 0, 0, 0, 0, 7))).toEqual({ kind: 'ready', rest: B(7), status: 0 });
  });

  test('SOCKS4: one request, the 8-byte reply', () => {
    const r = run({ type: 'socks4' }, [B(0, 90, 0, 0, 0, 0, 0, 0)], { host: '1.2.3.4', port: 80 });
    expect(r.steps[0]).toEqual({ kind: 'send', bytes: B(4, 1, 0, 80, 1, 2, 3, 4, 0) });
    expect(last(r)).toEqual({ kind: 'ready', rest: Buffer.alloc(0), status: 0 });
  });
});

describe('failures are neutral: kind, stage, detail', () => {
  test('CONNECT: a status (407 too) with it as detail; garbage invalid_answer; EOF closed', () => {
    expect(failure(run({ type: 'http' }, [Buffer.from('HTTP/1.1 407 No\r\n\r\n')]))).toEqual({ kind: 'status', stage: 'http_connect', message: 'proxy answered CONNECT with 407', detail: 407 });
    expect(failure(run({ type: 'http' }, [Buffer.from('SSH-2.0\r\n\r\n')]))).toMatchObject({ kind: 'invalid_answer', stage: 'http_connect', detail: -1 });
    const c = new TunnelClient({ type: 'http' }, T);
    c.start();
    expect(c.end()).toEqual({ kind: 'fail', failure: { kind: 'closed', stage: 'http_connect', message: 'the proxy closed during the handshake', detail: -1 } });
  });

  test('SOCKS: the parser\'s code with the reply byte; early bytes; unframable target and credentials', () => {
    const creds: TunnelProxy = { type: 'socks5', username: 'u', password: 'p' };
    expect(failure(run(creds, [B(5, 2), B(1, 0), B(5, 5, 0, 1, 0, 0, 0, 0, 0, 0)]))).toMatchObject({ kind: 'socks_rejected', stage: 'socks5_reply', detail: 5 });
    expect(failure(run(creds, [B(5, 0xff)]))).toMatchObject({ kind: 'socks_rejected', stage: 'socks5_method', detail: 0xff });
    expect(failure(run({ type: 'socks5' }, [B(5, 0xff)]))).toMatchObject({ kind: 'auth_required', stage: 'socks5_method' });
    expect(failure(run(creds, [B(5, 2, 9)]))).toMatchObject({ kind: 'early_bytes', stage: 'socks5_method' });
    expect(failure(run({ type: 'socks4' }, [B(0, 91, 0, 0, 0, 0, 0, 0)], { host: '1.2.3.4', port: 80 }))).toMatchObject({ kind: 'socks_rejected', stage: 'socks4_reply', detail: 91 });
    expect(failure(run({ type: 'socks4' }, [], { host: '2001:db8::1', port: 80 }))).toMatchObject({ kind: 'unencodable', stage: 'socks4_reply' });
    expect(failure(run({ type: 'socks5', username: 'x'.repeat(300), password: 'p' }, [B(5, 2)]))).toMatchObject({ kind: 'unencodable', stage: 'socks5_auth' });
    expect(failure(run({ type: 'socks5' }, [B(5, 0)], { host: 'a'.repeat(300), port: 80 }))).toMatchObject({ kind: 'unencodable', stage: 'socks5_reply' });
  });

  test('a failure is repeated by every later push, start and end', () => {
    const r = run({ type: 'socks5' }, [B(9)]);
    const f = last(r);
    expect(f.kind).toBe('fail');
    expect([r.client.push(B(5, 0)), r.client.start(), r.client.end(), r.client.stage]).toEqual([f, f, f, 'failed']);
  });
});

describe('any split, any bytes (fast-check)', () => {
  const type = fc.constantFrom('http', 'socks4', 'socks5') as fc.Arbitrary<TunnelProxy['type']>;

  /** The steps until the first fail or ready; a ready's rest joined to the bytes not pushed (tunnel bytes). */
  function feed(proxy: TunnelProxy, pieces: Buffer[]): unknown[] {
    const c = new TunnelClient(proxy, T);
    const out: unknown[] = [c.start()];
    for (let i = 0; i < pieces.length; i++) {
      const s = c.push(pieces[i] as Buffer);
      if (s.kind === 'need_more') continue;
      if (s.kind === 'ready') return [...out, { ...s, rest: Buffer.concat([s.rest, ...pieces.slice(i + 1)]) }];
      out.push(s);
      if (s.kind === 'fail') return out;
    }
    return out;
  }

  test('the same steps however the proxy\'s bytes are cut; never a throw', () => {
    fc.assert(
      fc.property(type, fc.boolean(), fc.uint8Array({ maxLength: 120 }), fc.array(fc.nat(120)), (t, creds, bytes, cuts) => {
        const proxy: TunnelProxy = creds ? { type: t, username: 'u', password: 'p' } : { type: t };
        const whole = Buffer.from(bytes);
        const pieces: Buffer[] = [];
        let at = 0;
        for (const c of [...new Set(cuts.map((x) => x % (whole.length + 1)))].sort((a, b) => a - b).concat(whole.length)) {
          pieces.push(whole.subarray(at, c));
          at = c;
        }
        expect(feed(proxy, pieces)).toEqual(feed(proxy, [whole]));
      }),
    );
  });

  test('a well-behaved SOCKS5 server\'s replies, each cut anywhere: the tunnel comes up with the first bytes after it', () => {
    const replies = [B(5, 2), B(1, 0), Buffer.concat([B(5, 0, 0, 3, 3, 0x61, 0x62, 0x63, 0, 80), Buffer.from('first')])];
    fc.assert(
      fc.property(fc.array(fc.nat(20)), (cuts) => {
        const c = new TunnelClient({ type: 'socks5', username: 'u', password: 'p' }, T);
        const kinds = [c.start().kind];
        let ready: TunnelStep | null = null;
        for (const reply of replies) {
          let at = 0;
          for (const x of [...new Set(cuts.map((n) => n % (reply.length + 1)))].sort((p, q) => p - q).concat(reply.length)) {
            const s = c.push(reply.subarray(at, x));
            at = x;
            if (s.kind === 'need_more') continue;
            kinds.push(s.kind);
            if (s.kind === 'ready') ready = { ...s, rest: Buffer.concat([s.rest, reply.subarray(at)]) };
            break;
          }
        }
        expect(kinds).toEqual(['send', 'send', 'send', 'ready']);
        expect(ready).toEqual({ kind: 'ready', rest: Buffer.from('first'), status: 0 });
      }),
    );
  });
});

describe('the probe\'s mapping (exchange-states.ts)', () => {
  test('each stage is the exchange state with its messages', () => {
    expect(['http_connect', 'socks4_reply', 'socks5_method', 'socks5_auth', 'socks5_reply'].map((s) => stateOfTunnelStage(s as never))).toEqual([
      ExchangeState.HTTP_CONNECT,
      ExchangeState.SOCKS4_REPLY,
      ExchangeState.SOCKS5_METHOD,
      ExchangeState.SOCKS5_AUTH,
      ExchangeState.SOCKS5_REPLY,
    ]);
  });

  test('failures to probe error codes, as the exchange gave them before the machine was shared', () => {
    const f = (kind: string, stage: string, detail = -1, message = 'm') => tunnelError({ kind: kind as never, stage: stage as never, message, detail });
    expect(f('status', 'http_connect', 407)).toEqual({ code: 'auth_required', message: 'proxy answered CONNECT with 407 Proxy Authentication Required' });
    expect(f('status', 'http_connect', 403)).toEqual({ code: 'http_status', message: 'proxy answered CONNECT with 403' });
    expect(f('invalid_answer', 'http_connect')).toEqual({ code: 'bad_response', message: 'm' });
    expect(f('socks_rejected', 'socks5_reply', 5)).toEqual({ code: 'socks_rejected', message: 'm' });
    expect(f('auth_required', 'socks5_method')).toEqual({ code: 'auth_required', message: 'm' });
    expect(f('bad_response', 'socks4_reply')).toEqual({ code: 'bad_response', message: 'm' });
    expect(f('unencodable', 'socks4_reply')).toEqual({ code: 'socks_rejected', message: 'm' });
    expect(f('unencodable', 'socks5_reply')).toEqual({ code: 'socks_rejected', message: 'm' });
    expect(f('unencodable', 'socks5_auth')).toEqual({ code: 'auth_required', message: 'm' });
    expect(f('early_bytes', 'socks5_auth')).toEqual({ code: 'bad_response', message: 'SOCKS5 server sent unexpected bytes' });
    expect(f('closed', 'socks5_method')).toEqual({ code: 'connection_closed', message: 'connection closed while waiting for the SOCKS5 method reply' });
  });

  test('readTunnelReply reads the reply of each SOCKS stage', () => {
    expect(readTunnelReply('socks4_reply', B(0, 90, 0, 0, 0, 0, 0, 0), false)).toEqual({ kind: 'ok', consumed: 8, value: 90 });
    expect(readTunnelReply('socks5_method', B(5, 2), true)).toEqual({ kind: 'ok', consumed: 2, value: 2 });
    expect(readTunnelReply('socks5_auth', B(1, 0), true)).toMatchObject({ kind: 'ok', consumed: 2 });
    expect(readTunnelReply('socks5_reply', B(5, 0, 0), false)).toEqual({ kind: 'incomplete' });
  });
});
