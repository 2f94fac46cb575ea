/**
 * Integrity through the real probe path (runProbe -> exchange -> codecs): a
 * signing judge on loopback, proxies that change what they relay. Each
 * tampering proxy is `failed` / `tampered` with a message saying what
 * changed; faithful proxies (added headers, re-chunked bodies) and tunnels
 * stay `working`; without a key nothing is verified.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { ProbeResult, ProtocolSettings } from '../../src/probe/types';
import type { ProxyAddress } from '../../src/proxy/types';
import { runProbe } from '../../src/probe/probe';
import { startJudgeServer, type JudgeServer } from '../../src/judge/server';
import { calibrate, parseJudgeUrl } from '../../src/judge/calibrate';
import { startHttpProxy, startSocksProxy } from '../fixtures/fake-proxies';
import { startTlsJudge, type FakeServer } from '../fixtures/fake-servers';
import { APPENDED, SCRIPT, appendBytes, faithful, gzipBody, injectScript, replayFirst, startTamperingProxy } from '../fixtures/tampering-proxy';
import { TEST_CERT } from '../fixtures/tls-cert';

const KEY = 'integrity-test-judge-key';
let judge: JudgeServer;
let unsignedJudge: JudgeServer;
let tlsJudge: FakeServer;
let settings: ProtocolSettings;
const servers: Record<string, FakeServer> = {};

beforeAll(async () => {
  judge = await startJudgeServer({ key: KEY });
  unsignedJudge = await startJudgeServer();
  tlsJudge = await startTlsJudge(KEY);
  const j = parseJudgeUrl(judge.url);
  const cal = await calibrate(j, 2000, undefined, KEY);
  settings = { type: 'http', timeoutMs: 1500, judge: j, checkerIps: cal.ips, baselineHeaders: cal.baselineHeaders, allowPrivateTargets: true, tlsCa: TEST_CERT, judgeKey: KEY };
  const entries: [string, Promise<FakeServer>][] = [
    ['faithful', startTamperingProxy({ rewrite: faithful })],
    ['faithfulChunked', startTamperingProxy({ rewrite: faithful, chunked: true })],
    ['faithfulSocks', startTamperingProxy({ rewrite: faithful, socks: true })],
    ['injector', startTamperingProxy({ rewrite: injectScript })],
    ['injectorSocks', startTamperingProxy({ rewrite: injectScript, socks: true })],
    ['replayer', startTamperingProxy({ rewrite: replayFirst() })],
    ['appender', startTamperingProxy({ rewrite: appendBytes, chunked: true })],
    ['gzipper', startTamperingProxy({ rewrite: gzipBody })],
    ['via', startHttpProxy({ addHeaders: (ip) => [['Via', '1.1 fake'], ['X-Forwarded-For', ip]] })],
    ['socks', startSocksProxy()],
  ];
  for (const [k, p] of entries) servers[k] = await p;
});

afterAll(async () => {
  for (const s of Object.values(servers)) await s.close();
  await judge.close();
  await unsignedJudge.close();
  await tlsJudge.close();
});

const at = (name: string): ProxyAddress => ({ host: '127.0.0.1', port: servers[name]?.port ?? 0 });
const probe = (name: string, s: Partial<ProtocolSettings> = {}): Promise<ProbeResult> => runProbe({ index: 3, proxy: at(name) }, { ...settings, ...s });

function expectTampered(r: ProbeResult, message: RegExp): void {
  expect(r).toMatchObject({ index: 3, status: 'failed', statusCode: 200, anonymity: null, origin: null, error: { code: 'tampered' } });
  expect(r.error?.message).toMatch(message);
}

describe('honest proxies stay working', () => {
  test('added headers, a re-chunked body, SOCKS tunnels', async () => {
    expect(await probe('faithful')).toMatchObject({ status: 'working', anonymity: 'elite', origin: '127.0.0.1', error: null });
    expect(await probe('faithfulChunked')).toMatchObject({ status: 'working', error: null });
    expect(await probe('faithfulSocks', { type: 'socks5' })).toMatchObject({ status: 'working', error: null });
    expect(await probe('via')).toMatchObject({ status: 'working', anonymity: 'transparent', error: null });
    expect(await probe('socks', { type: 'socks4' })).toMatchObject({ status: 'working', error: null });
  });
  test('an https judge through CONNECT: a proxy cannot touch the tunnel', async () => {
    const tls = { judge: parseJudgeUrl(`https://localhost:${tlsJudge.port}/judge`) };
    expect(await probe('via', tls)).toMatchObject({ status: 'working', error: null });
    expect(await probe('socks', { ...tls, type: 'socks5' })).toMatchObject({ status: 'working', error: null });
  });
});

describe('proxies that change the answer are tampered', () => {
  test('a <script> injected into the body', async () => {
    expectTampered(await probe('injector'), new RegExp(`^bytes injected: the judge's signed body arrived intact inside a larger one \\(${SCRIPT.length} bytes before it\\)$`));
    expectTampered(await probe('injectorSocks', { type: 'socks5' }), /^bytes injected: /);
  });
  test('a cached copy served again with the new nonce swapped in (a replay)', async () => {
    expect(await probe('replayer')).toMatchObject({ status: 'working' }); // the first answer is the judge's own (and gets cached)
    expectTampered(await probe('replayer'), /^body replaced: same length as the judge signed, different bytes/);
    expectTampered(await probe('replayer'), /^body replaced: /);
  });
  test('bytes appended after the body', async () => {
    expectTampered(await probe('appender'), new RegExp(`^length differs: ${APPENDED.length} bytes appended after the judge's signed body$`));
  });
  test('re-compressed with Content-Encoding: gzip', async () => {
    expectTampered(await probe('gzipper'), /^re-encoded: the proxy sent the body with gzip coding, which the judge never uses; the judge's body inside is intact$/);
  });
  test('a judge signing with another key than the checker expects: every answer is tampered', async () => {
    expectTampered(await probe('faithful', { judgeKey: 'not-the-judge-key-16' }), /^body replaced: /);
  });
  test('a judge that does not sign while the checker expects a signature: tampered', async () => {
    expectTampered(await probe('faithful', { judge: parseJudgeUrl(unsignedJudge.url) }), /^body replaced: the judge's signature is missing/);
  });
});

describe('without a key nothing is verified (JUDGE_URL without JUDGE_KEY)', () => {
  test('a replayed copy with the right nonce then passes: why an external judge needs JUDGE_KEY', async () => {
    const { judgeKey: _k, ...unsigned } = settings;
    const s = { ...unsigned, judge: parseJudgeUrl(unsignedJudge.url) };
    const replayer = await startTamperingProxy({ rewrite: replayFirst() });
    try {
      const go = () => runProbe({ index: 0, proxy: { host: '127.0.0.1', port: replayer.port } }, s);
      expect((await go()).status).toBe('working');
      expect((await go()).status).toBe('working');
    } finally {
      await replayer.close();
    }
    // changes that break the JSON are still caught, as judge_mismatch
    expect(await runProbe({ index: 0, proxy: at('injector') }, s)).toMatchObject({ status: 'failed', error: { code: 'judge_mismatch' } });
  });
});
