/**
 * Tests for src/metrics/service-metrics.ts with fake sources: every metric is
 * rendered with its type, the gauges read their sources at each scrape (a
 * change shows in the next scrape), per-region series for every region given,
 * counters per call, two instances share no counter, and the process's
 * default metrics come along (or not, on request).
 */
import { describe, expect, test } from 'bun:test';
import { METRIC_NAMES, ServiceMetrics, type MetricSources } from '../../src/metrics/service-metrics';
import { judgeTlsHandshakes } from '../../src/judge/server';
import { metricTypes, sampleValue } from '../helpers/prometheus';

function fakeSources() {
  const load: Record<string, { capacity: number; inFlight: number; pending: number[] }> = {
    us1: { capacity: 128, inFlight: 0, pending: [] },
    de1: { capacity: 64, inFlight: 0, pending: [] },
  };
  const state = { running: 0, subscribers: 0, poolSubscribers: 0, live: true, queued: 0, running_: 0 };
  const sources: MetricSources = {
    regions: ['us1', 'de1'],
    scheduler: {
      get totalInFlight() {
        return Object.values(load).reduce((s, r) => s + r.inFlight, 0);
      },
      snapshot: (region) => {
        const r = load[region]!;
        return { capacity: r.capacity, inFlight: r.inFlight, jobs: r.pending.map((pending) => ({ pending })) };
      },
    },
    maxInFlight: 150,
    workers: {
      threads: 3,
      get stats() {
        return { queued: state.queued, running: state.running_ };
      },
    },
    runningJobs: () => state.running,
    hub: {
      get subscribers() {
        return state.subscribers;
      },
    },
    poolEvents: {
      get subscribers() {
        return state.poolSubscribers;
      },
    },
    lease: {
      get live() {
        return state.live;
      },
    },
  };
  return { sources, load, state };
}

const N = METRIC_NAMES;

describe('ServiceMetrics', () => {
  test('renders every metric with its type; gauges follow their sources at each scrape', async () => {
    const { sources, load, state } = fakeSources();
    const m = new ServiceMetrics({ processMetrics: false }).watch(sources);
    expect(m.contentType).toStartWith('text/plain; version=0.0.4');
    let text = await m.render();
    const types = metricTypes(text);
    for (const name of Object.values(N)) expect([name, types.get(name)]).toEqual([name, name.endsWith('_total') ? 'counter' : 'gauge']);
    expect(sampleValue(text, N.regionProbeSlots, { region: 'us1' })).toBe(128);
    expect(sampleValue(text, N.regionProbeSlots, { region: 'de1' })).toBe(64);
    expect(sampleValue(text, N.probesInFlight)).toBe(0);
    expect(sampleValue(text, N.probesInFlightMax)).toBe(150);
    expect(sampleValue(text, N.probeWorkerThreads)).toBe(3);
    expect(sampleValue(text, N.nodeLeaseLive)).toBe(1);
    expect(sampleValue(text, N.jobsRunning)).toBe(0);

    load.us1!.inFlight = 100;
    load.us1!.pending = [5, 7];
    load.de1!.inFlight = 9;
    Object.assign(state, { running: 2, subscribers: 4, poolSubscribers: 3, live: false, queued: 6, running_: 11 });
    text = await m.render();
    expect(sampleValue(text, N.probesInFlight)).toBe(109);
    expect(sampleValue(text, N.regionProbesInFlight, { region: 'us1' })).toBe(100);
    expect(sampleValue(text, N.regionProbesInFlight, { region: 'de1' })).toBe(9);
    expect(sampleValue(text, N.regionProbesWaiting, { region: 'us1' })).toBe(12);
    expect(sampleValue(text, N.regionProbesWaiting, { region: 'de1' })).toBe(0);
    expect(sampleValue(text, N.jobsRunning)).toBe(2);
    expect(sampleValue(text, N.wsSubscribers)).toBe(4);
    expect(sampleValue(text, N.poolWsSubscribers)).toBe(3);
    expect(sampleValue(text, N.nodeLeaseLive)).toBe(0);
    expect(sampleValue(text, N.probeShardsQueued)).toBe(6);
    expect(sampleValue(text, N.probeShardsRunning)).toBe(11);
  });

  test('counters: results per batch, jobs by final state (both present from the start), shards redelivered 0 until told', async () => {
    const m = new ServiceMetrics({ processMetrics: false }).watch(fakeSources().sources);
    let text = await m.render();
    expect(sampleValue(text, N.probeResults)).toBe(0);
    expect(sampleValue(text, N.jobsFinished, { state: 'completed' })).toBe(0);
    expect(sampleValue(text, N.jobsFinished, { state: 'failed' })).toBe(0);
    expect(sampleValue(text, N.shardsRedelivered)).toBe(0);
    m.probeResults(3);
    m.probeResults(0);
    m.probeResults(40);
    m.jobEnded('completed');
    m.jobEnded('failed');
    m.jobEnded('failed');
    m.shardsRedelivered(2);
    text = await m.render();
    expect(sampleValue(text, N.probeResults)).toBe(43);
    expect(sampleValue(text, N.jobsFinished, { state: 'completed' })).toBe(1);
    expect(sampleValue(text, N.jobsFinished, { state: 'failed' })).toBe(2);
    expect(sampleValue(text, N.shardsRedelivered)).toBe(2);
    expect(sampleValue(text, N.duplicateResults)).toBe(0);
    m.duplicateResults(0);
    m.duplicateResults(5);
    expect(sampleValue(await m.render(), N.duplicateResults)).toBe(5);
  });

  test('queue depth per region and state, from the cluster\'s queue source at scrape time; embedded (no source): no samples', async () => {
    const readings = new Map([['us1', { waiting: 4, delivered: 2 }]]);
    let asked = 0;
    const { sources } = fakeSources();
    const m = new ServiceMetrics({ processMetrics: false }).watch({ ...sources, queue: { depth: async () => (asked++, readings) } });
    let text = await m.render();
    expect(asked).toBe(1);
    expect(sampleValue(text, N.regionQueueShards, { region: 'us1', state: 'waiting' })).toBe(4);
    expect(sampleValue(text, N.regionQueueShards, { region: 'us1', state: 'delivered' })).toBe(2);
    readings.set('us1', { waiting: 0, delivered: 1 });
    text = await m.render();
    expect(sampleValue(text, N.regionQueueShards, { region: 'us1', state: 'waiting' })).toBe(0);
    expect(sampleValue(text, N.regionQueueShards, { region: 'us1', state: 'delivered' })).toBe(1);
    const embedded = await new ServiceMetrics({ processMetrics: false }).watch(fakeSources().sources).render();
    expect(embedded).toContain(`# TYPE ${N.regionQueueShards} gauge`);
    expect(embedded).not.toMatch(new RegExp(`^${N.regionQueueShards}\\{`, 'm'));
  });

  test('gateway: open connections from its source at scrape time (0 before or without one); connections, bytes, refusals by reason, upstream failures', async () => {
    const gw = { open: 3 };
    const m = new ServiceMetrics({ processMetrics: false }).watch(fakeSources().sources);
    expect(sampleValue(await m.render(), N.gatewayConnectionsOpen)).toBe(0);
    m.watchGateway(gw);
    let text = await m.render();
    expect(sampleValue(text, N.gatewayConnectionsOpen)).toBe(3);
    expect(sampleValue(text, N.gatewayConnections)).toBe(0);
    m.gatewayConnection();
    m.gatewayConnection();
    m.gatewayBytes(1000);
    m.gatewayBytes(0);
    m.gatewayRefused('auth');
    m.gatewayRefused('auth');
    m.gatewayRefused('no_upstream');
    m.gatewayUpstreamFailed();
    gw.open = 1;
    text = await m.render();
    expect(sampleValue(text, N.gatewayConnectionsOpen)).toBe(1);
    expect(sampleValue(text, N.gatewayConnections)).toBe(2);
    expect(sampleValue(text, N.gatewayBytes)).toBe(1000);
    expect(sampleValue(text, N.gatewayRefused, { reason: 'auth' })).toBe(2);
    expect(sampleValue(text, N.gatewayRefused, { reason: 'no_upstream' })).toBe(1);
    expect(sampleValue(text, N.gatewayUpstreamFailures)).toBe(1);
    expect(sampleValue(await new ServiceMetrics({ processMetrics: false }).watch(fakeSources().sources).render(), N.gatewayConnectionsOpen)).toBe(0);
  });

  test('pools: pools probing from the owner at scrape time (0 before); batches by outcome and checks by result, all present from the start', async () => {
    const m = new ServiceMetrics({ processMetrics: false }).watch(fakeSources().sources);
    let text = await m.render();
    expect(sampleValue(text, N.poolRoundsRunning)).toBe(0);
    for (const outcome of ['checked', 'paused', 'resumed']) expect(sampleValue(text, N.poolRounds, { outcome })).toBe(0);
    for (const result of ['working', 'failed']) expect(sampleValue(text, N.poolChecks, { result })).toBe(0);
    m.watchPoolOwner({ probingPools: 2 });
    m.poolRound('checked', { working: 7, failed: 3 });
    m.poolRound('checked', { working: 1, failed: 0 });
    m.poolRound('paused');
    m.poolRound('resumed');
    text = await m.render();
    expect(sampleValue(text, N.poolRoundsRunning)).toBe(2);
    expect(sampleValue(text, N.poolRounds, { outcome: 'checked' })).toBe(2);
    expect(sampleValue(text, N.poolRounds, { outcome: 'paused' })).toBe(1);
    expect(sampleValue(text, N.poolRounds, { outcome: 'resumed' })).toBe(1);
    expect(sampleValue(text, N.poolChecks, { result: 'working' })).toBe(8);
    expect(sampleValue(text, N.poolChecks, { result: 'failed' })).toBe(3);
  });

  test('issue 30: the load limit (MAX_IN_FLIGHT while none), retries by reason, lag retries and TLS handshakes per side and kind, read from their sources', async () => {
    const { sources } = fakeSources();
    const lanes = { lagRetries: 0, tlsFull: 0, tlsResumed: 0 };
    let limit = Number.POSITIVE_INFINITY;
    const withLanes: MetricSources = {
      ...sources,
      scheduler: {
        get totalInFlight() {
          return 0;
        },
        get loadLimit() {
          return limit;
        },
        snapshot: sources.scheduler.snapshot,
      },
      workers: { threads: 2, stats: { queued: 0, running: 0 }, laneCounts: lanes },
    };
    const m = new ServiceMetrics({ processMetrics: false }).watch(withLanes);
    let text = await m.render();
    expect(sampleValue(text, N.probesLoadLimit)).toBe(150);
    expect(sampleValue(text, N.probesRetried, { reason: 'checker_lag' })).toBe(0);
    expect(sampleValue(text, N.probesRetried, { reason: 'local_resources' })).toBe(0);
    expect(sampleValue(text, N.probesCheckerLag)).toBe(0);
    const judge0 = { ...judgeTlsHandshakes };
    expect(sampleValue(text, N.tlsHandshakes, { side: 'client', kind: 'full' })).toBe(0);
    limit = 90;
    Object.assign(lanes, { lagRetries: 3, tlsFull: 2, tlsResumed: 40 });
    m.probesRetried('checker_lag', 2);
    m.probesRetried('local_resources', 1);
    judgeTlsHandshakes.resumed += 5;
    text = await m.render();
    expect(sampleValue(text, N.probesLoadLimit)).toBe(90);
    expect(sampleValue(text, N.probesRetried, { reason: 'checker_lag' })).toBe(2);
    expect(sampleValue(text, N.probesRetried, { reason: 'local_resources' })).toBe(1);
    expect(sampleValue(text, N.probesCheckerLag)).toBe(3);
    expect(sampleValue(text, N.tlsHandshakes, { side: 'client', kind: 'full' })).toBe(2);
    expect(sampleValue(text, N.tlsHandshakes, { side: 'client', kind: 'resumed' })).toBe(40);
    expect(sampleValue(text, N.tlsHandshakes, { side: 'judge', kind: 'full' })).toBe(judge0.full);
    expect(sampleValue(text, N.tlsHandshakes, { side: 'judge', kind: 'resumed' })).toBe(judge0.resumed + 5);
    judgeTlsHandshakes.resumed -= 5;
  });

  test('two instances in one process share no counter', async () => {
    const a = new ServiceMetrics().watch(fakeSources().sources);
    const b = new ServiceMetrics().watch(fakeSources().sources);
    a.probeResults(5);
    a.jobEnded('completed');
    const [ta, tb] = await Promise.all([a.render(), b.render()]);
    expect(sampleValue(ta, N.probeResults)).toBe(5);
    expect(sampleValue(tb, N.probeResults)).toBe(0);
    expect(sampleValue(tb, N.jobsFinished, { state: 'completed' })).toBe(0);
  });

  test("the process's default metrics: rendered once per scrape beside the service's, or left out", async () => {
    const withProcess = await new ServiceMetrics().watch(fakeSources().sources).render();
    expect(sampleValue(withProcess, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sampleValue(withProcess, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(withProcess.match(/^# TYPE process_cpu_user_seconds_total /gm)).toHaveLength(1);
    expect(sampleValue(withProcess, N.probeWorkerThreads)).toBe(3);
    const without = await new ServiceMetrics({ processMetrics: false }).watch(fakeSources().sources).render();
    expect(without).not.toContain('process_cpu_user_seconds_total');
  });
});
