/**
 * GET /metrics on the admin listener, end to end: Prometheus text without the
 * admin token; the values follow the service (a running check shows in
 * flight, in its region, as a running job and a /ws subscriber; a finished
 * check adds its probe results and a completed job); every accepted region
 * has its slots; the public listener answers 404 there; and two services in
 * one process keep their own counters.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { refusedPort, startBlackHole, type FakeServer } from '../fixtures/fake-servers';
import { call, startTestService, type TestService } from '../helpers/service';
import { sampleValue } from '../helpers/prometheus';
import { METRIC_NAMES as N } from '../../src/metrics/service-metrics';
import { ACCEPTED_REGIONS, findRegion } from '../../src/regions';

let t: TestService;
let other: TestService;
let blackHole: FakeServer;

beforeAll(async () => {
  [t, other, blackHole] = await Promise.all([startTestService(), startTestService(), startBlackHole()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([t?.stop(), other?.stop(), blackHole?.close()]);
}, 30_000);

const scrape = async (svc: TestService, headers: Record<string, string> = {}) => {
  const r = await fetch(`${svc.adminUrl}/metrics`, { headers });
  expect(r.status).toBe(200);
  expect(r.headers.get('content-type')).toStartWith('text/plain; version=0.0.4');
  return r.text();
};

const check = (svc: TestService, proxies: string[], jobId?: string) =>
  call(`${svc.url}/check`, { method: 'POST', headers: { Authorization: `Bearer ${svc.key}` }, json: { proxies, timeout: 2000, ...(jobId ? { jobId } : {}) } });

describe('GET /metrics (admin listener)', () => {
  test('no token needed (a wrong one changes nothing); every accepted region has its slots; the lease is live; nothing redelivered', async () => {
    const text = await scrape(t);
    expect(await scrape(t, { Authorization: 'Bearer wrong' })).toContain(N.probeResults);
    const slotsPerEndpoint = t.service.config.probes.slotsPerEndpoint;
    for (const region of ACCEPTED_REGIONS) {
      expect([region, sampleValue(text, N.regionProbeSlots, { region })]).toEqual([region, findRegion(region)!.endpoints * slotsPerEndpoint]);
      expect(sampleValue(text, N.regionProbesInFlight, { region })).toBe(0);
    }
    expect(sampleValue(text, N.regionProbeSlots, { region: 'test1' })).toBeUndefined(); // a check never runs there
    expect(sampleValue(text, N.nodeLeaseLive)).toBe(1);
    expect(sampleValue(text, N.shardsRedelivered)).toBe(0);
    expect(sampleValue(text, N.probeWorkerThreads)).toBe(1);
    expect(sampleValue(text, N.probesInFlightMax)).toBeGreaterThan(0);
    expect(sampleValue(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  test('a running check shows in flight, in its region, as a running job and a /ws subscriber; finished, its results and a completed job', async () => {
    const before = await scrape(t);
    const results0 = sampleValue(before, N.probeResults)!;
    const completed0 = sampleValue(before, N.jobsFinished, { state: 'completed' })!;

    const ws = new WebSocket(`${t.url.replace('http', 'ws')}/ws?jobId=metrics-job&apiKey=${t.key}`);
    await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)));
    const closed = new Promise((resolve) => (ws.onclose = resolve));
    const refused = await Promise.all([refusedPort(), refusedPort()]);
    const proxies = [`127.0.0.1:${blackHole.port}`, ...refused.map((p) => `127.0.0.1:${p}`)];
    const running = check(t, proxies, 'metrics-job');
    let during = '';
    // the refused ones answer at once; the black hole holds its slot for the whole timeout (2 s)
    for (let i = 0; i < 100; i++) {
      during = await scrape(t);
      if (sampleValue(during, N.probesInFlight) === 1 && sampleValue(during, N.probeResults) === results0 + 2) break;
      await Bun.sleep(10);
    }
    expect(sampleValue(during, N.probesInFlight)).toBe(1);
    expect(sampleValue(during, N.probeResults)).toBe(results0 + 2);
    expect(sampleValue(during, N.regionProbesInFlight, { region: 'us1' })).toBe(1);
    expect(sampleValue(during, N.jobsRunning)).toBe(1);
    expect(sampleValue(during, N.wsSubscribers)).toBe(1);

    const r = await running;
    expect(r.status).toBe(200);
    await closed;
    const after = await scrape(t);
    expect(sampleValue(after, N.probeResults)).toBe(results0 + proxies.length);
    expect(sampleValue(after, N.jobsFinished, { state: 'completed' })).toBe(completed0 + 1);
    expect(sampleValue(after, N.jobsFinished, { state: 'failed' })).toBe(0);
    expect(sampleValue(after, N.jobsRunning)).toBe(0);
    expect(sampleValue(after, N.probesInFlight)).toBe(0);
    expect(sampleValue(after, N.regionProbesInFlight, { region: 'us1' })).toBe(0);
    expect(sampleValue(after, N.wsSubscribers)).toBe(0);
    expect(sampleValue(after, N.probeShardsQueued)).toBe(0);
  });

  test('two services in one process keep their own counters', async () => {
    const mine = sampleValue(await scrape(t), N.probeResults)!;
    expect(mine).toBeGreaterThan(0); // the check above
    const theirs0 = await scrape(other);
    expect(sampleValue(theirs0, N.probeResults)).toBe(0);
    expect(sampleValue(theirs0, N.jobsFinished, { state: 'completed' })).toBe(0);
    const r = await check(other, [`127.0.0.1:${await refusedPort()}`]);
    expect(r.status).toBe(200);
    expect(sampleValue(await scrape(other), N.probeResults)).toBe(1);
    expect(sampleValue(await scrape(t), N.probeResults)).toBe(mine);
  });

  test('the public listener answers the JSON 404 at /metrics', async () => {
    const r = await call(`${t.url}/metrics`);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'Not found', message: 'No route GET /metrics' });
  });
});
