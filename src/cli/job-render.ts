/**
 * How the CLI shows a check job (GET /checks/{jobId}) and an asynchronous
 * submission (the 202). Pure: bodies in, text out.
 */
import type { AcceptedBody, JobBody } from './api-client';
import { fmtInt } from './progress-bar';
import { pct } from './tables';

/** What to do next with a job that was submitted or is still running. */
export function jobHints(jobId: string): string {
  return [`  proxycheck wait ${jobId}     follow it (live bar) and print its result`, `  proxycheck status ${jobId}   its state now`, `  proxycheck cancel ${jobId}   stop it (the checks not performed are refunded)`].join('\n');
}

/** The note on standard error after `check --async`. */
export function renderAccepted(a: AcceptedBody, proxies: number): string {
  return `Submitted ${fmtInt(proxies)} ${proxies === 1 ? 'entry' : 'entries'} as job ${a.jobId}: it runs on the server whatever happens to this terminal.\n${jobHints(a.jobId)}`;
}

/** One job's state: what `proxycheck status` prints (the summary of a completed job is printed after it). */
export function renderJob(j: JobBody, now: Date): string {
  const p = j.progress;
  const started = new Date(j.created_at);
  const took = (end: Date) => `${Math.max(0, (end.getTime() - started.getTime()) / 1000).toFixed(1)} s`;
  const lines = [`Job ${j.jobId}: ${j.status}${j.error !== undefined ? ` (${j.error})` : ''}`];
  lines.push(`  checked  ${fmtInt(p.checked)} / ${fmtInt(p.total)} (${pct(p.checked, p.total)})`);
  lines.push(`  working  ${fmtInt(p.working_so_far)}`);
  lines.push(`  started  ${j.created_at}${j.status === 'running' ? `, running for ${took(now)}` : ''}`);
  if (j.finished_at !== undefined) lines.push(`  ended    ${j.finished_at}, after ${took(new Date(j.finished_at))}`);
  if (j.status === 'running') lines.push('', jobHints(j.jobId));
  if (j.status === 'cancelled') lines.push('  the checks not performed were refunded');
  if (j.status === 'failed') lines.push('  it delivered no result; every check it reserved was refunded');
  return lines.join('\n');
}
