/**
 * The `https` capability of a working proxy: after it passed the judge check,
 * a tunnel through it (CONNECT for http, the SOCKS tunnel for socks4/socks5)
 * + TLS to the judge's TLS listener (settings.tlsJudge), whose certificate is
 * pinned (codec/cert-pin.ts), then the judge request with a fresh nonce and
 * the same answer check as the judge probe (signature when the TLS judge has
 * a key, the nonce always).
 *
 * ## The budget
 *
 * The same one `timeout` as the judge probe: the check gets what the judge
 * probe left of it (`timeoutMs - elapsed since the probe started`). Nothing
 * left (under MIN_HTTPS_MS) -> `https: null` (not known: the check never
 * started) without a connection. Only working proxies get here, so a dead
 * or failed proxy costs nothing extra: no second connection, no TLS
 * handshake.
 *
 * ## Verdicts
 *
 *   passed                         -> https: true
 *   another certificate presented  -> the whole proxy `failed`,
 *                                     `tls_intercepted` (a lying proxy is never working)
 *   no budget left to start it, or this process ran out of descriptors
 *   for it (checker_overloaded: the proxy was not tried)
 *                                  -> https: null (not known)
 *   anything else (CONNECT refused, SOCKS refused, TLS failed, the budget
 *   ran out during it, a non-200, an answer that is not the judge's)
 *                                  -> https: false
 *
 * One more connection per working proxy; charges are unchanged (the check
 * is part of the one check of the proxy).
 */
import type { ProbeResult, ProbeTask, ProtocolSettings, TlsJudgeTarget } from './types';
import { exchange } from './net/exchange';
import { newNonce } from './codec/nonce';
import { judgePathWithNonce } from './codec/http-request';
import { readJudgeBody } from './codec/judge-body';
import { judgeIntegrity } from './codec/integrity';

/**
 * Resolves once the judge probe's socket has given its descriptor back. A
 * link's destroy() closes the descriptor at the end of the event loop's turn
 * (the native link's terminate(), node:net's destroy()), not at once; the
 * judge probe resolves within that turn, so an https check started there
 * opened its connection while the first one still held its descriptor: two
 * per probe, for a whole batch of working proxies answered in one turn,
 * which neither the scheduler's count of probes nor the descriptor guard's
 * sample (src/fd-guard.ts) sees (the guard's budget gives a probe one socket
 * and one judge connection). One timer turn later it is closed.
 */
function judgeSocketReleased(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Below this much budget left the https check is not started (it could not connect and shake hands in time). */
export const MIN_HTTPS_MS = 1;

/** The judge's answer is small; anything bigger is not the judge (as probe.ts JUDGE_BODY_CAP). */
const BODY_CAP = 64 * 1024;

export type HttpsVerdict =
  | { kind: 'passed' }
  | { kind: 'not_passed'; why: string }
  | { kind: 'unknown' }
  | { kind: 'intercepted'; error: NonNullable<ProbeResult['error']> };

/** One https check through `task`'s proxy with `budgetMs`. Never rejects. */
export async function checkHttps(task: ProbeTask, settings: ProtocolSettings, tlsJudge: TlsJudgeTarget, budgetMs: number): Promise<HttpsVerdict> {
  if (budgetMs < MIN_HTTPS_MS) return { kind: 'unknown' };
  const nonce = newNonce();
  const out = await exchange({
    via: settings.type,
    proxy: task.proxy,
    host: tlsJudge.host,
    port: tlsJudge.port,
    tls: true,
    tlsPin: tlsJudge.fingerprint,
    ...(tlsJudge.session !== undefined ? { tlsSession: tlsJudge.session } : {}),
    pathWithQuery: judgePathWithNonce(tlsJudge.path, nonce),
    timeoutMs: budgetMs,
    bodyCap: BODY_CAP,
    allowPrivateTargets: settings.allowPrivateTargets,
  });
  if (out.error !== null) {
    if (out.error.code === 'tls_intercepted') return { kind: 'intercepted', error: out.error };
    if (out.error.code === 'checker_overloaded') return { kind: 'unknown' }; // ours, not the proxy's
    return { kind: 'not_passed', why: out.error.code };
  }
  if (out.statusCode !== 200 || out.body === null || out.bodyTruncated) return { kind: 'not_passed', why: `status ${out.statusCode}` };
  if (tlsJudge.key !== undefined) {
    const v = judgeIntegrity({ headers: out.headers, body: out.body, truncated: false, key: tlsJudge.key, nonce });
    if (v.kind === 'tampered') return { kind: 'not_passed', why: 'tampered' };
  }
  const read = readJudgeBody(out.body, nonce);
  return read !== null && read.ok ? { kind: 'passed' } : { kind: 'not_passed', why: 'judge_mismatch' };
}

/**
 * `result` (a judge probe's) with the https check applied when the settings
 * have a TLS judge and the proxy is working; `startedAt` is when the probe's
 * budget began (performance.now()). Other results come back unchanged.
 */
export async function withHttps(result: ProbeResult, task: ProbeTask, settings: ProtocolSettings, startedAt: number): Promise<ProbeResult> {
  const tlsJudge = settings.tlsJudge;
  if (tlsJudge === undefined || result.status !== 'working') return result;
  await judgeSocketReleased();
  const left = settings.timeoutMs - (performance.now() - startedAt);
  const v = await checkHttps(task, settings, tlsJudge, left);
  if (v.kind === 'intercepted') {
    return { ...result, status: 'failed', statusCode: null, anonymity: null, origin: null, error: v.error };
  }
  return { ...result, https: v.kind === 'passed' ? true : v.kind === 'unknown' ? null : false };
}
