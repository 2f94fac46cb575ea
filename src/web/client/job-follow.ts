/**
 * The dashboard's side of a check that outlives its connection (docs/API.md
 * "Checks that outlive their connection"): the check is submitted with
 * `?async=true`, its jobId kept in sessionStorage while it runs, and the page
 * follows it to its end, also after a reload (it reattaches to the kept job).
 *
 *   following ── the WebSocket's final message, or the socket closes ──> GET /checks/{jobId}
 *     running: socket open -> wait for it (GET again every SOCKET_POLL_MS)
 *              no socket   -> progress from GET, GET again every POLL_MS
 *     completed | failed | cancelled -> the end (the kept job is forgotten)
 *     401 -> unauthorized; 404 -> gone (the kept job is forgotten); 0 / 5xx -> tried again
 *
 * `jobProgress` (pure) turns a GET's progress into the shape of a WebSocket
 * progress message, so one renderer draws both.
 */
import { apiGet, openProgress } from './api';
import { win } from './browser';
import type { CheckJobBody, ProgressMessageBody } from '../../contract/types';

const RUNNING_JOB = 'proxycheck.runningJob';
export const POLL_MS = 2000;
export const SOCKET_POLL_MS = 15_000;

/** GET /checks/{jobId} (the contract's CheckJob, src/contract/jobs.ts), as far as this module reads it. */
export type JobBody = Pick<CheckJobBody, 'jobId' | 'status' | 'progress' | 'error'> & { result?: Record<string, unknown> };

export type FollowEnd = { kind: 'ended'; job: JobBody } | { kind: 'unauthorized' } | { kind: 'gone' };

/** A progress message of /ws (src/contract/ws.ts), as far as the views read it. */
export type ProgressLike = Partial<Pick<ProgressMessageBody, 'status' | 'progress' | 'eta'>> & { details?: Partial<ProgressMessageBody['details']> };

/** Pure: a GET's progress as a progress message (the ETA is unknown from it). */
export function jobProgress(job: Pick<JobBody, 'status' | 'progress'>): ProgressLike {
  const { checked, total, working_so_far } = job.progress;
  const status = job.status === 'running' ? 'in_progress' : job.status === 'completed' ? 'completed' : 'failed';
  return {
    status,
    progress: status === 'completed' ? 100 : total > 0 ? Math.round((5 + (90 * checked) / total) * 100) / 100 : 5,
    eta: status === 'completed' ? 0 : null,
    details: { message: `Checking proxies: ${checked}/${total} done, ${working_so_far} working`, checked, total, working_so_far },
  };
}

/** The running job this tab follows (kept across a reload), or null. */
export function keptJob(): string | null {
  try {
    return win().sessionStorage.getItem(RUNNING_JOB);
  } catch {
    return null;
  }
}

export function keepJob(jobId: string | null): void {
  try {
    if (jobId === null) win().sessionStorage.removeItem(RUNNING_JOB);
    else win().sessionStorage.setItem(RUNNING_JOB, jobId);
  } catch {
    // storage off: a reload cannot reattach
  }
}

const sleep = (ms: number, cut?: Promise<void>) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    void cut?.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });

/**
 * Follows job `jobId` to its end. `onProgress` gets every progress message
 * (the WebSocket's, or GET's when there is no socket). The socket is opened
 * here unless `opened` (one opened before the job was submitted) is given.
 */
export async function followJob(jobId: string, key: string, onProgress: (m: ProgressLike) => void, opened?: { close(): void; ended: Promise<void> } | null): Promise<FollowEnd> {
  let sub = opened ?? (await openSocket(jobId, key, onProgress));
  try {
    for (;;) {
      const r = await apiGet(`/checks/${encodeURIComponent(jobId)}`, key);
      if (r.status === 401) return { kind: 'unauthorized' };
      if (r.status === 404) return { kind: 'gone' };
      const job = r.ok ? (r.body as JobBody) : null;
      if (job !== null && job.status !== 'running') return { kind: 'ended', job };
      if (sub !== null) {
        const ended = await Promise.race([sub.ended.then(() => true), sleep(SOCKET_POLL_MS).then(() => false)]);
        if (ended) {
          sub.close();
          sub = null;
        }
        continue;
      }
      if (job !== null) onProgress(jobProgress(job));
      await sleep(POLL_MS);
    }
  } finally {
    sub?.close();
  }
}

/** The progress socket with a promise of its end (a final message, or closed). Null when it does not open. */
export async function openSocket(jobId: string, key: string, onProgress: (m: ProgressLike) => void): Promise<{ close(): void; ended: Promise<void> } | null> {
  let end: () => void = () => {};
  const ended = new Promise<void>((resolve) => (end = resolve));
  const channel = await openProgress(
    jobId,
    key,
    (msg) => {
      const m = msg as ProgressLike;
      onProgress(m);
      if (m.status === 'completed' || m.status === 'failed') end();
    },
    () => end(),
  );
  return channel === null ? null : { close: () => channel.close(), ended };
}
