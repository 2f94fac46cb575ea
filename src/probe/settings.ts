/**
 * The one place a job's ProbeSettings are put together from what the service
 * (src/compose/own-judge.ts) or the probe command (src/cli/probe.ts) knows: the proxy
 * type and budget, the judge, what calibration found, and the switches.
 * Pure: no I/O.
 */
import type { CheckType } from '../proxy/types';
import type { JudgeTarget, ProbeSettings, TlsJudgeTarget } from './types';

export interface ProbeSettingsInput<T extends CheckType = CheckType> {
  /** One protocol, or 'auto' (each protocol tried: auto.ts). */
  type: T;
  timeoutMs: number;
  judge: JudgeTarget;
  /** What calibration found: the checker's own addresses and the headers the judge path adds by itself. */
  calibrated: { readonly ips: readonly string[]; readonly baselineHeaders: readonly string[] };
  /** Addresses known besides calibration (CHECKER_IPS, --checker-ip), merged in after the calibrated ones. */
  extraCheckerIps?: readonly string[];
  allowPrivateTargets: boolean;
  /** Extra CA certificates (PEM); absent: the system roots only. */
  tlsCa?: string | undefined;
  /** The judge's signing key; absent: the judge does not sign, integrity is not checked. */
  judgeKey?: string | undefined;
  /** The judge's TLS listener (pinned): working proxies get the https check; absent: no check, no `https`. */
  tlsJudge?: TlsJudgeTarget | undefined;
}

export function probeSettings<T extends CheckType>(i: ProbeSettingsInput<T>): ProbeSettings & { type: T } {
  return {
    type: i.type,
    timeoutMs: i.timeoutMs,
    judge: i.judge,
    checkerIps: [...new Set([...i.calibrated.ips, ...(i.extraCheckerIps ?? [])])],
    baselineHeaders: [...i.calibrated.baselineHeaders],
    allowPrivateTargets: i.allowPrivateTargets,
    ...(i.tlsCa !== undefined ? { tlsCa: i.tlsCa } : {}),
    ...(i.judgeKey !== undefined ? { judgeKey: i.judgeKey } : {}),
    ...(i.tlsJudge !== undefined ? { tlsJudge: i.tlsJudge } : {}),
  };
}
