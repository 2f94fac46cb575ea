/**
 * runProbe against fakes on loopback: every verdict exact (status, error code,
 * statusCode, anonymity, origin) for http, socks4/4a and socks5 proxies, with
 * plain and https (CONNECT / tunnel + TLS) judges; zero false positives.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { ProbeErrorCode, ProbeResult, ProtocolSettings } from '../../src/probe/types';
import type { ProxyAddress } from '../../src/proxy/types';
import { runProbe } from '../../src/probe/probe';
import { dnsCache } from '../../src/probe/net/dns-cache';
import { startJudgeServer, type JudgeServer } from '../../src/judge/server';
import { calibrate, parseJudgeUrl } from '../../src/judge/calibrate';
import { renderJudgeBody } from '../../src/probe/codec/judge-body';
import { startHttpProxy, startSocksProxy } from '../fixtures/fake-proxies';
import {
  refusedPort,
  startBlackHole,
  startCaptive,
  startGarbage,
  startReplayer,
  startSlowLoris,
  startTlsJudge,
  startUnaccepting,
  type FakeServer,
  type Unaccepting,
} from '../fixtures/fake-servers';
import { TEST_CERT } from '../fixtures/tls-cert';

let judge: JudgeServer;
let tlsJudge: FakeServer;
let unaccepting: Unaccepting;
const servers: Record<string, FakeServer> = {};
let settings: ProtocolSettings;
let tlsSettings: ProtocolSettings;
let hostnameJudgeSettings: ProtocolSettings;
const USER = { username: 'alice', password: 'pä:ss' };

beforeAll(async () => {
  judge = await startJudgeServer();
  tlsJudge = await startTlsJudge();
  const j = parseJudgeUrl(judge.url);
  const cal = await calibrate(j, 2000);
  settings = { type: 'http', timeoutMs: 1000, judge: j, checkerIps: cal.ips, baselineHeaders: cal.baselineHeaders, allowPrivateTargets: true, tlsCa: TEST_CERT };
  tlsSettings = { ...settings, judge: parseJudgeUrl(`https://localhost:${tlsJudge.port}/judge`) };
  hostnameJudgeSettings = { ...settings, judge: parseJudgeUrl(`http://localhost:${judge.port}/judge`) };
  const entries: [string, Promise<FakeServer>][] = [
    ['elite', startHttpProxy()],
    ['anonymous', startHttpProxy({ addHeaders: () => [['Via', '1.1 fake-proxy']] })],
    ['transparent', startHttpProxy({ addHeaders: (ip) => [['Via', '1.1 fake-proxy'], ['X-Forwarded-For', ip]] })],
    ['xffOther', startHttpProxy({ addHeaders: () => [['X-Forwarded-For', '127.0.0.10']] })],
    ['auth', startHttpProxy({ auth: USER })],
    ['connectOnly', startHttpProxy({ allowGet: false })],
    ['getOnly', startHttpProxy({ allowConnect: false })],
    ['absolute', startHttpProxy({ keepAbsoluteForm: true })],
    ['absoluteOtherExit', startHttpProxy({ keepAbsoluteForm: true, upstreamFrom: () => '127.0.0.2' })],
    ['v6', startHttpProxy({ listenHost: '::1' })],
    ['socks', startSocksProxy()],
    ['socksAuth', startSocksProxy({ auth: USER })],
    ['socksReject', startSocksProxy({ rejectConnect: true })],
    ['socks5Only', startSocksProxy({ only: 5 })],
    ['blackHole', startBlackHole()],
    ['captive', startCaptive()],
    ['garbage', startGarbage()],
    ['slowLoris', startSlowLoris(50)],
    ['replayer', startReplayer(renderJudgeBody({ requestLine: 'GET /judge?n=0123 HTTP/1.1', headers: [], remoteAddress: '127.0.0.1', nonce: '0123' }))],
  ];
  for (const [k, p] of entries) servers[k] = await p;
  unaccepting = await startUnaccepting();
  dnsCache.prime('proxy.test', { addresses: ['127.0.0.1'], errorCode: null }, 60_000);
  dnsCache.prime('nowhere.test', { addresses: [], errorCode: 'ENOTFOUND' }, 60_000);
});

afterAll(async () => {
  for (const s of Object.values(servers)) await s.close();
  await tlsJudge.close();
  await judge.close();
  await unaccepting.close();
});

const at = (name: string, extra: Partial<ProxyAddress> = {}): ProxyAddress => ({
  host: servers[name]?.host ?? '127.0.0.1',
  port: servers[name]?.port ?? 0,
  ...extra,
});
const probe = (proxy: ProxyAddress, s: ProtocolSettings = settings): Promise<ProbeResult> => runProbe({ index: 7, proxy }, s);

function expectWorking(r: ProbeResult, anonymity: string): void {
  expect(r).toMatchObject({ index: 7, status: 'working', statusCode: 200, anonymity, origin: '127.0.0.1', error: null });
  expect(r.responseTimeMs).toBeGreaterThan(0);
  expect(r.responseTimeMs).toBeLessThan(1000);
}
function expectFailed(r: ProbeResult, code: ProbeErrorCode, statusCode: number | null = null): void {
  expect(r.status).toBe('failed');
  expect(r.error?.code).toBe(code);
  expect(r.statusCode).toBe(statusCode);
  expect(r.anonymity).toBeNull();
  expect(r.origin).toBeNull();
  expect(r.index).toBe(7);
}

describe('http proxies', () => {
  test('calibration saw the checker as 127.0.0.1 with no baseline headers', () => {
    expect(settings.checkerIps).toEqual(['127.0.0.1']);
    expect(settings.baselineHeaders).toEqual([]);
  });
  test('elite, anonymous, transparent', async () => {
    expectWorking(await probe(at('elite')), 'elite');
    expectWorking(await probe(at('anonymous')), 'anonymous');
    expectWorking(await probe(at('transparent')), 'transparent');
    expectWorking(await probe(at('xffOther')), 'anonymous');
  });
  test('Basic auth: right credentials work, missing or wrong ones are auth_required', async () => {
    expectWorking(await probe(at('auth', USER)), 'elite');
    expectFailed(await probe(at('auth')), 'auth_required', 407);
    expectFailed(await probe(at('auth', { username: 'alice', password: 'nope' })), 'auth_required', 407);
  });
  test('https judge through CONNECT + TLS', async () => {
    expectWorking(await probe(at('elite'), tlsSettings), 'elite');
    expectWorking(await probe(at('transparent'), tlsSettings), 'elite'); // a tunnel cannot add headers
    expectWorking(await probe(at('auth', USER), tlsSettings), 'elite');
    expectFailed(await probe(at('auth'), tlsSettings), 'auth_required', 407);
    expectFailed(await probe(at('getOnly'), tlsSettings), 'http_status', 405);
  });
  test('TLS with an untrusted certificate is tls_failed', async () => {
    const { tlsCa: _drop, ...noCa } = tlsSettings;
    expectFailed(await probe(at('elite'), noCa), 'tls_failed');
  });
  test('a proxy that accepts CONNECT but not GET fails for an http judge', async () => {
    expectFailed(await probe(at('connectOnly')), 'http_status', 403);
    expectWorking(await probe(at('connectOnly'), tlsSettings), 'elite');
  });
  test('IPv6 proxy and hostname proxy', async () => {
    expectWorking(await probe({ host: '::1', port: servers.v6?.port ?? 0 }), 'elite');
    expectWorking(await probe({ host: 'proxy.test', port: servers.elite?.port ?? 0 }), 'elite');
    expectFailed(await probe({ host: 'nowhere.test', port: 80 }), 'dns_failed');
  });
});

describe('socks proxies', () => {
  test('socks5 without and with username/password, plain and TLS judge', async () => {
    const s5 = { ...settings, type: 'socks5' as const };
    expectWorking(await probe(at('socks'), s5), 'elite');
    expectWorking(await probe(at('socks'), { ...hostnameJudgeSettings, type: 'socks5' }), 'elite');
    expectWorking(await probe(at('socksAuth', USER), s5), 'elite');
    expectWorking(await probe(at('socksAuth', USER), { ...tlsSettings, type: 'socks5' }), 'elite');
    expectFailed(await probe(at('socksAuth'), s5), 'auth_required');
    expectFailed(await probe(at('socksAuth', { username: 'alice', password: 'x' }), s5), 'auth_required');
    expectFailed(await probe(at('socksReject'), s5), 'socks_rejected');
  });
  test('socks4 and socks4a', async () => {
    const s4 = { ...settings, type: 'socks4' as const };
    expectWorking(await probe(at('socks'), s4), 'elite');
    expectWorking(await probe(at('socks'), { ...hostnameJudgeSettings, type: 'socks4' }), 'elite');
    expectWorking(await probe(at('socks'), { ...tlsSettings, type: 'socks4' }), 'elite');
    expectWorking(await probe(at('socksAuth', { username: 'alice' }), s4), 'elite');
    expectFailed(await probe(at('socksAuth', { username: 'bob' }), s4), 'auth_required');
    expectFailed(await probe(at('socksReject'), s4), 'socks_rejected');
    expectFailed(await probe(at('socks5Only'), s4), 'connection_closed');
  });
  test('wrong protocol for the server', async () => {
    expectFailed(await probe(at('socks')), 'connection_closed');
    expectFailed(await probe(at('captive'), { ...settings, type: 'socks5' }), 'bad_response');
    expectFailed(await probe(at('captive'), { ...settings, type: 'socks4' }), 'bad_response');
  });
});

describe('things that are not working proxies', () => {
  test('captive page, replayed judge answer, garbage, refused', async () => {
    expectFailed(await probe(at('captive')), 'judge_mismatch', 200);
    expectFailed(await probe(at('replayer')), 'judge_mismatch', 200);
    expectFailed(await probe(at('garbage')), 'bad_response');
    expectFailed(await probe(at('garbage'), { ...settings, type: 'socks5' }), 'bad_response');
    expectFailed(await probe(at('garbage'), { ...settings, type: 'socks4' }), 'bad_response');
    expectFailed(await probe({ host: '127.0.0.1', port: await refusedPort() }), 'connect_refused');
    expectFailed(await probe({ host: '::1', port: await refusedPort() }), 'connect_refused');
  });
  test('the judge itself is not a proxy', async () => {
    expectFailed(await probe({ host: '127.0.0.1', port: judge.port }), 'judge_mismatch', 200);
  });
  test('a proxy that forwards absolute-form unchanged works unless it exits from one of our addresses', async () => {
    // exiting from our own address it is indistinguishable from the judge itself
    expectFailed(await probe(at('absolute')), 'judge_mismatch', 200);
    // ... also when calibration never learned that address: the probe socket's own address counts
    expectFailed(await probe(at('absolute'), { ...settings, checkerIps: ['203.0.113.1'] }), 'judge_mismatch', 200);
    const r = await probe(at('absoluteOtherExit'), { ...settings, checkerIps: ['203.0.113.1'] });
    expect(r).toMatchObject({ status: 'working', anonymity: 'elite', origin: '127.0.0.2' });
  });
  test('the judge reached directly over an address calibration never learned is not a proxy', async () => {
    // was `working` (a false positive) while only the calibrated addresses counted
    expectFailed(await probe({ host: '127.0.0.1', port: judge.port }, { ...settings, checkerIps: ['203.0.113.1'] }), 'judge_mismatch', 200);
  });
  test('black hole, slow-loris and un-accepting listener run out the budget', async () => {
    const t0 = performance.now();
    const [bh, sl, un, bh5] = await Promise.all([
      probe(at('blackHole')),
      probe(at('slowLoris')),
      probe({ host: '127.0.0.1', port: unaccepting.port }),
      probe(at('blackHole'), { ...settings, type: 'socks5' }),
    ]);
    const wall = performance.now() - t0;
    expectFailed(bh, 'timeout');
    expectFailed(sl, 'timeout');
    expectFailed(un, 'connect_timeout');
    expectFailed(bh5, 'timeout');
    expect(bh5.error?.message).toContain('SOCKS5 method reply');
    expect(wall).toBeGreaterThanOrEqual(999);
    expect(wall).toBeLessThan(1100);
  });
  test('SSRF guard: a loopback proxy is blocked_target when private targets are not allowed', async () => {
    const before = servers.elite?.accepted();
    const literal = await probe(at('elite'), { ...settings, allowPrivateTargets: false });
    expectFailed(literal, 'blocked_target');
    // the message names the setting that allows it, and the name the address came from
    expect(literal.error?.message).toBe('127.0.0.1 is in a private, loopback or reserved range; refused unless the server sets ALLOW_PRIVATE_TARGETS=true');
    const named = await probe({ host: 'proxy.test', port: 1 }, { ...settings, allowPrivateTargets: false });
    expectFailed(named, 'blocked_target');
    expect(named.error?.message).toBe('proxy.test resolves to 127.0.0.1, a private, loopback or reserved address; refused unless the server sets ALLOW_PRIVATE_TARGETS=true');
    expect(servers.elite?.accepted()).toBe(before);
  });
});
