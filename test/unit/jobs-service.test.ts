/**
 * Tests for src/jobs/service.ts (CheckService) with in-memory ports: the
 * per-account limits (running checks, unique proxies in flight) refuse with
 * rate_limited BEFORE anything is reserved, count per account, and give the
 * place back when a check ends (whatever way it ends). A job that ran counts
 * once in the jobEnded counter; a check refused before its job exists does not.
 * Asynchronous submission (submit) answers at the reservation and leaves the
 * job running; cancelRun cancels a run for its client (client_cancelled).
 */
import { describe, expect, test } from 'bun:test';
import { errorCode, isServiceError, ServiceError } from '../../src/errors';
import { DB_ERROR_CODES, DOMAIN_ERROR_CODES, JOB_ERROR_CODES, LEAF_ERROR_CODES } from '../../src/error-codes';
import { domainToApiError } from '../../src/http/errors';
import { InsufficientQuotaError, isCallerError, JobAlreadyRunningError, RateLimitedError, RegionUnavailableError } from '../../src/jobs/job-errors';
import type { ExecutionHandle, JobCounters, LedgerPort, ProbeExecution } from '../../src/jobs/ports';
import type { CheckRequest } from '../../src/jobs/request';
import { ACCOUNT_LIMIT_RETRY_AFTER_S, CheckService, type AccountLimits } from '../../src/jobs/service';
import { memoryLogger } from '../../src/log';
import { parseProxyList } from '../../src/proxy/parse';
import type { ResultWriter } from '../../src/results/writer';
import type { Clock } from '../../src/clock';
import { FakeClock, settle, until } from '../helpers/fake-clock';

function request(n: number, jobId: string | null = null): CheckRequest {
  const list = parseProxyList(Array.from({ length: n }, (_, i) => `10.2.${i >> 8}.${i & 255}:8080`));
  return { route: 'check', proxies: list.proxies, totalInvalid: 0, invalidLines: list.invalidLines, totalDuplicates: 0, region: 'us1', type: 'http', timeoutMs: 1000, samples: 1, https: true, jobId, customUrls: [] };
}

/**
 * A ledger that records reservations, refuses accounts named `broke`, finds
 * every jobId of account `elsewhere` running on another node, and throws
 * `failWith` (when given) for account `failing`.
 */
function ledger(failWith?: unknown) {
  const reserved: { accountId: string; units: number }[] = [];
  const clientJobIds: (string | null)[] = [];
  const failed: Parameters<LedgerPort['fail']>[0][] = [];
  const runIds: string[] = [];
  const port: LedgerPort = {
    async reserve(i) {
      clientJobIds.push(i.clientJobId);
      runIds.push(i.runId);
      if (i.accountId === 'failing') throw failWith;
      if (i.accountId === 'broke') return { ok: false, required: i.units, available: 0 };
      if (i.accountId === 'crash') throw new Error('database gone');
      if (i.accountId === 'elsewhere') throw new JobAlreadyRunningError(i.clientJobId ?? '?');
      reserved.push({ accountId: i.accountId, units: i.units });
      return { ok: true, unlimited: false, user: { email: 'a@b.c', checks_used: i.units, remaining_checks: 0, subscription_detail: { UnlimitedPro: false } } };
    },
    async complete() {},
    async fail(i) {
      failed.push(i);
    },
    async userInfo() {
      return { email: 'a@b.c', checks_used: 0, remaining_checks: 0, subscription_detail: { UnlimitedPro: false } };
    },
  };
  return { port, reserved, clientJobIds, failed, runIds };
}

/** Probe execution that never grants a slot: a job runs until it is cancelled. */
const parked: ProbeExecution = {
  open(): ExecutionHandle {
    return { run: async () => {}, addDemand() {}, release() {}, cancel() {} };
  },
};

const writer = { path: '/dev/null', state: 'open', working: 0, failed: 0, addProxy: async () => {}, finish: async () => ({ working: 0, failed: 0, bytes: 0 }), abort: async () => {} } as unknown as ResultWriter;

/** The service under test; `failWith`: what the ledger throws for account `failing`; `clock`: its stop grace's. */
function service(limits: AccountLimits, o: { counters?: JobCounters; failWith?: unknown; clock?: Clock; allowPrivateTargets?: boolean } = {}) {
  const { counters, failWith, clock, allowPrivateTargets = true } = o;
  const l = ledger(failWith);
  const svc = new CheckService({
    ledger: l.port,
    retrySettlement: () => {},
    execution: parked,
    geo: { lookup: () => ({ country: null, country_name: null, location: null, isp: null, asn: null, coordinates: null }) },
    settings: (type, timeoutMs) => ({ type, timeoutMs, judge: { url: 'http://127.0.0.1:1/judge', protocol: 'http:', host: '127.0.0.1', port: 1, path: '/judge' }, checkerIps: [], baselineHeaders: [], allowPrivateTargets }),
    openWriter: async () => writer,
    newResultId: () => 'r1',
    signLink: (id) => `http://x/result/${id}.json`,
    hub: { publish() {}, subscribe: () => ({ ok: false, code: 1013, reason: 'x' }), closeAll() {} },
    limits,
    log: memoryLogger(),
    now: () => new Date(),
    ...(counters !== undefined ? { counters } : {}),
    ...(clock !== undefined ? { clock } : {}),
  });
  /** Starts a check that stays running until `stop()` (its client goes away). */
  const start = (account: string, n: number | CheckRequest) => {
    const ac = new AbortController();
    const done = svc.run({ id: account }, typeof n === 'number' ? request(n) : n, ac.signal).then(
      () => 'completed',
      (e: unknown) => e,
    );
    return { done, stop: async () => (ac.abort(), await done) };
  };
  return { svc, start, reserved: l.reserved, clientJobIds: l.clientJobIds, failed: l.failed, runIds: l.runIds };
}


const refusal = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e);

describe('CheckService logging', () => {
  test('a job logs with the logger of the request that asked for it: its lines carry the request id', async () => {
    const { svc } = service({ maxJobs: 2, maxProxiesInFlight: 1_000_000 });
    const log = memoryLogger();
    const err = await refusal(svc.run({ id: 'crash' }, request(1), undefined, log.child({ requestId: 'req-42' })));
    expect(err).toMatchObject({ code: 'job_failed' });
    expect(log.lines.find((l) => l.msg === 'check job failed')).toMatchObject({ level: 'error', requestId: 'req-42', account: 'crash' });
  });
});

describe('CheckService per-account limits', () => {
  test('concurrent checks over the limit: rate_limited, nothing reserved; other accounts unaffected', async () => {
    const { svc, start, reserved } = service({ maxJobs: 2, maxProxiesInFlight: 1_000_000 });
    const a1 = start('acct-a', 10);
    const a2 = start('acct-a', 10);
    await until(() => reserved.length === 2);
    expect(svc.accountLoad('acct-a')).toEqual({ jobs: 2, proxies: 20 });

    const err = await refusal(svc.run({ id: 'acct-a' }, request(10)));
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err).toMatchObject({ code: 'rate_limited', limit: 'concurrent_jobs', max: 2, retryAfterS: ACCOUNT_LIMIT_RETRY_AFTER_S });
    expect(isServiceError(err, 'rate_limited')).toBe(true);
    await settle();
    expect(reserved).toHaveLength(2); // the refused check reserved nothing
    expect(svc.runningJobs).toBe(2);
    expect(svc.accountLoad('acct-a')).toEqual({ jobs: 2, proxies: 20 });

    // another account is not held back by acct-a's limit
    const b1 = start('acct-b', 10);
    await until(() => reserved.length === 3);
    expect(reserved[2]).toEqual({ accountId: 'acct-b', units: 10 });

    // a check that ends gives its place back
    expect(await a1.stop()).toMatchObject({ code: 'client_disconnected' });
    expect(svc.accountLoad('acct-a')).toEqual({ jobs: 1, proxies: 10 });
    const a3 = start('acct-a', 10);
    await until(() => reserved.length === 4);
    await Promise.all([a2.stop(), a3.stop(), b1.stop()]);
    expect(svc.accountLoad('acct-a')).toEqual({ jobs: 0, proxies: 0 });
    expect(svc.runningJobs).toBe(0);
  });

  test('proxies in flight: a check that would pass the sum is refused while others run', async () => {
    const { svc, start, reserved } = service({ maxJobs: 10, maxProxiesInFlight: 100 });
    const a1 = start('acct-a', 60);
    await until(() => reserved.length === 1);
    const err = await refusal(svc.run({ id: 'acct-a' }, request(41)));
    expect(err).toMatchObject({ code: 'rate_limited', limit: 'proxies_in_flight', max: 100, retryAfterS: ACCOUNT_LIMIT_RETRY_AFTER_S });
    expect(reserved).toHaveLength(1);
    const a2 = start('acct-a', 40); // exactly the limit
    await until(() => reserved.length === 2);
    expect(svc.accountLoad('acct-a')).toEqual({ jobs: 2, proxies: 100 });
    const b1 = start('acct-b', 100); // per account: acct-b has its own 100
    await until(() => reserved.length === 3);
    await Promise.all([a1.stop(), a2.stop(), b1.stop()]);
  });

  test('proxies refused before any connection are not in flight', async () => {
    const { svc, start, reserved } = service({ maxJobs: 10, maxProxiesInFlight: 100 }, { allowPrivateTargets: false });
    const list = parseProxyList([...Array.from({ length: 30 }, (_, i) => `h${i}.example:80`), ...Array.from({ length: 50 }, (_, i) => `10.9.0.${i}:80`)]);
    const a1 = start('acct-a', { ...request(0), proxies: list.proxies });
    await until(() => reserved.length === 1);
    expect(reserved[0]).toEqual({ accountId: 'acct-a', units: 30 });
    expect(svc.accountLoad('acct-a')).toEqual({ jobs: 1, proxies: 30 });
    await a1.stop();
  });

  test('a check alone is never refused by the in-flight limit (MAX_PROXIES bounds it)', async () => {
    const { svc, start, reserved } = service({ maxJobs: 1, maxProxiesInFlight: 5 });
    const a1 = start('acct-a', 50);
    await until(() => reserved.length === 1);
    expect(svc.accountLoad('acct-a')).toEqual({ jobs: 1, proxies: 50 });
    await a1.stop();
  });

  test('a check that fails early (402) or is refused 409 leaves no count behind', async () => {
    const { svc, start, reserved } = service({ maxJobs: 1, maxProxiesInFlight: 1_000 });
    for (let i = 0; i < 3; i++) expect(await refusal(svc.run({ id: 'broke' }, request(5)))).toMatchObject({ code: 'insufficient_quota' });
    expect(svc.accountLoad('broke')).toEqual({ jobs: 0, proxies: 0 });

    const ac = new AbortController();
    const a1 = svc.run({ id: 'acct-a' }, request(5, 'same-id'), ac.signal).catch((e: unknown) => e);
    await until(() => reserved.length === 1);
    // the duplicate jobId is answered 409, not counted (and not 429 although the account is at its limit)
    expect(await refusal(svc.run({ id: 'acct-a' }, request(5, 'same-id')))).toMatchObject({ code: 'job_already_running' });
    ac.abort();
    await a1;
    expect(svc.accountLoad('acct-a')).toEqual({ jobs: 0, proxies: 0 });
    const a2 = start('acct-a', 5);
    await until(() => reserved.length === 2);
    await a2.stop();
  });
});

describe('CheckService counters', () => {
  test('a job that ran counts once as failed (402, client gone); 409 and 429 refusals are not jobs', async () => {
    const ended: string[] = [];
    const { svc, reserved } = service({ maxJobs: 1, maxProxiesInFlight: 1_000 }, { counters: { probeResults() {}, jobEnded: (s) => ended.push(s) } });
    expect(await refusal(svc.run({ id: 'broke' }, request(5)))).toMatchObject({ code: 'insufficient_quota' });
    expect(ended).toEqual(['failed']);
    const a1 = svc.run({ id: 'acct-a' }, request(5, 'same-id'), AbortSignal.timeout(50)).catch((e: unknown) => e);
    await until(() => reserved.length === 1);
    expect(await refusal(svc.run({ id: 'acct-b' }, request(5, 'same-id')))).toMatchObject({ code: 'job_already_running' });
    expect(await refusal(svc.run({ id: 'acct-a' }, request(5)))).toMatchObject({ code: 'rate_limited' });
    expect(ended).toEqual(['failed']);
    expect(await a1).toMatchObject({ code: 'client_disconnected' });
    expect(ended).toEqual(['failed', 'failed']);
  });
});

describe('CheckService and jobIds', () => {
  test('the ledger hears the client\'s jobId (the generated one when it gave none); a jobId running on another node (the reservation refuses it) is JobAlreadyRunningError as it is, not job_failed', async () => {
    const { svc, clientJobIds } = service({ maxJobs: 10, maxProxiesInFlight: 1000 });
    const err = await refusal(svc.run({ id: 'elsewhere' }, request(3, 'job-x')));
    expect(err).toBeInstanceOf(JobAlreadyRunningError);
    expect(err).toMatchObject({ code: 'job_already_running', jobId: 'job-x' });
    expect(svc.runningJobs).toBe(0);
    expect(svc.accountLoad('elsewhere')).toEqual({ jobs: 0, proxies: 0 });
    expect(svc.isRunning('job-x')).toBe(false);
    await refusal(svc.run({ id: 'elsewhere' }, request(3)));
    expect(clientJobIds).toEqual(['job-x', expect.stringMatching(/^job_[A-Za-z0-9_-]{16}$/)]);
  });

  test('the same jobId twice in one process: the fast path refuses it before the ledger', async () => {
    const { svc, clientJobIds } = service({ maxJobs: 10, maxProxiesInFlight: 1000 });
    const ac = new AbortController();
    const first = svc.run({ id: 'acct-a' }, request(3, 'job-y'), ac.signal).catch((e: unknown) => e);
    await until(() => clientJobIds.length === 1);
    const err = await refusal(svc.run({ id: 'acct-b' }, request(3, 'job-y')));
    expect(err).toBeInstanceOf(JobAlreadyRunningError);
    expect(clientJobIds).toEqual(['job-y']);
    ac.abort();
    await first;
  });
});

describe('asynchronous submission and cancelRun', () => {
  test('submit answers once the reservation is made; the job runs on, counted against the limits', async () => {
    const { svc, reserved } = service({ maxJobs: 1, maxProxiesInFlight: 1000 });
    const { jobId } = await svc.submit({ id: 'acct-a' }, request(3, 'async-1'));
    expect(jobId).toBe('async-1');
    expect(reserved).toEqual([{ accountId: 'acct-a', units: 3 }]);
    expect(svc.isRunning('async-1')).toBe(true);
    expect(svc.accountLoad('acct-a')).toEqual({ jobs: 1, proxies: 3 });
    // the running-checks limit counts it like any other check
    const err = await refusal(svc.submit({ id: 'acct-a' }, request(2, 'async-2')));
    expect(err).toBeInstanceOf(RateLimitedError);
    await svc.stop(0);
  });

  test('submit rejects with what refused the reservation (402, 409 elsewhere), nothing left running', async () => {
    const { svc } = service({ maxJobs: 10, maxProxiesInFlight: 1000 });
    const broke = await refusal(svc.submit({ id: 'broke' }, request(3, 'async-broke')));
    expect(broke).toMatchObject({ code: 'insufficient_quota', required: 3 });
    expect(await refusal(svc.submit({ id: 'elsewhere' }, request(3, 'async-x')))).toBeInstanceOf(JobAlreadyRunningError);
    expect(svc.runningJobs).toBe(0);
    expect(svc.accountLoad('broke')).toEqual({ jobs: 0, proxies: 0 });
  });

  test('a generated jobId when the request has none', async () => {
    const { svc } = service({ maxJobs: 10, maxProxiesInFlight: 1000 });
    const { jobId } = await svc.submit({ id: 'acct-a' }, request(1));
    expect(jobId).toMatch(/^job_[A-Za-z0-9_-]{16}$/);
    expect(svc.isRunning(jobId)).toBe(true);
    await svc.stop(0);
  });

  test('runProgress and cancelRun name a run by its run id; a cancelled run settles as client_cancelled with the unchecked refund', async () => {
    const { svc, failed, clientJobIds, runIds } = service({ maxJobs: 10, maxProxiesInFlight: 1000 });
    await svc.submit({ id: 'acct-a' }, request(4, 'to-cancel'));
    expect(clientJobIds).toEqual(['to-cancel']);
    const runId = runIds[0]!;
    expect(runId).toMatch(/^run_/);
    expect(svc.runProgress('run_nope')).toBeNull();
    expect(await svc.cancelRun('run_nope')).toBeNull();
    expect(svc.runProgress(runId)).toEqual({ checked: 0, total: 4, working: 0 });
    expect(await svc.cancelRun(runId)).toBe('failed');
    expect(svc.isRunning('to-cancel')).toBe(false);
    expect(failed).toHaveLength(1);
    // nothing was probed (the execution never granted a slot): all 4 units back, the scan cancelled
    expect(failed[0]).toMatchObject({ runId, error: 'client_cancelled', cancelled: true, refund: 4, checked: 0 });
    expect(svc.runProgress(runId)).toBeNull();
  });

  test('stop() fails and refunds an async job like a synchronous one (shutting_down, not cancelled)', async () => {
    const { svc, failed } = service({ maxJobs: 10, maxProxiesInFlight: 1000 });
    await svc.submit({ id: 'acct-a' }, request(2, 'stopped-async'));
    await svc.stop(0);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ error: 'shutting_down', cancelled: false, refund: 2 });
  });
});


describe('what CheckService.run rejects with always has an HTTP answer', () => {
  const below = [DB_ERROR_CODES, LEAF_ERROR_CODES, DOMAIN_ERROR_CODES, JOB_ERROR_CODES].flatMap((t) => Object.values(t) as string[]);
  const thrown: unknown[] = [
    ...below.map((code) => new ServiceError(code, `a bare ${code}`)),
    new InsufficientQuotaError(10, 4),
    new JobAlreadyRunningError('job-1'),
    new RateLimitedError('proxies_in_flight', 10, 5),
    new RegionUnavailableError('eu1'),
    new Error('not a ServiceError'),
    'not an Error',
  ];

  test('every code of the layers below HTTP, thrown inside a job, comes out as an answer for the caller or as job_failed', async () => {
    for (const t of thrown) {
      const { svc } = service({ maxJobs: 10, maxProxiesInFlight: 1000 }, { failWith: t });
      const err = await refusal(svc.run({ id: 'failing' }, request(2)));
      const what = isServiceError(t) ? t.code : String(t);
      expect(domainToApiError(err), what).not.toBeNull();
      if (isCallerError(t)) expect(err, what).toBe(t);
      else expect(errorCode(err), what).toBe(JOB_ERROR_CODES.JOB_FAILED);
    }
  });
});

describe('CheckService.stop(grace)', () => {
  test('refuses new checks at once, waits the grace for running ones, then cancels them (shutting_down); safe twice', async () => {
    const clock = new FakeClock();
    const { svc, reserved } = service({ maxJobs: 10, maxProxiesInFlight: 1000 }, { clock });
    const running = svc.run({ id: 'acct-a' }, request(3)).then(
      () => 'completed',
      (e: unknown) => e,
    );
    await until(() => reserved.length === 1);
    let stopped = false;
    const stop = svc.stop(1000).then(() => (stopped = true));
    expect(svc.stop(1000)).toBe(svc.stop(5)); // the same stop
    expect(await refusal(svc.run({ id: 'acct-b' }, request(1)))).toMatchObject({ code: 'shutting_down' });
    await clock.advance(999);
    expect(stopped).toBe(false);
    expect(svc.runningJobs).toBe(1);
    await clock.advance(1);
    await stop;
    expect(await running).toMatchObject({ code: 'shutting_down' });
    expect(svc.runningJobs).toBe(0);
  });

  test('with nothing running it stops at once, its grace timer cancelled', async () => {
    const clock = new FakeClock();
    const { svc } = service({ maxJobs: 10, maxProxiesInFlight: 1000 }, { clock });
    await svc.stop(60_000);
    expect(clock.pending).toBe(0);
  });
});

describe('CheckService states (running -> draining -> stopped)', () => {
  test('stop() drains: new checks are refused shutting_down while a job runs, stopped once it ended; a second stop is the same promise', async () => {
    const { svc, start, reserved } = service({ maxJobs: 10, maxProxiesInFlight: 1_000_000 }, { clock: new FakeClock() });
    expect(svc.state).toBe('running');
    const a = start('acct-a', 3);
    await until(() => reserved.length === 1);
    const stopped = svc.stop(60_000);
    expect(svc.stop(1)).toBe(stopped);
    expect(svc.state).toBe('draining');
    expect(() => svc.assertAccepting()).toThrow();
    expect(isServiceError(await refusal(svc.run({ id: 'acct-b' }, request(1))), 'shutting_down')).toBe(true);
    expect(reserved).toHaveLength(1);
    expect(await a.stop()).toMatchObject({ code: 'client_disconnected' });
    await stopped;
    expect(svc.state).toBe('stopped');
    expect(isServiceError(await refusal(svc.run({ id: 'acct-b' }, request(1))), 'shutting_down')).toBe(true);
  });
});
