/**
 * `proxycheck check <input>...`: reads the list (files, standard input, inline
 * addresses: src/cli/io.ts), subscribes to the WebSocket
 * progress channel (/ws?jobId=<random>, with the key) BEFORE posting the
 * check, shows a live bar on a TTY (plain periodic lines otherwise) on
 * standard error, then prints the summary and the result links, and with
 * --out downloads the result in the chosen format.
 *
 * The list always goes to POST /check as JSON (`proxies`: the file's
 * non-blank, non-comment lines), so custom URLs work and all three address
 * forms are read by the server's parser. Without --timeout the server's
 * /check default applies (2000 ms).
 *
 * After the summary the .json result is read once as a stream (one record
 * at a time, whatever its size): per-URL results when custom URLs were
 * given, and the per-proxy details of proxy-table.ts: a table of the first
 * proxies with their protocols / https / samples and exits when the records
 * carry them (--type auto, --samples N), and the lying proxies (tampered,
 * tls_intercepted) when any. A plain check prints nothing more than before.
 * A result file that cannot be read there is a note on stderr, not a failure.
 * The summary's region says `probed from this machine` when /health shows
 * one machine (no region agents), and the hints of check-hints.ts follow
 * the details (private targets and ALLOW_PRIVATE_TARGETS, SOCKS servers met
 * by an http check, the check's warnings).
 *
 * The progress socket is opened before anything is printed: it refuses a
 * wrong key, which is then asked with GET /checks/{jobId} (401: the auth
 * error, exit 3, before "Checking ..."; 404: the key is fine).
 *
 * --out: json/csv/txt are the result link of that extension, streamed to the
 * file (or to stdout for `--out -`; the summary then goes to stderr). With
 * --only-working, or --scheme (txt lines `<protocol>://...`), the .json link
 * is read and filtered/converted here (src/results/export.ts, as the
 * service's own downloads), since working proxies come first in it.
 *
 * Ctrl-C: the request and the socket are dropped, the terminal restored, and
 * the CLI exits 130; the server may still finish the check (it is then in
 * `proxycheck me`).
 *
 * Asynchronous (docs/API.md "Checks that outlive their connection"):
 * `--async` submits the check (`Prefer: respond-async`), prints its job id
 * and returns. A list of more than ASYNC_THRESHOLD checks (entries x
 * --samples) is submitted asynchronously too and followed (job-follow.ts),
 * so a connection cut by a proxy on the way (many cut requests at 60-100 s)
 * or a dropped network no longer loses the job: the bar goes on by polling
 * and Ctrl-C leaves the job running (`proxycheck wait <jobId>` takes it up
 * again). The output is the same either way (`showResult`).
 */
import { randomBytes } from 'node:crypto';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { errorText } from '../errors';
import { ENTRY_ERROR_CODES } from '../error-codes';
import { convertResult, readResultParts } from '../results/export';
import { ApiClient, type CheckResponseBody, type JobBody } from './api-client';
import { ASYNC_THRESHOLD, type CheckCommand, type GlobalOptions } from './args';
import { checkHints } from './check-hints';
import type { CliSettings } from './config-file';
import { CliError, EXIT, usageError } from './exit-codes';
import { describeInputs, readInputs, terminalTraits, type CliIo, type OutStream } from './io';
import { followJob, LiveBar, openFollow } from './job-follow';
import { jobHints, renderAccepted } from './job-render';
import { fmtInt } from './progress-bar';
import { ProxyDigest, renderProxyDetails, type RecordView } from './proxy-table';
import { renderCustomUrls, renderSummary, type CustomUrlRow } from './tables';

/** The one threshold of an asynchronous `check` (args.ts, where the help text reads it too). */
export { ASYNC_THRESHOLD };

/** Where the result goes (check, and wait). */
export type ResultOutput = Pick<CheckCommand, 'out' | 'format' | 'onlyWorking' | 'scheme'>;

export async function runCheck(cmd: CheckCommand, g: GlobalOptions, settings: CliSettings, io: CliIo): Promise<number> {
  if (settings.key === undefined) {
    throw new CliError(EXIT.AUTH, ENTRY_ERROR_CODES.CLI_NO_KEY, 'No API key. Pass --key, set PROXYCHECK_API_KEY, or run `proxycheck login`.');
  }
  const { lines, from } = await readInputs(cmd.sources, io);
  const origin = describeInputs(from);
  if (lines.length === 0) throw usageError(`no proxies in ${origin} (blank and # lines are skipped)`);

  const client = new ApiClient({ url: settings.url, key: settings.key });
  const jobId = cmd.jobId ?? `cli-${randomBytes(9).toString('base64url')}`;
  const body: Record<string, unknown> = { proxies: lines, jobId };
  if (cmd.type !== undefined) body.type = cmd.type;
  if (cmd.region !== undefined) body.region = cmd.region;
  if (cmd.timeout !== undefined) body.timeout = cmd.timeout;
  if (cmd.samples !== undefined) body.samples = cmd.samples;
  if (cmd.https === false) body.https = false;
  if (cmd.customUrls.length > 0) body.customUrls = cmd.customUrls;

  if (cmd.async) {
    const accepted = await client.submitCheck(body, io.signal);
    if (g.json) io.stdout.write(`${JSON.stringify(accepted, null, 2)}\n`);
    else {
      io.stdout.write(`${accepted.jobId}\n`);
      io.stderr.write(`${renderAccepted(accepted, lines.length)}\n`);
    }
    return EXIT.OK;
  }

  const followAsync = lines.length * (cmd.samples ?? 1) > ASYNC_THRESHOLD;
  const bar = new LiveBar(io, { quiet: g.json, noColor: g.color === false });
  let follow: Awaited<ReturnType<typeof openFollow>> = null;
  let submitted = false;
  let response: CheckResponseBody;
  try {
    // the socket first: it refuses a wrong key, which is then told before anything else is printed
    follow = await openFollow(client, jobId, (m) => bar.update(m));
    if (follow === null) await keyAccepted(client, jobId, io);
    if (!g.json) {
      const how = followAsync ? '; submitted asynchronously: the job goes on if this connection drops' : '';
      io.stderr.write(`Checking ${fmtInt(lines.length)} ${lines.length === 1 ? 'entry' : 'entries'} from ${origin} on ${settings.url} (job ${jobId}${how})\n`);
      if (follow === null) io.stderr.write('(live progress unavailable: the WebSocket did not open; waiting for the result)\n');
    }
    bar.start();
    if (followAsync) {
      await client.submitCheck(body, io.signal);
      submitted = true;
      response = resultOf(await followJob(client, jobId, io, bar, follow));
    } else {
      response = await client.check(body, io.signal);
    }
    bar.complete(response);
  } catch (err) {
    if (io.signal.aborted) {
      const what = submitted
        ? `Interrupted. Job ${jobId} goes on on the server:\n${jobHints(jobId)}`
        : `Interrupted. The server may still finish job ${jobId}; if it does, it appears in \`proxycheck me\`.`;
      throw new CliError(EXIT.INTERRUPTED, ENTRY_ERROR_CODES.CLI_INTERRUPTED, what, { cause: err });
    }
    throw err;
  } finally {
    bar.stop();
    follow?.channel.close();
  }
  return showResult(response, cmd, g, client, io);
}

/**
 * Throws the 401's CliError when the service refuses the key (asked with
 * GET /checks/{jobId} of the job not yet submitted: a 404 says the key is
 * fine); anything else is left to the check itself.
 */
async function keyAccepted(client: ApiClient, jobId: string, io: CliIo): Promise<void> {
  try {
    await client.job(jobId, io.signal);
  } catch (err) {
    if (io.signal.aborted || (err instanceof CliError && err.exitCode === EXIT.AUTH)) throw err;
  }
}

/** The check response of a job that ended, or the CliError of one that did not complete (exit 6). */
export function resultOf(job: JobBody): CheckResponseBody {
  if (job.status === 'completed' && job.result !== undefined) return job.result;
  const why = job.error !== undefined ? ` (${job.error})` : '';
  const refund = job.status === 'cancelled' ? 'the checks not performed were refunded' : 'every check it reserved was refunded';
  throw new CliError(EXIT.NETWORK, ENTRY_ERROR_CODES.CLI_JOB_FAILED, `Job ${job.jobId} ended ${job.status}${why}: no result; ${refund}.`);
}

/**
 * Prints a check response as `check` does (summary, per-proxy details, the
 * links; --json: the body) and saves it with --out. The exit code.
 */
export async function showResult(response: CheckResponseBody, cmd: ResultOutput, g: GlobalOptions, client: ApiClient, io: CliIo): Promise<number> {
  const human: OutStream = cmd.out === '-' ? io.stderr : io.stdout;
  if (g.json) {
    io.stdout.write(`${JSON.stringify(response, null, 2)}\n`);
  } else {
    const color = terminalTraits(human, io.env, g.color === false).color;
    human.write(`\n${renderSummary(response, { color, oneMachine: await client.oneMachine(io.signal) })}\n`);
    const jsonUrl = response.result_urls?.json ?? response.result_url;
    let scan: Awaited<ReturnType<typeof scanResult>> = null;
    if (jsonUrl) {
      scan = await scanResult(client, jsonUrl, io);
      if (scan !== null) {
        if (scan.customRows.length > 0) human.write(`\n${renderCustomUrls(scan.customRows)}\n`);
        const details = renderProxyDetails(scan.digest, { color });
        if (details !== '') human.write(`\n${details}\n`);
      }
    }
    const hints = checkHints(response, scan === null ? null : scan.digest);
    if (hints.length > 0) human.write(`\n${hints.join('\n')}\n`);
    const urls = response.result_urls ?? (response.result_url ? { json: response.result_url, csv: null, txt: null } : null);
    if (urls !== null) {
      human.write('\nFull result (links valid 12 hours, no key needed):\n');
      human.write(`  JSON  ${urls.json}\n`);
      if (urls.csv) human.write(`  CSV   ${urls.csv}\n`);
      if (urls.txt) human.write(`  TXT   ${urls.txt}\n`);
    }
  }
  if (cmd.out !== undefined) {
    const saved = await saveResult(client, response, cmd, io);
    if (cmd.out !== '-') (g.json ? io.stderr : human).write(`${g.json ? '' : '\n'}Saved ${saved.what} to ${cmd.out}\n`);
  }
  return EXIT.OK;
}

/**
 * One streamed read of the result file: its records folded into a
 * ProxyDigest, and `custom_url_validation.per_url_summary` from its tail.
 * Null (with a note on stderr) when the file cannot be read; Ctrl-C still
 * interrupts.
 */
async function scanResult(client: ApiClient, jsonUrl: string, io: CliIo): Promise<{ customRows: CustomUrlRow[]; digest: ProxyDigest } | null> {
  const digest = new ProxyDigest();
  let customRows: CustomUrlRow[] = [];
  try {
    const res = await client.download(jsonUrl, io.signal);
    for await (const part of readResultParts(chunksOf(res))) {
      if (part.kind === 'record') digest.add(part.record as RecordView);
      else if (part.kind === 'tail') {
        const rest = JSON.parse(`{"proxies":[${part.text}`) as { custom_url_validation?: { per_url_summary?: CustomUrlRow[] } };
        customRows = rest.custom_url_validation?.per_url_summary ?? [];
      }
    }
  } catch (err) {
    if (io.signal.aborted) throw err;
    io.stderr.write(`(the result file could not be read for the per-proxy details: ${errorText(err)})\n`);
    return null;
  }
  return { customRows, digest };
}

async function* chunksOf(res: Response): AsyncGenerator<Uint8Array> {
  if (res.body === null) return;
  for await (const c of res.body) yield c;
}

/** Streams the chosen form of the result to --out; returns a description for the user. */
async function saveResult(client: ApiClient, r: CheckResponseBody, cmd: ResultOutput, io: CliIo): Promise<{ what: string }> {
  const jsonUrl = r.result_urls?.json ?? r.result_url;
  if (!jsonUrl) throw new CliError(EXIT.NETWORK, ENTRY_ERROR_CODES.CLI_NO_RESULT, 'The server returned no result link; nothing to save.');
  const byFormat = { json: jsonUrl, csv: r.result_urls?.csv, txt: r.result_urls?.txt };
  const convertHere = (cmd.onlyWorking && cmd.format !== 'txt') || byFormat[cmd.format] === undefined || cmd.scheme;
  const res = await client.download(convertHere ? jsonUrl : byFormat[cmd.format]!, io.signal);
  // --scheme: the txt lines with their protocol, as the service's `.txt?scheme=true` writes them
  const source: AsyncIterable<Uint8Array | string> = convertHere
    ? convertResult(cmd.format, chunksOf(res), { onlyWorking: cmd.onlyWorking, ...(cmd.scheme ? { scheme: true } : {}) })
    : chunksOf(res);

  let lines = 0;
  let bytes = 0;
  const encoder = new TextEncoder();
  const count = (b: Uint8Array) => {
    bytes += b.length;
    for (let i = 0; i < b.length; i++) if (b[i] === 10) lines++;
  };
  if (cmd.out === '-') {
    for await (const c of source) {
      const b = typeof c === 'string' ? encoder.encode(c) : c;
      count(b);
      io.stdout.write(b);
    }
  } else {
    const path = cmd.out!;
    const tmp = `${path}.${randomBytes(4).toString('hex')}.part`;
    let fh: FileHandle | undefined;
    try {
      fh = await open(tmp, 'w', 0o644);
      for await (const c of source) {
        const b = typeof c === 'string' ? encoder.encode(c) : c;
        count(b);
        await fh.write(b);
      }
      await fh.close();
      fh = undefined;
      await rename(tmp, path);
    } catch (err) {
      await fh?.close().catch(() => undefined);
      await unlink(tmp).catch(() => undefined);
      if (err instanceof CliError || io.signal.aborted) throw err;
      throw new CliError(EXIT.USAGE, ENTRY_ERROR_CODES.CLI_OUT_UNWRITABLE, `cannot write ${path}: ${errorText(err)}`, { cause: err });
    }
  }
  const what =
    cmd.format === 'csv'
      ? `CSV (${fmtInt(Math.max(0, lines - 1))} rows${cmd.onlyWorking ? ', working only' : ''})`
      : cmd.format === 'txt'
        ? `TXT (${fmtInt(lines)} working ${lines === 1 ? 'proxy' : 'proxies'})`
        : `JSON (${fmtInt(bytes)} bytes${cmd.onlyWorking ? ', working only' : ''})`;
  return { what };
}
