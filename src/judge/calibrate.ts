/**
 * Self-calibration: ask the judge directly (no proxy) what it sees of the
 * checker itself, over IPv4 and, when the judge host also resolves to IPv6,
 * over IPv6.
 *
 * - `ips`: the remote addresses the judge saw (the checker's public
 *   addresses): a proxy that leaks one of them is transparent.
 * - `baselineHeaders`: lower-case names of headers the judge saw that the
 *   checker did not send (added by a load balancer or CDN in front of the
 *   judge), so they are not blamed on proxies.
 *
 * With the judge's key (JUDGE_KEY, or the built-in judge's) every answer
 * must verify (src/probe/codec/integrity.ts); one that does not fails the
 * round with calibration_failed: a judge that does not sign, or signs with
 * another key, would make every probe `tampered`, and the log says so.
 *
 * `startCalibration` runs it at once and then every `intervalMs` (timer
 * unref'd), merging `extraIps` (CHECKER_IPS) in; a failed round keeps the
 * previous answer and is tried again sooner: 1 s after the first failure,
 * doubling, at most 30 s (never later than the interval), until a round
 * succeeds (`nextRoundMs`). So a process started before the judge it uses
 * (a cluster's agents before the API node) learns its exit addresses
 * within seconds of the judge coming up. `stop()` may be called any number
 * of times.
 */
import { isIP } from 'node:net';
import { lookup } from 'node:dns/promises';
import { ServiceError } from '../errors';
import { DOMAIN_ERROR_CODES } from '../error-codes';
import type { JudgeTarget } from '../probe/types';
import { exchange } from '../probe/net/exchange';
import { newNonce } from '../probe/codec/nonce';
import { CHECKER_SENT_HEADERS, judgePathWithNonce } from '../probe/codec/http-request';
import { readJudgeBody } from '../probe/codec/judge-body';
import { verifyJudgeBody } from '../probe/codec/integrity';

export interface CalibrationResult {
  ips: string[];
  baselineHeaders: string[];
}

/** JUDGE_URL -> JudgeTarget. Throws a ServiceError judge_url_invalid. */
export function parseJudgeUrl(url: string): JudgeTarget {
  let u: URL;
  try {
    u = new URL(url);
  } catch (e) {
    throw new ServiceError(DOMAIN_ERROR_CODES.JUDGE_URL_INVALID, `JUDGE_URL is not a URL: ${url}`, { cause: e });
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new ServiceError(DOMAIN_ERROR_CODES.JUDGE_URL_INVALID, `JUDGE_URL must be http or https: ${url}`);
  }
  let host = u.hostname;
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  const protocol = u.protocol;
  const port = u.port === '' ? (protocol === 'https:' ? 443 : 80) : Number(u.port);
  return { url: u.href, protocol, host, port, path: (u.pathname || '/') + u.search };
}

async function addressesToTry(host: string): Promise<string[]> {
  if (isIP(host) !== 0) return [host];
  const all = await lookup(host, { all: true });
  const v4 = all.find((a) => a.family === 4);
  const v6 = all.find((a) => a.family === 6);
  const out: string[] = [];
  if (v4 !== undefined) out.push(v4.address);
  if (v6 !== undefined) out.push(v6.address);
  return out;
}

async function askJudge(
  judge: JudgeTarget,
  address: string,
  timeoutMs: number,
  tlsCa: string | undefined,
  judgeKey: string | undefined,
): Promise<{ ip: string; extra: string[] }> {
  const nonce = newNonce();
  const out = await exchange({
    via: 'direct',
    proxy: { host: address, port: judge.port },
    host: judge.host,
    port: judge.port,
    tls: judge.protocol === 'https:',
    pathWithQuery: judgePathWithNonce(judge.path, nonce),
    timeoutMs,
    bodyCap: 64 * 1024,
    allowPrivateTargets: true,
    tlsCa,
    connectAddress: address,
  });
  if (out.error !== null) throw new ServiceError(DOMAIN_ERROR_CODES.CALIBRATION_FAILED, `judge at ${address}: ${out.error.code} (${out.error.message})`);
  if (out.statusCode !== 200 || out.body === null) throw new ServiceError(DOMAIN_ERROR_CODES.CALIBRATION_FAILED, `judge at ${address} answered ${out.statusCode}`);
  const read = readJudgeBody(out.body, nonce);
  if (!read.ok) throw new ServiceError(DOMAIN_ERROR_CODES.CALIBRATION_FAILED, `judge at ${address} did not echo the nonce`);
  if (judgeKey !== undefined && !verifyJudgeBody(out.body, judgeKey)) {
    throw new ServiceError(
      DOMAIN_ERROR_CODES.CALIBRATION_FAILED,
      `judge at ${address}: its answer is not signed with the judge key (JUDGE_KEY); every probe would be tampered`,
    );
  }
  const extra: string[] = [];
  for (const [name] of read.headers) {
    const l = name.trim().toLowerCase();
    if (!CHECKER_SENT_HEADERS.includes(l) && !extra.includes(l)) extra.push(l);
  }
  return { ip: read.remoteAddress, extra };
}

/**
 * Asks the judge directly over each address family it has. Rejects with
 * calibration_failed when every family fails. `judgeKey`: the answers must
 * verify with it.
 */
export async function calibrate(judge: JudgeTarget, timeoutMs: number, tlsCa?: string, judgeKey?: string): Promise<CalibrationResult> {
  let addresses: string[];
  try {
    addresses = await addressesToTry(judge.host);
  } catch (e) {
    throw new ServiceError(DOMAIN_ERROR_CODES.CALIBRATION_FAILED, `judge host ${judge.host} did not resolve`, { cause: e });
  }
  if (addresses.length === 0) throw new ServiceError(DOMAIN_ERROR_CODES.CALIBRATION_FAILED, `judge host ${judge.host} has no address`);
  const settled = await Promise.allSettled(addresses.map((a) => askJudge(judge, a, timeoutMs, tlsCa, judgeKey)));
  const ips: string[] = [];
  const baseline: string[] = [];
  let firstError: unknown = null;
  for (const s of settled) {
    if (s.status === 'rejected') {
      firstError ??= s.reason;
      continue;
    }
    if (!ips.includes(s.value.ip)) ips.push(s.value.ip);
    for (const h of s.value.extra) if (!baseline.includes(h)) baseline.push(h);
  }
  if (ips.length === 0) {
    throw new ServiceError(DOMAIN_ERROR_CODES.CALIBRATION_FAILED, `calibration against ${judge.url} failed`, { cause: firstError });
  }
  return { ips, baselineHeaders: baseline.sort() };
}

/** The first retry after a failed round, and the longest wait between failed rounds. */
export const CALIBRATION_RETRY_FIRST_MS = 1_000;
export const CALIBRATION_RETRY_MAX_MS = 30_000;

/** The wait before the next round: the interval after a success; after the n-th failed round in a row 1 s, 2 s, 4 s, ... at most 30 s (and the interval). Pure. */
export function nextRoundMs(failuresInARow: number, intervalMs: number, firstRetryMs: number = CALIBRATION_RETRY_FIRST_MS): number {
  if (failuresInARow <= 0) return intervalMs;
  const backoff = firstRetryMs * 2 ** Math.min(failuresInARow - 1, 30);
  return Math.min(intervalMs, CALIBRATION_RETRY_MAX_MS, backoff);
}

export interface CalibrationOptions {
  judge: JudgeTarget;
  /** CHECKER_IPS: always part of the answer */
  extraIps: string[];
  intervalMs: number;
  onUpdate: (r: CalibrationResult) => void;
  /** A round failed; the next is in `retryInMs`. */
  onError?: (e: unknown, retryInMs: number) => void;
  timeoutMs?: number;
  /** The first retry after a failed round (default 1 s; tests pass less). */
  firstRetryMs?: number;
  tlsCa?: string;
  /** the judge's signing key: answers that do not verify fail the round */
  judgeKey?: string;
}

export interface CalibrationHandle {
  /** settles after the first round (with extraIps only if it failed); never rejects */
  ready: Promise<CalibrationResult>;
  stop(): void;
}

/** Calibrates now and then every intervalMs; onUpdate gets every successful answer (extraIps merged in). */
export function startCalibration(opts: CalibrationOptions): CalibrationHandle {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let last: CalibrationResult = { ips: [...opts.extraIps], baselineHeaders: [] };
  let failures = 0;

  const round = async (): Promise<CalibrationResult> => {
    try {
      const r = await calibrate(opts.judge, opts.timeoutMs ?? 5000, opts.tlsCa, opts.judgeKey);
      const ips = [...r.ips];
      for (const ip of opts.extraIps) if (!ips.includes(ip)) ips.push(ip);
      last = { ips, baselineHeaders: r.baselineHeaders };
      failures = 0;
      if (!stopped) opts.onUpdate(last);
    } catch (e) {
      failures++;
      if (!stopped) opts.onError?.(e, nextRoundMs(failures, opts.intervalMs, opts.firstRetryMs));
    }
    if (!stopped) {
      timer = setTimeout(() => void round(), nextRoundMs(failures, opts.intervalMs, opts.firstRetryMs));
      timer.unref?.();
    }
    return last;
  };

  return {
    ready: round(),
    stop() {
      stopped = true;
      if (timer !== null) {
        clearTimeout(timer);
        timer = null;
      }
    },
  };
}
