/**
 * JobActor state machine with injected ports: a real scheduler, a real result
 * writer in a temp dir, an in-memory ledger that records every call, and a
 * fake probe workers driven by the test (so failure paths can be forced exactly).
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceError } from '../../src/errors';
import { JobActor, JOB_STATES, type JobDeps } from '../../src/jobs/actor';
import { InsufficientQuotaError } from '../../src/jobs/job-errors';
import { localExecution } from '../../src/jobs/local-execution';
import type { LedgerPort, WorkerPort, Shard } from '../../src/jobs/ports';
import type { CheckRequest } from '../../src/jobs/request';
import type { ProgressState } from '../../src/jobs/progress';
import { RegionScheduler } from '../../src/jobs/scheduler';
import { memoryLogger } from '../../src/log';
import type { CustomUrlResult, ProbeResult } from '../../src/probe/types';
import { parseProxyList } from '../../src/proxy/parse';
import { newResultId } from '../../src/results/links';
import { resultFilePath } from '../../src/results/dir-store';
import { openResultWriter } from '../../src/results/writer';

const dir = mkdtempSync(join(tmpdir(), 'pc-actor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function request(n: number, extra: Partial<CheckRequest> = {}): CheckRequest {
  const list = parseProxyList(Array.from({ length: n }, (_, i) => `10.1.${i >> 8}.${i & 255}:8080`));
  return { route: 'check', proxies: list.proxies, totalInvalid: 0, invalidLines: list.invalidLines, totalDuplicates: 0, region: 'us1', type: 'http', timeoutMs: 1000, samples: 1, https: true, jobId: null, customUrls: [], ...extra };
}

function ledger(opts: { available?: number; unlimited?: boolean } = {}) {
  const calls: { op: string; [k: string]: unknown }[] = [];
  const port: LedgerPort = {
    async reserve(i) {
      calls.push({ op: 'reserve', units: i.units });
      const available = opts.available ?? 1_000_000;
      if (!opts.unlimited && i.units > available) return { ok: false, required: i.units, available };
      return { ok: true, unlimited: opts.unlimited ?? false, user: { email: 'a@b.c', checks_used: i.units, remaining_checks: available - i.units, subscription_detail: { UnlimitedPro: opts.unlimited ?? false } } };
    },
    async complete(i) {
      calls.push({ op: 'complete', checked: i.checked, working: i.working, refund: i.refund });
    },
    async fail(i) {
      calls.push({ op: 'fail', checked: i.checked, refund: i.refund, error: i.error, cancelled: i.cancelled });
    },
    async userInfo() {
      return { email: 'a@b.c', checks_used: 0, remaining_checks: 0, subscription_detail: { UnlimitedPro: false } };
    },
  };
  return { port, calls };
}

const ok = (index: number): ProbeResult => ({ index, status: 'working', statusCode: 200, responseTimeMs: 10 + index, anonymity: 'elite', origin: '203.0.113.9', error: null });
const bad = (index: number): ProbeResult => ({ index, status: 'failed', statusCode: null, responseTimeMs: 5, anonymity: null, origin: null, error: { code: 'connect_refused', message: 'refused' } });

/** Fake probe workers: they answer every shard in the next tick with `answer(task index)`, unless `behave` says otherwise. */
function workers(behave: (shard: Shard, n: number) => 'answer' | 'reject' | 'short' | 'hang' = () => 'answer', answer: (i: number) => ProbeResult = ok) {
  let shards = 0;
  const p: WorkerPort & { shards: () => number } = {
    shards: () => shards,
    runShard(shard, onResults, signal) {
      const n = ++shards;
      const how = behave(shard, n);
      return new Promise((resolve, reject) => {
        if (how === 'hang') {
          signal?.addEventListener('abort', () => resolve({ cancelled: true }));
          return;
        }
        setTimeout(() => {
          if (how === 'reject') return reject(Object.assign(new Error('worker died'), { code: 'worker_failed' }));
          if (shard.kind === 'probe') {
            const tasks = how === 'short' ? shard.tasks.slice(1) : shard.tasks;
            onResults(tasks.map((t) => answer(t.index)));
          } else {
            const out: CustomUrlResult[] = [];
            for (const t of shard.tasks) for (let u = 0; u < shard.rules.length; u++) out.push({ index: t.index, urlIndex: u, success: t.index % 2 === 0, statusCode: 200, responseTimeMs: 3, error: null });
            onResults(out);
          }
          resolve({ dropped: false });
        }, 1);
      });
    },
  };
  return p;
}

function deps(l: LedgerPort, p: WorkerPort, capacity = 64): JobDeps & { states: ProgressState[]; finals: (string | null)[]; scheduler: RegionScheduler } {
  const states: ProgressState[] = [];
  const finals: (string | null)[] = [];
  const scheduler = new RegionScheduler(() => capacity, { onDispatchError: () => {} });
  return {
    ledger: l,
    retrySettlement: () => {},
    execution: localExecution(scheduler, p),
    scheduler,
    geo: { lookup: () => ({ country: 'US', country_name: 'United States', location: 'X', isp: 'Example AS', asn: 64500, coordinates: { lat: 1, lon: 2 } }) },
    settings: (type, timeoutMs) => ({ type, timeoutMs, judge: { url: 'http://127.0.0.1:1/judge', protocol: 'http:', host: '127.0.0.1', port: 1, path: '/judge' }, checkerIps: [], baselineHeaders: [], allowPrivateTargets: true }),
    openWriter: (id) => openResultWriter(resultFilePath(dir, id)),
    newResultId,
    signLink: (id) => `http://x/result/${id}.json`,
    publish: (s, f) => {
      states.push(s);
      if (f !== null) finals.push(f.resultUrl);
    },
    log: memoryLogger(),
    now: () => new Date(),
    states,
    finals,
  };
}

describe('JobActor', () => {
  test('completes: folds every result, settles with no refund, publishes states in order', async () => {
    const l = ledger();
    const d = deps(l.port, workers(undefined, (i) => (i % 3 === 0 ? ok(i) : bad(i))), 16);
    const actor = new JobActor('job-a', 'acc', request(100), d);
    const res = await actor.run();
    expect(actor.state).toBe(JOB_STATES.COMPLETED);
    expect(res.metadata.total_checked).toBe(100);
    expect(res.summary.total_working).toBe(34);
    expect(res.summary.countries).toEqual({ 'United States': 34 });
    expect(l.calls).toEqual([
      { op: 'reserve', units: 100 },
      { op: 'complete', checked: 100, working: 34, refund: 0 },
    ]);
    const phases = [...new Set(d.states.map((s) => s.phase))];
    expect(phases).toEqual(['validating', 'checking_balance', 'probing', 'writing_results', 'completed']);
    expect(d.finals).toEqual([res.result_url]);
    const file = (await Bun.file(join(dir, 'results', res.result_url!.split('/').pop()!)).json()) as { proxies: unknown[] };
    expect(file.proxies).toHaveLength(100);
  });

  test('the https check: the settings carry the TLS judge and the summary https (0 to start); a request with https false gets neither', async () => {
    const tlsJudge = { url: 'https://127.0.0.1:2/judge', protocol: 'https:' as const, host: '127.0.0.1', port: 2, path: '/judge', fingerprint: 'AA' };
    for (const https of [true, false]) {
      const seen: unknown[] = [];
      const p = workers((shard) => {
        seen.push(shard.settings);
        return 'answer';
      }, bad);
      const d = deps(ledger().port, p);
      const plain = d.settings;
      d.settings = (type, timeoutMs) => ({ ...plain(type, timeoutMs), tlsJudge });
      const res = await new JobActor(`job-https-${https}`, 'acc', request(3, { https }), d).run();
      expect(seen.length).toBeGreaterThan(0);
      for (const s of seen) expect(s).toMatchObject(https ? { tlsJudge } : { httpsCheck: false });
      if (!https) for (const s of seen) expect(s).not.toHaveProperty('tlsJudge');
      if (https) expect(res.summary.https).toBe(0);
      else expect(res.summary).not.toHaveProperty('https');
    }
  });

  test('402 when the ledger refuses: nothing settled, no file', async () => {
    const l = ledger({ available: 5 });
    const before = readdirSync(join(dir, 'results')).length;
    const actor = new JobActor('job-b', 'acc', request(10), deps(l.port, workers()));
    const err = await actor.run().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InsufficientQuotaError);
    expect(err).toMatchObject({ code: 'insufficient_quota', required: 10, available: 5 });
    expect(l.calls).toEqual([{ op: 'reserve', units: 10 }]);
    expect(actor.state).toBe(JOB_STATES.FAILED);
    expect(readdirSync(join(dir, 'results')).length).toBe(before);
  });

  test('a shard that rejects fails the job and refunds what was not checked', async () => {
    const l = ledger();
    const d = deps(l.port, workers((_, n) => (n === 3 ? 'reject' : 'answer')), 32);
    const actor = new JobActor('job-c', 'acc', request(200), d);
    const err = (await actor.run().catch((e: unknown) => e)) as Error & { code?: string };
    expect(err.code).toBe('shard_failed');
    const fail = l.calls.find((c) => c.op === 'fail')!;
    expect(fail.checked as number).toBeLessThan(200);
    expect(fail.refund).toBe(200); // a failed job delivers nothing: every reserved unit comes back
    await Bun.sleep(20); // shards still out when the job failed settle now
    expect(d.scheduler.inFlight('us1')).toBe(0); // every slot went back to the region
  });

  test('a shard that ends without all its results fails the job instead of hanging', async () => {
    const l = ledger();
    const d = deps(l.port, workers((_, n) => (n === 1 ? 'short' : 'answer')), 16);
    const actor = new JobActor('job-d', 'acc', request(50), d);
    const err = (await actor.run().catch((e: unknown) => e)) as Error & { code?: string; cause?: { code?: string } };
    expect(err.code).toBe('shard_failed');
    expect(err.cause?.code).toBe('shard_incomplete');
    const fail = l.calls.find((c) => c.op === 'fail')!;
    expect(fail.refund).toBe(50);
    await Bun.sleep(20);
    expect(d.scheduler.inFlight('us1')).toBe(0);
  });

  test('cancel mid-run (shutdown): fails with the reason, refunds every reserved unit (no results delivered), removes the partial file', async () => {
    const l = ledger();
    const before = readdirSync(join(dir, 'results')).length;
    const d = deps(l.port, workers((_, n) => (n <= 2 ? 'answer' : 'hang')), 16);
    const actor = new JobActor('job-e', 'acc', request(100), d);
    const run = actor.run().catch((e: unknown) => e);
    for (let i = 0; i < 500 && actor.checked < 32; i++) await Bun.sleep(2); // the two answered shards are folded
    actor.cancel(new ServiceError('shutting_down', 'shutting down'));
    actor.cancel(); // twice is safe
    const err = (await run) as ServiceError;
    expect(err.code).toBe('shutting_down');
    const fail = l.calls.find((c) => c.op === 'fail')!;
    expect(fail.checked).toBe(32);
    expect(fail.refund).toBe(100);
    expect(fail.cancelled).toBe(false);
    expect(fail.error).toBe('shutting_down'); // the history keeps the stable code, not a message
    expect(d.states.at(-1)!.phase).toBe('failed');
    expect(readdirSync(join(dir, 'results')).length).toBe(before);
    await Bun.sleep(20);
    expect(d.scheduler.inFlight('us1')).toBe(0); // the cancelled shards gave their slots back
    expect(existsSync(join(dir, 'results'))).toBe(true);
  });

  test('UnlimitedPro: nothing reserved, so a failure refunds nothing', async () => {
    const l = ledger({ unlimited: true, available: 0 });
    const actor = new JobActor('job-f', 'acc', request(20), deps(l.port, workers(() => 'reject')));
    await actor.run().catch(() => {});
    expect(l.calls.find((c) => c.op === 'fail')).toMatchObject({ checked: 0, refund: 0 });
  });

  test('custom URLs run through working proxies only, pairs counted per URL', async () => {
    const l = ledger();
    const req = request(10, { customUrls: [{ url: 'http://a.example/', requiredStatusCodes: [200], caseSensitive: false }, { url: 'http://b.example/', requiredStatusCodes: [200], caseSensitive: false }] });
    const d = deps(l.port, workers(undefined, (i) => (i < 4 ? ok(i) : bad(i))), 16);
    const actor = new JobActor('job-g', 'acc', req, d);
    const res = await actor.run();
    const file = (await Bun.file(join(dir, 'results', res.result_url!.split('/').pop()!)).json()) as any;
    expect(file.custom_url_validation.summary).toMatchObject({ total_urls_tested: 2, total_proxies_tested: 4 });
    expect(file.custom_url_validation.per_url_summary.map((u: any) => [u.url, u.success_count, u.failed_count])).toEqual([
      ['http://a.example/', 2, 2],
      ['http://b.example/', 2, 2],
    ]);
    expect([...new Set(d.states.map((s) => s.phase))]).toContain('custom_url_validation');
  });

  test('a grant that throws (the workers refuses a shard synchronously) fails the job with refunds', async () => {
    const l = ledger();
    const p = workers();
    let n = 0;
    const throwing: WorkerPort = {
      runShard(shard, onResults, signal) {
        if (++n === 2) throw new Error('workers closed');
        return p.runShard(shard, onResults, signal);
      },
    };
    const d = deps(l.port, throwing, 16);
    const actor = new JobActor('job-h', 'acc', request(100), d);
    const err = (await actor.run().catch((e: unknown) => e)) as ServiceError;
    expect(err.code).toBe('shard_failed');
    expect((err.cause as ServiceError).code).toBe('dispatch_failed');
    expect(actor.state).toBe(JOB_STATES.FAILED);
    const fail = l.calls.find((c) => c.op === 'fail')!;
    expect(fail.refund).toBe(100);
    expect(fail.error).toBe('shard_failed');
    await Bun.sleep(20);
    expect(d.scheduler.inFlight('us1')).toBe(0);
  });

  test('cancel while the reservation is in flight: the message is handled, the job fails and refunds everything', async () => {
    const l = ledger();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow: LedgerPort = { ...l.port, reserve: async (i) => { await gate; return l.port.reserve(i); } };
    const d = deps(slow, workers(), 16);
    const actor = new JobActor('job-i', 'acc', request(40), d);
    const run = actor.run().catch((e: unknown) => e);
    await Bun.sleep(5);
    expect(actor.state).toBe(JOB_STATES.RESERVING);
    actor.cancel();
    release();
    const err = (await run) as ServiceError;
    expect(err.code).toBe('shutting_down');
    expect(l.calls.find((c) => c.op === 'fail')).toMatchObject({ checked: 0, refund: 40, error: 'shutting_down', cancelled: false });
    expect(d.states.at(-1)!.phase).toBe('failed');
  });

  test('cancel after the job completed is ignored', async () => {
    const l = ledger();
    const actor = new JobActor('job-j', 'acc', request(5), deps(l.port, workers(), 16));
    await actor.run();
    actor.cancel();
    await Bun.sleep(5);
    expect(actor.state).toBe(JOB_STATES.COMPLETED);
    expect(l.calls.map((c) => c.op)).toEqual(['reserve', 'complete']);
  });

  test('the client went away: the job is cancelled, pays only for the probes made, history says cancelled', async () => {
    const l = ledger();
    const d = deps(l.port, workers((_, n) => (n <= 2 ? 'answer' : 'hang')), 16);
    const actor = new JobActor('job-k', 'acc', request(100), d);
    const run = actor.run().catch((e: unknown) => e);
    for (let i = 0; i < 500 && actor.checked < 32; i++) await Bun.sleep(2);
    actor.cancel(new ServiceError('client_disconnected', 'gone'));
    const err = (await run) as ServiceError;
    expect(err.code).toBe('client_disconnected');
    expect(l.calls.find((c) => c.op === 'fail')).toMatchObject({ checked: 32, refund: 68, error: 'client_disconnected', cancelled: true });
  });

  test('probes the checker could not run (checker_overloaded) are tried again; one that never runs is reported, not charged', async () => {
    const l = ledger();
    const overloaded = (index: number): ProbeResult => ({ index, status: 'failed', statusCode: null, responseTimeMs: 0, anonymity: null, origin: null, error: { code: 'checker_overloaded', message: 'EMFILE' } });
    const tries = new Map<number, number>();
    // index 3 is overloaded twice, then answers; index 5 is overloaded every time
    const d = deps(l.port, workers(undefined, (i) => {
      const n = (tries.get(i) ?? 0) + 1;
      tries.set(i, n);
      if (i === 5 || (i === 3 && n <= 2)) return overloaded(i);
      return ok(i);
    }), 16);
    const actor = new JobActor('job-l', 'acc', request(10), d);
    const res = await actor.run();
    expect(tries.get(3)).toBe(3);
    expect(tries.get(5)).toBe(4); // the first try and three more
    expect(res.metadata.total_checked).toBe(10);
    expect(res.summary.total_working).toBe(9);
    // 9 performed, 1 never tried: 1 unit back
    expect(l.calls).toEqual([
      { op: 'reserve', units: 10 },
      { op: 'complete', checked: 10, working: 9, refund: 1 },
    ]);
    await Bun.sleep(5);
    expect(d.scheduler.inFlight('us1')).toBe(0);
  });

  test('samples: one record per proxy from its samples, reserved and settled per sample, demand of proxies x samples', async () => {
    const l = ledger();
    // proxy 0 (tasks 0-2) rotates its exit; proxy 9 (tasks 27-29) never answers; the rest keep one exit
    const answer = (t: number): ProbeResult => {
      const p = Math.floor(t / 3);
      if (p === 9) return bad(t);
      return { ...ok(t), origin: p === 0 ? `198.51.100.${t + 1}` : '203.0.113.9' };
    };
    const tasks: number[] = [];
    const p = workers(undefined, answer);
    const seeing: WorkerPort = { runShard: (shard, onResults, signal) => (tasks.push(...shard.tasks.map((t) => t.index)), p.runShard(shard, onResults, signal)) };
    const d = deps(l.port, seeing, 8);
    const actor = new JobActor('job-s', 'acc', request(10, { samples: 3 }), d);
    const res = await actor.run();
    expect([...tasks].sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i)); // every sample once
    expect(l.calls).toEqual([
      { op: 'reserve', units: 30 },
      { op: 'complete', checked: 10, working: 9, refund: 0 },
    ]);
    expect(res.metadata.total_checked).toBe(10);
    expect(res.summary.total_working).toBe(9);
    expect(res.summary.rotating).toBe(1);
    expect(d.states.every((st) => st.total === 10 && st.checked <= 10)).toBe(true);
    const file = (await Bun.file(join(dir, 'results', res.result_url!.split('/').pop()!)).json()) as any;
    expect(file.summary.rotating).toBe(1);
    const byPort = (port: number) => file.proxies.find((r: any) => r.proxy.host === `10.1.0.${port}`);
    expect(byPort(0)).toMatchObject({ status: 'working', origin: '198.51.100.1', responseTime: '10.00 ms' });
    expect(byPort(0).samples).toEqual({
      count: 3,
      succeeded: 3,
      success_rate: '100.00%',
      exit_ips: ['198.51.100.1', '198.51.100.2', '198.51.100.3'],
      unique_exit_ips: 3,
      response_time_ms: { min: 10, p50: 11, max: 12 },
    });
    expect(byPort(4).samples).toMatchObject({ exit_ips: ['203.0.113.9'], unique_exit_ips: 1 });
    expect(byPort(9)).toMatchObject({ status: 'failed', error: { code: 'connect_refused' } });
    expect(byPort(9).samples).toEqual({ count: 3, succeeded: 0, success_rate: '0.00%', exit_ips: [], unique_exit_ips: 0, response_time_ms: null });
    await Bun.sleep(5);
    expect(d.scheduler.inFlight('us1')).toBe(0);
  });

  test('counters: one probeResults call per result batch, adding up to the probes folded (retried ones are not folded)', async () => {
    const overloaded = (index: number): ProbeResult => ({ index, status: 'failed', statusCode: null, responseTimeMs: 0, anonymity: null, origin: null, error: { code: 'checker_overloaded', message: 'EMFILE' } });
    let tried4 = false;
    const p = workers(undefined, (i) => (i === 4 && !tried4 ? ((tried4 = true), overloaded(i)) : ok(i)));
    const counts: number[] = [];
    const d = { ...deps(ledger().port, p, 8), counters: { probeResults: (n: number) => counts.push(n), jobEnded: () => {} } };
    await new JobActor('job-c', 'acc', request(10, { samples: 2 }), d).run();
    expect(counts.reduce((a, b) => a + b, 0)).toBe(20); // proxies x samples, task 4 once although it came back twice
    expect(counts.length).toBe(p.shards()); // a batch per shard here (the fake answers a shard in one batch)
  });

  test('samples: the 402 requires proxies x samples', async () => {
    const l = ledger({ available: 20 });
    const err = await new JobActor('job-t', 'acc', request(10, { samples: 3 }), deps(l.port, workers())).run().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InsufficientQuotaError);
    expect(err).toMatchObject({ required: 30, available: 20 });
    expect(l.calls).toEqual([{ op: 'reserve', units: 30 }]);
  });

  test('samples: a client that goes away pays for every sample performed, a proxy cut short included; checked counts whole proxies', async () => {
    const l = ledger();
    const d = deps(l.port, workers((_, n) => (n <= 2 ? 'answer' : 'hang')), 16);
    const actor = new JobActor('job-u', 'acc', request(100, { samples: 3 }), d);
    const run = actor.run().catch((e: unknown) => e);
    for (let i = 0; i < 500 && actor.checked < 10; i++) await Bun.sleep(2); // 32 samples: 10 proxies and 2 samples of the 11th
    await Bun.sleep(5);
    actor.cancel(new ServiceError('client_disconnected', 'gone'));
    await run;
    expect(l.calls[0]).toEqual({ op: 'reserve', units: 300 });
    expect(l.calls.find((c) => c.op === 'fail')).toMatchObject({ checked: 10, refund: 300 - 32, cancelled: true });
  });

  test('samples: a sample the checker never ran is not charged; its proxy still gets its record', async () => {
    const l = ledger();
    const overloaded = (index: number): ProbeResult => ({ index, status: 'failed', statusCode: null, responseTimeMs: 0, anonymity: null, origin: null, error: { code: 'checker_overloaded', message: 'EMFILE' } });
    const tries = new Map<number, number>();
    const d = deps(l.port, workers(undefined, (t) => {
      tries.set(t, (tries.get(t) ?? 0) + 1);
      return t === 3 ? overloaded(t) : ok(t); // task 3 = sample 1 of proxy 1
    }), 16);
    const res = await new JobActor('job-v', 'acc', request(4, { samples: 2 }), d).run();
    expect(tries.get(3)).toBe(4);
    expect(l.calls).toEqual([
      { op: 'reserve', units: 8 },
      { op: 'complete', checked: 4, working: 4, refund: 1 },
    ]);
    const file = (await Bun.file(join(dir, 'results', res.result_url!.split('/').pop()!)).json()) as any;
    expect(file.proxies.find((r: any) => r.proxy.host === '10.1.0.1').samples).toMatchObject({ count: 2, succeeded: 1, success_rate: '50.00%' });
  });

  test('a settlement that fails is handed on to be tried again (never dropped)', async () => {
    const l = ledger();
    let failing = true;
    const flaky: LedgerPort = {
      ...l.port,
      fail: async (i) => {
        if (failing) throw new Error('database did not answer');
        await l.port.fail(i);
      },
    };
    const retries: { label: string; attempt: () => Promise<void> }[] = [];
    const d = { ...deps(flaky, workers(() => 'reject')), retrySettlement: (label: string, attempt: () => Promise<void>) => void retries.push({ label, attempt }) };
    const actor = new JobActor('job-m', 'acc', request(10), d);
    await actor.run().catch(() => {});
    expect(retries).toHaveLength(1);
    expect(retries[0]!.label).toBe(actor.runId);
    failing = false;
    await retries[0]!.attempt();
    expect(l.calls.find((c) => c.op === 'fail')).toMatchObject({ refund: 10, error: 'shard_failed' });
  });

  test('opens its execution under its run id (the reservation\'s): two runs of one client jobId never share a shard context', async () => {
    const reserved: string[] = [];
    const contexts = new Set<string>();
    const l = ledger();
    const port: LedgerPort = { ...l.port, reserve: (i) => (reserved.push(i.runId), l.port.reserve(i)) };
    const inner = workers();
    const p: WorkerPort = { runShard: (shard, onResults, signal, ctx) => (contexts.add(ctx!.runId), inner.runShard(shard, onResults, signal, ctx)) };
    for (let run = 0; run < 2; run++) {
      const actor = new JobActor('client-job', 'acc', request(3, { jobId: 'client-job' }), deps(port, p));
      await actor.run();
      expect(contexts.has(actor.runId)).toBe(true);
    }
    expect(reserved).toHaveLength(2);
    expect(reserved[0]).not.toBe(reserved[1]);
    expect([...contexts]).toEqual(reserved);
  });
});

describe('JobActor: failures that explain themselves', () => {
  /** deps whose probes refuse private targets (ALLOW_PRIVATE_TARGETS off), and the probed tasks by host. */
  function strict(l: LedgerPort, answer: (i: number) => ProbeResult = ok) {
    const probed: string[] = [];
    const p = workers((shard) => {
      if (shard.kind === 'probe') for (const t of shard.tasks) probed.push(t.proxy.host);
      return 'answer';
    }, answer);
    const d = deps(l, p);
    const settings = d.settings;
    d.settings = (type, timeoutMs) => ({ ...settings(type, timeoutMs), allowPrivateTargets: false });
    return { d, probed };
  }
  const list = (lines: string[], extra: Partial<CheckRequest> = {}): CheckRequest => {
    const parsed = parseProxyList(lines);
    return { ...request(0), proxies: parsed.proxies, totalInvalid: parsed.invalid, invalidLines: parsed.invalidLines, totalDuplicates: parsed.duplicates, ...extra };
  };
  const file = async (url: string) => (await Bun.file(join(dir, 'results', url.split('/').pop()!)).json()) as Record<string, unknown> & { proxies: { proxy: { host: string }; status: string; error?: { code: string; message: string } }[] };

  test('literal private/loopback/reserved proxies are not probed nor charged; counted in total_blocked; failed blocked_target records naming the setting', async () => {
    const l = ledger();
    const { d, probed } = strict(l.port, (i) => (i === 0 ? ok(i) : bad(i)));
    const req = list(['8.8.8.8:80', '127.0.0.1:80', 'proxy.example.com:80', '[::1]:8080', '10.0.0.1:3128', '169.254.169.254:80', '1.1.1.1:80']);
    const res = await new JobActor('job-blk', 'acc', req, d).run();
    expect(probed).toEqual(['8.8.8.8', 'proxy.example.com', '1.1.1.1']); // host names stay: they are resolved at probe time
    expect(l.calls[0]).toEqual({ op: 'reserve', units: 3 });
    expect(res.metadata.total_checked).toBe(3);
    expect(res.metadata.total_blocked).toBe(4);
    expect(res.summary.errors).toEqual({ blocked_target: 4, connect_refused: 2 });
    const doc = await file(res.result_url!);
    const blocked = doc.proxies.filter((r) => r.error?.code === 'blocked_target');
    expect(blocked.map((r) => r.proxy.host)).toEqual(['127.0.0.1', '::1', '10.0.0.1', '169.254.169.254']);
    for (const r of blocked) {
      expect(r.status).toBe('failed');
      expect(r.error!.message).toBe(`${r.proxy.host} is in a private, loopback or reserved range; refused unless the server sets ALLOW_PRIVATE_TARGETS=true`);
    }
    expect(doc.proxies).toHaveLength(7);
    expect(doc.summary).toEqual(res.summary);
    expect((doc.metadata as { total_blocked: number }).total_blocked).toBe(4);
  });

  test('the 402 counts the proxies to probe only', async () => {
    const l = ledger({ available: 1 });
    const { d } = strict(l.port);
    const err = await new JobActor('job-blk2', 'acc', list(['127.0.0.1:1', '127.0.0.2:1', '10.9.9.9:1', '8.8.4.4:80', '9.9.9.9:80']), d).run().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'insufficient_quota', required: 2, available: 1 });
  });

  test('every proxy refused: nothing reserved, nothing probed, the job still completes with its file', async () => {
    const l = ledger();
    const { d, probed } = strict(l.port);
    const res = await new JobActor('job-blk3', 'acc', list(['127.0.0.1:1', '192.168.1.1:8080']), d).run();
    expect(probed).toEqual([]);
    expect(l.calls).toEqual([
      { op: 'reserve', units: 0 },
      { op: 'complete', checked: 0, working: 0, refund: 0 },
    ]);
    expect(res.metadata).toMatchObject({ total_checked: 0, total_blocked: 2 });
    expect(res.summary.errors).toEqual({ blocked_target: 2 });
    expect((await file(res.result_url!)).proxies).toHaveLength(2);
  });

  test('ALLOW_PRIVATE_TARGETS on: nothing is refused before the probe', async () => {
    const l = ledger();
    const res = await new JobActor('job-blk4', 'acc', list(['127.0.0.1:1', '10.0.0.1:1']), deps(l.port, workers())).run();
    expect(res.metadata).toMatchObject({ total_checked: 2, total_blocked: 0 });
    expect(l.calls[0]).toEqual({ op: 'reserve', units: 2 });
  });

  test('invalid lines: the first 20 in metadata.invalid_lines, all of them in the result file', async () => {
    const l = ledger();
    const lines = ['10.0.0.1:80', ...Array.from({ length: 25 }, (_, i) => `bad line ${i}`), '10.0.0.2:99999'];
    const res = await new JobActor('job-inv', 'acc', list(lines), deps(l.port, workers())).run();
    expect(res.metadata.total_invalid).toBe(26);
    expect(res.metadata.invalid_lines).toHaveLength(20);
    expect(res.metadata.invalid_lines[0]).toEqual({ line: 2, text: 'bad line 0', reason: 'not a proxy address: expected host:port, user:pass@host:port or host:port:user:pass' });
    const doc = await file(res.result_url!);
    const all = doc.invalid_lines as { line: number; text: string; reason: string }[];
    expect(all).toHaveLength(26);
    expect(all.at(-1)).toEqual({ line: 27, text: '10.0.0.2:99999', reason: 'port is not a number from 1 to 65535' });
    expect(doc.metadata).toEqual(res.metadata);
    expect(Object.keys(doc)).toEqual(['summary', 'metadata', 'proxies', 'invalid_lines']);
  });

  test('a mixed list (DECISIONS "Mixed lists"): each proxy probed and its custom URLs fetched through its own protocol; every record says its type', async () => {
    const l = ledger();
    const seen: [string, string, number[]][] = [];
    const p = workers((shard) => {
      seen.push([shard.kind, shard.settings.type, shard.tasks.map((t) => t.index)]);
      return 'answer';
    });
    const d = deps(l.port, p, 64);
    const list = parseProxyList(['socks5://10.2.0.1:1080', '10.2.0.2:8080', 'socks4://10.2.0.3:1080', 'http://10.2.0.4:3128', 'socks5h://10.2.0.1:1080'], { type: 'http' });
    expect(list.duplicates).toBe(1);
    const req = request(0, { proxies: list.proxies, customUrls: [{ url: 'http://a.example/', requiredStatusCodes: [200], caseSensitive: false }] });
    const res = await new JobActor('job-mixed', 'acc', req, d).run();
    expect(res.metadata.total_checked).toBe(4);
    // one grant: its shard split by settings, each task once, with its own protocol
    const probes = seen.filter(([k]) => k === 'probe');
    expect(probes.flatMap(([, type, tasks]) => tasks.map((t) => [t, type])).sort()).toEqual([[0, 'socks5'], [1, 'http'], [2, 'socks4'], [3, 'http']]);
    const urls = seen.filter(([k]) => k === 'custom_url');
    expect(urls.flatMap(([, type, tasks]) => tasks.map((t) => [t, type])).sort()).toEqual([[0, 'socks5'], [1, 'http'], [2, 'socks4'], [3, 'http']]);
    const doc = (await Bun.file(join(dir, 'results', res.result_url!.split('/').pop()!)).json()) as any;
    expect(doc.proxies.map((r: any) => [r.proxy.host, r.type]).sort()).toEqual([['10.2.0.1', 'socks5'], ['10.2.0.2', 'http'], ['10.2.0.3', 'socks4'], ['10.2.0.4', 'http']]);
    expect(doc.proxies.every((r: any) => !('protocols' in r))).toBe(true);
  });

  test('a list without schemes: one shard per grant, records without type (as the contract)', async () => {
    const seen: string[] = [];
    const d = deps(ledger().port, workers((shard) => (seen.push(shard.settings.type), 'answer')), 64);
    const res = await new JobActor('job-plain', 'acc', request(10), d).run();
    expect(seen).toEqual(['http']);
    const doc = (await Bun.file(join(dir, 'results', res.result_url!.split('/').pop()!)).json()) as any;
    expect(doc.proxies.every((r: any) => !('type' in r))).toBe(true);
  });
});
