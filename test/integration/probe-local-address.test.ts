/**
 * Transparency seen from every address the checker uses: a transparent proxy
 * (it adds `X-Forwarded-For: <the client address it saw>`) reached over an
 * address of this host that calibration never learned is `transparent`, not
 * `anonymous`. Calibration asks the judge on 127.0.0.1 and learns 127.0.0.1
 * only; the proxy is reached over
 *
 * - IPv6 loopback `::1` (runs wherever Bun binds ::1), and
 * - a link-local address on a veth pair of the test's own
 *   (test/helpers/veth.ts; root and `ip` only, skipped otherwise),
 *
 * through the native link and the node:net link. Also: the exchange reports
 * the socket's local address (ExchangeOutcome.localAddress) for each link,
 * TLS included.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createServer } from 'node:net';
import type { ProbeResult, ProtocolSettings } from '../../src/probe/types';
import { runProbe } from '../../src/probe/probe';
import { exchange, setSocketDriver, socketDriver, type SocketDriver } from '../../src/probe/net/exchange';
import { nativeLinkAvailable } from '../../src/probe/net/bun-socket';
import { startJudgeServer, type JudgeServer } from '../../src/judge/server';
import { calibrate, parseJudgeUrl } from '../../src/judge/calibrate';
import { startHttpProxy } from '../fixtures/fake-proxies';
import { refusedPort, startTlsJudge, type FakeServer } from '../fixtures/fake-servers';
import { TEST_CERT } from '../fixtures/tls-cert';
import { createVeth, vethUnavailable, type Veth } from '../helpers/veth';

/** Can this host bind and reach ::1? (checked once, before the tests are declared) */
async function ipv6Loopback(): Promise<boolean> {
  const s = createServer();
  try {
    await new Promise<void>((ok, fail) => {
      s.once('error', fail);
      s.listen(0, '::1', () => ok());
    });
    return true;
  } catch {
    return false;
  } finally {
    await new Promise<void>((r) => s.close(() => r()));
  }
}

const hasV6 = await ipv6Loopback();
const veth: Veth | null = createVeth();
if (veth === null) console.warn(`veth route skipped: ${vethUnavailable}`);

const DRIVERS: SocketDriver[] = nativeLinkAvailable ? ['native', 'node'] : ['node'];
const driverBefore = socketDriver();

let judge: JudgeServer;
let tlsJudge: FakeServer;
let settings: ProtocolSettings;
const proxies: FakeServer[] = [];
const xff = (ip: string): [string, string][] => [['X-Forwarded-For', ip]];

beforeAll(async () => {
  judge = await startJudgeServer(); // 127.0.0.1
  tlsJudge = await startTlsJudge();
  const j = parseJudgeUrl(judge.url);
  const cal = await calibrate(j, 2000);
  settings = { type: 'http', timeoutMs: 2000, judge: j, checkerIps: cal.ips, baselineHeaders: cal.baselineHeaders, allowPrivateTargets: true, tlsCa: TEST_CERT };
});

afterAll(async () => {
  setSocketDriver(driverBefore);
  for (const p of proxies) await p.close();
  await tlsJudge?.close();
  await judge?.close();
  veth?.remove();
});

async function transparentProxyOn(host: string): Promise<FakeServer> {
  const p = await startHttpProxy({ listenHost: host, addHeaders: xff });
  proxies.push(p);
  return p;
}

function expectTransparent(r: ProbeResult): void {
  expect(r).toMatchObject({ status: 'working', statusCode: 200, error: null, origin: '127.0.0.1' });
  expect(r.anonymity).toBe('transparent');
}

test('calibration learned 127.0.0.1 only', () => {
  expect(settings.checkerIps).toEqual(['127.0.0.1']);
});

describe.each(DRIVERS)('%s link', (driver) => {
  beforeAll(() => {
    expect(setSocketDriver(driver)).toBe(driver);
  });

  test.if(hasV6)('a transparent proxy reached over ::1 is transparent', async () => {
    const p = await transparentProxyOn('::1');
    const r = await runProbe({ index: 1, proxy: { host: '::1', port: p.port } }, settings);
    expectTransparent(r);
    // and over 127.0.0.1, the calibrated address, as before
    const q = await transparentProxyOn('127.0.0.1');
    expectTransparent(await runProbe({ index: 2, proxy: { host: '127.0.0.1', port: q.port } }, settings));
  });

  test.if(hasV6)('a proxy that names another address stays anonymous over ::1', async () => {
    const p = await startHttpProxy({ listenHost: '::1', addHeaders: () => xff('::2') });
    proxies.push(p);
    const r = await runProbe({ index: 3, proxy: { host: '::1', port: p.port } }, settings);
    expect(r).toMatchObject({ status: 'working', anonymity: 'anonymous' });
  });

  test.if(veth !== null)('a transparent proxy reached over a veth address of this host is transparent', async () => {
    const v = veth as Veth;
    const p = await transparentProxyOn(v.hostAddress);
    const r = await runProbe({ index: 4, proxy: { host: v.hostAddress, port: p.port } }, settings);
    expect(settings.checkerIps).not.toContain(v.hostAddress);
    expectTransparent(r);
  });

  test('the exchange reports the local address of its socket', async () => {
    const j = settings.judge;
    const direct = (connectAddress: string, tls = false) =>
      exchange({
        via: 'direct',
        proxy: { host: connectAddress, port: tls ? tlsJudge.port : j.port },
        host: tls ? 'localhost' : j.host,
        port: tls ? tlsJudge.port : j.port,
        tls,
        pathWithQuery: '/judge?n=1',
        timeoutMs: 2000,
        bodyCap: 65536,
        allowPrivateTargets: true,
        tlsCa: TEST_CERT,
        connectAddress,
      });
    const v4 = await direct('127.0.0.1');
    expect(v4.error).toBeNull();
    expect(v4.localAddress).toBe('127.0.0.1');
    const tls = await direct('127.0.0.1', true); // TLS always runs on the node link
    expect(tls.error).toBeNull();
    expect(tls.localAddress).toBe('127.0.0.1');
    const port = await refusedPort();
    const refused = await exchange({ via: 'direct', proxy: { host: '127.0.0.1', port }, host: '127.0.0.1', port, tls: false, pathWithQuery: '/', timeoutMs: 2000, bodyCap: 1, allowPrivateTargets: true });
    expect(refused.error?.code).toBe('connect_refused');
    expect(refused.localAddress).toBeNull(); // no connection, no address
  });
});
