/**
 * One proxy check against the judge (DECISIONS "Checking a proxy").
 *
 * A fresh random nonce per probe goes into the judge URL; the proxy is
 * `working` only when an HTTP 200 comes back through it AND the body is the
 * judge's answer carrying that nonce. Everything else is `failed` with a
 * code from PROBE_ERROR_CODES: 407 -> auth_required (and 401: the judge never
 * answers 401, so it is the proxy refusing credentials, as tinyproxy does for a
 * wrong password), other non-200 ->
 * http_status, a 200 that is not our judge answer -> judge_mismatch, and the
 * transport failures reported by the exchange driver (src/probe/net/exchange.ts).
 *
 * Integrity: with `settings.judgeKey` (a judge that signs) the 200's body must
 * be exactly the bytes the judge signed (codec/integrity.ts). Our nonce in a
 * body that is not (changed, extended, cut, re-encoded, an unsigned or stale
 * copy) -> tampered, its message saying what changed; no nonce at all ->
 * judge_mismatch as before. Without a key nothing is verified.
 * On working proxies `origin` is the address the judge saw and `anonymity`
 * is classified from the headers the judge saw.
 *
 * "Proxy" = the judge itself: a web server that serves the judge path (the
 * judge's own host, a reverse proxy in front of it) answers an absolute-form
 * request as if it came straight from the checker. When the judge saw our
 * absolute-form request line unchanged AND saw one of the checker's own
 * addresses as the remote, nothing proxied the request: judge_mismatch.
 * (Real forward proxies rewrite to origin-form, or connect from their own
 * address.)
 *
 * https: with `settings.tlsJudge` a working proxy is then tried with a tunnel
 * + TLS to the judge's TLS listener in what is left of the same budget
 * (https-check.ts): its result gets `https`, or the proxy is failed with
 * `tls_intercepted` when the tunnel presented another certificate.
 */
import type { ProbeResult, ProtocolSettings, ProbeTask } from './types';
import { exchange } from './net/exchange';
import { newNonce } from './codec/nonce';
import { authority, judgePathWithNonce } from './codec/http-request';
import { normalizeIp } from './codec/ip-literal';
import { classifyAnonymity } from './codec/anonymity';
import { readJudgeBody } from './codec/judge-body';
import { judgeIntegrity } from './codec/integrity';
import { withHttps } from './https-check';

/** The judge's answer is small; anything bigger is not the judge. */
export const JUDGE_BODY_CAP = 64 * 1024;

/** Never rejects; resolves once, at most a few ms after settings.timeoutMs. */
export function runProbe(task: ProbeTask, settings: ProtocolSettings): Promise<ProbeResult> {
  if (settings.tlsJudge === undefined) return runJudgeProbe(task, settings);
  const startedAt = performance.now();
  // a failed proxy resolves as it is: no second connection, no TLS, no extra promise step
  return runJudgeProbe(task, settings).then((r) => (r.status === 'working' ? withHttps(r, task, settings, startedAt) : r));
}

/** The judge check alone (no https check): what runProbe does first, and each attempt of an auto probe. */
export async function runJudgeProbe(task: ProbeTask, settings: ProtocolSettings): Promise<ProbeResult> {
  const nonce = newNonce();
  const judge = settings.judge;
  const pathWithQuery = judgePathWithNonce(judge.path, nonce);
  const out = await exchange({
    via: settings.type,
    proxy: task.proxy,
    host: judge.host,
    port: judge.port,
    tls: judge.protocol === 'https:',
    pathWithQuery,
    timeoutMs: settings.timeoutMs,
    bodyCap: JUDGE_BODY_CAP,
    allowPrivateTargets: settings.allowPrivateTargets,
    tlsCa: settings.tlsCa,
  });
  const result: ProbeResult = {
    index: task.index,
    status: 'failed',
    statusCode: out.statusCode,
    responseTimeMs: out.elapsedMs,
    anonymity: null,
    origin: null,
    error: out.error,
  };
  if (out.error !== null) return result;
  const code = out.statusCode as number;
  if (code === 407 || code === 401) {
    result.error = {
      code: 'auth_required',
      message: code === 407 ? 'proxy answered 407 Proxy Authentication Required' : 'proxy answered 401: credentials refused',
    };
    return result;
  }
  if (code !== 200) {
    result.error = { code: 'http_status', message: `proxy answered ${code}` };
    return result;
  }
  if (settings.judgeKey !== undefined && out.body !== null) {
    const v = judgeIntegrity({ headers: out.headers, body: out.body, truncated: out.bodyTruncated, key: settings.judgeKey, nonce });
    if (v.kind === 'tampered') {
      result.error = { code: 'tampered', message: v.message };
      return result;
    }
  }
  const read = out.bodyTruncated || out.body === null ? null : readJudgeBody(out.body, nonce);
  if (read === null || !read.ok) {
    result.error = { code: 'judge_mismatch', message: 'a 200 answer that is not the judge answer to this probe' };
    return result;
  }
  if (settings.type === 'http' && judge.protocol === 'http:' && reachedJudgeDirectly(read.requestLine, read.remoteAddress, settings, pathWithQuery, out.localAddress)) {
    result.error = { code: 'judge_mismatch', message: 'the request reached the judge unproxied: this address is the judge itself, not a proxy' };
    return result;
  }
  result.status = 'working';
  result.origin = read.remoteAddress;
  result.anonymity = classifyAnonymity(read.headers, settings.checkerIps, settings.baselineHeaders, out.localAddress);
  return result;
}

/** The judge saw our absolute-form request from one of our own addresses (calibrated, configured, or this probe socket's own). */
function reachedJudgeDirectly(seenLine: string, seenRemote: string, settings: ProtocolSettings, pathWithQuery: string, localAddress: string | null): boolean {
  const j = settings.judge;
  if (seenLine !== `GET http://${authority(j.host, j.port, 80)}${pathWithQuery} HTTP/1.1`) return false;
  const remote = normalizeIp(seenRemote);
  if (remote === null) return false;
  if (localAddress !== null && normalizeIp(localAddress) === remote) return true;
  for (const ip of settings.checkerIps) if (normalizeIp(ip) === remote) return true;
  return false;
}
