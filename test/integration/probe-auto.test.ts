/**
 * runAutoProbe (src/probe/auto.ts) through the real probe path (runProbe ->
 * exchange -> codecs) against fakes on loopback: which protocols pass, the
 * record's error when none does, the one budget, and the connections each
 * case costs.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { runAutoProbe } from '../../src/probe/auto';
import { startJudgeServer, type JudgeServer } from '../../src/judge/server';
import { parseJudgeUrl } from '../../src/judge/calibrate';
import type { ProbeResult, ProbeSettings } from '../../src/probe/types';
import type { ProxyAddress } from '../../src/proxy/types';
import { startDualProxy, startHttpProxy, startSocksProxy } from '../fixtures/fake-proxies';
import { refusedPort, startBlackHole, startCaptive, startGarbage, type FakeServer } from '../fixtures/fake-servers';

const TIMEOUT_MS = 1000;
/** How late past its budget an auto probe may resolve (timer wheel granularity, a loaded CI machine). */
const SLACK_MS = 300;
const USER = { username: 'alice', password: 'secret' };

let judge: JudgeServer;
let settings: ProbeSettings;
const s: Record<string, FakeServer> = {};

beforeAll(async () => {
  judge = await startJudgeServer();
  settings = { type: 'auto', timeoutMs: TIMEOUT_MS, judge: parseJudgeUrl(judge.url), checkerIps: [], baselineHeaders: [], allowPrivateTargets: true };
  const entries: [string, Promise<FakeServer>][] = [
    ['dual', startDualProxy()],
    ['http', startHttpProxy()],
    ['socks', startSocksProxy()],
    ['socks5', startSocksProxy({ only: 5 })],
    ['socksAuth', startSocksProxy({ auth: USER, only: 5 })],
    ['httpAuth', startHttpProxy({ auth: USER })],
    ['blackHole', startBlackHole()],
    ['captive', startCaptive()],
    ['garbage', startGarbage()],
  ];
  for (const [k, p] of entries) s[k] = await p;
});

afterAll(async () => {
  for (const f of Object.values(s)) await f.close();
  await judge.close();
});

const at = (f: FakeServer, extra: Partial<ProxyAddress> = {}): ProxyAddress => ({ host: f.host, port: f.port, ...extra });

async function timed(proxy: ProxyAddress, st: ProbeSettings = settings): Promise<{ r: ProbeResult; ms: number }> {
  const t0 = performance.now();
  const r = await runAutoProbe({ index: 5, proxy }, st);
  return { r, ms: performance.now() - t0 };
}

describe('auto: protocols that pass the full judge check', () => {
  test('http and socks5 on one port (as 3proxy) -> ["socks5", "http"], fields of the socks5 probe', async () => {
    const { r, ms } = await timed(at(s.dual!));
    expect(r).toMatchObject({ index: 5, status: 'working', statusCode: 200, anonymity: 'elite', origin: '127.0.0.1', error: null, protocols: ['socks5', 'http'] });
    expect(ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
  });

  test('socks4 and socks5 on one port (as dante) -> ["socks5", "socks4"], long before the budget', async () => {
    const { r, ms } = await timed(at(s.socks!));
    expect(r).toMatchObject({ status: 'working', protocols: ['socks5', 'socks4'], error: null });
    expect(ms).toBeLessThan(TIMEOUT_MS / 2);
  });

  test('SOCKS5 only -> ["socks5"]', async () => {
    const { r } = await timed(at(s.socks5!));
    expect(r).toMatchObject({ status: 'working', protocols: ['socks5'] });
  });

  test('HTTP only -> ["http"]; its SOCKS attempts wait for a request line to the end of the one budget', async () => {
    const { r, ms } = await timed(at(s.http!));
    expect(r).toMatchObject({ status: 'working', protocols: ['http'], statusCode: 200, anonymity: 'elite' });
    expect(r.responseTimeMs).toBeLessThan(TIMEOUT_MS / 2); // the http probe's own time, not the auto probe's
    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
    expect(ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
  });

  test('credentials go to every protocol: SOCKS5 with auth -> ["socks5"]; HTTP with Basic auth -> ["http"]', async () => {
    const [a, b] = await Promise.all([timed(at(s.socksAuth!, USER)), timed(at(s.httpAuth!, USER))]);
    expect(a.r).toMatchObject({ status: 'working', protocols: ['socks5'] });
    expect(b.r).toMatchObject({ status: 'working', protocols: ['http'] });
  });
});

describe('auto: nothing passes -> failed with the most telling error', () => {
  test('a refused port -> connect_refused at once, one attempt (the SOCKS ones would reach the same closed port)', async () => {
    const { r, ms } = await timed({ host: '127.0.0.1', port: await refusedPort() });
    expect(r).toMatchObject({ status: 'failed', statusCode: null, protocols: [], anonymity: null, origin: null });
    expect(r.error?.code).toBe('connect_refused');
    expect(r.error?.message.startsWith('http: ')).toBe(true);
    expect(ms).toBeLessThan(TIMEOUT_MS / 2);
  });

  test('a black hole (accepts, never answers) -> failed within the one budget, one connection only', async () => {
    const before = s.blackHole!.accepted();
    const { r, ms } = await timed(at(s.blackHole!));
    expect(r).toMatchObject({ status: 'failed', protocols: [] });
    expect(r.error?.code).toBe('timeout');
    expect(ms).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    expect(s.blackHole!.accepted() - before).toBe(1); // the lead used the whole budget: nothing left for SOCKS
  });

  test('SOCKS5 wanting credentials we do not have -> auth_required from socks5 (not the http or socks4 garbage)', async () => {
    const { r } = await timed(at(s.socksAuth!));
    expect(r).toMatchObject({ status: 'failed', protocols: [] });
    expect(r.error?.code).toBe('auth_required');
    expect(r.error?.message.startsWith('socks5: ')).toBe(true);
  });

  test('HTTP proxy wanting credentials -> auth_required (407) from http', async () => {
    const { r } = await timed(at(s.httpAuth!));
    expect(r).toMatchObject({ status: 'failed', statusCode: 407, protocols: [] });
    expect(r.error?.code).toBe('auth_required');
  });

  test('a captive portal (a 200 that is not the judge) -> judge_mismatch, never working', async () => {
    const { r } = await timed(at(s.captive!));
    expect(r).toMatchObject({ status: 'failed', protocols: [] });
    expect(r.error?.code).toBe('judge_mismatch');
  });

  test('garbage -> failed, never working', async () => {
    const { r } = await timed(at(s.garbage!));
    expect(r).toMatchObject({ status: 'failed', protocols: [] });
  });

  test('the SSRF guard -> blocked_target without connecting', async () => {
    const before = s.socks!.accepted();
    const { r } = await timed(at(s.socks!), { ...settings, allowPrivateTargets: false });
    expect(r.error?.code).toBe('blocked_target');
    expect(s.socks!.accepted()).toBe(before);
  });
});
