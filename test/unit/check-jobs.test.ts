/**
 * Tests for src/jobs/check-jobs.ts with in-memory ports: which scan answers
 * (none, retention), where a running job's numbers come from (this node,
 * another node, neither), a completed job's kept response with fresh links,
 * and every branch of DELETE (docs in the file's header).
 */
import { describe, expect, test } from 'bun:test';
import type { JobScan } from '../../src/accounts/job-scans';
import { CheckJobs, jobView, type CheckJobsDeps } from '../../src/jobs/check-jobs';
import type { LocalRun, RemoteJobControl } from '../../src/jobs/ports';

const NOW = new Date('2026-11-22T12:00:00.000Z');
const DAY = 86_400_000;

function scan(over: Partial<JobScan> = {}): JobScan {
  return {
    runId: 'run_1',
    status: 'running',
    error: null,
    createdAt: new Date(NOW.getTime() - 60_000),
    finishedAt: null,
    totalChecked: 0,
    totalWorking: 0,
    totalProxies: 10,
    resultRef: null,
    result: null,
    nodeId: 'self',
    ...over,
  };
}

const response = {
  summary: { total_working: 2 },
  metadata: { job_id: 'j1', total_checked: 10 },
  result_url: 'http://old/result/R.json?token=old&expires=1',
  result_urls: { json: 'http://old/result/R.json?token=old&expires=1', csv: 'x', txt: 'y' },
};

function jobs(scans: (JobScan | null)[], o: { local?: LocalRun | null; localCancel?: 'completed' | 'failed' | null; remote?: Partial<RemoteJobControl> | null } = {}) {
  const calls: string[] = [];
  let read = 0;
  const deps: CheckJobsDeps = {
    findScan: async (accountId, jobId) => {
      calls.push(`find ${accountId} ${jobId}`);
      return scans[Math.min(read++, scans.length - 1)] ?? null;
    },
    local: {
      runProgress: () => o.local ?? null,
      cancelRun: async (run) => {
        calls.push(`local cancel ${run}`);
        return o.localCancel ?? null;
      },
    },
    remote:
      o.remote === null
        ? null
        : {
            progress: async (node, run) => (calls.push(`remote progress ${node} ${run}`), 'unreachable'),
            cancel: async (node, run) => (calls.push(`remote cancel ${node} ${run}`), 'unreachable'),
            ...o.remote,
          },
    nodeId: 'self',
    signLink: (ref) => `http://fresh/result/${ref}.json?token=new&expires=2`,
    retentionMs: 7 * DAY,
  };
  return { jobs: new CheckJobs(deps), calls };
}

describe('GET', () => {
  test('no scan (none, or another account\'s) and a scan past retention: null', async () => {
    expect(await jobs([null]).jobs.status('acct', 'j1', NOW)).toBeNull();
    const old = scan({ status: 'completed', createdAt: new Date(NOW.getTime() - 8 * DAY) });
    expect(await jobs([old]).jobs.status('acct', 'j1', NOW)).toBeNull();
    expect(await jobs([old]).jobs.cancel('acct', 'j1', NOW)).toEqual({ ok: false, reason: 'not_found' });
  });

  test('running here: the live numbers of this node', async () => {
    const v = await jobs([scan()], { local: { checked: 4, total: 10, working: 1 } }).jobs.status('acct', 'j1', NOW);
    expect(v).toEqual({ jobId: 'j1', status: 'running', created_at: '2026-11-22T11:59:00.000Z', progress: { checked: 4, total: 10, working_so_far: 1 } });
  });

  test('running on another node: its numbers over the remote; unreachable: the scan\'s', async () => {
    const other = scan({ nodeId: 'node-b' });
    const remote = { progress: async () => ({ checked: 7, total: 10, working: 3 }) };
    expect((await jobs([other], { remote }).jobs.status('acct', 'j1', NOW))!.progress).toEqual({ checked: 7, total: 10, working_so_far: 3 });
    const { jobs: j, calls } = jobs([other]);
    expect((await j.status('acct', 'j1', NOW))!.progress).toEqual({ checked: 0, total: 10, working_so_far: 0 });
    expect(calls).toContain('remote progress node-b run_1');
  });

  test('ended between the reads (the node says not running): the scan read again', async () => {
    const done = scan({ nodeId: 'node-b', status: 'completed', totalChecked: 10, totalWorking: 2, finishedAt: NOW, resultRef: 'R', result: response });
    const { jobs: j, calls } = jobs([scan({ nodeId: 'node-b' }), done], { remote: { progress: async () => 'not_running' } });
    const v = await j.status('acct', 'j1', NOW);
    expect(v!.status).toBe('completed');
    expect(calls.filter((c) => c.startsWith('find'))).toHaveLength(2);
  });

  test('completed: the kept response with fresh links, nothing else changed', () => {
    const v = jobView('j1', scan({ status: 'completed', totalChecked: 10, totalWorking: 2, finishedAt: NOW, resultRef: 'R', result: response }), null, (ref) => `http://fresh/result/${ref}.json?token=new`);
    expect(v).toEqual({
      jobId: 'j1',
      status: 'completed',
      created_at: '2026-11-22T11:59:00.000Z',
      finished_at: '2026-11-22T12:00:00.000Z',
      progress: { checked: 10, total: 10, working_so_far: 2 },
      result: {
        summary: response.summary,
        metadata: response.metadata,
        result_url: 'http://fresh/result/R.json?token=new',
        result_urls: { json: 'http://fresh/result/R.json?token=new', csv: 'http://fresh/result/R.csv?token=new', txt: 'http://fresh/result/R.txt?token=new' },
      },
    });
  });

  test('failed and cancelled: the error code, no result; a scan from before total_proxies', () => {
    const v = jobView('j1', scan({ status: 'failed', error: 'interrupted', finishedAt: NOW, totalProxies: null }), null, () => 'never');
    expect(v).toEqual({ jobId: 'j1', status: 'failed', created_at: '2026-11-22T11:59:00.000Z', finished_at: '2026-11-22T12:00:00.000Z', progress: { checked: 0, total: 0, working_so_far: 0 }, error: 'interrupted' });
    expect(jobView('j1', scan({ status: 'cancelled', error: 'client_cancelled', totalChecked: 3, finishedAt: NOW }), null, () => 'never')).toMatchObject({ error: 'client_cancelled', progress: { checked: 3, total: 10 } });
  });
});

describe('DELETE', () => {
  test('ended: 409 with its status, nothing cancelled', async () => {
    const { jobs: j, calls } = jobs([scan({ status: 'completed' })]);
    expect(await j.cancel('acct', 'j1', NOW)).toEqual({ ok: false, reason: 'ended', status: 'completed' });
    expect(calls.some((c) => c.includes('cancel'))).toBe(false);
  });

  test('running here: cancelled through this node; completed meanwhile: ended', async () => {
    expect(await jobs([scan()], { localCancel: 'failed' }).jobs.cancel('acct', 'j1', NOW)).toEqual({ ok: true });
    expect(await jobs([scan()], { localCancel: 'completed' }).jobs.cancel('acct', 'j1', NOW)).toEqual({ ok: false, reason: 'ended', status: 'completed' });
  });

  test('running on another node: cancelled there; that node not answering: unreachable', async () => {
    const other = scan({ nodeId: 'node-b' });
    const { jobs: j, calls } = jobs([other], { remote: { cancel: async () => 'failed' } });
    expect(await j.cancel('acct', 'j1', NOW)).toEqual({ ok: true });
    expect(calls).toEqual(['find acct j1', 'local cancel run_1']);
    expect(await jobs([other]).jobs.cancel('acct', 'j1', NOW)).toEqual({ ok: false, reason: 'unreachable' });
  });

  test('not running where the scan says: read again; ended -> 409, still running -> unreachable', async () => {
    const ended = scan({ status: 'cancelled' });
    expect(await jobs([scan(), ended]).jobs.cancel('acct', 'j1', NOW)).toEqual({ ok: false, reason: 'ended', status: 'cancelled' });
    expect(await jobs([scan()]).jobs.cancel('acct', 'j1', NOW)).toEqual({ ok: false, reason: 'unreachable' });
    // one process (no remote): a scan of another node id is not reachable either
    expect(await jobs([scan({ nodeId: 'node-b' })], { remote: null }).jobs.cancel('acct', 'j1', NOW)).toEqual({ ok: false, reason: 'unreachable' });
  });
});
