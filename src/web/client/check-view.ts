/**
 * The "New check" view, composed of the form (check-form.ts) and the
 * progress panel (check-progress.ts), and the run itself: open the progress
 * WebSocket first, then POST /check?async=true with a fresh jobId (the
 * check outlives the page's connection: job-follow.ts), show the progress
 * as messages arrive, and hand the check response to the results view when
 * the job has completed. A reload while it runs reattaches to it (`resume`).
 */
import { apiPost } from './api';
import { checkFormHtml, mountCheckForm, type CheckForm, type CheckInput } from './check-form';
import { checkProgressHtml, mountCheckProgress, type CheckProgress } from './check-progress';
import { followJob, keepJob, keptJob, openSocket, type JobBody } from './job-follow';
import { errorText, jobIdFrom } from './format';
import type { ServiceInfo } from './service-info';
import { formatCount } from './svg';

export const CHECK_VIEW_IDS = Object.freeze({ view: 'view-check' });

export function checkViewHtml(): string {
  return [`<section id="view-check" class="view" aria-labelledby="check-h" hidden>
  <h1 id="check-h" tabindex="-1">New check</h1>`, checkFormHtml(), '', checkProgressHtml(), '</section>'].join('\n');
}

export interface CheckViewDeps {
  key: () => string | null;
  /** Called with the check response when a check succeeded. */
  onResult: (response: Record<string, unknown>) => void;
  /** Called on 401 (the key stopped working). */
  onUnauthorized: () => void;
}

type Socket = Awaited<ReturnType<typeof openSocket>>;

/** The request's body from the form's checked input. */
function checkBody(input: CheckInput, jobId: string): Record<string, unknown> {
  const body: Record<string, unknown> = { proxies: input.proxies, type: input.type, region: input.region, timeout: input.timeout, jobId };
  if (input.samples > 1) body.samples = input.samples;
  if (input.customUrls.length > 0) body.customUrls = input.customUrls;
  return body;
}

/** What a job that did not complete says: cancelled or failed, and the refund. */
function endedText(job: JobBody): string {
  const why = job.error ? ` (${job.error})` : '';
  return job.status === 'cancelled'
    ? `The check was cancelled${why}; the checks not performed were refunded.`
    : `The check failed${why}; it delivered no result and every check it reserved was refunded.`;
}

class CheckRun {
  running = false;
  readonly form: CheckForm = mountCheckForm(() => void this.run());
  readonly progress: CheckProgress = mountCheckProgress();

  constructor(private readonly deps: CheckViewDeps) {}

  begin(total: number): void {
    this.running = true;
    this.form.busy(true);
    this.progress.begin(total);
  }

  end(): void {
    this.running = false;
    this.form.busy(false);
    this.progress.end();
  }

  async run(): Promise<void> {
    if (this.running) return;
    this.form.clearError();
    const key = this.deps.key();
    if (key === null) return this.deps.onUnauthorized();
    const input = this.form.read();
    if (input === null) return;
    const jobId = jobIdFrom(crypto.getRandomValues(new Uint8Array(12)));
    this.begin(input.proxies.length);
    this.progress.announce(`Check started: ${formatCount(input.proxies.length)} proxies.`);
    let sub: Socket = null;
    try {
      sub = await openSocket(jobId, key, this.progress.render);
      if (sub === null) this.progress.message('Live progress is unavailable; waiting for the result…');
      // asynchronous: the job runs on if this page's connection drops (or the page reloads)
      const r = await apiPost('/check?async=true', key, checkBody(input, jobId));
      if (r.status === 401) return this.deps.onUnauthorized();
      if (!r.ok) return this.refused(errorText(r.status, r.body));
      keepJob(jobId);
      const following = sub;
      sub = null; // followJob closes it
      await this.follow(jobId, key, following);
    } finally {
      sub?.close();
      this.end();
    }
  }

  refused(why: string): void {
    this.form.fail(why);
    this.progress.message('The check did not run.');
    this.progress.announce(`The check did not run: ${why}`);
  }

  /** Follows a submitted (or kept) job to its end and shows how it ended. */
  async follow(jobId: string, key: string, sub: Socket): Promise<void> {
    let finalSeen = false;
    const out = await followJob(
      jobId,
      key,
      (m) => {
        if (m.status === 'completed' || m.status === 'failed') finalSeen = true;
        this.progress.render(m);
      },
      sub,
    );
    if (out.kind === 'unauthorized') return this.deps.onUnauthorized();
    keepJob(null);
    if (out.kind === 'gone') {
      this.form.fail('The service no longer knows this check.');
      return this.progress.message('');
    }
    const job = out.job;
    if (job.status !== 'completed' || job.result === undefined) {
      const msg = endedText(job);
      this.form.fail(msg);
      this.progress.message(msg);
      return this.progress.announce(msg);
    }
    const p = job.progress;
    if (!finalSeen) this.progress.render({ status: 'completed', progress: 100, eta: 0, details: { message: 'Completed', total: p.total, checked: p.checked, working_so_far: p.working_so_far } });
    this.progress.announce(`Check complete: ${formatCount(p.working_so_far)} of ${formatCount(p.checked)} proxies working.`);
    this.deps.onResult(job.result);
  }
}

export function setupCheckView(deps: CheckViewDeps): { loadRegions(): Promise<void>; setService(info: ServiceInfo): void; resume(): Promise<boolean> } {
  const check = new CheckRun(deps);
  return {
    /** Reattaches to the check this tab started before a reload, if one is kept; true when there was one. */
    async resume() {
      const jobId = keptJob();
      const key = deps.key();
      if (jobId === null || key === null || check.running) return false;
      check.begin(0);
      check.progress.announce('Following the check started before the page was reloaded.');
      try {
        await check.follow(jobId, key, null);
      } finally {
        check.end();
      }
      return true;
    },
    setService: (info) => check.form.setService(info),
    loadRegions: () => check.form.loadRegions(),
  };
}
