/**
 * Check jobs as resources (GET and DELETE /checks/{jobId}; CheckJobsPort).
 * Any API node answers for any job of the account: the scan row is the
 * job's record (status, times, counts, the kept check response), and the
 * node that runs a job is asked only for what the database does not hold.
 *
 * Which job a jobId names: the account's most recent run of it
 * (accounts/job-scans.ts). Another account's job, and a job older than the
 * result retention (RESULT_RETENTION_DAYS: its result file is gone), are
 * not found.
 *
 * ## GET
 *
 * A running job's live numbers come from the node that runs it: this node
 * (CheckService.runProgress) or another (RemoteJobControl over NATS). A node
 * that says the run is not running any more ended it between the two reads:
 * the scan is read again. A node that does not answer leaves the scan's own
 * numbers (the orphan sweep fails and refunds the job of a dead node).
 * A completed job carries `result`, the check response kept with its scan,
 * with its result links signed afresh (they expire 12 h after signing).
 *
 * ## DELETE
 *
 *   scan running ──cancel on its node──> settled: failed  -> { ok }  (scan cancelled / client_cancelled:
 *        │                               │                           the probes made are paid, the rest refunded)
 *        │                               ├─ settled: completed -> ended (it was already writing its result)
 *        │                               ├─ not running there  -> read again: ended, or unreachable
 *        │                               └─ no answer          -> unreachable (503; retry)
 *   scan ended ──> ended (409)           no scan ──> not_found (404)
 *
 * The cancel goes through the job's own cancel path on its node, so the
 * refund is the actor's one rule and the ledger's exactly-once settlement
 * (docs/DESIGN.md "Money").
 */
import type { JobScan } from '../accounts/job-scans';
import { resultUrls } from '../results/export';
import type { CancelOutcome, CheckJobsPort, CheckJobView, LocalRun, RemoteJobControl } from './ports';

export interface CheckJobsDeps {
  findScan(accountId: string, jobId: string): Promise<JobScan | null>;
  /** This node's running jobs (CheckService). */
  local: {
    runProgress(runId: string): LocalRun | null;
    cancelRun(runId: string): Promise<'completed' | 'failed' | null>;
  };
  /** The other API nodes of a cluster; null in one process. */
  remote: RemoteJobControl | null;
  /** This node's id (scans.node_id of the jobs it runs). */
  nodeId: string;
  /** A fresh signed link to a result file (.json). */
  signLink(resultRef: string): string;
  /** How long result files are kept (RESULT_RETENTION_DAYS): the job is found that long. */
  retentionMs: number;
}

export class CheckJobs implements CheckJobsPort {
  readonly #d: CheckJobsDeps;

  constructor(deps: CheckJobsDeps) {
    this.#d = deps;
  }

  async status(accountId: string, jobId: string, now: Date): Promise<CheckJobView | null> {
    let scan = await this.#find(accountId, jobId, now);
    if (scan === null) return null;
    let live: LocalRun | null = null;
    if (scan.status === 'running') {
      const found = await this.#progress(scan);
      if (found === 'not_running') scan = (await this.#find(accountId, jobId, now)) ?? scan;
      else if (found !== 'unreachable') live = found;
    }
    return jobView(jobId, scan, live, (ref) => this.#d.signLink(ref));
  }

  async cancel(accountId: string, jobId: string, now: Date): Promise<CancelOutcome> {
    const scan = await this.#find(accountId, jobId, now);
    if (scan === null) return { ok: false, reason: 'not_found' };
    if (scan.status !== 'running') return { ok: false, reason: 'ended', status: scan.status };
    const out = await this.#cancelRun(scan);
    if (out === 'failed') return { ok: true };
    if (out === 'completed') return { ok: false, reason: 'ended', status: 'completed' };
    if (out === 'unreachable') return { ok: false, reason: 'unreachable' };
    // not running where the scan says: it ended in between, or its node is gone (the sweep settles it)
    const again = await this.#find(accountId, jobId, now);
    if (again !== null && again.status !== 'running') return { ok: false, reason: 'ended', status: again.status };
    return { ok: false, reason: 'unreachable' };
  }

  async #find(accountId: string, jobId: string, now: Date): Promise<JobScan | null> {
    const scan = await this.#d.findScan(accountId, jobId);
    if (scan === null || now.getTime() - scan.createdAt.getTime() > this.#d.retentionMs) return null;
    return scan;
  }

  async #progress(scan: JobScan): Promise<LocalRun | 'not_running' | 'unreachable'> {
    const here = this.#d.local.runProgress(scan.runId);
    if (here !== null) return here;
    const { remote, nodeId } = this.#d;
    if (remote === null || scan.nodeId === null || scan.nodeId === nodeId) return 'not_running';
    return remote.progress(scan.nodeId, scan.runId);
  }

  async #cancelRun(scan: JobScan): Promise<'completed' | 'failed' | 'not_running' | 'unreachable'> {
    const here = await this.#d.local.cancelRun(scan.runId);
    if (here !== null) return here;
    const { remote, nodeId } = this.#d;
    if (remote === null || scan.nodeId === null || scan.nodeId === nodeId) return 'not_running';
    return remote.cancel(scan.nodeId, scan.runId);
  }
}

/**
 * Pure: the resource of a scan. `live`: a running job's numbers from its
 * node (absent: the scan's). A completed job's kept response gets fresh links.
 */
export function jobView(jobId: string, scan: JobScan, live: LocalRun | null, signLink: (resultRef: string) => string): CheckJobView {
  const total = scan.totalProxies ?? (scan.status === 'completed' ? scan.totalChecked : 0);
  const progress =
    live !== null && scan.status === 'running'
      ? { checked: live.checked, total: live.total, working_so_far: live.working }
      : { checked: scan.totalChecked, total, working_so_far: scan.totalWorking };
  const view: CheckJobView = { jobId, status: scan.status, created_at: scan.createdAt.toISOString(), progress };
  if (scan.finishedAt !== null && scan.status !== 'running') view.finished_at = scan.finishedAt.toISOString();
  if (scan.error !== null && scan.status !== 'running' && scan.status !== 'completed') view.error = scan.error;
  if (scan.status === 'completed' && isObject(scan.result)) view.result = withFreshLinks(scan.result, scan.resultRef, signLink);
  return view;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The kept response with its link fields (result_url, result_urls) signed again; everything else as kept. */
function withFreshLinks(body: Record<string, unknown>, resultRef: string | null, signLink: (resultRef: string) => string): Record<string, unknown> {
  if (resultRef === null) return body;
  const link = signLink(resultRef);
  return {
    ...body,
    ...('result_url' in body ? { result_url: link } : {}),
    ...('result_urls' in body ? { result_urls: resultUrls(link) } : {}),
  };
}
