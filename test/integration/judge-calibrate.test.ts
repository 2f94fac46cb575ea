/** Self-calibration: the checker's own addresses and the baseline headers of a load balancer in front of the judge. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { calibrate, nextRoundMs, parseJudgeUrl, startCalibration, type CalibrationResult } from '../../src/judge/calibrate';
import { startJudgeServer, type JudgeServer } from '../../src/judge/server';
import { refusedPort, startTlsJudge, type FakeServer } from '../fixtures/fake-servers';
import { TEST_CERT } from '../fixtures/tls-cert';

const KEY = 'calibrate-test-judge-key';
let judge: JudgeServer;
let signing: JudgeServer;
let dual: JudgeServer;
let tlsJudge: FakeServer;
let lb: Server;
let lbPort: number;
const lbSockets = new Set<Socket>();

beforeAll(async () => {
  judge = await startJudgeServer();
  signing = await startJudgeServer({ key: KEY });
  dual = await startJudgeServer({ host: '::' });
  tlsJudge = await startTlsJudge();
  // a "load balancer" that adds headers in front of the judge
  lb = createServer((c) => {
    lbSockets.add(c);
    c.on('close', () => lbSockets.delete(c));
    c.once('data', (d: Buffer) => {
      const text = d.toString('latin1').replace('\r\n', '\r\nX-Forwarded-For: 127.0.0.1\r\nX-LB-Id: 7\r\nvia: lb\r\n');
      const up = connect({ host: '127.0.0.1', port: judge.port }, () => up.write(text));
      up.pipe(c);
      up.on('error', () => c.destroy());
    });
  });
  await new Promise<void>((r) => lb.listen(0, '127.0.0.1', () => r()));
  lbPort = (lb.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const s of lbSockets) s.destroy();
  await new Promise<void>((r) => lb.close(() => r()));
  await judge.close();
  await signing.close();
  await dual.close();
  await tlsJudge.close();
});

describe('parseJudgeUrl', () => {
  test('http, https, IPv6 and default ports', () => {
    expect(parseJudgeUrl('http://127.0.0.1:3000/judge')).toEqual({ url: 'http://127.0.0.1:3000/judge', protocol: 'http:', host: '127.0.0.1', port: 3000, path: '/judge' });
    expect(parseJudgeUrl('https://judge.example/j?x=1')).toMatchObject({ protocol: 'https:', host: 'judge.example', port: 443, path: '/j?x=1' });
    expect(parseJudgeUrl('http://[::1]/')).toMatchObject({ host: '::1', port: 80, path: '/' });
  });
  test('rejects other schemes and garbage with code judge_url_invalid', () => {
    expect(() => parseJudgeUrl('ftp://x/')).toThrow(expect.objectContaining({ code: 'judge_url_invalid' }));
    expect(() => parseJudgeUrl('not a url')).toThrow(expect.objectContaining({ code: 'judge_url_invalid' }));
  });
});

describe('calibrate', () => {
  test('direct: the checker is 127.0.0.1 and there is no baseline', async () => {
    expect(await calibrate(parseJudgeUrl(judge.url), 2000)).toEqual({ ips: ['127.0.0.1'], baselineHeaders: [] });
  });
  test('https judge', async () => {
    expect(await calibrate(parseJudgeUrl(`https://localhost:${tlsJudge.port}/judge`), 2000, TEST_CERT)).toEqual({ ips: ['127.0.0.1'], baselineHeaders: [] });
  });
  test('IPv6 literal judge', async () => {
    expect(await calibrate(parseJudgeUrl(`http://[::1]:${dual.port}/judge`), 2000)).toEqual({ ips: ['::1'], baselineHeaders: [] });
  });
  test('headers added in front of the judge become the baseline', async () => {
    expect(await calibrate(parseJudgeUrl(`http://127.0.0.1:${lbPort}/judge`), 2000)).toEqual({
      ips: ['127.0.0.1'],
      baselineHeaders: ['via', 'x-forwarded-for', 'x-lb-id'],
    });
  });
  test('with the judge key: a judge that signs with it passes; one that does not sign, or signs with another key, fails', async () => {
    expect(await calibrate(parseJudgeUrl(signing.url), 2000, undefined, KEY)).toEqual({ ips: ['127.0.0.1'], baselineHeaders: [] });
    expect(await calibrate(parseJudgeUrl(signing.url), 2000)).toEqual({ ips: ['127.0.0.1'], baselineHeaders: [] });
    for (const [url, key] of [
      [judge.url, KEY],
      [signing.url, 'not-the-judge-key-16'],
    ] as const) {
      await expect(calibrate(parseJudgeUrl(url), 2000, undefined, key)).rejects.toMatchObject({ code: 'calibration_failed' });
    }
    const errors: unknown[] = [];
    const h = startCalibration({ judge: parseJudgeUrl(judge.url), extraIps: [], intervalMs: 10_000, judgeKey: KEY, onUpdate: () => errors.push('update'), onError: (e) => errors.push(e) });
    await h.ready;
    h.stop();
    expect(errors).toHaveLength(1);
    expect(String((errors[0] as { cause?: { message?: string } }).cause?.message)).toContain('not signed with the judge key (JUDGE_KEY)');
  });
  test('an unreachable judge rejects with calibration_failed', async () => {
    const port = await refusedPort();
    await expect(calibrate(parseJudgeUrl(`http://127.0.0.1:${port}/judge`), 1000)).rejects.toMatchObject({ code: 'calibration_failed' });
  });
});

describe('startCalibration', () => {
  test('runs at once and on the interval, merges extra IPs, stop() twice is safe', async () => {
    const updates: CalibrationResult[] = [];
    const h = startCalibration({ judge: parseJudgeUrl(judge.url), extraIps: ['198.51.100.9', '127.0.0.1'], intervalMs: 40, onUpdate: (r) => updates.push(r) });
    expect(await h.ready).toEqual({ ips: ['127.0.0.1', '198.51.100.9'], baselineHeaders: [] });
    await new Promise((r) => setTimeout(r, 150));
    h.stop();
    h.stop();
    const n = updates.length;
    expect(n).toBeGreaterThanOrEqual(2);
    await new Promise((r) => setTimeout(r, 100));
    expect(updates.length).toBe(n);
  });
  test('a failing judge keeps the extra IPs and reports the error', async () => {
    const errors: unknown[] = [];
    const port = await refusedPort();
    const h = startCalibration({
      judge: parseJudgeUrl(`http://127.0.0.1:${port}/judge`),
      extraIps: ['198.51.100.9'],
      intervalMs: 10_000,
      timeoutMs: 500,
      onUpdate: () => errors.push('unexpected update'),
      onError: (e) => errors.push(e),
    });
    expect(await h.ready).toEqual({ ips: ['198.51.100.9'], baselineHeaders: [] });
    h.stop();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'calibration_failed' });
  });
  test('a judge that comes up after the first round: a failed round is tried again until it succeeds', async () => {
    const port = await refusedPort();
    const errors: number[] = [];
    let updated: (r: CalibrationResult) => void = () => {};
    const learned = new Promise<CalibrationResult>((r) => (updated = r));
    const h = startCalibration({
      judge: parseJudgeUrl(`http://127.0.0.1:${port}/judge`),
      extraIps: [],
      intervalMs: 3_600_000,
      timeoutMs: 500,
      firstRetryMs: 20,
      onUpdate: (r) => updated(r),
      onError: (_e, retryInMs) => errors.push(retryInMs),
    });
    try {
      expect(await h.ready).toEqual({ ips: [], baselineHeaders: [] }); // nothing listens yet
      const late = await startJudgeServer({ port });
      try {
        expect((await learned).ips).toEqual(['127.0.0.1']); // not an hour later: a retry found it
      } finally {
        await late.close();
      }
      expect(errors[0]).toBe(20);
      for (let i = 1; i < errors.length; i++) expect(errors[i]).toBe(Math.min(20 * 2 ** i, 30_000));
    } finally {
      h.stop();
    }
  });
});

describe('nextRoundMs: 1 s after a failure, doubling, at most 30 s, then the interval again', () => {
  test('the schedule', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7, 50].map((f) => nextRoundMs(f, 300_000))).toEqual([300_000, 1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
    expect(nextRoundMs(5, 5_000)).toBe(5_000); // never later than the interval
    expect(nextRoundMs(0, 5_000)).toBe(5_000);
  });
});
