/**
 * The https check through the real probe path (runProbe / runAutoProbe ->
 * https-check.ts -> exchange with a pinned certificate): a signing judge and
 * its TLS listener (the raw judge with `tls`, the test certificate pinned by
 * fingerprint, no CA trusted) on loopback, fake proxies in front.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { ProbeResult, ProtocolSettings, ProbeSettings, TlsJudgeTarget } from '../../src/probe/types';
import type { ProxyAddress, ProxyType } from '../../src/proxy/types';
import { runProbe } from '../../src/probe/probe';
import { runAutoProbe } from '../../src/probe/auto';
import { withHttps } from '../../src/probe/https-check';
import { withoutHttpsCheck } from '../../src/probe/settings';
import { judgeTlsHandshakes, startJudgeServer, type JudgeServer } from '../../src/judge/server';
import { clearSessions, takeHandshakes } from '../../src/probe/net/tls-sessions';
import { parseJudgeUrl } from '../../src/judge/calibrate';
import { fingerprintOfDer, pemCertificateDer } from '../../src/probe/codec/cert-pin';
import { startHttpProxy, startSocksProxy } from '../fixtures/fake-proxies';
import { refusedPort, startBlackHole, type FakeServer } from '../fixtures/fake-servers';
import { startInterceptingHttpProxy, startInterceptingSocks5Proxy, type InterceptingProxy } from '../fixtures/intercepting-proxy';
import { TEST_CERT, TEST_KEY } from '../fixtures/tls-cert';

const KEY = 'https-test-judge-key-0123';
const PIN = fingerprintOfDer(pemCertificateDer(TEST_CERT)!);
let judge: JudgeServer;
let tlsJudgeServer: JudgeServer;
let otherKeyTlsJudge: JudgeServer;
let hole: FakeServer;
let tlsJudge: TlsJudgeTarget;
let base: ProbeSettings;
const servers: Record<string, FakeServer> = {};
let httpInterceptor: InterceptingProxy;
let socksInterceptor: InterceptingProxy;

const tlsTarget = (url: string, key?: string): TlsJudgeTarget => ({ ...parseJudgeUrl(url), protocol: 'https:', fingerprint: PIN, ...(key !== undefined ? { key } : {}) });

beforeAll(async () => {
  judge = await startJudgeServer({ key: KEY });
  tlsJudgeServer = await startJudgeServer({ key: KEY, tls: { key: TEST_KEY, cert: TEST_CERT } });
  otherKeyTlsJudge = await startJudgeServer({ key: 'another-key-0123456789', tls: { key: TEST_KEY, cert: TEST_CERT } });
  hole = await startBlackHole();
  tlsJudge = tlsTarget(tlsJudgeServer.url, KEY);
  base = { type: 'http', timeoutMs: 2000, judge: parseJudgeUrl(judge.url), checkerIps: ['127.0.0.1'], baselineHeaders: [], allowPrivateTargets: true, judgeKey: KEY, tlsJudge };
  servers.http = await startHttpProxy();
  servers.noConnect = await startHttpProxy({ allowConnect: false });
  servers.socks = await startSocksProxy();
  httpInterceptor = await startInterceptingHttpProxy();
  socksInterceptor = await startInterceptingSocks5Proxy(tlsJudgeServer.port);
});

afterAll(async () => {
  for (const s of Object.values(servers)) await s.close();
  await httpInterceptor.close();
  await socksInterceptor.close();
  await hole.close();
  await judge.close();
  await tlsJudgeServer.close();
  await otherKeyTlsJudge.close();
});

const at = (port: number): ProxyAddress => ({ host: '127.0.0.1', port });
const settings = (type: ProxyType, over: Partial<ProbeSettings> = {}): ProtocolSettings => ({ ...base, ...over, type });
const probe = (port: number, type: ProxyType, over: Partial<ProbeSettings> = {}): Promise<ProbeResult> => runProbe({ index: 1, proxy: at(port) }, settings(type, over));

describe('working proxies get https', () => {
  test('an http proxy that allows CONNECT: https true (pinned, no CA trusted)', async () => {
    const r = await probe(servers.http!.port, 'http');
    expect(r).toMatchObject({ status: 'working', error: null, https: true, statusCode: 200 });
    expect(r.anonymity).not.toBeNull();
  });

  test('resumption: a second https check through the same proxy resumes, and both sides count it (full, then resumed)', async () => {
    clearSessions();
    takeHandshakes();
    const judgeBefore = { ...judgeTlsHandshakes };
    expect(await probe(servers.http!.port, 'http')).toMatchObject({ status: 'working', https: true });
    expect(await probe(servers.http!.port, 'http')).toMatchObject({ status: 'working', https: true });
    expect(takeHandshakes()).toEqual({ full: 1, resumed: 1 });
    expect(takeHandshakes()).toEqual({ full: 0, resumed: 0 }); // taken
    expect({ full: judgeTlsHandshakes.full - judgeBefore.full, resumed: judgeTlsHandshakes.resumed - judgeBefore.resumed }).toEqual({ full: 1, resumed: 1 });
  });

  test('an http proxy that refuses CONNECT: still working, https false', async () => {
    const r = await probe(servers.noConnect!.port, 'http');
    expect(r).toMatchObject({ status: 'working', https: false });
  });

  for (const type of ['socks5', 'socks4'] as const) {
    test(`${type}: the SOCKS tunnel to the TLS judge gives https true`, async () => {
      expect(await probe(servers.socks!.port, type)).toMatchObject({ status: 'working', https: true });
    });
  }

  test('a TLS judge that does not answer: https false once the budget is spent, inside the one timeout', async () => {
    const t0 = performance.now();
    const r = await probe(servers.http!.port, 'http', { timeoutMs: 1000, tlsJudge: { ...tlsTarget(`https://127.0.0.1:${hole.port}/judge`) } });
    const took = performance.now() - t0;
    expect(r).toMatchObject({ status: 'working', https: false });
    expect(took).toBeGreaterThan(900);
    expect(took).toBeLessThan(1300);
  });

  test('a TLS judge answer that is not signed with its key: https false, the proxy still working', async () => {
    const r = await probe(servers.http!.port, 'http', { tlsJudge: tlsTarget(otherKeyTlsJudge.url, KEY) });
    expect(r).toMatchObject({ status: 'working', https: false });
  });

  test('without a TLS judge: no https field, one connection per probe', async () => {
    const { tlsJudge: _, ...plain } = base;
    const before = servers.http!.accepted();
    const r = await runProbe({ index: 1, proxy: at(servers.http!.port) }, { ...plain, type: 'http' });
    expect(r.status).toBe('working');
    expect('https' in r).toBe(false);
    expect(servers.http!.accepted() - before).toBe(1);
  });

  test('no budget left after the judge check: https null (not known), no second connection', async () => {
    const plain = await probe(servers.http!.port, 'http', { tlsJudge: undefined });
    expect(plain.status).toBe('working');
    const before = servers.http!.accepted();
    // the budget began a whole timeout ago: nothing left for the TLS check
    const r = await withHttps(plain, { index: 1, proxy: at(servers.http!.port) }, settings('http'), performance.now() - base.timeoutMs);
    expect(r).toMatchObject({ status: 'working', https: null });
    expect(servers.http!.accepted() - before).toBe(0);
  });

  test('a job that opted out (withoutHttpsCheck): no https field, one connection, even through an interceptor', async () => {
    const off = withoutHttpsCheck(base);
    expect(off.tlsJudge).toBeUndefined();
    expect(off.httpsCheck).toBe(false);
    const before = servers.http!.accepted();
    const r = await runProbe({ index: 1, proxy: at(servers.http!.port) }, { ...off, type: 'http' });
    expect(r.status).toBe('working');
    expect('https' in r).toBe(false);
    expect(servers.http!.accepted() - before).toBe(1);
    expect((await runProbe({ index: 1, proxy: at(httpInterceptor.port) }, { ...off, type: 'http' })).status).toBe('working');
  });

  test('a working proxy costs one more connection (the tunnel), a failed one none', async () => {
    const before = servers.http!.accepted();
    await probe(servers.http!.port, 'http');
    expect(servers.http!.accepted() - before).toBe(2);
    const refused = await probe(await refusedPort(), 'http');
    expect(refused.status).toBe('failed');
    expect('https' in refused).toBe(false);
  });
});

describe('tls_intercepted: a lying proxy is never working', () => {
  test('an http proxy that terminates TLS with its own certificate: failed, with its subject and fingerprint', async () => {
    const r = await probe(httpInterceptor.port, 'http');
    expect(httpInterceptor.intercepted).toBeGreaterThan(0);
    expect(r).toMatchObject({ status: 'failed', statusCode: null, anonymity: null, origin: null });
    expect(r.error?.code).toBe('tls_intercepted');
    expect(r.error?.certificate).toEqual({ subject: httpInterceptor.subject, fingerprint: httpInterceptor.fingerprint });
    expect(r.error?.message).toContain(httpInterceptor.fingerprint);
    expect(r.error?.message).toContain('CN=interceptor.example');
    expect(httpInterceptor.fingerprint).not.toBe(PIN);
    expect('https' in r).toBe(false);
  });

  test('a SOCKS5 proxy that does the same: tls_intercepted', async () => {
    const r = await probe(socksInterceptor.port, 'socks5');
    expect(r.status).toBe('failed');
    expect(r.error).toMatchObject({ code: 'tls_intercepted', certificate: { subject: 'CN=interceptor.example', fingerprint: socksInterceptor.fingerprint } });
  });

  test('the same interceptor without a TLS judge configured passes the plain judge check (what the https check adds)', async () => {
    const { tlsJudge: _, ...plain } = base;
    expect((await runProbe({ index: 1, proxy: at(httpInterceptor.port) }, { ...plain, type: 'http' })).status).toBe('working');
  });
});

describe('type auto', () => {
  test('an http proxy: working, type http, https true (the check runs while the SOCKS attempts wait)', async () => {
    const r = await runAutoProbe({ index: 1, proxy: at(servers.http!.port) }, { ...base, type: 'auto', timeoutMs: 1500 });
    expect(r).toMatchObject({ status: 'working', protocols: ['http'], https: true });
  });

  test('a socks proxy: https of the named protocol (socks5)', async () => {
    const r = await runAutoProbe({ index: 1, proxy: at(servers.socks!.port) }, { ...base, type: 'auto', timeoutMs: 1500 });
    expect(r).toMatchObject({ status: 'working', protocols: ['socks5', 'socks4'], https: true });
  });

  test('an intercepting http proxy: failed tls_intercepted, whatever else passed', async () => {
    const r = await runAutoProbe({ index: 1, proxy: at(httpInterceptor.port) }, { ...base, type: 'auto', timeoutMs: 1500 });
    expect(r.status).toBe('failed');
    expect(r.error?.code).toBe('tls_intercepted');
    expect(r.error?.message.startsWith('http: ')).toBe(true);
    expect(r.error?.certificate?.fingerprint).toBe(httpInterceptor.fingerprint);
  });
});
