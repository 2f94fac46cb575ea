/**
 * `proxycheck status <jobId>`, `wait <jobId>` and `cancel <jobId>`: a check
 * job by its id (docs/API.md "Checks that outlive their connection"; a
 * job is found with the key of its account). `check --async` prints the id
 * these take.
 *
 * status: the job's state; a completed job's summary and links (--json: the
 * GET body). wait: follows it with the live bar (job-follow.ts) and prints
 * its result as `check` does (--out too); exit 6 when it failed or was
 * cancelled. cancel: DELETE; exit 5 (the server's 409) when it had ended.
 * Ctrl-C stops the command, never the job.
 */
import type { ApiClient } from './api-client';
import type { GlobalOptions, WaitCommand } from './args';
import { resultOf, showResult } from './check-command';
import { ENTRY_ERROR_CODES } from '../error-codes';
import { CliError, EXIT } from './exit-codes';
import { terminalTraits, type CliIo } from './io';
import { followJob, LiveBar } from './job-follow';
import { jobHints, renderJob } from './job-render';
import { renderSummary } from './tables';

export async function runStatus(jobId: string, g: GlobalOptions, client: ApiClient, io: CliIo): Promise<number> {
  const job = await client.job(jobId, io.signal);
  if (g.json) {
    io.stdout.write(`${JSON.stringify(job, null, 2)}\n`);
    return EXIT.OK;
  }
  io.stdout.write(`${renderJob(job, new Date(io.now()))}\n`);
  if (job.result !== undefined) {
    const color = terminalTraits(io.stdout, io.env, g.color === false).color;
    io.stdout.write(`\n${renderSummary(job.result, { color, oneMachine: await client.oneMachine(io.signal) })}\n`);
    const urls = job.result.result_urls;
    if (urls) io.stdout.write(`\nFull result (links valid 12 hours, no key needed):\n  JSON  ${urls.json}\n  CSV   ${urls.csv}\n  TXT   ${urls.txt}\n`);
  }
  return EXIT.OK;
}

export async function runWait(cmd: WaitCommand, g: GlobalOptions, client: ApiClient, io: CliIo): Promise<number> {
  if (!g.json) io.stderr.write(`Following job ${cmd.jobId} on ${client.url}\n`);
  const bar = new LiveBar(io, { quiet: g.json, noColor: g.color === false });
  let response;
  try {
    bar.start();
    response = resultOf(await followJob(client, cmd.jobId, io, bar));
    bar.complete(response);
  } catch (err) {
    if (io.signal.aborted) throw new CliError(EXIT.INTERRUPTED, ENTRY_ERROR_CODES.CLI_INTERRUPTED, `Interrupted. Job ${cmd.jobId} goes on on the server:\n${jobHints(cmd.jobId)}`, { cause: err });
    throw err;
  } finally {
    bar.stop();
  }
  return showResult(response, cmd, g, client, io);
}

export async function runCancel(jobId: string, g: GlobalOptions, client: ApiClient, io: CliIo): Promise<number> {
  await client.cancelJob(jobId, io.signal);
  if (g.json) io.stdout.write(`${JSON.stringify({ jobId, cancelled: true })}\n`);
  else io.stdout.write(`Cancelled job ${jobId}; the checks not performed were refunded.\n`);
  return EXIT.OK;
}
