/**
 * Pinned TLS on both links (src/probe/net/bun-socket.ts upgradeTLS,
 * src/probe/net/node-socket.ts node:tls) against real TLS servers on
 * 127.0.0.1: the handshake gives the peer's certificate, TLS 1.2 at most, a
 * session to keep; that session offered again is resumed (no certificate
 * exchanged); a server with another certificate cannot resume it and shows
 * its own; a peer that does not speak TLS fails the handshake at once. And
 * the exchange on top (src/probe/net/exchange.ts): a pinned exchange keeps
 * the target's session in the thread's store (tls-sessions.ts), the next one
 * resumes it, and an interceptor is still caught with a session offered.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createServer as createNetServer, type AddressInfo, type Server } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls';
import { dialBun, nativeLinkAvailable } from '../../src/probe/net/bun-socket';
import { dialNode } from '../../src/probe/net/node-socket';
import type { Dial, Link } from '../../src/probe/net/exchange-types';
import { LinkRecorder } from '../helpers/link-recorder';
import { exchange, setSocketDriver, type SocketDriver } from '../../src/probe/net/exchange';
import { clearSessions, sessionFor, sessionKey } from '../../src/probe/net/tls-sessions';
import { fingerprintOfDer, pemCertificateDer } from '../../src/probe/codec/cert-pin';
import { startJudgeServer, type JudgeServer } from '../../src/judge/server';
import { interceptorCertificate, startInterceptingHttpProxy, type InterceptingProxy } from '../fixtures/intercepting-proxy';
import { TEST_CERT, TEST_KEY } from '../fixtures/tls-cert';

const PIN = fingerprintOfDer(pemCertificateDer(TEST_CERT)!);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


let judge: JudgeServer;
/** a TLS server with the interceptor's certificate that echoes "other" */
let other: TlsServer;
let otherPort = 0;
let plain: Server;
let plainPort = 0;
let versions: string[] = [];
let interceptor: InterceptingProxy;

beforeAll(async () => {
  judge = await startJudgeServer({ tls: { key: TEST_KEY, cert: TEST_CERT } });
  const c = await interceptorCertificate();
  other = createTlsServer({ key: c.key, cert: c.cert }, (s: TLSSocket) => {
    versions.push(s.getProtocol() ?? '');
    s.on('error', () => s.destroy());
    s.once('data', () => s.end('other'));
  });
  otherPort = await new Promise<number>((r) => other.listen(0, '127.0.0.1', () => r((other.address() as AddressInfo).port)));
  plain = createNetServer((s) => s.once('data', () => s.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n')));
  plainPort = await new Promise<number>((r) => plain.listen(0, '127.0.0.1', () => r((plain.address() as AddressInfo).port)));
  interceptor = await startInterceptingHttpProxy();
});

afterAll(async () => {
  await judge.close();
  await new Promise<void>((r) => other.close(() => r()));
  await new Promise<void>((r) => plain.close(() => r()));
  await interceptor.close();
  setSocketDriver('native');
});

/** Dials, starts pinned TLS once connected (offering `session`), waits for secured or an error. */
async function pinnedTls(dial: Dial, port: number, session?: Buffer): Promise<{ link: Link; r: LinkRecorder }> {
  let link: Link | null = null;
  const r = new LinkRecorder();
  r.onConnected = () => (link as Link).startTls({ host: '127.0.0.1', ca: undefined, pinned: true, session });
  link = dial(r, '127.0.0.1', port);
  for (let i = 0; i < 200 && !r.log.includes('secured') && r.errors.length === 0; i++) await sleep(5);
  return { link, r };
}

/** Sends a judge request over a secured link and waits for the answer to end. */
async function ask(link: Link, r: LinkRecorder): Promise<string> {
  link.write('GET /judge?n=tls-links-nonce HTTP/1.1\r\nHost: x\r\n\r\n');
  for (let i = 0; i < 200 && !r.log.includes('ended') && r.errors.length === 0; i++) await sleep(5);
  return Buffer.concat(r.bytes).toString('latin1');
}

const links: [string, Dial][] = [['node', dialNode], ...(nativeLinkAvailable ? [['native', dialBun] as [string, Dial]] : [])];

describe.each(links)('pinned TLS on the %s link', (_name, dial) => {
  test('a full handshake: the pinned certificate, TLS 1.2, an answer, a session to keep', async () => {
    const { link, r } = await pinnedTls(dial, judge.port);
    expect(r.log).toEqual(['connected', 'secured']);
    expect(link.sessionReused()).toBe(false);
    expect(link.peerCertificate()?.fingerprint).toBe(PIN);
    expect(await ask(link, r)).toStartWith('HTTP/1.1 200 OK');
    expect(link.tlsSession()).not.toBeNull();
    link.destroy();
  });

  test('the kept session offered again is resumed; TLS 1.2 at most (a TLS 1.3 server speaks 1.2)', async () => {
    const first = await pinnedTls(dial, judge.port);
    await ask(first.link, first.r);
    const session = first.link.tlsSession()!;
    first.link.destroy();
    const second = await pinnedTls(dial, judge.port, session);
    expect(second.r.log).toEqual(['connected', 'secured']);
    expect(second.link.sessionReused()).toBe(true);
    expect(await ask(second.link, second.r)).toStartWith('HTTP/1.1 200 OK');
    second.link.destroy();
    versions = [];
    const o = await pinnedTls(dial, otherPort);
    o.link.destroy();
    expect(versions).toEqual(['TLSv1.2']);
  });

  test('a server with another certificate cannot resume the session: it shows its own', async () => {
    const first = await pinnedTls(dial, judge.port);
    await ask(first.link, first.r);
    const session = first.link.tlsSession()!;
    first.link.destroy();
    const o = await pinnedTls(dial, otherPort, session);
    expect(o.r.log).toEqual(['connected', 'secured']);
    expect(o.link.sessionReused()).toBe(false);
    expect(o.link.peerCertificate()?.subject).toBe('CN=interceptor.example');
    expect(o.link.peerCertificate()?.fingerprint).not.toBe(PIN);
    o.link.destroy();
  });

  test('a peer that does not speak TLS fails the handshake at once', async () => {
    const { link, r } = await pinnedTls(dial, plainPort);
    link.destroy();
    expect(r.log.slice(0, 2)).toEqual(['connected', 'errored']); // (an `ended` may follow: the exchange ignores it)
    expect(r.log).not.toContain('secured'); // (waiting for the budget instead would leave no `errored` in the 1 s pinnedTls waits)
  });
});

describe.each(links.map(([n]) => [n as SocketDriver]))('a pinned exchange (%s link)', (driver) => {
  const spec = (port: number, via: 'direct' | 'http' = 'direct', proxyPort = port) =>
    ({
      via,
      proxy: { host: '127.0.0.1', port: proxyPort },
      host: '127.0.0.1',
      port,
      tls: true,
      tlsPin: PIN,
      pathWithQuery: '/judge?n=tls-links-nonce',
      timeoutMs: 2000,
      bodyCap: 64 * 1024,
      allowPrivateTargets: true,
    }) as const;

  test('keeps the target session in the thread store; the next exchange still answers; an interceptor is caught with it offered', async () => {
    setSocketDriver(driver);
    clearSessions();
    const key = sessionKey('127.0.0.1', judge.port, PIN);
    expect(sessionFor(key)).toBeUndefined();
    const a = await exchange(spec(judge.port));
    expect(a).toMatchObject({ error: null, statusCode: 200 });
    const kept = sessionFor(key);
    expect(kept).toBeDefined();
    const b = await exchange(spec(judge.port));
    expect(b).toMatchObject({ error: null, statusCode: 200 });
    expect(sessionFor(key)).toBe(kept); // a resumed exchange keeps the session it resumed
    const c = await exchange(spec(judge.port, 'http', interceptor.port));
    expect(c.error?.code).toBe('tls_intercepted');
    expect(sessionFor(key)).toBe(kept); // nothing from the interceptor is kept
  });

  test('a thread with no session of its own offers the one handed in (ExchangeSpec.tlsSession): resumed, so none is kept anew', async () => {
    setSocketDriver(driver);
    clearSessions();
    const key = sessionKey('127.0.0.1', judge.port, PIN);
    await exchange(spec(judge.port));
    const handed = new Uint8Array(sessionFor(key)!); // as a session arrives from another thread
    clearSessions();
    const resumed = await exchange({ ...spec(judge.port), tlsSession: handed });
    expect(resumed).toMatchObject({ error: null, statusCode: 200 });
    expect(sessionFor(key)).toBeUndefined(); // a resumed exchange keeps nothing: the handed session was accepted
    const full = await exchange({ ...spec(judge.port), tlsSession: new Uint8Array([1, 2, 3]) }); // not a session: a full handshake
    expect(full).toMatchObject({ error: null, statusCode: 200 });
    expect(sessionFor(key)).toBeDefined();
  });
});
