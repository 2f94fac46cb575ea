/**
 * The TLS judge asked directly (no proxy) at start: does JUDGE_TLS_URL (or
 * the built-in listener at BASE_URL's host) answer with the pinned
 * certificate and the judge's own answer?
 *
 * Why at start: a wrong JUDGE_TLS_FINGERPRINT would make the certificate of
 * the real judge look like an interception through every proxy, and every
 * working proxy `failed` / `tls_intercepted`. So a mismatch seen directly is
 * a start error (judge_tls_mismatch), with the certificate the judge does
 * present. A judge that cannot be reached from here (a public name that does
 * not loop back) is only a warning, as for the plain judge's calibration.
 */
import { ServiceError } from '../errors';
import { DOMAIN_ERROR_CODES } from '../error-codes';
import type { TlsJudgeTarget } from '../probe/types';
import { exchange } from '../probe/net/exchange';
import { newNonce } from '../probe/codec/nonce';
import { judgePathWithNonce } from '../probe/codec/http-request';
import { readJudgeBody } from '../probe/codec/judge-body';
import { verifyJudgeBody } from '../probe/codec/integrity';

export type TlsJudgeCheck = { ok: true } | { ok: false; reason: string };

/** Resolves ok, or not ok with why (unreachable, not the judge); rejects with judge_tls_mismatch when another certificate answered. */
export async function checkTlsJudge(target: TlsJudgeTarget, timeoutMs = 5000): Promise<TlsJudgeCheck> {
  const nonce = newNonce();
  const out = await exchange({
    via: 'direct',
    proxy: { host: target.host, port: target.port },
    host: target.host,
    port: target.port,
    tls: true,
    tlsPin: target.fingerprint,
    pathWithQuery: judgePathWithNonce(target.path, nonce),
    timeoutMs,
    bodyCap: 64 * 1024,
    allowPrivateTargets: true,
  });
  if (out.error?.code === 'tls_intercepted') {
    const c = out.error.certificate;
    throw new ServiceError(
      DOMAIN_ERROR_CODES.JUDGE_TLS_MISMATCH,
      `the TLS judge ${target.url} presents "${c?.subject ?? ''}" (SHA-256 ${c?.fingerprint ?? '?'}), not the pinned ${target.fingerprint}: ` +
        'fix JUDGE_TLS_FINGERPRINT (every working proxy would be tls_intercepted)',
    );
  }
  if (out.error !== null) return { ok: false, reason: `${out.error.code} (${out.error.message})` };
  if (out.statusCode !== 200 || out.body === null) return { ok: false, reason: `answered ${out.statusCode}` };
  if (!readJudgeBody(out.body, nonce).ok) return { ok: false, reason: 'the answer is not the judge echo of this request' };
  if (target.key !== undefined && !verifyJudgeBody(out.body, target.key)) return { ok: false, reason: 'the answer is not signed with the judge key' };
  return { ok: true };
}
